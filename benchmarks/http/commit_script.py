"""The commit script's time in Redis, alone: the benchmark's games' commits (their keys and
arguments, captured from profile_move's run) run again by EVALSHA against a fresh private
redis-server, each on the game's hash set back to the version and meta it expects, and timed by
Redis itself (INFO commandstats: the script's usec, its commands' included). The same commits
for the script of each git revision named, so a change of the script is measured against the
one before on the same arguments; the rounds alternate between them.

    .venv/bin/python -m benchmarks.http.commit_script [--games 1] [--rounds 5] [REV ...]

REV `.` (and no REV at all) is the working tree's script. `--floor` adds the floor's compare-and-set on its
own state (bench_app.py), for scale.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import redis

from benchmarks.http.private_redis import private_redis
from benchmarks.http.run import HOST, free_port

ROOT = Path(__file__).resolve().parents[2]
Commit = tuple[list[str], list[bytes]]


def captured_commits(games: int) -> tuple[list[Commit], bytes]:
    """The keys and arguments of every commit of the benchmark's games' moves, and the floor's
    state."""
    from benchmarks.http.profile_move import bench
    from service.store import redis_store

    commits: list[Commit] = []
    real = redis_store._evalsha

    def capture(client: Any, script: Any, keys: list[str], args: list[object]) -> Any:
        if script.script == redis_store._COMMIT:
            commits.append((list(keys), [a if isinstance(a, bytes) else str(a).encode() for a in args]))
        return real(client, script, keys, args)

    redis_store._evalsha = capture
    try:
        with bench(games) as ready:
            commits.clear()  # the creates' commits, if any
            for _ in ready.post_moves():
                pass
            floor = redis.Redis.from_url(__import__("os").environ["REDIS_URL"]).hget(
                "bench:floor:{0}", "state")
    finally:
        redis_store._evalsha = real
    return commits, floor


def script_at(rev: str | None) -> str:
    """The commit script of redis_store.py at a git revision (None or ".": the working tree's)."""
    if rev is None or rev == ".":
        from service.store.redis_store import _COMMIT
        return _COMMIT
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:service/store/redis_store.py"],
                            capture_output=True, text=True, check=True).stdout
    namespace: dict[str, Any] = {}
    start = source.index("_COMMIT = ")
    exec(source[start:source.index('"""\n', source.index('"""', start) + 3) + 4], namespace)
    return namespace["_COMMIT"]


def timed(client: redis.Redis, script: str, commits: list[Commit]) -> float:
    """The script's mean time in Redis (µs) over the commits, each on a game set back to the
    version and meta it expects."""
    client.flushall()
    sha = client.script_load(script)
    usec = 0
    for keys, args in commits:
        client.hset(keys[0], mapping={"version": args[0], "meta": args[11] or b"-"})
        client.config_resetstat()
        reply = client.evalsha(sha, len(keys), *keys, *args)
        assert reply[0] == b"applied", reply
        usec += client.info("commandstats")["cmdstat_evalsha"]["usec"]
    return usec / len(commits)


def timed_floor(client: redis.Redis, state: bytes, count: int) -> float:
    from benchmarks.http.bench_app import _CAS

    client.flushall()
    sha = client.script_load(_CAS)
    client.hset("bench:floor:{0}", mapping={"version": 0, "state": state})
    client.config_resetstat()
    for version in range(count):
        client.evalsha(sha, 1, "bench:floor:{0}", version, state)
    return client.info("commandstats")["cmdstat_evalsha"]["usec"] / count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revs", nargs="*", help="git revisions whose script to time")
    parser.add_argument("--games", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--floor", action="store_true")
    args = parser.parse_args(argv)
    commits, floor = captured_commits(args.games)
    scripts = {rev: script_at(rev) for rev in args.revs} or {"working tree": script_at(None)}
    port = free_port()
    with (tempfile.TemporaryDirectory(prefix="aos-commit-script-") as workdir,
          private_redis(HOST, port, workdir) as client):
        times: dict[str, list[float]] = {name: [] for name in scripts}
        if args.floor:
            times["floor"] = []
        for _ in range(args.rounds):
            for name, script in scripts.items():
                times[name].append(timed(client, script, commits))
            if args.floor:
                times["floor"].append(timed_floor(client, floor, len(commits)))
    print(f"{len(commits)} commits, {args.rounds} rounds: µs in Redis a commit (min, median)")
    for name, values in times.items():
        print(f"  {name:14} {min(values):6.1f} {statistics.median(values):6.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
