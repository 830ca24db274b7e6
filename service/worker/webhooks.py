"""The webhook jobs: turning the games' changes into deliveries, and sending them.

`WebhookOutbox` is the outbox's consumer group "webhooks": for each change of a game that has
registrations it queues the deliveries the change makes (service/webhooks/events.py) in the
game's shard, then acknowledges the change. Queuing is idempotent per delivery id, so a change
handled twice (its consumer died before acknowledging) queues nothing new.

`WebhookDeliveries` claims due deliveries (each held under a lease, so no other worker sends it
meanwhile) and sends them from a pool of threads: signed, to the address the SSRF guard checked,
bounded in time and in what is read back. One receiver never takes every thread: a host has at
most `webhook_per_host` deliveries in flight, and a delivery to a host at its share is put back,
due a moment later, without counting as an attempt. A stopping worker waits a little for what is
in flight, then cuts it off (`sender.Abort`) and puts it back, due at once, for the next worker.
A 2xx ends the delivery; anything else queues it again after the next wait of the retry
schedule, until the schedule runs out and it is given up. A worker that dies mid-delivery
leaves its lease to run out: the delivery is sent again by another, with the same webhook-id.
So every delivery is made at least once, and repeats are recognisable.
"""

from __future__ import annotations

import contextlib
import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import orjson

from service.jobs.runner import OutboxConsumer
from service.observability.metrics import TENANT_USAGE
from service.store import Delivery, GameStore, OutboxItem, StoreUnavailable
from service.tenants.ledger import Ledger
from service.webhooks import addresses, events, sender, signing
from service.webhooks.sealing import Sealer, SealError

from . import metrics
from .config import WorkerSettings

log = logging.getLogger(__name__)

DEFER_SECONDS = 1.0  # a delivery put back because its host has its share in flight is due again after this


class WebhookOutbox(OutboxConsumer):
    name = "webhook-outbox"
    group = "webhooks"

    def handle(self, items: Sequence[OutboxItem]) -> Sequence[OutboxItem]:
        by_game: dict[str, list[OutboxItem]] = {}
        for item in items:
            if item.entries:  # creates have no registrations yet; metadata-only changes make no news
                by_game.setdefault(item.game_id, []).append(item)
        planned: list[Delivery] = []
        for game_id, changes in by_game.items():
            planned += self._deliveries(game_id, changes)
        if planned:
            self.store.queue_deliveries(planned, due=time.time())
        return items

    def _deliveries(self, game_id: str, changes: list[OutboxItem]) -> list[Delivery]:
        found = self.store.meta(game_id)
        if found is None:
            return []  # the game is gone, and its registrations with it
        version, meta = found
        hooks = orjson.loads(meta).get("webhooks") or []
        if not hooks:
            return []
        view = None
        if any("turn" in h["events"] for h in hooks) and any(c.version == version for c in changes):
            current = self.store.load_view(game_id)
            if current is not None:
                view = orjson.loads(current[1])
        out = []
        for change in changes:
            entries = [orjson.loads(e) for e in change.entries]
            seen = view if view is not None and view.get("version") == change.version else None
            for p in events.plan(game_id, change.version, entries, hooks, seen):
                job = orjson.dumps({"hook": p.hook, "event": p.event, "payload": p.payload.decode(),
                                    "attempt": 0, "committed_ms": change.time_ms})
                out.append(Delivery(p.message_id, game_id, job))
        return out


class WebhookDeliveries:
    name = "webhook-deliveries"

    def __init__(self, store: GameStore, settings: WorkerSettings, *, private_ok: bool,
                 resolver: addresses.Resolver = addresses.system_resolver,
                 now: Callable[[], float] = time.time, sealer: Sealer | None = None,
                 ledger: Ledger | None = None) -> None:
        self.store = store
        # Where a tenant's game's deliveries are counted (GET /v1/usage): the API's ledger.
        self.ledger = ledger
        self.sealer = Sealer.from_env() if sealer is None else sealer
        self.settings = settings
        self.private_ok = private_ok
        self.resolver = resolver
        self.now = now
        self.pool = ThreadPoolExecutor(settings.webhook_concurrency, thread_name_prefix="aos-webhook")
        self.in_flight: set[Future] = set()
        self.per_host: dict[str, int] = {}  # deliveries in flight per receiving host
        self.abort = sender.Abort()
        self._lock = threading.Lock()

    def run_once(self) -> int:
        finished = self._reap()
        free = self.settings.webhook_concurrency - len(self.in_flight)
        if free <= 0:
            return finished
        now = self.now()
        claimed = self.store.claim_deliveries(now, now + self.settings.webhook_lease_seconds, free)
        metas: dict[str, dict | None] = {}
        for delivery in claimed:
            if delivery.game_id not in metas:
                found = self.store.meta(delivery.game_id)
                metas[delivery.game_id] = None if found is None else orjson.loads(found[1])
            job = orjson.loads(delivery.job)
            meta = metas[delivery.game_id]
            hook = next((h for h in (meta or {}).get("webhooks") or [] if h["id"] == job["hook"]), None)
            if hook is None:  # deleted, or its game is gone: nobody to tell
                self.store.finish_delivery(delivery)
                metrics.DELIVERIES.labels(outcome="dropped").inc()
                continue
            host = _host_of(hook["url"])
            with self._lock:
                busy = self.per_host.get(host, 0) >= self.settings.webhook_per_host
                if not busy:
                    self.per_host[host] = self.per_host.get(host, 0) + 1
            if busy:  # its host has its share in flight: due again shortly, no attempt spent
                self.store.finish_delivery(delivery, retry_at=now + DEFER_SECONDS)
                metrics.DELIVERIES.labels(outcome="deferred").inc()
                continue
            tenant = (meta or {}).get("tenant")
            future = self.pool.submit(self._deliver_on, host, delivery, job, hook, tenant)
            with self._lock:
                self.in_flight.add(future)
        return finished + len(claimed)

    def _deliver_on(self, host: str, delivery: Delivery, job: dict, hook: dict, tenant: str | None) -> None:
        try:
            if self._deliver(delivery, job, hook):
                self._count(tenant)
        finally:
            with self._lock:
                left = self.per_host.get(host, 1) - 1
                if left > 0:
                    self.per_host[host] = left
                else:
                    self.per_host.pop(host, None)

    def _reap(self) -> int:
        with self._lock:
            done = {f for f in self.in_flight if f.done()}
            self.in_flight -= done
        for future in done:
            if future.exception() is not None:
                log.error("webhook delivery failed", exc_info=future.exception())
        return len(done)

    def _count(self, tenant: str | None) -> None:
        """A delivery of a tenant's game that reached its receiver, in the tenant's usage: once per
        delivery (its retries are not new deliveries), as the metric counts it."""
        if tenant is None or self.ledger is None:
            return
        try:
            self.ledger.count(tenant, "webhook_deliveries", at=self.now())
        except StoreUnavailable:
            log.warning("a webhook delivery went uncounted", extra={"fields": {"tenant": tenant}})
            return
        TENANT_USAGE.labels(tenant=tenant, kind="webhook_deliveries").inc()

    def _deliver(self, delivery: Delivery, job: dict, hook: dict) -> bool:
        """One attempt, in a thread of the pool; it finishes the delivery itself. True when the
        receiver took it (a 2xx)."""
        body = job["payload"].encode()
        started = time.monotonic()
        try:
            target = addresses.parse(hook["url"])
            address = addresses.resolve(target, private_ok=self.private_ok, resolver=self.resolver)[0]
            secret = self.sealer.open(hook["secret"])
        except addresses.Refused as exc:
            outcome = sender.Outcome(None, time.monotonic() - started, f"refused: {exc}")
        except SealError as exc:  # the operator's key is missing or wrong: retried, logged
            outcome = sender.Outcome(None, time.monotonic() - started, str(exc))
        else:
            headers = signing.signed_headers(secret, delivery.id, int(self.now()), body)
            outcome = sender.post(target, address, body, headers,
                                  timeout=self.settings.webhook_timeout_seconds,
                                  max_response_bytes=self.settings.webhook_max_response_bytes,
                                  abort=self.abort)
        metrics.ATTEMPT_SECONDS.observe(time.monotonic() - started)
        if outcome.error == "aborted":  # the worker is stopping: not the receiver's attempt
            self.store.finish_delivery(delivery, retry_at=self.now())
            metrics.DELIVERIES.labels(outcome="deferred").inc()
            return False
        if outcome.ok:
            self.store.finish_delivery(delivery)
            metrics.DELIVERIES.labels(outcome="delivered").inc()
            metrics.DELIVERY_DELAY.observe(max(0.0, self.now() - job["committed_ms"] / 1000))
            return True
        attempt = job["attempt"] + 1
        fields = {"event": "webhook_failed", "delivery": delivery.id, "game_id": delivery.game_id,
                  "attempt": attempt, "status": outcome.status, "error": outcome.error}
        schedule = self.settings.retry_schedule
        if attempt > len(schedule):
            self.store.finish_delivery(delivery)
            metrics.DELIVERIES.labels(outcome="gave_up").inc()
            log.warning("webhook given up", extra={"fields": {**fields, "event": "webhook_gave_up"}})
            return False
        # A little jitter, so that the retries of one receiver's many deliveries spread out.
        wait = schedule[attempt - 1] * random.uniform(1.0, 1.1)
        self.store.finish_delivery(delivery, retry_at=self.now() + wait,
                                   job=orjson.dumps({**job, "attempt": attempt}))
        metrics.DELIVERIES.labels(outcome="failed").inc()
        log.info("webhook failed; retried later", extra={"fields": {**fields, "retry_in": round(wait, 1)}})
        return False

    def close(self, timeout: float | None = None) -> None:
        """Lets the deliveries in flight finish for up to `timeout` (AOS_WORKER_STOP_SECONDS),
        then cuts off what is left: those are put back, due at once, and the pool's threads end
        with them, so the process exits within its grace period."""
        with self._lock:
            pending = list(self.in_flight)
        if timeout is None:
            timeout = self.settings.stop_seconds
        deadline = time.monotonic() + timeout
        for future in pending:
            with contextlib.suppress(Exception):  # what is left is cut off below
                future.result(timeout=max(0.0, deadline - time.monotonic()))
        self.abort.all()
        for future in pending:
            try:
                future.result(timeout=2.0)
            except Exception:  # its lease runs out and another worker sends it
                log.warning("webhook delivery unfinished at shutdown")
        self.pool.shutdown(wait=False, cancel_futures=True)


def _host_of(url: str) -> str:
    try:
        return addresses.parse(url).host.lower()
    except addresses.Refused:
        return ""
