"""The archive copier: an outbox consumer (group "archive") that copies every change of every
game into PostgreSQL, never on the request path.

Each batch of changes is one transaction, and every row it writes is a no-op when written
again, so a batch copied twice (its copier died after the commit and before the acknowledgement,
and another took it over) leaves the archive as once. After a batch, each game whose every
version is archived may leave Redis after the short cache expiry (`store.release`): a game
leaves Redis only once the archive can rebuild it.

Besides the log entries, the archive keeps a recent engine state of each game (a snapshot every
SNAPSHOT_EVERY versions and at the end, read from the store right after the commit that made
it), so that a rebuild replays a few moves rather than the whole game. What a state means is the
API's business: the copier gets a `describe(state) -> header` from it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime

import orjson
import psycopg

from service.jobs.runner import OutboxConsumer
from service.store import GameStore, OutboxItem
from service.store.archive import Archive, Batch, Header, Move

from . import metrics

log = logging.getLogger(__name__)

SNAPSHOT_EVERY = 32
BACKLOG_EVERY = 5.0  # seconds between two reads of the backlog (one XINFO per shard)

Describe = Callable[[bytes], dict]


class ArchiveCopier(OutboxConsumer):
    name = "archive"
    group = "archive"

    def __init__(
        self,
        store: GameStore,
        archive: Archive,
        describe: Describe,
        consumer: str,
        *,
        cache_ttl: int,
        batch: int = 100,
        claim_idle_ms: int = 30_000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(store, consumer, batch=batch, claim_idle_ms=claim_idle_ms)
        self.archive = archive
        self.describe = describe
        self.cache_ttl = cache_ttl
        self.clock = clock
        # Changes taken and not yet archived because the archive failed: tried again first,
        # and nothing new is taken meanwhile (so an outage holds one batch, not the stream).
        self._held: list[OutboxItem] = []
        self._backlog_at = 0.0

    def run_once(self) -> int:
        items = self._held
        if not items:
            items = self.store.outbox_claim(self.group, self.consumer, self.claim_idle_ms, self.batch)
            items += self.store.outbox_read(self.group, self.consumer, self.batch)
        self._measure_backlog()
        if not items:
            metrics.LAG.set(0)
            return 0
        try:
            done = self.handle(items)
        except Exception:
            self._held = _unique(items)
            metrics.FAILURES.inc()
            metrics.LAG.set(self.clock() - min(i.time_ms for i in items) / 1000)
            raise
        self._held = []
        self.store.outbox_ack(self.group, done)
        return len(items)

    def _measure_backlog(self) -> None:
        now = time.monotonic()
        if now - self._backlog_at >= BACKLOG_EVERY:
            self._backlog_at = now
            metrics.BACKLOG.set(self.store.outbox_backlog(self.group))

    def handle(self, items: Sequence[OutboxItem]) -> Sequence[OutboxItem]:
        batch = Batch()
        done: list[OutboxItem] = []
        # A game deleted at its owner's request is not archived again from changes queued
        # before its deletion: they are done with, unwritten.
        deleted = {g for g in {i.game_id for i in items} if self.store.deleted(g)}
        done.extend(i for i in items if i.game_id in deleted)
        for item in _unique(i for i in items if i.game_id not in deleted):
            try:
                self._add(batch, item)
            except (ValueError, KeyError, TypeError):
                # A change the copier cannot read stays pending (and is logged each time it is
                # taken again): losing it silently would be worse.
                metrics.BAD_CHANGES.inc()
                log.exception("unreadable outbox change", extra={"fields": {
                    "event": "archive_bad_change", "game_id": item.game_id, "id": item.id}})
                continue
            done.append(item)
        self._adopt(batch, done)
        self._snapshot(batch, done)
        try:
            written = self.archive.write(batch)
        except psycopg.Error:
            # Not an outage (that is StoreUnavailable): PostgreSQL refused something in the
            # batch. Each change alone, so that one bad change holds back only itself; that
            # one stays pending, to be taken again after the claim time.
            if len(done) > 1:
                log.exception("batch refused: archiving its changes one by one", extra={"fields": {
                    "event": "archive_batch_refused", "changes": len(done)}})
                return [item for item in done if self.handle([item])]
            metrics.BAD_CHANGES.inc()
            log.exception("outbox change refused by the archive", extra={"fields": {
                "event": "archive_bad_change", "game_id": done[0].game_id, "id": done[0].id}})
            return []
        # A game deleted while this batch was on its way: its rows go again.
        late = {game_id for game_id in batch.games() if self.store.deleted(game_id)}
        if late:
            self.archive.purge(late)
        versions = {**written.versions, **self._fill_gaps(batch, written.versions)}
        now = self.clock()
        for item in done:
            metrics.CHANGE_LAG.observe(max(0.0, now - item.time_ms / 1000))
        if done:
            metrics.LAG.set(max(0.0, now - min(i.time_ms for i in done) / 1000))
        metrics.CHANGES.inc(len(done))
        metrics.MOVES.labels(result="inserted").inc(written.inserted)
        metrics.MOVES.labels(result="repeat").inc(written.repeated)
        metrics.MOVES.labels(result="conflict").inc(written.conflicts)
        for game_id, version in versions.items():
            self.store.release(game_id, version, self.cache_ttl)
        return done

    def _fill_gaps(self, batch: Batch, versions: dict[str, int]) -> dict[str, int]:
        """Versions missing below the ones this batch archived (taken by a copier that died and
        not claimed yet, or trimmed from a full outbox before they were copied): copied from the
        store's log, which has them. Returns the games' versions after."""
        top: dict[str, int] = {}
        for game_id, version in batch.moves:
            top[game_id] = max(version, top.get(game_id, 0))
        fill = Batch()
        for game_id, archived in versions.items():
            wanted = top.get(game_id, 0)
            if archived >= wanted:
                continue
            entries = self.store.history(game_id, archived, wanted)
            if entries is None or len(entries) != wanted - archived:
                continue  # gone from the store: the versions come back from the outbox, or not
            for offset, raw in enumerate(entries):
                move = _move_at(game_id, archived + 1 + offset, raw)
                fill.add_move(move)
                if '"game_finished"' in move.events and _finishes(move.events):
                    fill.finished.add(game_id)
        if not fill.moves:
            return {}
        written = self.archive.write(fill)
        metrics.MOVES.labels(result="inserted").inc(written.inserted)
        metrics.MOVES.labels(result="repeat").inc(written.repeated)
        metrics.MOVES.labels(result="conflict").inc(written.conflicts)
        return written.versions

    # -- from outbox changes to rows ------------------------------------------------------------

    def _add(self, batch: Batch, item: OutboxItem) -> None:
        first = item.version - len(item.entries) + 1
        for offset, raw in enumerate(item.entries):
            move = _move(item, first + offset, raw)
            batch.add_move(move)
            if '"game_finished"' in move.events and _finishes(move.events):
                batch.finished.add(item.game_id)
        if item.meta is not None:
            batch.add_meta(item.game_id, item.meta, item.version, _change(item.id))
        if item.idem is not None:
            batch.add_idem(item.game_id, item.idem.key, item.idem.value, item.version,
                           item.time_ms + item.idem.ttl * 1000)
        if item.created:
            if item.state is None or item.meta is None:
                raise ValueError("a create without its state and meta")
            header = self._header(item.state, _created_ms(item.meta, item.time_ms))
            batch.headers.setdefault(item.game_id, header)
            batch.add_state(item.game_id, item.version, item.state)

    def _header(self, state: bytes, created_ms: int) -> Header:
        h = self.describe(state)
        return Header(map=h["map"], players=h["players"], options=h["options"],
                      rules_version=h["rules_version"], seed_commitment=h["seed_commitment"],
                      seed=h.get("seed"), created_ms=created_ms)

    def _adopt(self, batch: Batch, items: list[OutboxItem]) -> None:
        """Games the archive has never seen a create of (their create was trimmed from the
        outbox, or they were moved from an older layout): copied whole from the store."""
        unknown = {i.game_id for i in items} - set(batch.headers)
        unknown -= self.archive.known(unknown)
        for game_id in sorted(unknown):
            stored = self.store.load(game_id)
            entries = self.store.history(game_id, 0, stored.version) if stored is not None else None
            if stored is None or entries is None or len(entries) != stored.version:
                log.warning("game to adopt is gone from the store", extra={"fields": {
                    "event": "archive_adopt_missing", "game_id": game_id}})
                continue
            latest = max((i for i in items if i.game_id == game_id), key=lambda i: _change(i.id))
            fake = OutboxItem(id=latest.id, shard=latest.shard, game_id=game_id,
                              version=stored.version, entries=entries, meta=stored.meta,
                              state=stored.state, created=True)
            self._add(batch, fake)
            log.info("game adopted into the archive", extra={"fields": {
                "event": "archive_adopt", "game_id": game_id, "version": stored.version}})

    def _snapshot(self, batch: Batch, items: list[OutboxItem]) -> None:
        """A state for games that crossed a multiple of SNAPSHOT_EVERY or finished in this
        batch, from the store, if it is still at the version the batch brings it to."""
        lowest: dict[str, int] = {}
        highest: dict[str, int] = {}
        for game_id, version in batch.moves:
            lowest[game_id] = min(version, lowest.get(game_id, version))
            highest[game_id] = max(version, highest.get(game_id, version))
        for game_id, top in highest.items():
            crossed = top // SNAPSHOT_EVERY > (lowest[game_id] - 1) // SNAPSHOT_EVERY
            have = batch.states.get(game_id)
            if not (crossed or game_id in batch.finished) or (have and have[0] >= top):
                continue
            stored = self.store.load(game_id)
            if stored is None:
                continue
            if game_id in batch.finished and game_id not in batch.headers:
                # The seed becomes public with the end of the game: any state of it tells it.
                first = min(i.time_ms for i in items if i.game_id == game_id)
                header = self._header(stored.state, _created_ms(stored.meta, first))
                batch.headers[game_id] = header
            if stored.version == top:
                batch.add_state(game_id, top, stored.state)


def _created_ms(meta: bytes | None, committed_ms: int) -> int:
    """When the game was made: as a tenant's game's meta says (the time its tenant's listing in
    Redis sorts it by, so that the archive's listing sorts it alike), else when its create was
    committed."""
    if meta is None or b'"created_ms"' not in meta:
        return committed_ms
    return int(orjson.loads(meta).get("created_ms", committed_ms))


def _move(item: OutboxItem, version: int, raw: bytes) -> Move:
    return _move_at(item.game_id, version, raw, item.time_ms)


def _move_at(game_id: str, version: int, raw: bytes, time_ms: int | None = None) -> Move:
    entry = orjson.loads(raw)
    at = entry.get("at")
    if not at:  # entries from before the log kept times: the change's, else now
        at = datetime.fromtimestamp((time_ms or time.time() * 1000) / 1000, UTC).isoformat()
    return Move(
        game_id=game_id,
        version=version,
        seat=entry.get("seat"),
        type=str(entry["move"]["type"]),
        move=orjson.dumps(entry["move"]).decode(),
        events=orjson.dumps(entry.get("events", [])).decode(),
        at=at,
        by=entry.get("by"),
        entry=raw,
    )


def _finishes(events: str) -> bool:
    return any(e.get("type") == "game_finished" for e in orjson.loads(events) if isinstance(e, dict))


def _change(item_id: str) -> tuple[int, int]:
    ms, _, seq = item_id.partition("-")
    return int(ms), int(seq or 0)


def _unique(items: Iterable[OutboxItem]) -> list[OutboxItem]:
    seen: set[tuple[int, str]] = set()
    out = []
    for item in items:
        if (item.shard, item.id) not in seen:
            seen.add((item.shard, item.id))
            out.append(item)
    return out
