"""Fast enough to search with? service/sim's figures, in process, and simulate over HTTP.

    nice -n 10 python -m benchmarks.sim [--maps rust_belt,iraq] [--games 1] [--http]

Per map, from funded random 4-player games (the engine's RandomPlayer, seeded), decision states
of the middle rounds (round >= 2) are kept, then measured:

- clone: SimState.clone() of a mid-game state (the engine state is shared, never changed), and
  for comparison the engine's deep copy (state.copy_state);
- step: apply_action of a random legal action on a clone, then the next legal_actions (the
  mask), p50 and p99;
- build listing: game.legal_moves in build turns, after the engine's warm-up and gc.freeze(),
  each state listed afresh, p50 and p99; and the same turn's mask (legal_actions: the listing
  numbered);
- env steps/s: the PettingZoo AEC env with random masked actions, observation included;
- with --http: POST /v1/games/{id}/simulate of 10 moves against `python -m service` on a private
  Redis, p50 and p95 (benchmarks/http's helpers start both).

The targets (issue 24): clone <= 20 us, step p50 <= 0.3 ms, build listing p99 <= 2 ms on every
map, simulate of 10 moves p95 <= 50 ms. Figures go in the closing note, never in test asserts.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time

ALL_MAPS = ("rust_belt", "madagascar", "holland", "iraq", "berlin")


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))]


def collect(map_id: str, games: int) -> list:
    """Decision SimStates of rounds >= 2 of funded random games."""
    from service.engine.playout import RandomPlayer
    from service.sim.state import SimState

    kept = []
    for g in range(games):
        rnd = random.Random(f"bench-{map_id}-{g}")
        state = SimState.new(map_id, 4, f"bench-{map_id}-{g}", cash=300)
        player = RandomPlayer(rnd)
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(rnd.choices([o for o, _ in outcomes], [p for _, p in outcomes])[0])
                continue
            if state.engine["round"] >= 2:
                kept.append(state.clone())
            listing = state.listing()
            move = player.choose(state.engine, state.current_player(),
                                 [*listing.moves.values(), *listing.paths.values()])
            for action in state.actions_of(move):
                state.apply_action(action)
    return kept


def measure(map_id: str, games: int) -> dict:
    from service.engine import game
    from service.engine.state import copy_state

    states = collect(map_id, games)
    rnd = random.Random(map_id)
    mid = states[len(states) // 2]
    n = 20000
    t = time.perf_counter()
    for _ in range(n):
        mid.clone()
    clone_us = (time.perf_counter() - t) / n * 1e6
    t = time.perf_counter()
    for _ in range(2000):
        copy_state(mid.engine)
    deep_us = (time.perf_counter() - t) / 2000 * 1e6

    steps = []
    for s in states:
        legal = s.legal_actions()
        if not legal:
            continue
        c = s.clone()
        a = rnd.choice(legal)
        t = time.perf_counter()
        c.apply_action(a)
        c.legal_actions()
        steps.append(time.perf_counter() - t)

    builds = [s for s in states if s.engine["phase"] == "build" and not s.partial]
    listing, masks = [], []
    for s in builds:
        seat = game.active_seat(s.engine)
        t = time.perf_counter()
        game.legal_moves(s.engine, seat)
        listing.append(time.perf_counter() - t)
        fresh = s.clone()
        fresh._listing = None
        t = time.perf_counter()
        fresh.legal_actions()
        masks.append(time.perf_counter() - t)
    return {
        "map": map_id, "states": len(states), "clone_us": clone_us, "deep_copy_us": deep_us,
        "step_p50_ms": percentile(steps, 0.5) * 1e3, "step_p99_ms": percentile(steps, 0.99) * 1e3,
        "builds": len(builds),
        "listing_p50_ms": percentile(listing, 0.5) * 1e3, "listing_p99_ms": percentile(listing, 0.99) * 1e3,
        "mask_p50_ms": percentile(masks, 0.5) * 1e3, "mask_p99_ms": percentile(masks, 0.99) * 1e3,
        "env_steps_per_s": env_speed(map_id),
    }


def env_speed(map_id: str, seconds: float = 2.0) -> float:
    import numpy as np

    from service.sim.envs import AgeOfSteamAEC

    env = AgeOfSteamAEC(map_id, 4, cash=300)
    rng = np.random.default_rng(0)
    steps, episode = 0, 0
    started = time.perf_counter()
    env.reset(seed=episode)
    while time.perf_counter() - started < seconds:
        agent = env.agent_selection
        if env.terminations[agent]:
            episode += 1
            env.reset(seed=episode)
            continue
        mask = env.observe(agent)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
        steps += 1
    return steps / (time.perf_counter() - started)


def http_simulate(map_id: str, requests_n: int) -> dict:
    """simulate of 10 moves over HTTP against a real server on a private Redis."""
    from benchmarks.sim_http import simulate_latencies

    lat = simulate_latencies(map_id, requests_n)
    return {"map": map_id, "simulate_p50_ms": percentile(lat, 0.5) * 1e3,
            "simulate_p95_ms": percentile(lat, 0.95) * 1e3, "requests": len(lat)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--maps", default=",".join(ALL_MAPS))
    parser.add_argument("--games", type=int, default=1)
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args(argv)
    from service.engine.warm import warm_up

    warm_up(1)
    gc.collect()
    gc.freeze()  # the warm-up's kept geometry is never collected: no long pauses in listings
    rows = [measure(m, args.games) for m in args.maps.split(",")]
    print("| map | states | clone µs | engine deep copy µs | step p50 ms | step p99 ms | build listing "
          "p50 ms | build listing p99 ms | build mask p99 ms | env steps/s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['map']} | {r['states']} | {r['clone_us']:.2f} | {r['deep_copy_us']:.1f} | "
              f"{r['step_p50_ms']:.3f} | {r['step_p99_ms']:.2f} | {r['listing_p50_ms']:.2f} | "
              f"{r['listing_p99_ms']:.2f} | {r['mask_p99_ms']:.2f} | {r['env_steps_per_s']:.0f} |")
    print(f"step p50 over maps (median): {statistics.median(r['step_p50_ms'] for r in rows):.3f} ms")
    if args.http:
        for m in args.maps.split(","):
            h = http_simulate(m, args.requests)
            print(f"simulate 10 moves over HTTP, {m}: p50 {h['simulate_p50_ms']:.1f} ms, "
                  f"p95 {h['simulate_p95_ms']:.1f} ms ({h['requests']} requests)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
