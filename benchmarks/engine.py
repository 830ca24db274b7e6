"""The engine's speed, in process: random playouts, and legal_moves in mid-game turns.

    python -m benchmarks.engine [--map rust_belt] [--players 4] [--games 20] [--seed 1] [--cash N]

Prints games/s and moves/s of whole random games, the p50/p99 time of legal_moves in the
build and move-goods turns of the middle rounds, and the state's size. Every time is also given
as a ratio to a baseline measured in the same run (one orjson round trip of the same state,
which apply itself pays to copy the state), so figures from noisy machines compare.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import orjson

from service.engine import game
from service.engine.playout import EngineClock, play_random_game
from service.engine.state import copy_state


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))]


def timed(fn, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--map", default="rust_belt")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cash", type=int, default=None,
                        help="start every player with this cash, so random games last every round")
    args = parser.parse_args()

    chooser = random.Random(args.seed)
    samples: dict[str, list[tuple[dict, int]]] = {"build": [], "move_goods": []}

    def keep_sample(before: dict, seat: int, *_: object) -> None:
        if before["phase"] in samples and before["round"] >= 2:
            samples[before["phase"]].append((before, seat))

    clock = EngineClock()
    moves = 0
    rounds = []
    started = time.perf_counter()
    for g in range(args.games):
        state, made = play_random_game(args.map, args.players, f"bench-{g}", chooser,
                                       on_move=keep_sample, clock=clock, cash=args.cash)
        moves += made
        rounds.append(state["round"])
    elapsed = time.perf_counter() - started
    print(f"playout  map={args.map} players={args.players} games={args.games} "
          f"games/s={args.games / elapsed:.2f} moves/s={moves / elapsed:.0f}; engine alone "
          f"games/s={args.games / clock.seconds:.2f} moves/s={moves / clock.seconds:.0f} "
          f"(mean last round {statistics.mean(rounds):.1f})")

    for phase, found in samples.items():
        if not found:
            print(f"legal_moves {phase}: no sample")
            continue
        picks = [found[i] for i in range(0, len(found), max(1, len(found) // 40))]
        times, base, counts = [], [], []
        for state, seat in picks:
            times += timed(lambda s=state, t=seat: game.legal_moves(s, t), 5)
            base += timed(lambda s=state: copy_state(s), 5)
            counts.append(len(game.legal_moves(state, seat)))
        p50, p99, b50 = percentile(times, .5), percentile(times, .99), percentile(base, .5)
        print(f"legal_moves {phase:10s} p50={p50 * 1e3:.2f} ms p99={p99 * 1e3:.2f} ms "
              f"moves listed median={statistics.median(counts)} "
              f"ratio p50 / state round trip = {p50 / b50:.1f}")
    sizes = [len(orjson.dumps(s)) for s, _ in samples["build"] or samples["move_goods"]]
    print(f"state size median={statistics.median(sizes):.0f} B max={max(sizes)} B")


if __name__ == "__main__":
    main()
