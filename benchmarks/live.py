"""Live updates benchmark: N open event streams on the deploy's gunicorn (deploy/gunicorn.conf.py
as it is: gevent workers, its default worker count) while moves are applied at a steady rate;
the delay from each move's commit to its arrival at every watcher, p50/p99, and the memory each
open stream costs the workers.

    .venv/bin/python benchmarks/live.py [--streams 1000] [--games 50] [--rate 20] [--seconds 30]

Starts its own redis-server (no persistence) and gunicorn on free ports. The rate limits are off
(AOS_RATE_LIMITS=off, said in the output): the run creates every game and opens every stream from
one address, which is what they are there to stop. The baseline, in the
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
# What would refuse the benchmark's own load: every game and stream comes from one address.
# The run opens every stream from one address: no caps per address or game (service/admission.py).
UNLIMITED = {"AOS_RATE_LIMITS": "off", "AOS_MAX_WAITS_PER_ADDRESS": "100000",
             "AOS_MAX_WAITS_PER_GAME": "100000", "AOS_MAX_REQUESTS_PER_ADDRESS": "100000"}
OPENING_AT_ONCE = 256
HEAD = re.compile(rb'"version":(\d+),"at":"([^"]+)"')


def commit_time(at: bytes) -> float:
    return datetime.fromisoformat(at.decode().replace("Z", "+00:00")).timestamp()


class Watchers:
    """Open NDJSON streams (raw HTTP/1.1, chunked), recording each event's arrival delay."""

    def __init__(self) -> None:
        self.delays: list[float] = []  # seconds from commit to arrival, one per event per watcher
        self.open = 0
        self.failed = 0
        self.refused: dict[int, int] = {}  # status -> streams answered with it instead of a 200
        self.retry_after: set[str] = set()  # the Retry-After values of those answers
        self.closed_unanswered = 0  # closed by the service before it sent a status line
        # Streams being opened at once (connected, not yet answered). All of them at once would
        # starve this one process: it would send requests seconds after connecting, and the
        # service drops a connection whose request has not come within its keepalive (5 s).
        self.opening = asyncio.Semaphore(OPENING_AT_ONCE)
        self.asked = 0  # requests sent and not answered yet
        self.recording = True

    async def watch(self, port: int, game_id: str, after: int) -> None:
        async with self.opening:
            try:
                reader, writer = await asyncio.open_connection(HOST, port, limit=1 << 20)
            except OSError:
                self.failed += 1
                return
            writer.write(f"GET /v1/games/{game_id}/events?after={after} HTTP/1.1\r\nHost: x\r\n"
                         f"Accept: application/x-ndjson\r\n\r\n".encode())
            self.asked += 1
            try:
                status = await reader.readline()
            except (OSError, asyncio.IncompleteReadError, ValueError):
                status = b""
            finally:
                self.asked -= 1
        opened = False
        try:
            if not status:
                self.failed += 1
                self.closed_unanswered += 1
                return
            if b" 200 " not in status:
                self.failed += 1
                code = status.split(b" ")[1] if status.count(b" ") >= 2 else b"0"
                self.refused[int(code)] = self.refused.get(int(code), 0) + 1
                while (line := await reader.readline()) not in (b"\r\n", b""):
                    if line.lower().startswith(b"retry-after:"):
                        self.retry_after.add(line.split(b":", 1)[1].strip().decode())
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


def cpu_seconds(pids: list[int]) -> float:
    """The processes' CPU time so far (user + system): on a machine shared with other work,
    CPU per stream opened and per event sent say more than wall-clock times."""
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return total / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] if ordered else float("nan")


def summary(name: str, delays: list[float]) -> str:
    ms = [d * 1000 for d in delays]
    if not ms:
        return f"{name}: no events"
    return (f"{name}: {len(ms)} arrivals, delay p50 {statistics.median(ms):.1f} ms, "
            f"p99 {percentile(ms, 99):.1f} ms, max {max(ms):.1f} ms")


def gauges(metrics_port: int) -> dict[str, float]:
    """The instance's stream and connection gauges, as Prometheus reads them."""
    text = requests.get(f"http://{HOST}:{metrics_port}/metrics", timeout=10).text
    out = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name in ("aos_event_streams_open", "aos_event_streams_ceiling", "aos_connections_open",
                    "aos_connections_ceiling"):
            out[name] = float(value)
    return out


async def main_async(args: argparse.Namespace, port: int, master: int, games: list[dict],
                     metrics_port: int) -> None:
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
    cpu_before = cpu_seconds(worker_pids(master))
    opened_at = time.monotonic()
    extra = max(0, args.streams - len(games))
    per_game, rest = divmod(extra, len(games))
    for i, g in enumerate(games):
        for _ in range(per_game + (1 if i < rest else 0)):
            tasks.append(asyncio.create_task(watchers.watch(port, g["id"], g["next"])))
    while watchers.open + watchers.failed < len(tasks) and time.monotonic() - opened_at < 60:
        await asyncio.sleep(0.05)
    opening = time.monotonic() - opened_at
    asked, unsent = watchers.asked, len(tasks) - watchers.open - watchers.failed - watchers.asked
    opening_cpu = cpu_seconds(worker_pids(master)) - cpu_before
    await asyncio.sleep(2)  # settled, with a few moves through every feed
    after = memory_kib(worker_pids(master))
    held = watchers.open
    watchers.delays.clear()
    posts_from = len(mover.post_seconds)
    applied_from, started = mover.applied, time.monotonic()
    cpu_from = cpu_seconds(worker_pids(master))
    watchers.recording = True
    await asyncio.sleep(args.seconds)
    loaded = list(watchers.delays)
    elapsed = time.monotonic() - started
    loaded_cpu = cpu_seconds(worker_pids(master)) - cpu_from
    rate = (mover.applied - applied_from) / elapsed
    posts = mover.post_seconds[posts_from:]
    mover.stopped.set()
    mover.join(10)
    seen = await asyncio.to_thread(gauges, metrics_port)

    workers = len(worker_pids(master))
    print(f"gunicorn: {workers} gevent workers (deploy/gunicorn.conf.py defaults), {len(games)} games")
    print(summary(f"phase 1, {len(games)} streams (baseline)", baseline))
    print(summary(f"phase 2, {held} streams held ({watchers.failed} failed to open)", loaded))
    if watchers.closed_unanswered:
        print(f"closed by the service with no answer: {watchers.closed_unanswered}")
    if watchers.refused:
        print(f"refused at once: {watchers.refused} (status: count), Retry-After "
              f"{sorted(watchers.retry_after) or 'none'}")
    if asked or unsent:
        print(f"after {opening:.0f} s: {asked} streams asked for and not answered yet, "
              f"{unsent} not asked for yet (this process asks for {OPENING_AT_ONCE} at a time)")
    print(f"moves applied during phase 2: {rate:.1f}/s; events delivered {len(loaded) / elapsed:.0f}/s")
    p99_ratio = percentile(loaded, 99) / percentile(baseline, 99)
    print(f"delay p99 ratio, phase 2 / phase 1: {p99_ratio:.2f}")
    if baseline_posts and posts:
        print(f"POST move p50 {statistics.median(baseline_posts) * 1000:.1f} ms before, "
              f"{statistics.median(posts) * 1000:.1f} ms with the streams open")
    opened = max(1, held - len(games))
    print(f"opening {held - len(games)} streams took {opening:.1f} s; the workers' CPU for it "
          f"{opening_cpu:.1f} s, {opening_cpu / opened * 1000:.2f} ms per stream (free cores: "
          f"{opening_cpu / (os.cpu_count() or 1):.1f} s on {os.cpu_count()} cores)")
    print(f"the workers' CPU during phase 2: {loaded_cpu / elapsed:.0%} of a core, "
          f"{loaded_cpu / max(1, len(loaded)) * 1e6:.0f} us per event delivered")
    print("/metrics: " + ", ".join(f"{k} {v:.0f}" for k, v in seen.items()))
    print(f"machine load (1, 5, 15 min): {' '.join(f'{x:.1f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} cores")
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
    redis_port, port, metrics_port = free_port(), free_port(), free_port()
    redis_server = shutil.which("redis-server") or "/usr/bin/redis-server"
    redis_proc = subprocess.Popen([redis_server, "--port", str(redis_port), "--bind", HOST, "--save", "",
                                   "--appendonly", "no", "--dir", str(workdir)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    env = {**os.environ, "REDIS_URL": f"redis://{HOST}:{redis_port}/0", "HOST": HOST, "PORT": str(port),
           "LOG_LEVEL": "warning", "PROMETHEUS_MULTIPROC_DIR": str(workdir / "metrics"),
           "AOS_METRICS_PORT": str(metrics_port), **UNLIMITED}
    for name in ("WEB_CONCURRENCY", "GUNICORN_WORKER_CONNECTIONS"):
        env.pop(name, None)
    log = (workdir / "gunicorn.log").open("wb")
    gunicorn = subprocess.Popen([sys.executable, "-m", "gunicorn", "--config", "deploy/gunicorn.conf.py",
                                 "service.api:create_app()"], cwd=ROOT, env=env, stdout=log,
                                stderr=subprocess.STDOUT)
    try:
        limits = " ".join(f"{k}={v}" for k, v in UNLIMITED.items())
        print(f"limits off for the benchmark's own load: {limits}", flush=True)
        try:  # a loaded machine: each worker plays its warm-up games first
            wait_for(f"http://{HOST}:{port}/v1/ready", seconds=180)
        except RuntimeError:
            log.flush()
            sys.stderr.write((workdir / "gunicorn.log").read_text(errors="replace")[-4000:])
            raise
        moves_needed = int(args.rate * args.seconds * 1.6) // args.games + 4
        games = []
        for n in range(args.games):
            seed = f"live-bench-{n}"
            moves = played_game(seed)
            while len(moves) < moves_needed:  # long enough for the run: the next seed
                seed += "+"
                moves = played_game(seed)
            body = {"map": "rust_belt", "players": [{"name": f"P{i}"} for i in range(4)], "seed": seed}
            response = requests.post(f"http://{HOST}:{port}/v1/games", json=body, timeout=30)
            if response.status_code != 201:
                raise RuntimeError(f"creating game {n}: {response.status_code} {response.text[:300]}")
            created = response.json()
            games.append({"id": created["game_id"], "tokens": [s["token"] for s in created["seats"]],
                          "moves": moves, "next": 0})
        random.shuffle(games)
        print(f"{len(games)} games of {min(len(g['moves']) for g in games)}+ moves ready", flush=True)
        asyncio.run(main_async(args, port, gunicorn.pid, games, metrics_port))
    finally:
        gunicorn.terminate()
        gunicorn.wait(60)
        log.flush()
        errors = [line for line in (workdir / "gunicorn.log").read_text(errors="replace").splitlines()
                  if "ERROR" in line or "CRITICAL" in line or "Traceback" in line]
        if errors:
            print(f"gunicorn's log: {len(errors)} error lines, the last ones:\n  " + "\n  ".join(errors[-8:]))
        redis_proc.terminate()
        redis_proc.wait(10)
        log.close()
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
