"""Computer seats: players created as `{"name": ..., "bot": {"level": int}}`, played by the worker.

The game's metadata names them (`meta["bots"]`: seat -> level); the engine never knows. Such a
seat has no token: nobody moves for it but the worker, through the same commit as any move
(Games.apply, If-Match on the version it searched, `by="bot"`).

How the worker finds them: a commit that leaves a computer seat to decide sets the game's clock
(the store's clock set, claimed under a lease by one worker at a time) due at once, at the
commit's own time. The worker's clock job, finding a computer seat to decide, plays it instead
of a default move. So a worker that dies mid-search leaves its lease to run out, and another
takes the seat over; the compare-and-set on the version makes the move happen exactly once.
"""

from __future__ import annotations

from collections.abc import Sequence

from service.engine import game
from service.engine.layout import State
from service.sim import levels

from . import clocks

KEY = "bots"
BY = "bot"  # the history entries of their moves say `"by": "bot"`
MIN_LEVEL, MAX_LEVEL = levels.MIN_LEVEL, levels.MAX_LEVEL


def of_players(players: Sequence[dict]) -> dict[int, int]:
    """The computer seats of a create's players: seat -> level."""
    return {seat: p["bot"]["level"] for seat, p in enumerate(players) if p.get("bot")}


def in_meta(seats: dict[int, int]) -> dict:
    """What the game's metadata keeps of its computer seats (JSON keys are strings)."""
    return {KEY: {str(seat): level for seat, level in seats.items()}} if seats else {}


def of_meta(meta: dict) -> dict[int, int]:
    return {int(seat): level for seat, level in (meta.get(KEY) or {}).items()}


def level_of(meta: dict, seat: int | None) -> int | None:
    """The level of `seat` if the computer plays it, else None."""
    if seat is None:
        return None
    return (meta.get(KEY) or {}).get(str(seat))


def deciding(meta: dict, state: State) -> tuple[int, int] | None:
    """(seat, level) when the seat to decide now is a computer's; None otherwise."""
    seat = game.active_seat(state)
    level = level_of(meta, seat)
    return None if seat is None or level is None else (seat, level)


def due_seconds(meta: dict, state: State, since_ms: int) -> float | None:
    """The clock set's score for a game at a version committed at `since_ms`: due at once when a
    computer seat decides (the worker plays it), else the turn clock's deadline (or None)."""
    if deciding(meta, state) is not None:
        return since_ms / 1000
    return clocks.deadline_seconds(clocks.deadline_ms(clocks.of_meta(meta), state, since_ms))
