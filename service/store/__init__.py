"""Game storage behind one interface: RedisStore when REDIS_URL is set, else MemoryStore."""

from __future__ import annotations

import os
from collections.abc import Mapping

from .base import (
    IDEM_ARCHIVE_MIN_TTL,
    Ahead,
    ClaimedClock,
    CommitResult,
    CreateRecord,
    Delivery,
    GameExists,
    GameStore,
    IdemRecord,
    OutboxItem,
    Outcome,
    Stored,
    StoreUnavailable,
)
from .memory import MemoryStore
from .redis_store import RedisStore

__all__ = [
    "Ahead",
    "ClaimedClock",
    "CommitResult",
    "CreateRecord",
    "Delivery",
    "GameExists",
    "GameStore",
    "IDEM_ARCHIVE_MIN_TTL",
    "IdemRecord",
    "MemoryStore",
    "OutboxItem",
    "Outcome",
    "RedisStore",
    "StoreUnavailable",
    "Stored",
    "store_from_env",
]


def store_from_env(env: Mapping[str, str] | None = None) -> GameStore:
    """RedisStore on REDIS_URL if it is set, else a MemoryStore (one process only)."""
    env = os.environ if env is None else env
    url = env.get("REDIS_URL")
    if not url:
        return MemoryStore()
    return RedisStore(
        url,
        socket_timeout=float(env.get("AOS_REDIS_TIMEOUT", "1.0")),
        connect_timeout=float(env.get("AOS_REDIS_CONNECT_TIMEOUT", "1.0")),
    )
