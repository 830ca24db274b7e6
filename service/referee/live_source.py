"""A game's versions as the events stream shows them: each log entry with the game view after it.

An event is the version's history entry (`{index, version, seat, move, events, at, by?}`) plus
`game`, the view at that version. The newest version's view is the stored one. Older views are
made again from the log, in one pass: the state at the first version asked for (carried over
from the previous batch, or replayed once from the seed), then each entry applied to the state
before it. Entries that take moves back (an undo, a takeback) make their state from the
timeline, since it equals an earlier one rather than following from the last.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from service.engine import game
from service.live import Batch, Event, GameGone, VersionAhead
from service.store import GameStore

from . import timeline
from .games import render_at


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where a batch left off: the engine state at `version`, as stored (JSON)."""

    version: int
    state: bytes


def event_json(entry: bytes, view: bytes) -> bytes:
    """A log entry (a JSON object) with `"game": view` added, without decoding either."""
    return entry[: entry.rindex(b"}")] + b',"game":' + view + b"}"


def follows_from_last(entry: dict) -> bool:
    """Whether the entry's state is the one before it, changed by the entry alone (a move, or
    a record that changes nothing), rather than one the timeline has to work out."""
    return timeline.is_move(entry) or timeline.move_type(entry) in timeline.RECORD_ONLY


class GameEvents:
    """The live package's Source over the game store."""

    def __init__(self, store: GameStore) -> None:
        self.store = store

    def since(self, game_id: str, after: int | None, cursor: object = None, limit: int = 64) -> Batch:
        stored = self.store.load(game_id, with_view=True)
        if stored is None:
            raise GameGone(game_id)
        assert stored.view is not None  # loaded with its view
        stored_view = stored.view
        version = stored.version
        if after is None:
            after = max(version - 1, 0)
        if after > version:
            raise VersionAhead(version)
        state_now = orjson.loads(stored.state)
        finished_now = game.is_finished(state_now)
        if after == version:
            return Batch((), version, finished_now, cursor=Cursor(version, stored.state))
        upto = min(version, after + limit)
        raw = self._history(game_id, after, upto)
        entries = timeline.entries_of(raw)
        if upto == version and upto == after + 1:  # the newest version only: its view is stored
            event = Event(version, event_json(raw[0], stored_view), finished_now)
            return Batch([event], version, finished_now, cursor=Cursor(version, stored.state))

        known = cursor if isinstance(cursor, Cursor) and cursor.version == after else None
        # The whole log up to the batch's end: a past view's pending takeback and its clock's
        # deadline are read from it (render_at), as the stored views were made.
        log = timeline.entries_of(self._history(game_id, 0, upto))
        state = orjson.loads(known.state) if known is not None else timeline.state_at(state_now, log, after)
        events = []
        for data, entry in zip(raw, entries, strict=True):
            at = entry["version"]
            if timeline.is_move(entry):
                state, _ = timeline.apply_entry(state, entry["seat"], entry["move"])
            elif not follows_from_last(entry):
                state = timeline.state_at(state_now, log, at)
            if at == version:
                state, view = state_now, stored_view
            else:
                view = render_at(state, game_id, at, stored.meta, log[:at])[0]
            events.append(Event(at, event_json(data, view), game.is_finished(state)))
        last = stored.state if upto == version else orjson.dumps(state)
        finished = game.is_finished(state)
        return Batch(events, upto, finished, more=upto < version, cursor=Cursor(upto, last))

    def _history(self, game_id: str, start: int, stop: int) -> list[bytes]:
        # The log only grows, and entry i made version i + 1: entries below the version just
        # read are fixed. A game that vanished in between is gone.
        entries = self.store.history(game_id, start, stop)
        if entries is None or len(entries) != stop - start:
            raise GameGone(game_id)
        return entries
