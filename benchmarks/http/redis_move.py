"""Redis's side of a POST move against the floor's: redis-server's CPU time and its scripts'
time per request, from the server's own counters (INFO cpu, INFO commandstats), which count
redis-server's process alone, whatever else the machine runs. At 16 connections on 2 cores the
service's workers and redis-server share the cores, so what Redis spends on a move is as much
the move's cost as the worker's instructions (count_move.py counts those).

The benchmark's app in process (profile_move.bench: the real service and the floor endpoint on a
private redis-server). Its games' moves are posted once, then as many floor requests, each phase
after CONFIG RESETSTAT; then the same again for the floor alone (`--rounds`), as the moves can't
be played twice.

    .venv/bin/python -m benchmarks.http.redis_move [--games 2] [--rounds 5]
"""

from __future__ import annotations

import argparse
import sys

import redis

from benchmarks.http.profile_move import Bench, bench


def _phase(client: redis.Redis, run: list, count: int) -> tuple[float, dict[str, dict]]:
    """redis-server's CPU seconds and its commandstats over running `run`'s calls."""
    client.config_resetstat()
    before = client.info("cpu")
    for call in run:
        call()
    after = client.info("cpu")
    stats = client.info("commandstats")
    cpu = sum(after[k] - before[k] for k in ("used_cpu_sys", "used_cpu_user"))
    return cpu / count * 1e6, stats


def _describe(name: str, cpu_us: float, stats: dict[str, dict], count: int) -> None:
    total = sum(s["usec"] for s in stats.values())
    # Commands called by scripts are counted on their own too: the scripts' time holds them.
    scripts = sum(stats.get(k, {}).get("usec", 0) for k in ("cmdstat_evalsha", "cmdstat_eval"))
    calls = sum(stats.get(k, {}).get("calls", 0) for k in ("cmdstat_evalsha", "cmdstat_eval"))
    print(f"  {name:6} redis-server CPU {cpu_us:6.1f} us a request; scripts {scripts / count:5.1f} us "
          f"({calls / count:.2f} a request); all commands {total / count:5.1f} us (script's "
          f"commands counted twice)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5, help="floor rounds measured after")
    parser.add_argument("--commands", action="store_true", help="the moves' commandstats too")
    args = parser.parse_args(argv)
    ready: Bench
    with bench(args.games) as ready:
        import os
        client = redis.Redis.from_url(os.environ["REDIS_URL"])
        count = len(ready.requests)
        for _ in range(count):
            ready.post_floor()  # warm
        moves = ready.post_moves()
        cpu, stats = _phase(client, [lambda: next(moves)] * count, count)
        print(f"{count} POST moves, then {args.rounds} x {count} floor requests")
        _describe("move", cpu, stats, count)
        if args.commands:
            for key, value in sorted(stats.items(), key=lambda kv: -kv[1]["usec"]):
                print(f"    {key[8:]:12} {value['calls'] / count:5.2f} calls {value['usec'] / count:6.1f} us")
        floors = []
        for _ in range(args.rounds):
            floors.append(_phase(client, [ready.post_floor] * count, count))
        for cpu, stats in floors:
            _describe("floor", cpu, stats, count)
    return 0


if __name__ == "__main__":
    sys.exit(main())
