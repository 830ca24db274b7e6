"""simulate over HTTP, for benchmarks/sim.py --http: `python -m service` on a private Redis, a
mid-game game (a recorded random game's moves replayed), then POST …/simulate of its next 10
moves, timed from the client."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import redis

from benchmarks.http.run import HOST, call, free_port, wait_for
from service.engine.playout import play_random_game
from service.sim.simulate import simulate

ROOT = Path(__file__).resolve().parents[1]
PLAYERS = 4
STEPS = 10


def script(map_id: str) -> tuple[list[tuple[dict, int, dict]], int]:
    """A recorded random game, and the first move of round 2 or later from which its next 10
    moves run with no random step (so every mode plays them all)."""
    moves: list[tuple[dict, int, dict]] = []
    play_random_game(map_id, PLAYERS, f"sim-http-{map_id}", random.Random(map_id),
                     on_move=lambda before, seat, move, *_: moves.append((before, seat, move)))
    for i, (before, _, _) in enumerate(moves[:-STEPS]):
        if before["round"] < 2:
            continue
        steps = [{"seat": s, "move": m} for _, s, m in moves[i:i + STEPS]]
        if simulate(before, steps, "stop").stops_at is None:
            return moves, i
    raise RuntimeError("no 10 moves without a random step")


def simulate_latencies(map_id: str, requests_n: int) -> list[float]:
    moves, cut = script(map_id)
    workdir = Path(tempfile.mkdtemp(prefix="aos-bench-sim-"))
    redis_port, api_port = free_port(), free_port()
    redis_proc = subprocess.Popen(
        [shutil.which("redis-server") or "/usr/bin/redis-server", "--port", str(redis_port),
         "--bind", HOST, "--save", "", "--appendonly", "no", "--dir", str(workdir)],
        stdout=subprocess.DEVNULL)
    env = {**os.environ, "REDIS_URL": f"redis://{HOST}:{redis_port}/0", "AOS_RATE_LIMITS": "off",
           "PYTHONPATH": str(ROOT)}
    api_proc = None
    try:
        r = redis.Redis(port=redis_port)
        for _ in range(100):
            try:
                r.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        api_proc = subprocess.Popen([sys.executable, "-m", "service", "--port", str(api_port)],
                                    env=env, cwd=ROOT, stdout=(workdir / "service.log").open("wb"),
                                    stderr=subprocess.STDOUT)
        wait_for(f"http://{HOST}:{api_port}/v1/health", 120)
        body = {"map": map_id, "players": [{"name": f"P{i}"} for i in range(PLAYERS)],
                "seed": f"sim-http-{map_id}"}
        created = call(api_port, "POST", "/v1/games", body)
        gid, tokens = created["game_id"], [s["token"] for s in created["seats"]]
        for _, seat, move in moves[:cut]:
            call(api_port, "POST", f"/v1/games/{gid}/moves", move, tokens[seat])
        steps = [{"seat": s, "move": m} for _, s, m in moves[cut:cut + STEPS]]
        request = {"moves": steps, "random": "sample", "seed": "bench"}
        answer = call(api_port, "POST", f"/v1/games/{gid}/simulate", request)
        assert len(answer["steps"]) == STEPS, answer
        out = []
        for _ in range(requests_n):
            t = time.perf_counter()
            call(api_port, "POST", f"/v1/games/{gid}/simulate", request)
            out.append(time.perf_counter() - t)
        return out
    finally:
        if api_proc is not None:
            api_proc.terminate()
            api_proc.wait(10)
        redis_proc.terminate()
        redis_proc.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)
