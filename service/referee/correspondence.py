"""What the asynchronous-play requests do: undo, takeback with consent, programmed orders. Each
is one compare-and-set through Games.change, so each obeys If-Match and Idempotency-Key, and
is judged again against the new game when another writer got in first.

Orders change the game's metadata only (no version): a version would tell every watcher that
the seat did something. When a seat sets orders while it is the one to decide, they act at once,
and the moves they make are new versions in the same commit, as after a move. After an undo or
a takeback, orders do not act until the next move: an undo is the seat reconsidering, and
repeating its order at once would undo the undo.
"""

from __future__ import annotations

import orjson

from service.engine.contract_types import TakebackView, TimelineMove
from service.engine.layout import Event, State
from service.store import Stored

from . import orders, takeback, timeline
from .games import (
    SEP,
    Applied,
    Change,
    Games,
    log_entry,
    moved_body,
    replay_record,
    view_bytes,
)
from .undo import check_not_finished, plan_undo


def _step(game_id: str, stored: Stored, at_ms: int, seat: int, move: TimelineMove, events: list[Event],
          state: State | None, pending: TakebackView | None) -> Change:
    """A change of one log entry that is not a move of the game: an undo or a takeback step.
    `state` None: the state stays as it is."""
    state = orjson.loads(stored.state) if state is None else state
    version = stored.version + 1
    view = view_bytes(state, game_id, version, stored.meta, at_ms, pending)
    entry = log_entry(stored.version, seat, move, events, at_ms=at_ms, state=state)
    return Change([entry], state, view, None, moved_body(version, orjson.dumps(events), view),
                  replay_record(version, version))


def undo(games: Games, game_id: str, seat: int, *, if_match: str | None,
         idempotency_key: str | None, stored: Stored) -> Applied:
    def plan(stored: Stored, at_ms: int) -> Change:
        made = plan_undo(orjson.loads(stored.state), games.entries(game_id, stored), seat)
        return _step(game_id, stored, at_ms, seat, {"type": timeline.UNDO}, made.events, made.state, None)

    return games.change(game_id, {"seat": seat, "request": "undo"}, plan, games.replay_moved,
                        if_match=if_match, idempotency_key=idempotency_key, stored=stored)


def propose_takeback(games: Games, game_id: str, seat: int, to_version: int, *,
                     if_match: str | None, idempotency_key: str | None, stored: Stored) -> Applied:
    def plan(stored: Stored, at_ms: int) -> Change:
        step = takeback.propose(orjson.loads(stored.state), games.entries(game_id, stored), seat,
                                to_version)
        return _step(game_id, stored, at_ms, seat, step.move, step.events, step.state, step.pending)

    request = {"seat": seat, "request": "takeback", "to_version": to_version}
    return games.change(game_id, request, plan, games.replay_moved,
                        if_match=if_match, idempotency_key=idempotency_key, stored=stored)


def answer_takeback(games: Games, game_id: str, seat: int, accept: bool, *,
                    if_match: str | None, idempotency_key: str | None, stored: Stored) -> Applied:
    def plan(stored: Stored, at_ms: int) -> Change:
        entries = games.entries(game_id, stored)
        state = orjson.loads(stored.state)
        step = takeback.accept(state, entries, seat) if accept else takeback.decline(entries, seat)
        return _step(game_id, stored, at_ms, seat, step.move, step.events, step.state, step.pending)

    request = {"seat": seat, "request": "takeback/accept" if accept else "takeback/decline"}
    return games.change(game_id, request, plan, games.replay_moved,
                        if_match=if_match, idempotency_key=idempotency_key, stored=stored)


# -- orders ----------------------------------------------------------------------------------------

def orders_body(seat: int, standing: list[dict], version: int, applied: list[bytes]) -> bytes:
    """The answer to setting orders: what stands, the game's version, and the history entries
    of the moves they made at once."""
    return b'{"seat":%d,"orders":%b,"version":%d,"applied":[%b]}' % (
        seat, orjson.dumps(orders.public(standing)), version, b",".join(applied))


def read_orders(stored: Stored, seat: int) -> list[dict]:
    return orders.public(orders.book_of(orjson.loads(stored.meta)).get(str(seat), []))


def set_orders(games: Games, game_id: str, seat: int, standing: list[dict], *,
               if_match: str | None, idempotency_key: str | None, stored: Stored) -> Applied:
    """Replaces the seat's orders; when the seat is the one to decide they act at once (and the
    chain goes on through the seats after it)."""

    def plan(stored: Stored, at_ms: int) -> Change:
        state = orjson.loads(stored.state)
        check_not_finished(state)
        meta = orjson.loads(stored.meta)
        book = {**orders.book_of(meta), str(seat): standing}
        new_meta = orjson.dumps(orders.with_book(meta, book))
        entries: list[bytes] = []
        state, fired_meta = games.carry_out_orders(state, new_meta, entries, stored.version, at_ms,
                                                   first_seat=seat)
        new_meta = fired_meta or new_meta
        version = stored.version + len(entries)
        view = view_bytes(state, game_id, version, new_meta, at_ms) if entries else None
        left = orders.book_of(orjson.loads(new_meta)).get(str(seat), [])
        left_json = orjson.dumps(orders.public(left))
        record = b"%d%b%d%b%b" % (stored.version, SEP, version, SEP, left_json)
        return Change(entries, state, view, new_meta, orders_body(seat, left, version, entries),
                      record)

    def replay(game_id: str, record: bytes) -> Applied:
        before, final, left = record.split(SEP, 2)
        entries = games.store.history(game_id, int(before), int(final)) or []
        return Applied(int(final), orders_body(seat, orjson.loads(left), int(final), entries))

    request = {"seat": seat, "request": "orders", "orders": standing}
    return games.change(game_id, request, plan, replay,
                        if_match=if_match, idempotency_key=idempotency_key, stored=stored)


def clear_orders(games: Games, game_id: str, seat: int, *, stored: Stored) -> None:
    if not read_orders(stored, seat):
        return

    def plan(stored: Stored, at_ms: int) -> Change:
        meta = orjson.loads(stored.meta)
        book = {k: v for k, v in orders.book_of(meta).items() if k != str(seat)}
        return Change([], orjson.loads(stored.state), None,
                      orjson.dumps(orders.with_book(meta, book)), b"", b"%d" % stored.version)

    def replay(game_id: str, record: bytes) -> Applied:
        return Applied(int(record), b"")

    games.change(game_id, {"seat": seat, "request": "orders/delete"}, plan, replay,
                 if_match=None, idempotency_key=None, stored=stored)
