"""Small checks shared by the phases' move parsers."""

from __future__ import annotations

from service.engine.errors import IllegalMove


def expect_type(move: dict, *types: str) -> str:
    t = move.get("type")
    if t not in types:
        raise IllegalMove("WRONG_PHASE", f"a {t!r} move is not made now; expected {' or '.join(types)}")
    return t


def int_field(move: dict, name: str, minimum: int | None = None) -> int:
    value = move.get(name)
    if not isinstance(value, int) or isinstance(value, bool):
        raise IllegalMove("BAD_MOVE", f"{name} must be an integer")
    if minimum is not None and value < minimum:
        raise IllegalMove("BAD_MOVE", f"{name} must be at least {minimum}")
    return value


def hex_field(move: dict, name: str) -> tuple[int, int]:
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


def next_in_queue(state: dict) -> None:
    state["queue"].pop(0)
