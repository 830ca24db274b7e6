"""The timeline: which moves are in effect at each version, and the state at any version."""

from __future__ import annotations

import random

import orjson

from service.api import timeline
from service.engine import game


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
