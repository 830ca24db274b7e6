"""The timeline: which moves are in effect at each version, and the state at any version."""

from __future__ import annotations

import random

import orjson

from service.engine import game
from service.referee import timeline


def entry(index: int, seat: int, move: dict) -> dict:
    return {"index": index, "version": index + 1, "seat": seat, "move": move, "events": []}


def moves(entries: list[dict], version: int | None = None) -> list[int]:
    return [e["index"] for e in timeline.in_effect(entries, version)]


def test_moves_undo_and_takeback_decide_what_is_in_effect() -> None:
    log = [
        entry(0, 0, {"type": "bid", "amount": 1}),
        entry(1, 1, {"type": "bid", "amount": 2}),
        entry(2, 1, {"type": "undo"}),  # takes back index 1
        entry(3, 1, {"type": "bid", "amount": 3}),
        entry(4, 2, {"type": "takeback_proposed", "to_version": 1}),  # records only
        entry(5, 2, {"type": "bid", "amount": 4}),
        entry(6, 0, {"type": "takeback", "to_version": 2}),  # back to what version 2 had
        entry(7, 2, {"type": "drop_out"}),
    ]
    assert moves(log, 0) == []
    assert moves(log, 2) == [0, 1]
    assert moves(log, 3) == [0]
    assert moves(log, 6) == [0, 3, 5]
    assert moves(log, 7) == [0, 1]
    assert moves(log) == [0, 1, 7]


def test_the_state_at_any_version_is_the_state_that_version_had() -> None:
    rng = random.Random(3)
    state = game.new_game("rust_belt", ["Ann", "Bob", "Cat"], "timeline")
    states, log = [orjson.dumps(state)], []
    for index in range(20):  # this game ends by bankruptcy after 25 moves
        seat = game.active_seat(state)
        move = rng.choice(game.legal_moves(state, seat))
        state, events = game.apply(state, seat, move)
        log.append(entry(index, seat, move) | {"events": events})
        states.append(orjson.dumps(state))
    for version in (0, 1, 13, 20):
        assert orjson.dumps(timeline.state_at(state, log, version)) == states[version]
    undone = [*log, entry(20, log[-1]["seat"], {"type": "undo"})]
    assert orjson.dumps(timeline.state_at(state, undone, 21)) == states[19]


def proposal(index: int, seat: int, to_version: int, asked: list[int]) -> dict:
    return entry(index, seat, {"type": "takeback_proposed", "to_version": to_version}) | {
        "events": [{"type": "takeback_proposed", "seat": seat, "to_version": to_version,
                    "asked": asked, "versions": []}]}


def test_a_pending_takeback_is_read_from_the_log_at_any_version() -> None:
    log = [
        entry(0, 0, {"type": "bid", "amount": 1}),
        entry(1, 1, {"type": "bid", "amount": 2}),
        proposal(2, 2, 0, [0, 1]),
        entry(3, 0, {"type": "takeback_accepted", "to_version": 0}),
        entry(4, 1, {"type": "takeback_declined", "to_version": 0}),
        proposal(5, 0, 1, [1]),
        entry(6, 1, {"type": "bid", "amount": 3}),  # a move ends it
        proposal(7, 1, 6, [2]),
        entry(8, 1, {"type": "undo"}),  # so does an undo
        proposal(9, 2, 1, [1]),
        entry(10, 2, {"type": "takeback_cancelled", "to_version": 1}),  # and a withdrawal
    ]
    pending = [timeline.pending_takeback(log[:version]) for version in range(len(log) + 1)]
    assert pending == [
        None, None, None,
        {"to_version": 0, "by": 2, "waiting": [0, 1]},
        {"to_version": 0, "by": 2, "waiting": [1]},
        None,
        {"to_version": 1, "by": 0, "waiting": [1]},
        None,
        {"to_version": 6, "by": 1, "waiting": [2]},
        None,
        {"to_version": 1, "by": 2, "waiting": [1]},
        None,
    ]
    # The last TAKEBACK_SPAN entries say as much as the whole log.
    for version in range(len(log) + 1):
        tail = log[max(0, version - timeline.TAKEBACK_SPAN):version]
        assert timeline.pending_takeback(tail) == pending[version]
    # None of these steps is a move: the moves in effect are the bids less the one undone.
    assert moves(log) == [0, 1]
