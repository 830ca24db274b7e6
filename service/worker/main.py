"""`python -m service.worker`: the background jobs, in a loop, until SIGTERM or SIGINT.

Run as many as you like beside the API, on the same REDIS_URL: they share the work (consumer
groups for the outbox, leases on clocks and deliveries) and take over what one that died had
taken. Metrics and the liveness check are on a port of their own (AOS_WORKER_METRICS_PORT, 9102):
`/metrics` and `/healthz` (200 while the job loop goes round, 503 if it is stuck).

With the memory store (no REDIS_URL) a separate process cannot see the API's games: then
`python -m service` runs the same jobs in a thread of the API process (`start_in_thread`).
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

from service import archive
from service.engine import NATIVE
from service.jobs.runner import Job, Runner
from service.observability import logs
from service.observability.metrics import ENGINE_PROCESSES
from service.referee.games import Games
from service.referee.settings import Settings
from service.store import GameStore, store_from_env
from service.tenants.ledger import ledger_from_env
from service.webhooks import addresses

from . import metrics
from .clocks import ClockJob
from .computer import Computer
from .config import WorkerSettings
from .hints import HintJob
from .searches import SearchPool
from .webhooks import WebhookDeliveries, WebhookOutbox

log = logging.getLogger("service.worker")

STATUS_IDLE_SECONDS = 10.0
HEARTBEAT_LIMIT = 120.0  # seconds without a finished round before /healthz says the loop is stuck


class QueueGauges:
    """Samples the queues' depths into aos_worker_queue_depth every `every` seconds."""

    name = "queue-gauges"

    def __init__(self, store: GameStore, every: float = 5.0) -> None:
        self.store = store
        self.every = every
        self._next = 0.0

    def run_once(self) -> int:
        if time.monotonic() < self._next:
            return 0
        self._next = time.monotonic() + self.every
        now = time.time()
        metrics.QUEUE_DEPTH.labels(queue="outbox_webhooks").set(self.store.outbox_backlog(WebhookOutbox.group))
        queued, due = self.store.delivery_backlog(now)
        metrics.QUEUE_DEPTH.labels(queue="deliveries").set(queued)
        metrics.QUEUE_DEPTH.labels(queue="deliveries_due").set(due)
        running, ran_out = self.store.clock_backlog(now)
        metrics.QUEUE_DEPTH.labels(queue="clocks").set(running)
        metrics.QUEUE_DEPTH.labels(queue="clocks_due").set(ran_out)
        metrics.QUEUE_DEPTH.labels(queue="hints").set(self.store.delivery_backlog(now, queue="searches")[0])
        return 0  # sampling is not work: it never keeps the loop from resting


def consumer_name() -> str:
    """This worker's name in the outbox's consumer groups: its host (the pod) and process."""
    return f"{socket.gethostname()}-{os.getpid()}"


def build_jobs(games: Games, settings: WorkerSettings, consumer: str) -> list[Job]:
    """Every background job, in the order a round runs them: the clocks, the webhooks, and
    with DATABASE_URL the archive's copier (an OutboxConsumer of its own group). Add new jobs
    here."""
    store = games.store
    searches = SearchPool(settings.search_threads)
    computer = Computer(games, searches, max_ms=settings.bot_max_ms, lease_seconds=settings.bot_lease_seconds)
    # The tenants' usage: the API's own ledger when the jobs run in its process, else the one
    # REDIS_URL names (the same Redis the API counts in).
    ledger = games.tenancy.ledger if games.tenancy is not None else ledger_from_env(os.environ)
    return [
        ClockJob(games, lease_seconds=settings.clock_lease_seconds, per_shard=settings.clocks_per_shard,
                 computer=computer),
        HintJob(games, searches),
        WebhookOutbox(store, consumer, claim_idle_ms=settings.claim_idle_ms),
        WebhookDeliveries(store, settings, private_ok=addresses.allow_private(), ledger=ledger),
        *archive.jobs(store, games.settings, consumer=consumer, claim_idle_ms=settings.claim_idle_ms),
        QueueGauges(store),
    ]


def make_runner(games: Games, settings: WorkerSettings, consumer: str) -> Runner:
    return Runner(build_jobs(games, settings, consumer), idle_sleep=settings.idle_seconds,
                  on_error=lambda job: metrics.JOB_ERRORS.labels(job=job).inc())


def close(runner: Runner) -> None:
    for job in runner.jobs:
        if isinstance(job, WebhookDeliveries):
            job.close()
        if isinstance(job, ClockJob) and job.computer is not None:
            # A search cut off is taken over by another worker once its lease runs out.
            job.computer.pool.close()


def start_in_thread(games: Games, settings: WorkerSettings | None = None) -> threading.Event:
    """Runs the jobs in a daemon thread of this process (the memory store's way); set the
    returned event to stop them."""
    settings = settings or WorkerSettings.from_env()
    runner = make_runner(games, settings, consumer_name())
    stop = threading.Event()

    def run() -> None:
        runner.run(stop)
        close(runner)

    threading.Thread(target=run, name="aos-worker", daemon=True).start()
    return stop


def serve_status(runner: Runner, host: str, port: int) -> ThreadingHTTPServer:
    """`/metrics` and `/healthz` on their own port, from a daemon thread."""

    class Handler(BaseHTTPRequestHandler):
        timeout = STATUS_IDLE_SECONDS  # an idle connection holds a thread: closed after this

        def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
            if self.path == "/metrics":
                self._answer(200, generate_latest(REGISTRY), CONTENT_TYPE_LATEST)
            elif self.path == "/healthz":
                stale = time.monotonic() - runner.last_round
                ok = stale < HEARTBEAT_LIMIT
                self._answer(200 if ok else 503, b"ok\n" if ok else b"stuck\n", "text/plain")
            else:
                self._answer(404, b"not found\n", "text/plain")

        def _answer(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server's name
            return  # scrapes and probes are not worth a log line each

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="aos-worker-status", daemon=True).start()
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m service.worker", description=__doc__.splitlines()[0])
    parser.add_argument("--metrics-port", type=int, default=None,
                        help="port of /metrics and /healthz (AOS_WORKER_METRICS_PORT, 9102; 0: none)")
    args = parser.parse_args(argv)
    logs.configure(os.environ.get("LOG_LEVEL", "info"))
    store = store_from_env()
    if store.kind == "memory":
        log.error("REDIS_URL is not set: a worker needs the store the API uses "
                  "(with the memory store, `python -m service` runs the jobs itself)")
        return 2
    settings = WorkerSettings.from_env()
    games = Games(store, Settings.from_env())
    runner = make_runner(games, settings, consumer_name())
    ENGINE_PROCESSES.labels(native=NATIVE).set(1)  # its searches list builds, as the API does
    port = settings.metrics_port if args.metrics_port is None else args.metrics_port
    server = serve_status(runner, settings.metrics_host, port) if port else None
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    log.info("worker starting", extra={"fields": {"event": "worker_config", "consumer": consumer_name(),
                                                  "metrics_port": port,
                                                  "private_webhooks": addresses.allow_private()}})
    runner.run(stop)
    close(runner)
    if server is not None:
        server.shutdown()
    return 0
