"""Webhook deliveries: throughput (deliveries/s draining a backlog) and the delay from a move's
commit to its webhook at the receiver (p50/p99, at a steady move rate), with 1 and 2 workers.

    .venv/bin/python -m benchmarks.webhooks [--games 25] [--moves 40] [--rate 50] [--seconds 8]

Starts its own redis-server and `python -m service.worker` processes; the receiver is an HTTP
server in this process that answers 200 at once. The baseline, measured in the same run, is the
bare sender: the same signed POSTs to the same receiver from as many threads as a worker uses,
with no store in between. Deliveries/s are also given as a ratio to it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[1]
os.environ["AOS_WEBHOOKS_ALLOW_PRIVATE"] = "1"

from service.api import create_app  # noqa: E402
from service.referee.clocks import parse_ms  # noqa: E402
from service.referee.settings import Settings  # noqa: E402
from service.store import RedisStore  # noqa: E402
from service.webhooks import addresses, sender, signing  # noqa: E402
from service.worker.defaults import default_move  # noqa: E402

CONCURRENCY = 16


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # many deliveries connect at once; the default backlog is 5
    daemon_threads = True


class Receiver:
    def __init__(self) -> None:
        self.arrivals: dict[str, tuple[float, dict]] = {}
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                now = time.time()
                with receiver.lock:
                    receiver.arrivals.setdefault(self.headers["webhook-id"], (now, orjson.loads(body)))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                return

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def count(self) -> int:
        with self.lock:
            return len(self.arrivals)


def start_redis(workdir: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([shutil.which("redis-server") or "/usr/bin/redis-server", "--port", str(port),
                             "--save", "", "--appendonly", "no", "--dir", workdir],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    return proc, f"redis://127.0.0.1:{port}/0"


def start_workers(n: int, url: str) -> list[subprocess.Popen]:
    procs = []
    for _ in range(n):
        port = free_port()
        env = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
        env.update(REDIS_URL=url, AOS_WORKER_METRICS_PORT=str(port), AOS_WORKER_METRICS_HOST="127.0.0.1",
                   AOS_WORKER_IDLE_SECONDS="0.05", LOG_LEVEL="warning",
                   AOS_WEBHOOKS_CONCURRENCY=str(CONCURRENCY))
        proc = subprocess.Popen([sys.executable, "-m", "service.worker"], cwd=REPO, env=env)
        deadline = time.monotonic() + 20
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        procs.append(proc)
    return procs


class Games:
    def __init__(self, url: str, receiver: Receiver, games: int) -> None:
        self.store = RedisStore(url)
        app = create_app(store=self.store, settings=Settings())
        self.games = app.extensions["aos.games"]
        self.client = app.test_client()
        port = receiver.server.server_port
        self.ids = []
        for n in range(games):
            body = {"map": "rust_belt", "players": [{"name": p} for p in ("a", "b", "c")], "seed": f"b{n}"}
            created = self.client.post("/v1/games", json=body).get_json()
            token = created["seats"][0]["token"]
            hook = self.client.post(f"/v1/games/{created['game_id']}/webhooks",
                                    headers={"Authorization": f"Bearer {token}"},
                                    json={"url": f"http://127.0.0.1:{port}/h", "events": ["move"]})
            assert hook.status_code == 201, hook.get_json()
            self.ids.append(created["game_id"])

    def move(self, game_id: str) -> None:
        stored = self.store.load(game_id)
        state = orjson.loads(stored.state)
        seat = state["queue"][0]
        self.games.apply(game_id, seat, default_move(state, seat), if_match=None, idempotency_key=None,
                         stored=stored)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def baseline(receiver: Receiver, n: int) -> float:
    """Signed POSTs straight from the sender, as many at once as a worker sends."""
    target = addresses.parse(f"http://127.0.0.1:{receiver.server.server_port}/base")
    secret = signing.new_secret()
    body = orjson.dumps({"type": "move", "timestamp": "x", "data": {"pad": "x" * 300}})

    def one(i: int) -> None:
        headers = signing.signed_headers(secret, f"base_{i}", int(time.time()), body)
        assert sender.post(target, "127.0.0.1", body, headers, timeout=10).ok

    started = time.perf_counter()
    with ThreadPoolExecutor(CONCURRENCY) as pool:
        list(pool.map(one, range(n)))
    return n / (time.perf_counter() - started)


def run(workers: int, args: argparse.Namespace, receiver: Receiver, workdir: str) -> dict:
    redis_proc, url = start_redis(workdir)
    try:
        games = Games(url, receiver, args.games)
        receiver.arrivals.clear()
        for _ in range(args.moves):  # the backlog, made while no worker runs
            for game_id in games.ids:
                games.move(game_id)
        backlog = args.moves * args.games
        procs = start_workers(workers, url)
        while receiver.count() < backlog:
            time.sleep(0.01)
        # From the first arrival to the last: the workers' start-up is not delivery time.
        times = sorted(arrived for arrived, _ in receiver.arrivals.values())
        drain = (backlog - 1) / (times[-1] - times[0])
        # Steady load: moves at a fixed rate; the delay from each commit to its arrival.
        receiver.arrivals.clear()
        interval = 1 / args.rate
        end = time.perf_counter() + args.seconds
        made = 0
        next_at = time.perf_counter()
        while time.perf_counter() < end:
            games.move(games.ids[made % len(games.ids)])
            made += 1
            next_at += interval
            time.sleep(max(0.0, next_at - time.perf_counter()))
        deadline = time.monotonic() + 30
        while receiver.count() < made and time.monotonic() < deadline:
            time.sleep(0.01)
        delays = [arrived - parse_ms(payload["data"]["at"]) / 1000
                  for arrived, payload in receiver.arrivals.values()]
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(30)
        games.store.close()
        return {"workers": workers, "backlog": backlog, "drain_per_s": drain, "moves": made,
                "arrived": len(delays), "p50_ms": percentile(delays, 50) * 1000,
                "p99_ms": percentile(delays, 99) * 1000}
    finally:
        redis_proc.terminate()
        redis_proc.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=25)
    parser.add_argument("--moves", type=int, default=40, help="moves per game in the backlog")
    parser.add_argument("--rate", type=float, default=50, help="moves per second in the steady phase")
    parser.add_argument("--seconds", type=float, default=8)
    args = parser.parse_args()
    receiver = Receiver()
    with tempfile.TemporaryDirectory() as workdir:
        base = baseline(receiver, args.games * args.moves)
        print(f"baseline: the bare sender, {CONCURRENCY} threads: {base:.0f} POSTs/s")
        for workers in (1, 2):
            r = run(workers, args, receiver, workdir)
            print(f"{workers} worker(s): drained {r['backlog']} deliveries at {r['drain_per_s']:.0f}/s "
                  f"({r['drain_per_s'] / base:.2f} x the bare sender); steady {args.rate:g} moves/s: "
                  f"{r['arrived']}/{r['moves']} arrived, move -> webhook p50 {r['p50_ms']:.0f} ms, "
                  f"p99 {r['p99_ms']:.0f} ms")
    receiver.server.shutdown()


if __name__ == "__main__":
    main()
