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
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import orjson
from flask.testing import FlaskClient

from benchmarks.http.private_redis import private_redis
from benchmarks.http.run import HOST, PLAYERS, free_port, played_game


@dataclass
class Bench:
    """The benchmark's app in process on a private redis-server, its games' moves ready to post
    in order (`requests`: path, body, headers) and the floor's state stored."""

    http: FlaskClient
    requests: list[tuple[str, bytes, dict]]

    def post_moves(self) -> Iterator[None]:
        """Posts the moves one by one, yielding after each (a caller can count or time them)."""
        for path, data, headers in self.requests:
            response = self.http.post(path, data=data, headers=headers,
                                      content_type="application/json")
            assert response.status_code == 200, response.data
            yield

    def post_floor(self) -> None:
        self.http.post("/bench/floor/0")


@contextmanager
def bench(games: int, scripts: dict[str, list[tuple[dict, int, dict]]] | None = None) -> Iterator[Bench]:
    """Bench's set-up, torn down after: a private redis-server, the app (its JSON log lines go
    to a file, as under the benchmark to its log), `games` seeded whole games created. Their
    moves are played here, unless `scripts` has them by seed (run.played_apart)."""
    workdir = Path(tempfile.mkdtemp(prefix="aos-profile-"))
    port = free_port()
    stderr = sys.stderr
    try:
        with private_redis(HOST, port, str(workdir)) as client:
            os.environ.update({"REDIS_URL": f"redis://{HOST}:{port}/0", "AOS_RATE_LIMITS": "off",
                               "AOS_MAX_REQUESTS_PER_ADDRESS": "100000",
                               "AOS_MAX_WAITS_PER_ADDRESS": "100000"})
            sys.stderr = (workdir / "service.log").open("w")
            from benchmarks.http.bench_app import create_bench_app

            http = create_bench_app().test_client()
            requests: list[tuple[str, bytes, dict]] = []
            for seed in [f"bench-{n}" for n in range(games)]:
                script = scripts[seed] if scripts is not None else played_game(seed)
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
            yield Bench(http, requests)
    finally:
        sys.stderr = stderr
        shutil.rmtree(workdir, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=3, help="whole games of moves to play")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--sort", default="tottime")
    parser.add_argument("--callers", default=None, help="also who calls these (a regex)")
    parser.add_argument("--no-profile", action="store_true")
    args = parser.parse_args(argv)

    with bench(args.games) as ready:
        count = len(ready.requests)
        # Warm: one floor run; the moves can't be played twice, so they are measured once.
        for _ in range(count):
            ready.post_floor()
        profile = cProfile.Profile() if not args.no_profile else None
        started = time.perf_counter()
        if profile:
            profile.enable()
        for _ in ready.post_moves():
            pass
        if profile:
            profile.disable()
        move_ms = (time.perf_counter() - started) * 1000 / count
        started = time.perf_counter()
        for _ in range(count):
            ready.post_floor()
        floor_ms = (time.perf_counter() - started) * 1000 / count
    print(f"{count} POST moves: {move_ms:.3f} ms each"
          f"{' (profiled)' if profile else ''}; floor {floor_ms:.3f} ms each")
    if profile:
        stats = pstats.Stats(profile)
        stats.sort_stats(args.sort).print_stats(args.top)
        if args.callers:
            stats.print_callers(args.callers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
