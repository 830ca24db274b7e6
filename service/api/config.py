"""Settings of the HTTP service, from the environment."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    max_body_bytes: int = 1 << 20  # a 5000-move record fits; anything larger is 413
    game_ttl: int = 30 * 24 * 3600  # an idle game expires this long after its last move
    finished_ttl: int = 7 * 24 * 3600  # a finished game, this long after its last move
    idempotency_ttl: int = 24 * 3600
    create_retry_ttl: int = 600  # a create's Idempotency-Key record: a retry window, kept short
    request_replay_ttl: int = 300  # a request's own commit key: outlives the store's retries
    legal_moves_ttl: int = 120  # how long one version's legal moves are kept for repeat readers
    max_commit_attempts: int = 8  # re-judgements of one move against a changing game
    # The archive (PostgreSQL; none when unset). With it Redis is a cache: a game whose every
    # version is archived leaves Redis after cache_ttl seconds unread, and is put back from the
    # archive when it is asked for again.
    database_url: str | None = None
    cache_ttl: int = 24 * 3600

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        names = {
            "max_body_bytes": "AOS_MAX_BODY_BYTES",
            "game_ttl": "AOS_GAME_TTL",
            "finished_ttl": "AOS_FINISHED_TTL",
            "idempotency_ttl": "AOS_IDEMPOTENCY_TTL",
            "create_retry_ttl": "AOS_CREATE_RETRY_TTL",
            "cache_ttl": "AOS_CACHE_TTL",
        }
        values: dict = {field: int(env[var]) for field, var in names.items() if var in env}
        # An empty DATABASE_URL (a Secret's placeholder, compose's `${DATABASE_URL:-}`) means none.
        values["database_url"] = env.get("DATABASE_URL") or None
        return cls(**values)
