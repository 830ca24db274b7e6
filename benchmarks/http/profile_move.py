"""Where a POST move's time goes, in process: the benchmark's app (bench_app.py, the real service
plus the floor endpoint) on a private redis-server, driven through Flask's test client (the
whole WSGI stack, without gunicorn or the network). Plays the HTTP benchmark's games' moves in
order, then as many floor requests, and prints each one's mean time and the move's profile.

    .venv/bin/python -m benchmarks.http.profile_move [--games 3] [--top 30] [--sort tottime]
    .venv/bin/python -m benchmarks.http.profile_move --no-profile   # the times alone

The service's log lines go to a file (as under the benchmark, where they go to its log).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
import redis

from benchmarks.http.run import HOST, PLAYERS, free_port, played_game


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=3, help="whole games of moves to play")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--sort", default="tottime")
    parser.add_argument("--callers", default=None, help="also who calls these (a regex)")
    parser.add_argument("--no-profile", action="store_true")
    args = parser.parse_args(argv)

    workdir = Path(tempfile.mkdtemp(prefix="aos-profile-"))
    port = free_port()
    server = subprocess.Popen(
        [shutil.which("redis-server") or "/usr/bin/redis-server", "--port", str(port), "--bind",
         HOST, "--save", "", "--appendonly", "no", "--dir", str(workdir)],
        stdout=subprocess.DEVNULL,
    )
    try:
        client = redis.Redis(port=port)
        for _ in range(100):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        os.environ.update({"REDIS_URL": f"redis://{HOST}:{port}/0", "AOS_RATE_LIMITS": "off",
                           "AOS_MAX_REQUESTS_PER_ADDRESS": "100000",
                           "AOS_MAX_WAITS_PER_ADDRESS": "100000"})
        log = (workdir / "service.log").open("w")
        sys.stderr = log  # the JSON log lines, written as in production, but not over the figures
        from benchmarks.http.bench_app import create_bench_app

        app = create_bench_app()
        http = app.test_client()
        seeds = [f"bench-{n}" for n in range(args.games)]
        requests: list[tuple[str, bytes, dict]] = []
        for seed in seeds:
            script = played_game(seed)
            body = {"map": "rust_belt", "players": [{"name": f"P{i}"} for i in range(PLAYERS)],
                    "seed": seed}
            created = http.post("/v1/games", json=body).get_json()
            requests += [(f"/v1/games/{created['game_id']}/moves", orjson.dumps(move),
                          {"Authorization": f"Bearer {created['seats'][seat]['token']}"})
                         for _, seat, move in script]
        # The floor's state: the size of the mid-game state and view the benchmark uses.
        mid = orjson.loads(http.get(requests[len(requests) // 3][0].rsplit("/", 1)[0]).data)
        client.hset("bench:floor:{0}", mapping={"version": 0, "state": orjson.dumps(
            {"state": mid, "view": mid})})

        def moves() -> None:
            for path, data, headers in requests:
                response = http.post(path, data=data, headers=headers,
                                     content_type="application/json")
                assert response.status_code == 200, response.data

        def floors() -> None:
            for _ in requests:
                http.post("/bench/floor/0")

        # Warm: one floor run; the moves can't be played twice, so they are measured once.
        floors()
        profile = cProfile.Profile() if not args.no_profile else None
        started = time.perf_counter()
        if profile:
            profile.enable()
        moves()
        if profile:
            profile.disable()
        move_ms = (time.perf_counter() - started) * 1000 / len(requests)
        started = time.perf_counter()
        floors()
        floor_ms = (time.perf_counter() - started) * 1000 / len(requests)
        sys.stderr = sys.__stderr__
        print(f"{len(requests)} POST moves: {move_ms:.3f} ms each"
              f"{' (profiled)' if profile else ''}; floor {floor_ms:.3f} ms each")
        if profile:
            stats = pstats.Stats(profile)
            stats.sort_stats(args.sort).print_stats(args.top)
            if args.callers:
                stats.print_callers(args.callers)
    finally:
        server.terminate()
        server.wait(30)
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
