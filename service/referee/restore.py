"""The API's half of the archive: what a state says about its game (for the copier), and
putting a game that left the store back from the archive (a rebuild needs the rules, so it is
here, not in service/archive, which knows bytes and versions only)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

import orjson

from service.engine import game
from service.engine.layout import State
from service.observability import metrics
from service.store import GameExists, GameStore, IdemRecord
from service.store.archive import Archive, ArchivedGame

from . import timeline
from .settings import Settings

log = logging.getLogger(__name__)

# (state, game id, version, meta, log entries) -> the view's bytes, exactly as a commit writes
# them, and the clock's deadline (games.render_at).
Render = Callable[[State, str, int, bytes, Sequence[dict]], tuple[bytes, float | None]]
Restore = Callable[[str], bool]


def describe(state: bytes) -> dict:
    """The public header of the game a state belongs to: its replay record's (the seed only
    once the game is finished)."""
    return game.record_header(orjson.loads(state))


def rebuild(archived: ArchivedGame) -> State:
    """The engine state at the archived version: from the archived state and the moves in
    effect after it when the moves in effect then are still in effect now, else (an undo or a
    takeback went back beyond it) from the game's seed."""
    entries = timeline.entries_of(archived.entries)
    known = orjson.loads(archived.state)
    if 0 <= archived.state_version <= archived.version:
        then = [e["index"] for e in timeline.in_effect(entries, archived.state_version)]
        now = timeline.in_effect(entries, archived.version)
        if [e["index"] for e in now[: len(then)]] == then:
            state = known
            for entry in now[len(then):]:
                state, _ = timeline.apply_entry(state, entry["seat"], entry["move"])
            return state
    return timeline.state_at(known, entries, archived.version)


class Restorer:
    """Puts games back into the store from the archive, as they were when they left: the same
    log, meta (seat tokens stay valid), state and view."""

    def __init__(self, store: GameStore, archive: Archive, render: Render, *, ttl: int) -> None:
        self.store = store
        self.archive = archive
        self.render = render
        self.ttl = ttl

    def __call__(self, game_id: str) -> bool:
        """Whether the game is in the store now (put back, or by another request meanwhile).
        Raises StoreUnavailable when the archive cannot be reached: the game may exist."""
        started = time.perf_counter()
        archived = self.archive.load(game_id)
        if archived is None:
            metrics.RESTORES.labels(outcome="absent").inc()
            return False
        if archived.beyond_gap:
            # Versions archived beyond a gap: Redis lost the ones between before they were
            # copied. The game goes on from the last version before the gap.
            self.archive.set_aside(game_id, archived.version)
        state = rebuild(archived)
        view, deadline = self.render(state, game_id, archived.version, archived.meta,
                                     timeline.entries_of(archived.entries))
        try:
            self.store.create(
                game_id,
                state=orjson.dumps(state),
                meta=archived.meta,
                view=view,
                ttl=self.ttl,
                log=archived.entries,
                deadline=deadline,
                # A client retrying an archived change with its Idempotency-Key gets its first
                # answer, not a judgement of the move again on the game as it is now.
                idem=[IdemRecord(key, value, ttl) for key, value, ttl in archived.idem],
            )
        except GameExists:
            metrics.RESTORES.labels(outcome="raced").inc()
            return True
        seconds = time.perf_counter() - started
        metrics.RESTORES.labels(outcome="restored").inc()
        metrics.RESTORE_SECONDS.observe(seconds)
        log.info("game restored from the archive", extra={"fields": {
            "event": "game_restored", "game_id": game_id, "version": archived.version,
            "ms": round(seconds * 1000, 1)}})
        return True


def _absent(game_id: str) -> bool:
    return False


def archive_of(settings: Settings) -> Archive | None:
    """The archive a request process reads (and purges), or None without DATABASE_URL."""
    if not settings.database_url:
        return None
    # A request waits at most ~2 s for PostgreSQL before it is a 503.
    return Archive(settings.database_url, max_size=4, timeout=2.0, connect_timeout=2)


def restorer(store: GameStore, settings: Settings, render: Render, archive: Archive | None = None) -> Restore:
    """The store's way back from the archive: a Restorer when DATABASE_URL is set, else a
    function that finds nothing."""
    archive = archive or archive_of(settings)
    if archive is None:
        return _absent
    return Restorer(store, archive, render, ttl=settings.cache_ttl)
