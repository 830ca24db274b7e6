"""Settings of the background worker, from the environment (deploy/README.md, section 13)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from service.webhooks.addresses import RESOLVE_SECONDS

# After a failed delivery, the waits before each next attempt (seconds): about a day in all,
# then the delivery is given up. Standard Webhooks' own schedule is of the same shape.
RETRY_SCHEDULE = (5, 30, 120, 600, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600)


@dataclass(frozen=True)
class WorkerSettings:
    idle_seconds: float = 0.1  # the pause between rounds that found nothing to do
    claim_idle_ms: int = 30_000  # an outbox change taken this long ago and not finished is taken over
    clock_lease_seconds: float = 60.0  # a claimed clock is another worker's again after this
    clocks_per_shard: int = 4  # clocks claimed per shard and round
    webhook_timeout_seconds: float = 10.0  # one delivery, connection to last byte read
    webhook_lease_seconds: float = 60.0  # a claimed delivery is another worker's again after this
    webhook_concurrency: int = 16  # deliveries in flight at once, per worker
    webhook_max_response_bytes: int = 4096  # of a receiver's answer, at most this much is read
    # Deliveries in flight to one host at once, per worker: one slow receiver (or a tester's
    # many hooks on one receiver) never holds every thread.
    webhook_per_host: int = 4
    stop_seconds: float = 5.0  # on SIGTERM, deliveries in flight get this long, then are cut off
    retry_schedule: tuple[float, ...] = field(default=RETRY_SCHEDULE)
    # Searches (computer seats' moves, hints) run in this many threads of each worker; run more
    # workers to search more at once. A computer seat's search stops after bot_max_ms whatever
    # its level asks, and its claim on the seat outlasts that by bot_lease_seconds' margin.
    search_threads: int = 1
    bot_max_ms: int = 2000
    bot_lease_seconds: float = 10.0
    metrics_port: int = 9102
    metrics_host: str = "0.0.0.0"

    def __post_init__(self) -> None:
        # A delivery's claim must outlast the delivery: name resolution, then the request.
        if self.webhook_lease_seconds <= self.webhook_timeout_seconds + RESOLVE_SECONDS + 1:
            raise ValueError(f"AOS_WEBHOOKS_LEASE_SECONDS must exceed AOS_WEBHOOKS_TIMEOUT_SECONDS + "
                             f"{RESOLVE_SECONDS + 1:g} (name resolution and a margin)")
        if self.webhook_concurrency < 1 or self.clocks_per_shard < 1 or self.webhook_per_host < 1:
            raise ValueError("AOS_WEBHOOKS_CONCURRENCY, AOS_WEBHOOKS_PER_HOST and AOS_CLOCKS_PER_SHARD "
                             "are at least 1")
        if self.search_threads < 1 or self.bot_max_ms < 1:
            raise ValueError("AOS_SEARCH_THREADS and AOS_BOT_MAX_MS are at least 1")
        if self.bot_lease_seconds <= self.bot_max_ms / 1000:
            raise ValueError("AOS_BOT_LEASE_SECONDS must exceed AOS_BOT_MAX_MS (in seconds)")
        if self.stop_seconds < 0:
            raise ValueError("AOS_WORKER_STOP_SECONDS is at least 0")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> WorkerSettings:
        env = os.environ if env is None else env
        numbers = {
            "idle_seconds": ("AOS_WORKER_IDLE_SECONDS", float),
            "claim_idle_ms": ("AOS_WORKER_CLAIM_IDLE_MS", int),
            "clock_lease_seconds": ("AOS_CLOCK_LEASE_SECONDS", float),
            "clocks_per_shard": ("AOS_CLOCKS_PER_SHARD", int),
            "webhook_timeout_seconds": ("AOS_WEBHOOKS_TIMEOUT_SECONDS", float),
            "webhook_lease_seconds": ("AOS_WEBHOOKS_LEASE_SECONDS", float),
            "webhook_concurrency": ("AOS_WEBHOOKS_CONCURRENCY", int),
            "webhook_per_host": ("AOS_WEBHOOKS_PER_HOST", int),
            "stop_seconds": ("AOS_WORKER_STOP_SECONDS", float),
            "metrics_port": ("AOS_WORKER_METRICS_PORT", int),
            "search_threads": ("AOS_SEARCH_THREADS", int),
            "bot_max_ms": ("AOS_BOT_MAX_MS", int),
            "bot_lease_seconds": ("AOS_BOT_LEASE_SECONDS", float),
        }
        values: dict = {name: kind(env[var]) for name, (var, kind) in numbers.items() if env.get(var)}
        if env.get("AOS_WEBHOOKS_RETRY_SCHEDULE"):
            values["retry_schedule"] = tuple(float(s) for s in env["AOS_WEBHOOKS_RETRY_SCHEDULE"].split(","))
        if env.get("AOS_WORKER_METRICS_HOST"):
            values["metrics_host"] = env["AOS_WORKER_METRICS_HOST"]
        return cls(**values)
