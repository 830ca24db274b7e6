"""MemoryStore: the embedded store for one process (local runs, tests). Same semantics as
RedisStore, behind one lock: expiry (pushed back by reads), the outbox with consumer groups, the
clocks, and in-process listeners in place of the event channel."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

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
)
from .keys import READ, SHARDS, shard_of

Listener = Callable[[str, int], None]
V = TypeVar("V")


@dataclass
class _Game:
    version: int
    state: bytes
    meta: bytes
    view: bytes
    ttl: int
    expires: float
    log: list[bytes] = field(default_factory=list)


class _Expiring(Generic[V]):
    """Values that lapse after their own TTL, like Redis keys with EX: a lapsed value reads as
    absent, and every so many writes the lapsed ones are swept out, so that values written once
    and never read again (a request's own commit key) do not pile up."""

    SWEEP_EVERY = 1024

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._values: dict[tuple[str, str], tuple[V, float]] = {}
        self._writes = 0

    def get(self, key: tuple[str, str]) -> V | None:
        entry = self._values.get(key)
        if entry is None:
            return None
        if entry[1] <= self._clock():
            del self._values[key]
            return None
        return entry[0]

    def set(self, key: tuple[str, str], value: V, ttl: int) -> None:
        now = self._clock()
        self._values[key] = (value, now + ttl)
        self._writes += 1
        if self._writes % self.SWEEP_EVERY == 0:
            self._values = {k: v for k, v in self._values.items() if v[1] > now}

    def delete(self, key: tuple[str, str]) -> None:
        self._values.pop(key, None)

    def drop_game(self, game_id: str) -> None:
        """Every value kept for this game (keys are (game id, name))."""
        self._values = {k: v for k, v in self._values.items() if k[0] != game_id}

    def __len__(self) -> int:
        return len(self._values)


@dataclass
class _Group:
    next: int = 0  # the absolute index in the shard's outbox of the next change to hand out
    # the changes handed out and not acknowledged: id -> (consumer, when taken, the change)
    pending: dict[str, tuple[str, float, OutboxItem]] = field(default_factory=dict)


class _Outbox:
    """One shard's stream of changes: ids like Redis stream ids, trimmed to `maxlen`."""

    def __init__(self, shard: int, maxlen: int) -> None:
        self.shard = shard
        self.maxlen = maxlen
        self.items: list[OutboxItem] = []
        self.offset = 0  # the absolute index of items[0]
        self.groups: dict[str, _Group] = {}
        self._last_ms = 0
        self._seq = 0

    def next_id(self, now_ms: int) -> str:
        if now_ms <= self._last_ms:
            self._seq += 1
        else:
            self._last_ms, self._seq = now_ms, 0
        return f"{self._last_ms}-{self._seq}"

    def append(self, item: OutboxItem) -> None:
        self.items.append(item)
        if len(self.items) > self.maxlen:
            drop = len(self.items) - self.maxlen
            del self.items[:drop]
            self.offset += drop

    def group(self, name: str) -> _Group:
        return self.groups.setdefault(name, _Group(next=self.offset))


class MemoryStore(GameStore):
    kind = "memory"

    SWEEP_EVERY = 1024  # operations between sweeps of expired games

    def __init__(self, clock: Callable[[], float] = time.monotonic, outbox_maxlen: int = 100_000,
                 wall_clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._wall = wall_clock
        self._lock = threading.Lock()
        self._games: dict[str, _Game] = {}
        self._idem = _Expiring[bytes](clock)
        self._kept = _Expiring[tuple[int, bytes | None]](clock)
        self._kept_changed = threading.Condition()
        self._creates = _Expiring[bytes](clock)
        self._tombstones = _Expiring[bytes](clock)  # purged games: (game id, "")
        self._outboxes = [_Outbox(n, outbox_maxlen) for n in range(SHARDS)]
        self._clocks: dict[str, float] = {}
        # webhook deliveries and searches: (queue, id) -> (due or claimed until, the delivery as queued)
        self._deliveries: dict[tuple[str, str], tuple[float, Delivery]] = {}
        self._listeners: list[Listener] = []
        self._ops = itertools.count(1)

    # -- expiry -------------------------------------------------------------------------------

    def _live(self, game_id: str, *, read: bool = False) -> _Game | None:
        now = self._clock()
        if next(self._ops) % self.SWEEP_EVERY == 0:
            self._sweep(now)
        game = self._games.get(game_id)
        if game is None:
            return None
        if game.expires <= now:
            self._drop(game_id)
            return None
        if read and game.expires - now < game.ttl * 0.9:
            game.expires = now + game.ttl
        return game

    def _sweep(self, now: float) -> None:
        for game_id in [g for g, game in self._games.items() if game.expires <= now]:
            self._drop(game_id)

    def _drop(self, game_id: str) -> None:
        del self._games[game_id]
        self._clocks.pop(game_id, None)

    def games_held(self) -> int:
        """Games held, expired ones included until they are swept."""
        with self._lock:
            return len(self._games)

    # -- games ------------------------------------------------------------------------------

    def create(
        self,
        game_id: str,
        *,
        state: bytes,
        meta: bytes,
        view: bytes,
        ttl: int,
        log: Sequence[bytes] = (),
        record: CreateRecord | None = None,
        deadline: float | None = None,
        idem: Sequence[IdemRecord] = (),
    ) -> bytes | None:
        shard = shard_of(game_id)
        with self._lock:
            if record is not None:
                prior = self._creates.get((str(shard), record.digest))
                if prior is not None:
                    return prior
            if self._live(game_id) is not None:
                raise GameExists(game_id)
            expires = self._clock() + ttl
            self._games[game_id] = _Game(len(log), state, meta, view, ttl, expires, list(log))
            if record is not None:
                self._creates.set((str(shard), record.digest), record.value, record.ttl)
            for kept in idem:
                self._idem.set((game_id, kept.key), kept.value, kept.ttl)
            if deadline is not None:
                self._clocks[game_id] = deadline
            self._queue(game_id, len(log), list(log), meta=meta, state=state, created=True)
            return None

    def create_record(self, shard: int, digest: str) -> bytes | None:
        with self._lock:
            return self._creates.get((str(shard), digest))

    def drop_create_record(self, shard: int, digest: str) -> None:
        with self._lock:
            self._creates.delete((str(shard), digest))

    def load(self, game_id: str, *, with_view: bool = False) -> Stored | None:
        with self._lock:
            game = self._live(game_id, read=True)
            if game is None:
                return None
            return Stored(game.version, game.state, game.meta, game.view if with_view else None)

    def load_view(self, game_id: str) -> tuple[int, bytes] | None:
        with self._lock:
            game = self._live(game_id, read=True)
            return None if game is None else (game.version, game.view)

    def version(self, game_id: str) -> int | None:
        with self._lock:
            game = self._live(game_id, read=True)
            return None if game is None else game.version

    def meta(self, game_id: str) -> tuple[int, bytes] | None:
        with self._lock:
            game = self._live(game_id, read=True)
            return None if game is None else (game.version, game.meta)

    def commit(
        self,
        game_id: str,
        *,
        expected_version: int,
        ttl: int,
        entries: Sequence[bytes] = (),
        state: bytes | None = None,
        view: bytes | None = None,
        meta: bytes | None = None,
        deadline: float | None = None,
        idem: IdemRecord | None = None,
        expected_meta: bytes | None = None,
        ahead: Ahead | None = None,
    ) -> CommitResult:
        with self._lock:
            game = self._live(game_id)
            if game is None:
                return CommitResult(Outcome.MISSING)
            if idem is not None:
                prior = self._idem.get((game_id, idem.key))
                if prior is not None:
                    return CommitResult(Outcome.REPLAYED, game.version, prior)
            if game.version != expected_version or (
                    expected_meta is not None and game.meta != expected_meta):
                return CommitResult(Outcome.CONFLICT, game.version)
            game.version += len(entries)
            game.log.extend(entries)
            if state is not None:
                game.state = state
            if view is not None:
                game.view = view
            if meta is not None:
                game.meta = meta
            game.ttl, game.expires = ttl, self._clock() + ttl
            if idem is not None:
                self._idem.set((game_id, idem.key), idem.value, idem.ttl)
            if entries or meta is not None:
                archived = idem if idem is not None and idem.ttl >= IDEM_ARCHIVE_MIN_TTL else None
                self._queue(game_id, game.version, list(entries), meta=meta, idem=archived)
            if entries:
                if deadline is None:
                    self._clocks.pop(game_id, None)
                else:
                    self._clocks[game_id] = deadline
            version, listeners = game.version, list(self._listeners)
            read = False
            if ahead is not None and self._kept.get((game_id, READ + ahead.name)) is not None:
                read = True
                self._kept.set((game_id, ahead.name), (version, ahead.value), ahead.ttl)
        if entries:
            for listener in listeners:
                listener(game_id, version)
        return CommitResult(Outcome.APPLIED, version, ahead_read=read)

    def replace_meta(self, game_id: str, *, expected: bytes, meta: bytes) -> Outcome:
        with self._lock:
            game = self._live(game_id)
            if game is None:
                return Outcome.MISSING
            if game.meta != expected:
                return Outcome.CONFLICT
            game.meta = meta
            self._queue(game_id, game.version, [], meta=meta)
            return Outcome.APPLIED

    def release(self, game_id: str, version: int, ttl: int) -> bool:
        with self._lock:
            game = self._live(game_id)
            if game is None or game.version != version:
                return False
            game.ttl = min(ttl, game.ttl)
            game.expires = self._clock() + game.ttl
            return True

    def purge(self, game_id: str, tombstone_ttl: int) -> bool:
        with self._lock:
            existed = self._live(game_id) is not None
            self._games.pop(game_id, None)
            self._clocks.pop(game_id, None)
            for cache in (self._idem, self._kept):
                cache.drop_game(game_id)
            self._deliveries = {k: v for k, v in self._deliveries.items() if v[1].game_id != game_id}
            self._tombstones.set((game_id, ""), b"1", tombstone_ttl)
            listeners = list(self._listeners)
        for listener in listeners:
            listener(game_id, 0)
        return existed

    def deleted(self, game_id: str) -> bool:
        with self._lock:
            return self._tombstones.get((game_id, "")) is not None

    def history(self, game_id: str, start: int = 0, stop: int | None = None) -> list[bytes] | None:
        with self._lock:
            game = self._live(game_id, read=True)
            return None if game is None else game.log[start:stop]

    def idempotency_record(self, game_id: str, key: str) -> bytes | None:
        with self._lock:
            return self._idem.get((game_id, key))

    def peek_kept(self, game_id: str, name: str) -> tuple[Stored, bool] | None:
        with self._lock:
            game = self._live(game_id, read=True)
            if game is None:
                return None
            marked = self._kept.get((game_id, READ + name)) is not None
            return Stored(game.version, game.state, game.meta), marked

    def mark_read(self, game_id: str, name: str, ttl: int) -> None:
        with self._lock:
            self._kept.set((game_id, READ + name), (0, None), ttl)

    def kept(self, game_id: str, name: str, version: int) -> bytes | None:
        with self._lock:
            kept = self._kept.get((game_id, name))
            return kept[1] if kept is not None and kept[0] == version else None

    def keep(self, game_id: str, name: str, version: int, value: bytes, ttl: int, *,
             wake: bool = False) -> None:
        with self._lock:
            self._kept.set((game_id, name), (version, value), ttl)
        if wake:
            with self._kept_changed:
                self._kept_changed.notify_all()

    # A waiter looks again at least this often (seconds): a keep between its read and its wait
    # wakes nobody, so it is found at the next look.
    AWAIT_STEP = 0.005

    def await_kept(self, game_id: str, name: str, seconds: float) -> None:
        with self._kept_changed:
            self._kept_changed.wait(min(seconds, self.AWAIT_STEP))

    # -- watchers: in process, in place of Redis's event channel ------------------------------

    def add_listener(self, listener: Listener) -> Callable[[], None]:
        """Calls `listener(game_id, version)` after every commit that makes a new version (from
        the committing thread, outside the store's lock); returns a function that removes it."""
        with self._lock:
            self._listeners.append(listener)

        def remove() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return remove

    # -- the outbox and the clocks ------------------------------------------------------------

    def _queue(self, game_id: str, version: int, entries: list[bytes], *, meta: bytes | None,
               state: bytes | None = None, created: bool = False, idem: IdemRecord | None = None) -> None:
        outbox = self._outboxes[shard_of(game_id)]
        item_id = outbox.next_id(int(self._wall() * 1000))
        outbox.append(OutboxItem(id=item_id, shard=outbox.shard, game_id=game_id, version=version,
                                 entries=entries, meta=meta, state=state, created=created, idem=idem))

    def outbox_read(self, group: str, consumer: str, count: int = 100) -> list[OutboxItem]:
        taken: list[OutboxItem] = []
        with self._lock:
            now = self._clock()
            for outbox in self._outboxes:
                state = outbox.group(group)
                start = max(state.next, outbox.offset)
                batch = outbox.items[start - outbox.offset:start - outbox.offset + count]
                state.next = start + len(batch)
                for item in batch:
                    state.pending[item.id] = (consumer, now, item)
                taken.extend(batch)
        return taken

    def outbox_claim(self, group: str, consumer: str, min_idle_ms: int, count: int = 100) -> list[OutboxItem]:
        claimed: list[OutboxItem] = []
        with self._lock:
            now = self._clock()
            for outbox in self._outboxes:
                state = outbox.group(group)
                stale = [(item_id, item) for item_id, (_, taken, item) in state.pending.items()
                         if (now - taken) * 1000 >= min_idle_ms][:count]
                for item_id, item in stale:
                    state.pending[item_id] = (consumer, now, item)
                    claimed.append(item)
        return claimed

    def outbox_ack(self, group: str, items: Sequence[OutboxItem]) -> None:
        with self._lock:
            for item in items:
                self._outboxes[item.shard].group(group).pending.pop(item.id, None)

    def outbox_backlog(self, group: str) -> int:
        with self._lock:
            total = 0
            for outbox in self._outboxes:
                state = outbox.group(group)
                untaken = outbox.offset + len(outbox.items) - max(state.next, outbox.offset)
                total += len(state.pending) + untaken
            return total

    def due_clocks(self, now: float, limit: int = 100) -> list[tuple[str, float]]:
        with self._lock:
            due = sorted((deadline, game_id) for game_id, deadline in self._clocks.items()
                         if deadline <= now)
            return [(game_id, deadline) for deadline, game_id in due[: limit * SHARDS]]

    def claim_clocks(self, now: float, lease: float, limit: int = 100) -> list[ClaimedClock]:
        with self._lock:
            due = sorted((deadline, game_id) for game_id, deadline in self._clocks.items()
                         if deadline <= now)
            by_shard: dict[int, int] = {}
            claimed = []
            for _, game_id in due:
                shard = shard_of(game_id)
                if by_shard.get(shard, 0) < limit:
                    by_shard[shard] = by_shard.get(shard, 0) + 1
                    self._clocks[game_id] = lease
                    claimed.append(ClaimedClock(game_id, lease))
            return claimed

    def set_clock(self, game_id: str, expected: float, deadline: float | None) -> bool:
        with self._lock:
            if self._clocks.get(game_id) != expected:
                return False
            if deadline is None:
                del self._clocks[game_id]
            else:
                self._clocks[game_id] = deadline
            return True

    def clock_backlog(self, now: float) -> tuple[int, int]:
        with self._lock:
            return len(self._clocks), sum(1 for d in self._clocks.values() if d <= now)

    # -- webhook deliveries ---------------------------------------------------------------------

    def queue_deliveries(self, deliveries: Sequence[Delivery], due: float) -> int:
        with self._lock:
            added = 0
            for delivery in deliveries:
                if (delivery.queue, delivery.id) not in self._deliveries:
                    self._deliveries[delivery.queue, delivery.id] = (due, delivery)
                    added += 1
            return added

    def claim_deliveries(self, now: float, lease: float, limit: int = 100,
                         queue: str = "webhooks") -> list[Delivery]:
        with self._lock:
            due = sorted((at, key) for key, (at, _) in self._deliveries.items()
                         if at <= now and key[0] == queue)[:limit]
            claimed = []
            for _, key in due:
                queued = self._deliveries[key][1]
                held = Delivery(queued.id, queued.game_id, queued.job, lease, queue)
                self._deliveries[key] = (lease, held)
                claimed.append(held)
            return claimed

    def finish_delivery(self, delivery: Delivery, retry_at: float | None = None,
                        job: bytes | None = None) -> bool:
        with self._lock:
            key = (delivery.queue, delivery.id)
            held = self._deliveries.get(key)
            if held is None or held[0] != delivery.lease:
                return False
            if retry_at is None:
                del self._deliveries[key]
            else:
                queued = Delivery(delivery.id, delivery.game_id, job if job is not None else held[1].job,
                                  queue=delivery.queue)
                self._deliveries[key] = (retry_at, queued)
            return True

    def delivery_backlog(self, now: float, queue: str = "webhooks") -> tuple[int, int]:
        with self._lock:
            held = [at for key, (at, _) in self._deliveries.items() if key[0] == queue]
            return len(held), sum(1 for at in held if at <= now)

    def ping(self) -> None:
        return None
