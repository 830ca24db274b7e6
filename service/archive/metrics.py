"""The archive copier's Prometheus metrics (deploy/README.md section 8), in the process that runs
it (the worker, or `python -m service.archive copy`). The rebuilds' are the core's
(service/observability/metrics.py)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

BACKLOG = Gauge(
    "aos_archive_backlog",
    "Outbox changes the archive copier has not archived yet (not taken, or taken and pending).",
    multiprocess_mode="max",
)
LAG = Gauge(
    "aos_archive_lag_seconds",
    "Age of the oldest change in the copier's last batch when it was archived, or of the oldest"
    " change it holds while the archive is failing; 0 when there is nothing to archive.",
    multiprocess_mode="max",
)
CHANGE_LAG = Histogram(
    "aos_archive_change_lag_seconds",
    "Time from a change's commit to its archiving.",
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 6 * 3600, 86400),
)
CHANGES = Counter("aos_archive_changes_total", "Outbox changes archived.")
MOVES = Counter(
    "aos_archive_moves_total",
    "Log entries copied, by result: inserted, repeat (already archived: a no-op), conflict "
    "(already archived with another entry: kept as it was, and logged).",
    ["result"],
)
FAILURES = Counter(
    "aos_archive_batch_failures_total", "Batches that could not be written (PostgreSQL down).")
BAD_CHANGES = Counter(
    "aos_archive_bad_changes_total",
    "Outbox changes the copier could not read or PostgreSQL refused: left pending, taken again "
    "after the claim time, and logged each time (event archive_bad_change).",
)
