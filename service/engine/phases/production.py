"""The Production action: its holder draws cubes from the bag and places them on the display.

The only decision of the round's end. Each drawn cube goes on the topmost empty square of a
column the holder names; with fewer empty squares than cubes, exactly as many as fit are placed,
and the rest go back to the bag. A map may change the draws, the placements and the columns.
"""

from __future__ import annotations

from itertools import combinations, product
from typing import TYPE_CHECKING

from service.engine.contract_types import ProduceMove
from service.engine.errors import IllegalMove
from service.engine.layout import Event, GivenMove, Move, State
from service.engine.moves import expect_type
from service.engine.state import action_holder, draw_cube, open_production

if TYPE_CHECKING:
    from service.engine.variants.base import Rules

MOVE_TYPES = ("produce",)


def start(state: State, rules: Rules, events: list[Event]) -> None:
    """Draws the Production holder's cubes; the holder decides only when a placement is open."""
    state["phase"] = "production"
    state["queue"] = []
    seat = action_holder(state, "production")
    if seat is None or state["players"][seat]["eliminated"]:
        return
    rules.before_production_draw(state, seat, events)
    drawn = []
    for _ in range(rules.production_draws(state)):
        cube = draw_cube(state)
        if cube is not None:
            drawn.append(cube)
    state["production"] = {"seat": seat, "drawn": drawn}
    state["queue"] = [seat]
    events.append({"type": "production_drawn", "seat": seat, "drawn": list(drawn)})
    if placements_needed(state, rules) == 0 and not rules.production_extra_choices(state):
        place(state, [], events)


def empty_squares(state: State, rules: Rules) -> dict[str, int]:
    return {c: state["display"][c].count(None) for c in rules.production_columns(state)
            if None in state["display"][c]}


def placements_needed(state: State, rules: Rules) -> int:
    drawn = open_production(state)["drawn"]
    room = sum(empty_squares(state, rules).values())
    return min(len(drawn), rules.production_placements(state), room)


def legal(state: State, rules: Rules, seat: int) -> list[Move]:
    drawn = open_production(state)["drawn"]
    need = placements_needed(state, rules)
    room = empty_squares(state, rules)
    columns = sorted(room)
    seen = set()
    moves: list[ProduceMove] = []
    for colours in sorted(set(combinations(sorted(drawn), need))):
        for cols in product(columns, repeat=need):
            if any(cols.count(c) > room[c] for c in set(cols)):
                continue
            placement = tuple(sorted(zip(colours, cols, strict=True)))
            if placement in seen:
                continue
            seen.add(placement)
            moves.append({"type": "produce",
                          "placements": [{"color": c, "column": col} for c, col in placement]})
    return [*rules.production_moves(state, seat, moves)]


def check(state: State, rules: Rules, seat: int, move: GivenMove) -> list[tuple[str, str]]:
    expect_type(move, *MOVE_TYPES)
    placements = move.get("placements")
    if not isinstance(placements, list) or not all(
            isinstance(p, dict) and isinstance(p.get("color"), str) and isinstance(p.get("column"), str)
            for p in placements):
        raise IllegalMove("BAD_MOVE", "placements is a list of {color, column}")
    need = placements_needed(state, rules)
    if len(placements) != need:
        raise IllegalMove("BAD_PLACEMENT", f"place exactly {need} cube(s)", need=need)
    drawn = list(open_production(state)["drawn"])
    room = empty_squares(state, rules)
    out = []
    for p in placements:
        if p["color"] not in drawn:
            raise IllegalMove("BAD_PLACEMENT", f"no drawn {p['color']} cube left to place")
        drawn.remove(p["color"])
        if room.get(p["column"], 0) <= 0:
            raise IllegalMove("BAD_PLACEMENT", f"column {p['column']} has no empty square")
        room[p["column"]] -= 1
        out.append((p["color"], p["column"]))
    rules.check_production_extra(state, seat, move)
    return out


def apply(state: State, rules: Rules, seat: int, move: GivenMove, events: list[Event]) -> None:
    placements = check(state, rules, seat, move)
    rules.apply_production_extra(state, seat, move, events)
    place(state, placements, events)


def place(state: State, placements: list[tuple[str, str]], events: list[Event]) -> None:
    """Puts the placed cubes on the display and the rest back in the bag; nobody decides after."""
    production = open_production(state)
    drawn = list(production["drawn"])
    for colour, column in placements:
        squares = state["display"][column]
        squares[squares.index(None)] = colour
        drawn.remove(colour)
    for colour in drawn:
        state["bag"][colour] += 1
    events.append({"type": "production", "seat": production["seat"],
                   "placements": [{"color": c, "column": col} for c, col in placements],
                   "returned": drawn})
    state["queue"] = []


def leave(state: State, rules: Rules, seat: int, events: list[Event]) -> None:
    """The holder out of the game (resign.py) places nothing: the drawn cubes go back to the bag.
    Anyone else has no decision here."""
    if state["queue"][:1] == [seat]:
        place(state, [], events)


def finish(state: State, rules: Rules, events: list[Event]) -> None:
    """Clears the record. When the game ends before the holder has placed (the others left the
    game), the drawn cubes go back to the bag first: once, as the holder's own leaving does."""
    if state["queue"]:
        place(state, [], events)
    state["production"] = None
