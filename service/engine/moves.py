"""Reading a move's fields: the small checks every phase's and map's move parser shares.

They live below phases/ and variants/, which both use them."""

from __future__ import annotations

from service.engine.errors import IllegalMove
from service.engine.hexgrid import Hex
from service.engine.layout import GivenMove, State


def expect_type(move: GivenMove, *types: str) -> str:
    t = move.get("type")
    if not isinstance(t, str) or t not in types:
        raise IllegalMove("WRONG_PHASE", f"a {t!r} move is not made now; expected {' or '.join(types)}")
    return t


def int_field(move: GivenMove, name: str, minimum: int | None = None) -> int:
    value = move.get(name)
    if not isinstance(value, int) or isinstance(value, bool):
        raise IllegalMove("BAD_MOVE", f"{name} must be an integer")
    if minimum is not None and value < minimum:
        raise IllegalMove("BAD_MOVE", f"{name} must be at least {minimum}")
    return value


def hex_field(move: GivenMove, name: str) -> Hex:
    value = move.get(name)
    if (
        not isinstance(value, dict)
        or not isinstance(value.get("q"), int)
        or not isinstance(value.get("r"), int)
        or isinstance(value.get("q"), bool)
        or isinstance(value.get("r"), bool)
    ):
        raise IllegalMove("BAD_MOVE", f"{name} must be a hex {{q, r}}")
    return (value["q"], value["r"])


def next_in_queue(state: State) -> None:
    state["queue"].pop(0)


def leave_queue(state: State, seat: int) -> None:
    """Takes a seat that is out of the game out of the step's queue, if it has a decision to come."""
    if seat in state["queue"]:
        state["queue"].remove(seat)
