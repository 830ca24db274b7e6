"""Fast enough to search with? service/sim's figures, in process, and simulate over HTTP.

    nice -n 10 python -m benchmarks.sim [--maps rust_belt,iraq] [--games 2] [--rounds 2] [--http]

Every map is measured in fresh processes, one per set-up, alternating within each round so that
a loaded machine's noise falls on all of them alike:

- `plain`: a process as it starts (no warm-up, the collector's defaults);
- `warm`: after the engine's warm-up games (engine/warm.py), the collector left as it is;
- `served`: the warm-up and the settled collector (gc.freeze, GC_THRESHOLDS), what the API and
  the worker do at start (engine/warm.warm_up).

In each process:

- build listing: game.legal_moves of every build turn (round >= 2) of funded random 4-player
  games that the parent played, each state read from its stored bytes (as a server reads it
  from Redis) and listed once, p50 and p99, wall clock and the thread's CPU time (on a loaded
  machine the wall clock's tail is the scheduler's: the CPU time is the listing's own);
- clone: SimState.clone() of a mid-game state (the engine state is shared, never changed), and
  for comparison the engine's own copy (state.copy_state, an orjson round trip), a structured
  copy (dicts and lists rebuilt in Python) and copy.deepcopy;
- step: apply_action of a random legal action on a clone, then the next legal_actions (the
  mask), over every decision of those games (rounds >= 2) played in this process, p50 and p99;
- env steps/s: the PettingZoo AEC env with random masked actions, observation included.

With --http: POST /v1/games/{id}/simulate of 10 moves against `python -m service` (which warms
up at start) on a private Redis, p50 and p95 (benchmarks/sim_http.py).

The targets (issue 24): clone <= 20 us, step p50 <= 0.3 ms, build listing p99 <= 2 ms on every
map, simulate of 10 moves p95 <= 50 ms. Figures go in docs/simulation.md, never in test asserts.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ALL_MAPS = ("rust_belt", "madagascar", "holland", "iraq", "berlin")
SETUPS = ("plain", "warm", "served")


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


def structured_copy(value):  # noqa: ANN001, ANN201 - any JSON value
    """The state rebuilt container by container: what copy_state would be without orjson."""
    if isinstance(value, dict):
        return {k: structured_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [structured_copy(v) for v in value]
    return value


def per_call_us(fn, n: int) -> float:  # noqa: ANN001
    """The thread's CPU time per call: what the scheduler takes on a loaded machine is not in it."""
    started = time.thread_time()
    for _ in range(n):
        fn()
    return (time.thread_time() - started) / n * 1e6


def measure_listing(turns_file: Path) -> dict:
    import orjson

    from service.engine import game

    wall, cpu = [], []
    for line in turns_file.read_bytes().splitlines():
        seat, state = orjson.loads(line)
        c = time.thread_time()
        t = time.perf_counter()
        game.legal_moves(state, seat)
        wall.append(time.perf_counter() - t)
        cpu.append(time.thread_time() - c)
    return {"turns": len(wall), "listing_p50_ms": percentile(wall, .5) * 1e3,
            "listing_p99_ms": percentile(wall, .99) * 1e3,
            "listing_cpu_p50_ms": percentile(cpu, .5) * 1e3,
            "listing_cpu_p99_ms": percentile(cpu, .99) * 1e3}


def measure_sim(map_id: str, games: int) -> dict:
    from service.engine.state import copy_state

    states = collect(map_id, games)
    rnd = random.Random(map_id)
    mid = states[len(states) // 2]
    out = {"states": len(states), "clone_us": per_call_us(mid.clone, 20000),
           "copy_state_us": per_call_us(lambda: copy_state(mid.engine), 1000),
           "structured_copy_us": per_call_us(lambda: structured_copy(mid.engine), 1000),
           "deepcopy_us": per_call_us(lambda: copy.deepcopy(mid.engine), 200)}
    wall, cpu = [], []
    for s in states:
        legal = s.legal_actions()
        if not legal:
            continue
        c = s.clone()
        a = rnd.choice(legal)
        t0, c0 = time.perf_counter(), time.thread_time()
        c.apply_action(a)
        c.legal_actions()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.thread_time() - c0)
    out.update({"step_p50_ms": percentile(wall, .5) * 1e3, "step_p99_ms": percentile(wall, .99) * 1e3,
                "step_cpu_p50_ms": percentile(cpu, .5) * 1e3, "step_cpu_p99_ms": percentile(cpu, .99) * 1e3})
    states = []  # the env measures without them alive
    out["env_steps_per_s"], out["env_steps_per_cpu_s"] = env_speed(map_id)
    return out


def env_speed(map_id: str, seconds: float = 2.0) -> tuple[float, float]:
    """Steps per second of the wall clock and per second of the thread's CPU time."""
    import numpy as np

    from service.sim.envs import AgeOfSteamAEC

    env = AgeOfSteamAEC(map_id, 4, cash=300)
    rng = np.random.default_rng(0)
    steps, episode = 0, 0
    started, cpu = time.perf_counter(), time.thread_time()
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
    return steps / (time.perf_counter() - started), steps / (time.thread_time() - cpu)


def worker(setup: str, map_id: str, games: int, turns_file: Path) -> dict:
    """One fresh process's figures for one map and set-up."""
    from service.engine import warm

    started = time.perf_counter()
    if setup == "warm":
        warm.warm_up(1, settle=False)
    elif setup == "served":
        warm.warm_up(1)
    out = {"warm_up_s": time.perf_counter() - started}
    out.update(measure_listing(turns_file))  # first: nothing of these games is known yet
    out.update(measure_sim(map_id, games))
    return out


def build_turns(map_id: str, games: int, into: Path) -> Path:
    """The build turns (round >= 2) of the benchmark's games, one `[seat, state]` a line."""
    import orjson

    from service.engine import game

    path = into / f"{map_id}.jsonl"
    with path.open("wb") as f:
        for s in collect(map_id, games):
            if s.engine["phase"] == "build" and not s.partial:
                f.write(orjson.dumps([game.active_seat(s.engine), s.engine]) + b"\n")
    return path


def run_worker(setup: str, map_id: str, games: int, turns: Path) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.sim", "--worker", setup, "--maps", map_id,
           "--games", str(games), "--turns", str(turns)]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONHASHSEED": "0"})
    return json.loads(done.stdout)


def http_simulate(map_id: str, requests_n: int) -> dict:
    """simulate of 10 moves over HTTP against a real server on a private Redis."""
    from benchmarks.sim_http import simulate_latencies

    lat = simulate_latencies(map_id, requests_n)
    return {"map": map_id, "simulate_p50_ms": percentile(lat, 0.5) * 1e3,
            "simulate_p95_ms": percentile(lat, 0.95) * 1e3, "requests": len(lat)}


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + f" on {os.cpu_count()} cores"


# (heading, key, format); a pair of keys prints as "CPU (wall)".
COLUMNS = (("clone µs", "clone_us", "{:.2f}"), ("copy_state µs", "copy_state_us", "{:.0f}"),
           ("structured copy µs", "structured_copy_us", "{:.0f}"), ("deepcopy µs", "deepcopy_us", "{:.0f}"),
           ("step p50 ms", ("step_cpu_p50_ms", "step_p50_ms"), "{:.3f}"),
           ("step p99 ms", ("step_cpu_p99_ms", "step_p99_ms"), "{:.2f}"),
           ("listing p50 ms", ("listing_cpu_p50_ms", "listing_p50_ms"), "{:.2f}"),
           ("listing p99 ms", ("listing_cpu_p99_ms", "listing_p99_ms"), "{:.2f}"),
           ("env steps/s", ("env_steps_per_cpu_s", "env_steps_per_s"), "{:.0f}"))


def cell(row: dict, key: str | tuple[str, str], form: str) -> str:
    if isinstance(key, str):
        return form.format(row[key])
    return f"{form.format(row[key[0]])} ({form.format(row[key[1]])})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--maps", default=",".join(ALL_MAPS))
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2, help="alternations of the set-ups")
    parser.add_argument("--setups", default=",".join(SETUPS))
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--turns", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.maps, args.games, Path(args.turns))))
        return 0

    maps, setups = args.maps.split(","), args.setups.split(",")
    print(f"start: {load()}; {args.games} game(s) a map, {args.rounds} round(s)", flush=True)
    table: dict[tuple[str, str], dict] = {}
    with tempfile.TemporaryDirectory(prefix="aos-bench-sim-") as tmp:
        for map_id in maps:
            turns = build_turns(map_id, args.games, Path(tmp))
            runs: dict[str, list[dict]] = {s: [] for s in setups}
            for r in range(args.rounds):
                for setup in setups:
                    runs[setup].append(run_worker(setup, map_id, args.games, turns))
                    x = runs[setup][-1]
                    print(f"  {map_id} round {r + 1} {setup}: listing p99 {x['listing_p99_ms']:.2f} ms "
                          f"(CPU {x['listing_cpu_p99_ms']:.2f}), step p50 {x['step_p50_ms']:.3f} ms "
                          f"({load()})", flush=True)
            for setup, found in runs.items():
                table[map_id, setup] = {k: statistics.median(x[k] for x in found) for k in found[0]}
    print(f"\nmedians over rounds ({load()}); clone and copies: CPU time per call; "
          "X (Y): X by the thread's CPU time, Y by the wall clock\n")
    print("| map | set-up | " + " | ".join(c for c, _, _ in COLUMNS) + " |")
    print("|---|---|" + "---|" * len(COLUMNS))
    for (map_id, setup), row in table.items():
        print(f"| {map_id} | {setup} | " + " | ".join(cell(row, k, f) for _, k, f in COLUMNS) + " |")
    if "plain" in setups and "served" in setups:
        print("\nserved / plain (times: lower is better; steps/s: higher)\n")
        print("| map | build turns | listing CPU p50 | listing CPU p99 | listing wall p99 | step CPU p50 "
              "| step CPU p99 | env steps per CPU s | clone / copy_state |")
        print("|---|---|---|---|---|---|---|---|---|")
        for map_id in maps:
            s, p = table[map_id, "served"], table[map_id, "plain"]

            def ratio(key: str, s: dict = s, p: dict = p) -> str:
                return f"x{s[key] / p[key]:.2f}"

            print(f"| {map_id} | {s['turns']:.0f} | {ratio('listing_cpu_p50_ms')} | "
                  f"{ratio('listing_cpu_p99_ms')} | {ratio('listing_p99_ms')} | {ratio('step_cpu_p50_ms')} | "
                  f"{ratio('step_cpu_p99_ms')} | "
                  f"{ratio('env_steps_per_cpu_s')} | x{s['clone_us'] / s['copy_state_us']:.3f} |")
    if args.http:
        print()
        for m in maps:
            h = http_simulate(m, args.requests)
            print(f"simulate 10 moves over HTTP, {m}: p50 {h['simulate_p50_ms']:.1f} ms, "
                  f"p95 {h['simulate_p95_ms']:.1f} ms ({h['requests']} requests; {load()})", flush=True)
    print(f"\nend: {load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
