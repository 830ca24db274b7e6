"""The service's Prometheus metrics: the names, labels and meanings of deploy/README.md section 8.

They are process-wide. Under gunicorn (PROMETHEUS_MULTIPROC_DIR set) prometheus_client keeps
each worker's values in files in that directory, and a scrape, which reaches one worker, sums
every worker's files.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

HTTP_REQUESTS = Counter(
    "aos_http_requests_total",
    "Responses sent, by URL rule (never the raw path), method and status.",
    ["route", "method", "status"],
)
HTTP_DURATION = Histogram(
    "aos_http_request_duration_seconds",
    "Time from request to response in the worker, by URL rule and method.",
    ["route", "method"],
)
MOVES_APPLIED = Counter(
    "aos_moves_applied_total", "Moves committed, by map and move type.", ["map", "type"]
)


@cache
def move_applied(map_id: str, move_type: str) -> Counter:
    """MOVES_APPLIED's counter of one map and move type: the child labels() gives, looked up once
    (labels() checks and joins its label values and takes a lock each time, four times the cost
    of the count itself). The pairs are few: the maps' move types."""
    return MOVES_APPLIED.labels(map=map_id, type=move_type)


ENGINE_PROCESSES = Gauge(
    "aos_engine_processes",
    "The service's processes by how their engine runs the build listing (service/engine/native.py): "
    "compiled, or as plain Python because the build is stale, off (AOS_NATIVE=off) or absent.",
    ["native"],
    multiprocess_mode="livesum",
)
ILLEGAL_MOVES = Counter(
    "aos_illegal_moves_total", "Moves rejected with 422, by rule code.", ["code"]
)
STORE_ERRORS = Counter(
    "aos_store_errors_total",
    "Store calls that failed after retries (each answered 503), by operation and kind.",
    ["op", "kind"],
)
STORE_RETRIES = Counter(
    "aos_store_retries_total",
    "Retries that succeeded: reconnects, and moves judged again after a version conflict.",
    ["op", "reason"],
)
GAMES_CREATED = Counter(
    "aos_games_created_total", "Games created (replayed records included), by map.", ["map"]
)
TENANT_USAGE = Counter(
    "aos_tenant_usage_total",
    "What each tenant used, by kind (creates, moves, stream_minutes, webhook_deliveries): the "
    "counts GET /v1/usage shows, day by day.",
    ["tenant", "kind"],
)
TENANT_KEY_REFUSED = Counter(
    "aos_tenant_keys_refused_total",
    "API keys refused, by reason: unknown (no such key, or not a key) or revoked.",
    ["reason"],
)

RESTORES = Counter(
    "aos_archive_restores_total",
    "Games looked for in the archive because they were not in Redis, by outcome: restored, "
    "absent (not archived either: 404), raced (another request put it back first).",
    ["outcome"],
)
RESTORE_SECONDS = Histogram(
    "aos_archive_restore_seconds",
    "Time to rebuild a game from the archive and put it back in Redis.",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)


def multiprocess_dir() -> str | None:
    """prometheus_client's multi-process directory, if set (an empty value means unset)."""
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


def prepare() -> None:
    """Make sure the multi-process directory exists: gunicorn's on_starting creates it, but
    `python -m service` with the variable set has no such hook."""
    directory = multiprocess_dir()
    if directory:
        Path(directory).mkdir(parents=True, exist_ok=True)


def store_retried(op: str, reason: str) -> None:
    STORE_RETRIES.labels(op=op, reason=reason).inc()


def exposition() -> tuple[bytes, str]:
    """The text of a scrape and its content type."""
    directory = multiprocess_dir()
    if directory:
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry, path=directory)
    else:
        registry = REGISTRY
    return generate_latest(registry), CONTENT_TYPE_LATEST
