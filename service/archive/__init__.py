"""The durable archive: every game and every version of it in PostgreSQL (DATABASE_URL), so
that Redis is a cache.

- migrations/*.sql, migrate.py: the schema (`python -m service.archive migrate`);
- db.py: what is written and read, bytes and versions only;
- copier.py: the outbox consumer that copies commits into the archive, off the request path
  (`python -m service.archive copy`, or one of `python -m service.worker`'s jobs: `jobs()`).

Putting a game back from the archive needs the rules, so it lives in the API
(service/referee/restore.py), which also tells the copier what a state says (`describe`).
"""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from service.jobs.runner import Job
    from service.referee.settings import Settings
    from service.store import GameStore


def consumer_name() -> str:
    """This process's name in the outbox's consumer groups: unique per host and process."""
    return f"{socket.gethostname()}-{os.getpid()}"


def jobs(store: GameStore, settings: Settings | None = None, *, consumer: str | None = None,
         batch: int = 100, claim_idle_ms: int = 30_000) -> list[Job]:
    """The archive's background jobs for a worker: the copier when DATABASE_URL is set, else
    none. `python -m service.worker` runs them beside its own."""
    from service.referee.restore import describe
    from service.referee.settings import Settings
    from service.store.archive import Archive

    from .copier import ArchiveCopier

    settings = settings or Settings.from_env()
    if not settings.database_url:
        return []
    return [ArchiveCopier(store, Archive(settings.database_url), describe, consumer or consumer_name(),
                          cache_ttl=settings.cache_ttl, batch=batch, claim_idle_ms=claim_idle_ms)]
