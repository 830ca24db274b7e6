"""The worker's Prometheus metrics (deploy/README.md, section 13), served on its own port with
the moves its clocks make (aos_moves_applied_total) beside them."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

QUEUE_DEPTH = Gauge(
    "aos_worker_queue_depth",
    "Work waiting, by queue: outbox_webhooks (changes not yet turned into deliveries), "
    "deliveries (queued or in flight), deliveries_due, clocks (games with a clock running), "
    "clocks_due (run out, not yet played), hints (queued or being searched).",
    ["queue"],
)
DELIVERIES = Counter(
    "aos_webhook_deliveries_total",
    "Webhook attempts and what became of them: delivered (2xx), failed (to be retried), "
    "gave_up (the last attempt failed), dropped (the registration or its game is gone), "
    "deferred (put back unsent: its host had its share in flight, or the worker was stopping).",
    ["outcome"],
)
ATTEMPT_SECONDS = Histogram(
    "aos_webhook_attempt_seconds",
    "Time of one webhook request, resolution to answer.",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
DELIVERY_DELAY = Histogram(
    "aos_webhook_delivery_delay_seconds",
    "From the commit of a change to its delivery's 2xx, retries included.",
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600, 86400),
)
CLOCK_MOVES = Counter(
    "aos_clock_moves_total",
    "Clocks that ran out and what the worker did: applied (the default move), moved (a move "
    "came first), cleared (the game is gone or needs no decision), early (not run out: put back), "
    "failed (tried again later); for computer seats: bot_searching (a search started), "
    "bot_deferred (every search thread busy: put back a moment), bot_applied (the search's move).",
    ["outcome"],
)
JOB_ERRORS = Counter(
    "aos_worker_job_errors_total",
    "Rounds of a job that failed (the store unreachable, a bug), by job.",
    ["job"],
)
SEARCH_SECONDS = Histogram(
    "aos_search_seconds",
    "Time of one search in the worker, by kind: bot (a computer seat's move), hint.",
    ["kind"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30),
)
HINTS = Counter(
    "aos_hints_total",
    "Hints the worker took: done (searched and kept), stale (the game moved on first: dropped "
    "unsearched), failed (taken again shortly).",
    ["outcome"],
)
