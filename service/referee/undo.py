"""Undo: a seat takes back its own last move, alone, when nothing random came of it.

An undo is a new version whose state is, byte for byte, the state before the move (replayed
from the seed with the moves in effect then). It is refused when the seat has no move in effect,
when another seat has moved since (that seat's move would go too: ask for a takeback), and when
the move revealed a random outcome: the seeded generator moved (dice, drawn cubes, shuffles),
so taking it back would let the seat try again knowing what comes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from service.engine import game
from service.engine.layout import Event, State

from . import timeline
from .errors import GameError

NOTHING_TO_UNDO = "NOTHING_TO_UNDO"
ANOTHER_SEAT_MOVED = "ANOTHER_SEAT_MOVED"
RANDOM_OUTCOME_REVEALED = "RANDOM_OUTCOME_REVEALED"
GAME_FINISHED = "GAME_FINISHED"
UNDO_LIMIT = "UNDO_LIMIT"
# Undos one seat may make in a game. Each is a version, pushed to every watcher and kept in the
# history: without a bound one seat could grow a game's log without end (move, undo, move...).
MAX_UNDOS_PER_SEAT = 60


def refused(code: str, detail: str, **extra: Any) -> GameError:
    return GameError(code, detail, **extra)


def revealed_random_outcome(before: State, after: State) -> bool:
    """Whether going from `before` to `after` drew on the game's seeded generator. It only
    steps forward, so an unchanged generator means nothing random was drawn in between."""
    return before["rng"] != after["rng"]


def check_not_finished(state: State) -> None:
    # A finished game's record shows its seed: every draw to come would be known.
    if game.is_finished(state):
        raise refused(GAME_FINISHED, "the game is over; its moves stand")


@dataclass(frozen=True)
class Undo:
    state: State  # the state before the move
    events: list[Event]


def plan_undo(state: State, entries: Sequence[dict], seat: int) -> Undo:
    """The undo of `seat`'s last move in a game at `state` whose log is `entries`."""
    check_not_finished(state)
    made = sum(1 for e in entries if e.get("seat") == seat and e["move"]["type"] == timeline.UNDO)
    if made >= MAX_UNDOS_PER_SEAT:
        raise refused(UNDO_LIMIT, f"seat {seat} has undone {made} moves in this game, "
                      f"the most a seat may ({MAX_UNDOS_PER_SEAT}); ask for a takeback")
    effective = timeline.in_effect(entries)
    own = next((i for i in range(len(effective) - 1, -1, -1) if effective[i]["seat"] == seat), None)
    if own is None:
        raise refused(NOTHING_TO_UNDO, f"seat {seat} has no move to take back")
    if own != len(effective) - 1:
        later = effective[-1]
        raise refused(ANOTHER_SEAT_MOVED,
                      f"seat {later['seat']} has moved since (version {later['version']}); "
                      "ask for a takeback instead", seat=later["seat"], since=later["version"])
    last = effective[own]
    # The move was made on the state at its own index: the version before it.
    before = timeline.state_at(state, entries, last["index"])
    if revealed_random_outcome(before, state):
        raise refused(RANDOM_OUTCOME_REVEALED,
                      f"the move of version {last['version']} revealed a random outcome",
                      since=last["version"])
    event: Event = {"type": "move_undone", "seat": seat, "version": last["version"],
                    "move": last["move"]}
    return Undo(before, [event])
