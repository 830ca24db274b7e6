"""Settings of the HTTP service, from the environment."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Settings:
    max_body_bytes: int = 1 << 20  # a 5000-move record fits; anything larger is 413
    game_ttl: int = 30 * 24 * 3600  # an idle game expires this long after its last move
    finished_ttl: int = 7 * 24 * 3600  # a finished game, this long after its last move
    idempotency_ttl: int = 24 * 3600
    create_retry_ttl: int = 600  # a create's Idempotency-Key record: a retry window, kept short
    request_replay_ttl: int = 300  # a request's own commit key: outlives the store's retries
    legal_moves_ttl: int = 120  # how long one version's legal moves are kept for repeat readers
    # The longest a reader waits for a listing being worked out ahead before it lists for itself.
    legal_moves_wait_ms: int = 50
    max_commit_attempts: int = 8  # re-judgements of one move against a changing game
    max_record_moves: int = 2000  # an imported record's moves; the contract's maxItems is the most
    # What-if (POST …/simulate): the moves one request plays (the contract's maxItems is the
    # most) and the CPU time they may take, checked after each move.
    simulate_max_moves: int = 50
    simulate_cpu_ms: int = 250
    # Rate limits (service/api/plumbing/limits.py): strings of the `limits` library, ";" between windows.
    rate_limits: bool = True  # AOS_RATE_LIMITS=off turns them all off
    rate_limit_create: str = "30/minute;300/hour;1000/day"  # new games, per client address
    rate_limit_import: str = "10/minute;100/hour;300/day"  # record imports, per client address
    rate_limit_writes: str = "30/second;1200/minute"  # moves, validations...: per seat token
    rate_limit_strategy: str = "fixed-window"  # one counter per window: Retry-After is exact
    rate_limit_storage: str | None = None  # a Redis URL shared by every instance; None: memory
    rate_limit_exempt: str = ""  # addresses or networks never limited (a host's own backend)
    trusted_proxies: str = "127.0.0.1"  # FORWARDED_ALLOW_IPS, as gunicorn reads it
    redis_timeout: float = 1.0
    # The archive (PostgreSQL; none when unset). With it Redis is a cache: a game whose every
    # version is archived leaves Redis after cache_ttl seconds unread, and is put back from the
    # archive when it is asked for again.
    database_url: str | None = None
    cache_ttl: int = 24 * 3600
    # Tenants (referee/tenancy.py): "open" (anyone creates games) or "required" (a key with
    # games:write creates them). The quotas are a tenant's unless its key carries its own.
    tenancy: str = "open"
    tenant_games_per_day: int = 1000
    tenant_writes_per_second: int = 50
    tenant_open_streams: int = 1000
    tenant_webhooks: int = 200
    deleted_ttl: int = 30 * 24 * 3600  # a deleted game's id answers 410 this long, then 404
    # Live updates (service/api/routes/live.py): a stream's heartbeat interval and lifetime (then
    # the client resumes), and the longest `Prefer: wait` honoured (the contract says 60).
    events_heartbeat: float = 15.0
    events_lifetime: float = 3600.0
    long_poll_max: int = 60
    # Event streams one process holds at once; past it a stream is refused at once, 503
    # AT_CAPACITY with Retry-After. 0: no cap of the app's own. deploy/gunicorn.conf.py sets it
    # below the worker's connection ceiling, so that streams never take every connection and
    # moves, views and health checks always find room.
    streams_per_worker: int = 0
    # Random games played on every map when the app is made, once per process, so that a new
    # worker's first build listings find the common surroundings worked out (engine/warm.py).
    # Four: some 3.3 CPU-s and 15 MB a worker (one: 0.9 s), and a fresh worker's first
    # listings of games it never saw meet half as many new surroundings: 9 % fewer
    # instructions a cold listing (benchmarks/http/count_cold), 17 % less time in process.
    warm_up_games: int = 4
    # Hints (referee/hints.py): searched by the worker, never here. AOS_HINTS=off turns them
    # off (403 HINTS_DISABLED); a hint searches its `budget_ms` (hint_default_ms when not
    # given), at most hint_max_ms; its answer is kept hint_ttl seconds.
    hints: bool = True
    hint_default_ms: int = 1000
    hint_max_ms: int = 2000
    hint_ttl: int = 600
    # Hint requests, per seat token: a bot asking at each of its decisions of a brisk game fits.
    rate_limit_hints: str = "30/minute;600/hour"
    # Reads of whole histories, by cost, per client address: an event stream costs the versions
    # it replays before it is live, a history or record read a tenth of the game's versions.
    # One reader of a churned game's every event cost 0.57 s of CPU; 30 of them slowed health.
    rate_limit_history: str = "10000/minute;100000/hour"

    def __post_init__(self) -> None:
        if self.hint_default_ms < 1 or self.hint_max_ms < 1:
            raise ValueError("AOS_HINT_DEFAULT_MS and AOS_HINT_MAX_MS are at least 1")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        names = {
            "max_body_bytes": "AOS_MAX_BODY_BYTES",
            "game_ttl": "AOS_GAME_TTL",
            "finished_ttl": "AOS_FINISHED_TTL",
            "idempotency_ttl": "AOS_IDEMPOTENCY_TTL",
            "create_retry_ttl": "AOS_CREATE_RETRY_TTL",
            "max_record_moves": "AOS_MAX_RECORD_MOVES",
            "simulate_max_moves": "AOS_SIMULATE_MAX_MOVES",
            "simulate_cpu_ms": "AOS_SIMULATE_CPU_MS",
            "cache_ttl": "AOS_CACHE_TTL",
            "tenant_games_per_day": "AOS_TENANT_GAMES_PER_DAY",
            "tenant_writes_per_second": "AOS_TENANT_WRITES_PER_SECOND",
            "tenant_open_streams": "AOS_TENANT_OPEN_STREAMS",
            "tenant_webhooks": "AOS_TENANT_WEBHOOKS",
            "deleted_ttl": "AOS_DELETED_TTL",
            "hint_default_ms": "AOS_HINT_DEFAULT_MS",
            "hint_max_ms": "AOS_HINT_MAX_MS",
            "hint_ttl": "AOS_HINT_TTL",
        }
        values: dict[str, Any] = {field: int(env[var]) for field, var in names.items() if var in env}
        texts = {
            "rate_limit_create": "AOS_RATE_LIMIT_CREATE",
            "rate_limit_import": "AOS_RATE_LIMIT_IMPORT",
            "rate_limit_writes": "AOS_RATE_LIMIT_WRITES",
            "rate_limit_hints": "AOS_RATE_LIMIT_HINTS",
            "rate_limit_history": "AOS_RATE_LIMIT_HISTORY",
            "rate_limit_strategy": "AOS_RATE_LIMIT_STRATEGY",
            "rate_limit_exempt": "AOS_RATE_LIMIT_EXEMPT",
            "trusted_proxies": "FORWARDED_ALLOW_IPS",
        }
        # An empty variable (compose passes `${X:-}` on) means the default.
        values.update({field: env[var] for field, var in texts.items() if env.get(var, "").strip()})
        if env.get("AOS_RATE_LIMITS", "").strip():
            values["rate_limits"] = env["AOS_RATE_LIMITS"].strip().lower() not in ("off", "0", "false", "no")
        if env.get("AOS_HINTS", "").strip():
            values["hints"] = env["AOS_HINTS"].strip().lower() not in ("off", "0", "false", "no")
        storage = env.get("AOS_RATE_LIMIT_STORAGE") or env.get("REDIS_URL")
        if storage:
            values["rate_limit_storage"] = storage
        tenancy = env.get("AOS_TENANCY", "").strip().lower()
        if tenancy:
            if tenancy not in ("open", "required"):
                raise ValueError(f"AOS_TENANCY is open or required, not {tenancy!r}")
            values["tenancy"] = tenancy
        # An empty DATABASE_URL (a Secret's placeholder, compose's `${DATABASE_URL:-}`) means none.
        values["database_url"] = env.get("DATABASE_URL") or None
        if "AOS_REDIS_TIMEOUT" in env:
            values["redis_timeout"] = float(env["AOS_REDIS_TIMEOUT"])
        seconds = {"events_heartbeat": "AOS_EVENTS_HEARTBEAT", "events_lifetime": "AOS_EVENTS_LIFETIME"}
        for field, var in seconds.items():
            if env.get(var, "").strip():
                values[field] = float(env[var])
        if env.get("AOS_WARM_UP_GAMES", "").strip():
            values["warm_up_games"] = int(env["AOS_WARM_UP_GAMES"])
        if env.get("AOS_STREAMS_PER_WORKER", "").strip():
            values["streams_per_worker"] = max(0, int(env["AOS_STREAMS_PER_WORKER"]))
        if env.get("AOS_LONG_POLL_MAX", "").strip():
            values["long_poll_max"] = min(60, int(env["AOS_LONG_POLL_MAX"]))
        return cls(**values)
