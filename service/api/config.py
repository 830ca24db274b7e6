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
    # Live updates (service/api/events.py): a stream's heartbeat interval and lifetime (then
    # the client resumes), and the longest `Prefer: wait` honoured (the contract says 60).
    events_heartbeat: float = 15.0
    events_lifetime: float = 3600.0
    long_poll_max: int = 60

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        names = {
            "max_body_bytes": "AOS_MAX_BODY_BYTES",
            "game_ttl": "AOS_GAME_TTL",
            "finished_ttl": "AOS_FINISHED_TTL",
            "idempotency_ttl": "AOS_IDEMPOTENCY_TTL",
            "create_retry_ttl": "AOS_CREATE_RETRY_TTL",
        }
        values: dict[str, object] = {field: int(env[var]) for field, var in names.items() if var in env}
        seconds = {"events_heartbeat": "AOS_EVENTS_HEARTBEAT", "events_lifetime": "AOS_EVENTS_LIFETIME"}
        for field, var in seconds.items():
            if env.get(var, "").strip():
                values[field] = float(env[var])
        if env.get("AOS_LONG_POLL_MAX", "").strip():
            values["long_poll_max"] = min(60, int(env["AOS_LONG_POLL_MAX"]))
        return cls(**values)
