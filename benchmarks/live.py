"""Live updates benchmark: N open event streams on the deploy's gunicorn (deploy/gunicorn.conf.py
as it is: gevent workers, its default worker count) while moves are applied at a steady rate;
the delay from each move's commit to its arrival at every watcher, p50/p99, and the memory each
open stream costs the workers.

    .venv/bin/python benchmarks/live.py [--streams 1000] [--games 50] [--rate 20] [--seconds 30]

Starts its own redis-server (no persistence) and gunicorn on free ports. The baseline, in the
same run, is one watcher per game (phase 1); then the streams are opened (phase 2) and the same
moves go on. A move's commit time is its log entry's `at` (stamped just before the commit, ms);
arrival is when the watcher has read the whole event. The watchers are asyncio connections in
this process reading NDJSON; each event is read whole but only its version and `at` decoded.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

import orjson
import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks" / "http"))

from run import free_port, played_game, wait_for  # noqa: E402

HOST = "127.0.0.1"
HEAD = re.compile(rb'"version":(\d+),"at":"([^"]+)"')


def commit_time(at: bytes) -> float:
    return datetime.fromisoformat(at.decode().replace("Z", "+00:00")).timestamp()


class Watchers:
    """Open NDJSON streams (raw HTTP/1.1, chunked), recording each event's arrival delay."""

    def __init__(self) -> None:
        self.delays: list[float] = []  # seconds from commit to arrival, one per event per watcher
        self.open = 0
        self.failed = 0
        self.recording = True

    async def watch(self, port: int, game_id: str, after: int) -> None:
        try:
            reader, writer = await asyncio.open_connection(HOST, port, limit=1 << 20)
        except OSError:
            self.failed += 1
            return
        writer.write(f"GET /v1/games/{game_id}/events?after={after} HTTP/1.1\r\nHost: x\r\n"
                     f"Accept: application/x-ndjson\r\n\r\n".encode())
        opened = False
        try:
            status = await reader.readline()
            if b" 200 " not in status:
                self.failed += 1
                return
            while (await reader.readline()) not in (b"\r\n", b""):
                pass  # the headers
            self.open += 1
            opened = True
            while True:  # chunked: a size line, then that many bytes and CRLF
                size = int((await reader.readline()).strip() or b"0", 16)
                if size == 0:
                    break
                chunk = await reader.readexactly(size + 2)
                arrived = time.time()
                head = HEAD.search(chunk, 0, 4096)
                if head is not None and self.recording:
                    self.delays.append(arrived - commit_time(head.group(2)))
        except (OSError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            self.open -= opened
            writer.close()


class Mover(threading.Thread):
    """Applies the games' precomputed moves round-robin at `rate` per second."""

    def __init__(self, port: int, games: list[dict], rate: float) -> None:
        super().__init__(daemon=True)
        self.url = f"http://{HOST}:{port}"
        self.games = games
        self.rate = rate
        self.session = requests.Session()
        self.applied = 0
        self.post_seconds: list[float] = []
        self.stopped = threading.Event()

    def run(self) -> None:
        interval = 1 / self.rate
        next_at = time.monotonic()
        turn = 0
        while not self.stopped.is_set():
            g = self.games[turn % len(self.games)]
            turn += 1
            if all(g["next"] >= len(g["moves"]) for g in self.games):
                return  # every game is at the end of its moves
            if g["next"] >= len(g["moves"]):
                continue
            _, seat, move = g["moves"][g["next"]]
            started = time.perf_counter()
            response = self.session.post(f"{self.url}/v1/games/{g['id']}/moves", data=orjson.dumps(move),
                                         headers={"Authorization": f"Bearer {g['tokens'][seat]}",
                                                  "Content-Type": "application/json"}, timeout=30)
            self.post_seconds.append(time.perf_counter() - started)
            response.raise_for_status()
            g["next"] += 1
            self.applied += 1
            next_at += interval
            self.stopped.wait(max(0.0, next_at - time.monotonic()))


def worker_pids(master: int) -> list[int]:
    path = Path(f"/proc/{master}/task/{master}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def memory_kib(pids: list[int]) -> int:
    """The workers' proportional set size (shared pages split between the processes)."""
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
    return total


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] if ordered else float("nan")


def summary(name: str, delays: list[float]) -> str:
    ms = [d * 1000 for d in delays]
    if not ms:
        return f"{name}: no events"
    return (f"{name}: {len(ms)} arrivals, delay p50 {statistics.median(ms):.1f} ms, "
            f"p99 {percentile(ms, 99):.1f} ms, max {max(ms):.1f} ms")


async def main_async(args: argparse.Namespace, port: int, master: int, games: list[dict]) -> None:
    watchers = Watchers()
    tasks: list[asyncio.Task] = []
    mover = Mover(port, games, args.rate)

    # Phase 1, the baseline: one watcher per game.
    for g in games:
        tasks.append(asyncio.create_task(watchers.watch(port, g["id"], g["next"])))
    while watchers.open + watchers.failed < len(tasks):
        await asyncio.sleep(0.05)
    await asyncio.sleep(1)
    mover.start()
    await asyncio.sleep(args.seconds / 3)
    baseline, baseline_posts = list(watchers.delays), list(mover.post_seconds)
    watchers.recording = False

    # Phase 2: the streams are opened, the same moves go on.
    before = memory_kib(worker_pids(master))
    opened_at = time.monotonic()
    extra = max(0, args.streams - len(games))
    per_game, rest = divmod(extra, len(games))
    for i, g in enumerate(games):
        for _ in range(per_game + (1 if i < rest else 0)):
            tasks.append(asyncio.create_task(watchers.watch(port, g["id"], g["next"])))
    while watchers.open + watchers.failed < len(tasks) and time.monotonic() - opened_at < 60:
        await asyncio.sleep(0.05)
    opening = time.monotonic() - opened_at
    await asyncio.sleep(2)  # settled, with a few moves through every feed
    after = memory_kib(worker_pids(master))
    held = watchers.open
    watchers.delays.clear()
    posts_from = len(mover.post_seconds)
    applied_from, started = mover.applied, time.monotonic()
    watchers.recording = True
    await asyncio.sleep(args.seconds)
    loaded = list(watchers.delays)
    elapsed = time.monotonic() - started
    rate = (mover.applied - applied_from) / elapsed
    posts = mover.post_seconds[posts_from:]
    mover.stopped.set()
    mover.join(10)

    workers = len(worker_pids(master))
    print(f"gunicorn: {workers} gevent workers (deploy/gunicorn.conf.py defaults), {len(games)} games")
    print(summary(f"phase 1, {len(games)} streams (baseline)", baseline))
    print(summary(f"phase 2, {held} streams held ({watchers.failed} failed to open)", loaded))
    print(f"moves applied during phase 2: {rate:.1f}/s; events delivered {len(loaded) / elapsed:.0f}/s")
    p99_ratio = percentile(loaded, 99) / percentile(baseline, 99)
    print(f"delay p99 ratio, phase 2 / phase 1: {p99_ratio:.2f}")
    if baseline_posts and posts:
        print(f"POST move p50 {statistics.median(baseline_posts) * 1000:.1f} ms before, "
              f"{statistics.median(posts) * 1000:.1f} ms with the streams open")
    print(f"opening {held - len(games)} streams took {opening:.1f} s")
    per_stream = (after - before) / max(1, held - len(games))
    print(f"workers' memory (PSS): {before / 1024:.1f} MiB before, {after / 1024:.1f} MiB after: "
          f"{per_stream:.1f} KiB per open stream")
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--rate", type=float, default=20.0, help="moves per second, over all games")
    parser.add_argument("--seconds", type=float, default=30.0, help="phase 2's length")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="aos-live-bench-"))
    redis_port, port = free_port(), free_port()
    redis_server = shutil.which("redis-server") or "/usr/bin/redis-server"
    redis_proc = subprocess.Popen([redis_server, "--port", str(redis_port), "--bind", HOST, "--save", "",
                                   "--appendonly", "no", "--dir", str(workdir)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    env = {**os.environ, "REDIS_URL": f"redis://{HOST}:{redis_port}/0", "HOST": HOST, "PORT": str(port),
           "LOG_LEVEL": "warning", "PROMETHEUS_MULTIPROC_DIR": str(workdir / "metrics")}
    for name in ("WEB_CONCURRENCY", "GUNICORN_WORKER_CONNECTIONS"):
        env.pop(name, None)
    log = (workdir / "gunicorn.log").open("wb")
    gunicorn = subprocess.Popen([sys.executable, "-m", "gunicorn", "--config", "deploy/gunicorn.conf.py",
                                 "service.api:create_app()"], cwd=ROOT, env=env, stdout=log,
                                stderr=subprocess.STDOUT)
    try:
        wait_for(f"http://{HOST}:{port}/v1/ready")
        moves_needed = int(args.rate * args.seconds * 1.6) // args.games + 4
        games = []
        for n in range(args.games):
            seed = f"live-bench-{n}"
            moves = played_game(seed)
            while len(moves) < moves_needed:  # long enough for the run: the next seed
                seed += "+"
                moves = played_game(seed)
            body = {"map": "rust_belt", "players": [{"name": f"P{i}"} for i in range(4)], "seed": seed}
            created = requests.post(f"http://{HOST}:{port}/v1/games", json=body, timeout=30).json()
            games.append({"id": created["game_id"], "tokens": [s["token"] for s in created["seats"]],
                          "moves": moves, "next": 0})
        random.shuffle(games)
        print(f"{len(games)} games of {min(len(g['moves']) for g in games)}+ moves ready", flush=True)
        asyncio.run(main_async(args, port, gunicorn.pid, games))
    finally:
        gunicorn.terminate()
        gunicorn.wait(60)
        redis_proc.terminate()
        redis_proc.wait(10)
        log.close()
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
