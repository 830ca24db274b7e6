"""The archive's costs: how far it lags behind commits under the HTTP benchmark's move load, and
what rebuilding a finished game from it costs.

    .venv/bin/python benchmarks/archive.py [--workers 5] [--connections 16] [--seconds 10]
                                           [--rebuilds 30] [--skip-load]

Starts its own redis-server (no persistence) and PostgreSQL cluster (tools/pg_cluster.py) on
free ports.

1. Rebuild: a whole 6-player Rust Belt game (LONG_SEED: 257 moves of the engine's random
   player) is played and archived; then, again and again, its keys are deleted from Redis and
   the game is put back by the API's Restorer (read from PostgreSQL, rebuild, write to Redis).
   Timed with the archive's final state (what the copier keeps), and with only the create's
   state (a replay of every move from the seed: what it would cost without kept states), each
   as a ratio to reading the same game from Redis in the same process.
2. Lag: gunicorn on that Redis with DATABASE_URL set and `python -m service.archive copy`
   running, while C connections post the moves of whole games (the HTTP benchmark's move plan).
   The lag of each move is the archive row's archived_at minus the commit time in its log
   entry. The same load also runs with the copier stopped, and the move throughput of the two
   runs is compared: the copier's cost to the request path on a shared 2-core machine.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
import psycopg
import redis

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE / "http"), str(ROOT / "tools"), str(ROOT)]

from load import run as load_run  # noqa: E402
from pg_cluster import PostgresCluster, free_port  # noqa: E402
from run import HOST, create_game, games_enough, played_game, wait_for  # noqa: E402

from service.archive.copier import ArchiveCopier  # noqa: E402
from service.archive.migrate import migrate  # noqa: E402
from service.engine import game  # noqa: E402
from service.engine.playout import play_random_game  # noqa: E402
from service.referee.games import Games, full_view  # noqa: E402
from service.referee.restore import Restorer, describe, rebuild  # noqa: E402
from service.referee.settings import Settings  # noqa: E402
from service.store import RedisStore  # noqa: E402
from service.store.archive import Archive  # noqa: E402
from service.store.keys import game_keys  # noqa: E402

LONG_SEED = "long-20"  # rust_belt, 6 players: 257 moves, the longest of 260 seeds tried


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))]


def start_redis(workdir: Path) -> tuple[subprocess.Popen, int]:
    port = free_port()
    proc = subprocess.Popen(
        [shutil.which("redis-server") or "/usr/bin/redis-server", "--port", str(port), "--bind", HOST,
         "--save", "", "--appendonly", "no", "--dir", str(workdir)],
        stdout=subprocess.DEVNULL,
    )
    client = redis.Redis(port=port)
    for _ in range(200):
        try:
            client.ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    return proc, port


def drain(copier: ArchiveCopier) -> None:
    while copier.run_once():
        pass


def rebuild_figures(redis_url: str, database_url: str, rebuilds: int) -> None:
    store = RedisStore(redis_url)
    games = Games(store, Settings())
    moves: list[tuple[int, dict]] = []
    play_random_game("rust_belt", 6, LONG_SEED, random.Random(LONG_SEED),
                     on_move=lambda before, seat, move, *_: moves.append((seat, move)))
    body = {"map": "rust_belt", "players": [{"name": f"P{i}"} for i in range(6)], "seed": LONG_SEED}
    game_id = orjson.loads(games.create(body, body, None).body)["game_id"]
    for seat, move in moves:
        games.apply(game_id, seat, move, if_match=None, idempotency_key=None, stored=games.load(game_id))
    archive = Archive(database_url)
    drain(ArchiveCopier(store, archive, describe, "bench", cache_ttl=86400))
    view = store.load_view(game_id)
    history = store.history(game_id)
    assert orjson.loads(view[1])["status"] == "finished"
    restorer = Restorer(store, archive, lambda s, g, v: orjson.dumps(full_view(s, g, v)), ttl=86400)
    client = store._redis()
    keys = game_keys(game_id)

    def timed_restore() -> float:
        client.delete(keys.state, keys.log)
        started = time.perf_counter()
        assert restorer(game_id)
        elapsed = time.perf_counter() - started
        assert store.load_view(game_id) == view and store.history(game_id) == history
        return elapsed

    def timed_read() -> float:
        started = time.perf_counter()
        store.load(game_id, with_view=True)
        store.history(game_id)
        return time.perf_counter() - started

    def phases() -> tuple[float, float, float, float]:
        """The kept-state rebuild's steps, as the Restorer takes them."""
        client.delete(keys.state, keys.log)
        t0 = time.perf_counter()
        archived = archive.load(game_id)
        t1 = time.perf_counter()
        state = rebuild(archived)
        t2 = time.perf_counter()
        rendered = orjson.dumps(full_view(state, game_id, archived.version))
        t3 = time.perf_counter()
        store.create(game_id, state=orjson.dumps(state), meta=archived.meta, view=rendered,
                     ttl=86400, log=archived.entries)
        return t1 - t0, t2 - t1, t3 - t2, time.perf_counter() - t3

    for _ in range(3):
        timed_restore()
    reads = [timed_read() for _ in range(rebuilds)]
    kept = [timed_restore() for _ in range(rebuilds)]
    split = [phases() for _ in range(min(rebuilds, 10))]
    with psycopg.connect(database_url) as conn:
        conn.execute("UPDATE game_secrets SET state = %s, state_version = 0 WHERE game_id = %s",
                     [orjson.dumps(game.new_game("rust_belt", [p["name"] for p in body["players"]],
                                                 LONG_SEED)), game_id])
    replayed = [timed_restore() for _ in range(max(5, rebuilds // 3))]
    read_ms = statistics.median(reads) * 1000
    print(f"\nrebuild of a finished game from the archive: {len(moves)} moves, "
          f"{sum(map(len, history)) // 1024} KB of log, view {len(view[1]) // 1024} KB")
    print(f"  {'path':<44} {'p50 ms':>8} {'p99 ms':>8} {'vs Redis read':>14}")
    for name, values in (("read from Redis (load + history): baseline", reads),
                         ("rebuild from the kept final state", kept),
                         ("rebuild replaying every move from the seed", replayed)):
        p50 = statistics.median(values) * 1000
        print(f"  {name:<44} {p50:8.2f} {percentile(values, 0.99) * 1000:8.2f} {p50 / read_ms:13.1f}x")
    pg, rb, render, write = (statistics.median(x) * 1000 for x in zip(*split, strict=True))
    print(f"  its steps (p50): PostgreSQL read {pg:.2f} ms, rebuild {rb:.2f} ms, view {render:.2f} ms, "
          f"Redis write {write:.2f} ms")
    archive.close()
    store.close()


def lag_figures(redis_url: str, database_url: str, args: argparse.Namespace, workdir: Path) -> None:
    api_port = free_port()
    env = {**os.environ, "REDIS_URL": redis_url, "DATABASE_URL": database_url, "LOG_LEVEL": "warning",
           "AOS_RATE_LIMITS": "off"}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    api = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--workers", str(args.workers), "--worker-class", "sync",
         "--bind", f"{HOST}:{api_port}", "--log-level", "warning", "service.api:create_app()"],
        cwd=ROOT, env=env, stdout=(workdir / "api.log").open("wb"), stderr=subprocess.STDOUT,
    )
    copier = None
    try:
        wait_for(f"http://{HOST}:{api_port}/v1/health")
        seeds = [f"bench-{n}" for n in range(3)]
        scripts = {seed: played_game(seed) for seed in seeds}

        # Enough whole games that no connection runs out of moves before the time is up.
        per_connection = games_enough(args.seconds, args.connections,
                                      min(len(script) for script in scripts.values()))

        def move_plan_factory():
            games = {}
            for i in range(args.connections):
                games[i] = [(create_game(api_port, seed), scripts[seed])
                            for seed in itertools.islice(itertools.cycle(seeds), per_connection)]

            def factory(i: int):
                requests = (
                    ("POST", f"/v1/games/{created['game_id']}/moves", orjson.dumps(move),
                     {"Content-Type": "application/json",
                      "Authorization": f"Bearer {created['seats'][seat]['token']}"})
                    for created, script in games[i] for _, seat, move in script
                )
                return lambda last: next(requests, None)

            return factory

        copier_env = {**env, "LOG_LEVEL": "warning"}

        def start_copier() -> subprocess.Popen:
            return subprocess.Popen([sys.executable, "-m", "service.archive", "copy"], cwd=ROOT,
                                    env=copier_env, stdout=(workdir / "copier.log").open("ab"),
                                    stderr=subprocess.STDOUT)

        store = RedisStore(redis_url)
        copier = start_copier()
        deadline = time.monotonic() + 60
        while store.outbox_backlog("archive") and time.monotonic() < deadline:
            time.sleep(0.1)  # the games' creates are archived before the clock starts
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute("TRUNCATE moves")
        started = time.time()
        with_copier = load_run("POST move, copier on", HOST, api_port, move_plan_factory(),
                               connections=args.connections, seconds=args.seconds, processes=2)
        ended = time.time()
        while store.outbox_backlog("archive"):
            time.sleep(0.01)
        caught_up = time.time() - ended
        copier.send_signal(signal.SIGTERM)
        copier.wait(30)
        copier = None
        with psycopg.connect(database_url) as conn:
            rows = conn.execute(
                "SELECT extract(epoch FROM archived_at - at) FROM moves WHERE at >= to_timestamp(%s)",
                [started]).fetchall()
        lags = [float(r[0]) for r in rows]
        without = load_run("POST move, copier off", HOST, api_port, move_plan_factory(),
                           connections=args.connections, seconds=args.seconds, processes=2)
        store.close()
    finally:
        if copier is not None:
            copier.kill()
        api.send_signal(signal.SIGTERM)
        api.wait(30)
    print(f"\narchive lag under the move load: {args.workers} gunicorn sync workers, "
          f"{args.connections} connections, {args.seconds:.0f} s, one copier process")
    for result in (with_copier, without):
        print(f"  {result.name:<24} {result.rps:8.0f} moves/s  p50 {result.p50_ms:6.1f} ms  "
              f"p99 {result.p99_ms:6.1f} ms  statuses {result.statuses}")
        if result.ran_dry:
            print(f"  warning: {result.ran_dry} connections ran out of moves before the time was "
                  f"up: {result.name}'s moves/s is too low")
    print(f"  moves/s with the copier running: {with_copier.rps / without.rps:.0%} of without")
    print(f"  {len(lags)} moves archived; commit -> archive lag p50 {percentile(lags, 0.5) * 1000:.0f} ms, "
          f"p99 {percentile(lags, 0.99) * 1000:.0f} ms, max {max(lags) * 1000:.0f} ms "
          f"({percentile(lags, 0.5) * 1000 / with_copier.p50_ms:.1f}x a move's p50); "
          f"backlog empty {caught_up * 1000:.0f} ms after the load stopped")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2 * (os.cpu_count() or 1) + 1)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rebuilds", type=int, default=30)
    parser.add_argument("--skip-load", action="store_true", help="only the rebuild figures")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="aos-bench-archive-"))
    redis_proc, redis_port = start_redis(workdir)
    cluster = PostgresCluster()
    try:
        cluster.start()
        migrate(cluster.url())
        redis_url = f"redis://{HOST}:{redis_port}/0"
        rebuild_figures(redis_url, cluster.url(), args.rebuilds)
        if not args.skip_load:
            redis.Redis(port=redis_port).flushall()
            with psycopg.connect(cluster.url(), autocommit=True) as conn:
                conn.execute("TRUNCATE games, moves, game_secrets")
            lag_figures(redis_url, cluster.url(), args, workdir)
    finally:
        cluster.remove()
        redis_proc.terminate()
        redis_proc.wait(30)
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
