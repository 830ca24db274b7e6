"""A hostile receiver against the real worker: it answers `HTTP/1.0` and drips its body a byte at a
time, behind 15 hooks. Its deliveries end at the deadline and count as failures, it holds no more
than its host's share of the delivery threads (another game's webhook arrives at once), and
SIGTERM stops the worker within its grace period while the drips are in flight."""

from __future__ import annotations

import signal
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.worker.conftest import Receiver


class Drip:
    """Answers every POST `HTTP/1.0 200` with no length, then one byte a second for a minute."""

    def __init__(self) -> None:
        self.started = 0
        self.lock = threading.Lock()
        drip = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers["Content-Length"]))
                with drip.lock:
                    drip.started += 1
                try:
                    self.send_response(200)
                    self.end_headers()
                    for _ in range(60):
                        self.wfile.write(b"x")
                        self.wfile.flush()
                        time.sleep(1)
                except OSError:
                    return  # the worker hung up

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.request_queue_size = 256
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/hooks/{name}"


def test_a_dripping_receiver_neither_counts_as_delivered_nor_starves_others_nor_holds_sigterm(
    api, start_worker
) -> None:
    drip = Drip()
    good = Receiver()
    try:
        worker = start_worker(AOS_WEBHOOKS_TIMEOUT_SECONDS="3", AOS_WEBHOOKS_RETRY_SCHEDULE="600")
        hostile = api.create()
        for seat in range(3):
            for n in range(5):
                api.register(hostile, seat, drip.url(f"s{seat}-{n}"), ["move"])
        for _ in range(2):
            api.move(hostile, {"type": "issue_shares", "count": 0})  # 30 deliveries to the drip
        deadline = time.monotonic() + 10
        while drip.started < 4:
            assert time.monotonic() < deadline, f"{drip.started} drips started"
            time.sleep(0.05)
        time.sleep(0.5)
        # The drip's host has its share of the 16 threads (AOS_WEBHOOKS_PER_HOST, 4), no more.
        assert drip.started == 4

        # Another game's webhook, to another host, arrives while the drips go on.
        other = api.create()
        hook = api.register(other, 0, good.url("g").replace("127.0.0.1", "localhost"), ["move"])
        good.secrets["g"] = hook["secret"]
        moved = time.monotonic()
        api.move(other, {"type": "issue_shares", "count": 0})
        good.wait_for(lambda: len(good.ids()) == 1, timeout=5)
        assert time.monotonic() - moved < 2.0

        # A delivery that dripped past the deadline is a failure, not a delivery.
        deadline = time.monotonic() + 10
        while worker.metric("aos_webhook_deliveries_total", outcome="failed") < 4:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert worker.metric("aos_webhook_deliveries_total", outcome="delivered") == 1  # the good one
        assert worker.metric("aos_webhook_deliveries_total", outcome="deferred") > 0

    finally:
        drip.server.shutdown()
        good.server.shutdown()


def test_sigterm_stops_the_worker_within_its_grace_period_while_deliveries_drip(api, start_worker) -> None:
    drip = Drip()
    try:
        # Deliveries that may take 30 s: a stopping worker waits AOS_WORKER_STOP_SECONDS, not that.
        worker = start_worker(AOS_WEBHOOKS_TIMEOUT_SECONDS="30", AOS_WORKER_STOP_SECONDS="2")
        game = api.create()
        for n in range(3):
            api.register(game, 0, drip.url(f"h{n}"), ["move"])
        api.move(game, {"type": "issue_shares", "count": 0})
        deadline = time.monotonic() + 10
        while drip.started < 3:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        stopped = time.monotonic()
        worker.process.send_signal(signal.SIGTERM)
        worker.process.wait(40)
        assert time.monotonic() - stopped < 5.0  # 2 s to finish, then cut off
        # What was cut off is due again at once, not spent as an attempt of the receiver's.
        assert api.store.delivery_backlog(time.time() + 0.5) == (3, 3)
    finally:
        drip.server.shutdown()
