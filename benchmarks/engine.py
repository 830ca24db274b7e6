"""The engine's speed, in process: whole random games, and legal_moves in mid-game turns.

    python -m benchmarks.engine [--maps rust_belt,berlin] [--games 6] [--rounds 3]
                                [--baseline-rev 742e23c] [--cash N]

For every map it plays the same random 4-player games (same seeds, same choices) and reports
games/s (whole games, and the engine alone: legal_moves + apply), and the p50/p99 of legal_moves
in build and move-goods turns of the middle rounds (round >= 2). Each sampled state is listed
afresh every time: nothing is kept between calls.

With --baseline-rev, `service/` at that git revision is extracted (`git archive`) into a temp
dir, and each measurement runs in its own subprocess that imports `service` from either tree,
old and new alternating in the same run; the closing table gives new/old ratios (medians over
the rounds), so figures from noisy machines compare. Without it, the current tree only.
"""

from __future__ import annotations

import argparse
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


def measure(map_id: str, games: int, seed: int, cash: int | None) -> dict:
    """One tree's figures for one map; imports `service` from whatever sys.path holds."""
    from service.engine import game
    from service.engine.playout import EngineClock, play_random_game

    chooser = random.Random(seed)
    samples: dict[str, list[tuple[dict, int]]] = {"build": [], "move_goods": []}

    def keep_sample(before: dict, seat: int, *_: object) -> None:
        if before["phase"] in samples and before["round"] >= 2:
            samples[before["phase"]].append((before, seat))

    clock = EngineClock()
    moves = 0
    started = time.perf_counter()
    for g in range(games):
        _, made = play_random_game(map_id, 4, f"bench-{g}", chooser, on_move=keep_sample,
                                   clock=clock, cash=cash)
        moves += made
    elapsed = time.perf_counter() - started
    out: dict = {"games_per_s": games / elapsed, "engine_games_per_s": games / clock.seconds,
                 "moves": moves}
    for phase, found in samples.items():
        if not found:
            continue
        picks = [found[i] for i in range(0, len(found), max(1, len(found) // 60))]
        times: list[float] = []
        counts = []
        for state, seat in picks:
            times += timed(lambda s=state, t=seat: game.legal_moves(s, t), 5)
            counts.append(len(game.legal_moves(state, seat)))
        out[phase] = {"p50_ms": percentile(times, .5) * 1e3, "p99_ms": percentile(times, .99) * 1e3,
                      "listed": statistics.median(counts), "samples": len(picks)}
    return out


def run_worker(tree: Path, map_id: str, games: int, seed: int, cash: int | None) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(tree), "--maps", map_id,
           "--games", str(games), "--seed", str(seed)]
    if cash is not None:
        cmd += ["--cash", str(cash)]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True,
                          env={**os.environ, "PYTHONHASHSEED": "0"})
    return json.loads(done.stdout)


def extract(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "service"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def line(name: str, r: dict) -> str:
    parts = [f"{name:8s} games/s={r['games_per_s']:.2f} engine games/s={r['engine_games_per_s']:.2f}"]
    for phase in ("build", "move_goods"):
        if phase in r:
            p = r[phase]
            parts.append(f"{phase} p50={p['p50_ms']:.2f} ms p99={p['p99_ms']:.2f} ms "
                         f"(listed {p['listed']:.0f})")
    return "; ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--maps", default=",".join(ALL_MAPS))
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=3, help="alternations of old and new")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cash", type=int, default=None,
                        help="start every player with this cash, so random games last every round")
    parser.add_argument("--baseline-rev", default=None)
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker:
        sys.path.insert(0, args.worker)
        print(json.dumps(measure(args.maps, args.games, args.seed, args.cash)))
        return

    maps = args.maps.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"new": ROOT}
        if args.baseline_rev:
            trees = {"old": extract(args.baseline_rev, Path(tmp)), "new": ROOT}
        summary = []
        for map_id in maps:
            results: dict[str, list[dict]] = {name: [] for name in trees}
            for _ in range(args.rounds):
                for name, tree in trees.items():
                    r = run_worker(tree, map_id, args.games, args.seed, args.cash)
                    results[name].append(r)
                    print(f"{map_id:10s} {line(name, r)}", flush=True)
            if "old" in results:
                summary.append((map_id, results))
        if summary:
            print("\nnew / old, median over rounds (speed: higher is better; time: lower is better)")
            for map_id, results in summary:
                def ratio(get, results=results) -> float:
                    return statistics.median(get(n) / get(o) for o, n in
                                             zip(results["old"], results["new"], strict=True))
                speed = ratio(lambda r: r["games_per_s"])
                engine = ratio(lambda r: r["engine_games_per_s"])
                text = f"{map_id:10s} games/s x{speed:.2f}  engine games/s x{engine:.2f}"
                for phase in ("build", "move_goods"):
                    if phase in results["old"][0]:
                        p50 = ratio(lambda r, ph=phase: r[ph]["p50_ms"])
                        p99 = ratio(lambda r, ph=phase: r[ph]["p99_ms"])
                        new50 = statistics.median(r[phase]["p50_ms"] for r in results["new"])
                        text += (f"  {phase} p50 x{p50:.2f} ({new50:.2f} ms) p99 x{p99:.2f}")
                print(text)


if __name__ == "__main__":
    main()
