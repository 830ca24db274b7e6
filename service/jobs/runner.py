"""Runs jobs in a loop until told to stop, and the base of the jobs that consume the outbox."""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Protocol

from service.store import GameStore, OutboxItem, StoreUnavailable

log = logging.getLogger(__name__)


class Job(Protocol):
    name: str

    def run_once(self) -> int:
        """Does what is due now; returns how much it did (0 when nothing was due)."""
        ...


class OutboxConsumer(ABC):
    """A job that takes the outbox's changes as one consumer of its group: the changes nobody
    took yet, and those another consumer took and did not finish within `claim_idle_ms` (it
    died). A change is acknowledged once `handle` says it is done; one that is not stays pending
    and is taken again later, so each change is handled at least once."""

    name: str
    group: str

    def __init__(self, store: GameStore, consumer: str, *, batch: int = 100,
                 claim_idle_ms: int = 30_000) -> None:
        self.store = store
        self.consumer = consumer
        self.batch = batch
        self.claim_idle_ms = claim_idle_ms

    def run_once(self) -> int:
        items = self.store.outbox_claim(self.group, self.consumer, self.claim_idle_ms, self.batch)
        items += self.store.outbox_read(self.group, self.consumer, self.batch)
        if not items:
            return 0
        self.store.outbox_ack(self.group, self.handle(items))
        return len(items)

    @abstractmethod
    def handle(self, items: Sequence[OutboxItem]) -> Sequence[OutboxItem]:
        """Does the job's part of these changes; returns the ones that are done."""

    def backlog(self) -> int:
        return self.store.outbox_backlog(self.group)


class Runner:
    """Runs every job in turn; sleeps a little when a round found nothing to do. A job that
    fails (the store is down, a bug) is logged and tried again on the next round: one job's
    failure never stops the others."""

    def __init__(self, jobs: Sequence[Job], *, idle_sleep: float = 0.2, error_sleep: float = 1.0,
                 on_error: Callable[[str], None] | None = None) -> None:
        self.jobs = list(jobs)
        self.idle_sleep = idle_sleep
        self.error_sleep = error_sleep
        self.on_error = on_error  # called with the job's name after each failed round of it
        self.last_round = time.monotonic()  # when the last round ended: the worker's heartbeat

    def run_round(self) -> tuple[int, bool]:
        """Runs each job once: (how much they did, whether any failed)."""
        done, failed = 0, False
        for job in self.jobs:
            try:
                done += job.run_once()
            except StoreUnavailable as exc:
                failed = True
                self._failed(job.name)
                log.warning("store unavailable", extra={"fields": {"event": "job_error", "job": job.name,
                                                                   "error": str(exc)}})
            except Exception:
                failed = True
                self._failed(job.name)
                log.exception("job failed", extra={"fields": {"event": "job_error", "job": job.name}})
        self.last_round = time.monotonic()
        return done, failed

    def _failed(self, name: str) -> None:
        if self.on_error is not None:
            self.on_error(name)

    def run(self, stop: threading.Event) -> None:
        log.info("worker running", extra={"fields": {"event": "worker_start",
                                                     "jobs": [j.name for j in self.jobs]}})
        while not stop.is_set():
            done, failed = self.run_round()
            if failed:
                stop.wait(self.error_sleep)
            elif done == 0:
                stop.wait(self.idle_sleep)
        log.info("worker stopped", extra={"fields": {"event": "worker_stop"}})
