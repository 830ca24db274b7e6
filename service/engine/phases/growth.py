"""Goods Growth: the Production action's placement (a decision), then the dice.

Dice: one per player who started the game, light side then dark. Each die showing N moves the
topmost cube of light (or dark) column N to the city it feeds, and likewise from the lettered
new-city column beneath it once that city is on the map.
"""

from __future__ import annotations

from itertools import product

from service.engine.errors import IllegalMove
from service.engine.hexgrid import as_dict, key, parse_key
from service.engine.maps.loader import NEW_CITY_COLUMNS
from service.engine.phases.common import expect_type
from service.engine.state import action_holder, draw_cube, roll_die


def empty_squares(state: dict, rules) -> dict[str, int]:
    return {c: state["display"][c].count(None) for c in rules.production_columns(state)
            if None in state["display"][c]}


def start_production(state: dict, rules, events: list) -> bool:
    """Draws the Production holder's cubes; True when they have a placement to decide."""
    seat = action_holder(state, "production")
    if seat is None or state["players"][seat]["eliminated"]:
        return False
    rules.before_production_draw(state, seat, events)
    drawn = []
    for _ in range(rules.production_draws(state)):
        cube = draw_cube(state)
        if cube is not None:
            drawn.append(cube)
    state["phase"] = "production"
    state["production"] = {"seat": seat, "drawn": drawn}
    state["queue"] = [seat]
    events.append({"type": "production_drawn", "seat": seat, "drawn": list(drawn)})
    if placements_needed(state, rules) == 0 and not rules.production_extra_choices(state):
        finish_production(state, [], events)
        return False
    return True


def placements_needed(state: dict, rules) -> int:
    drawn = state["production"]["drawn"]
    room = sum(empty_squares(state, rules).values())
    return min(len(drawn), rules.production_placements(state), room)


def legal(state: dict, rules, seat: int) -> list[dict]:
    drawn = state["production"]["drawn"]
    need = placements_needed(state, rules)
    room = empty_squares(state, rules)
    columns = sorted(room)
    seen = set()
    moves = []
    for colours in _choose(sorted(drawn), need):
        for cols in product(columns, repeat=need):
            if any(cols.count(c) > room[c] for c in set(cols)):
                continue
            placement = tuple(sorted(zip(colours, cols, strict=True)))
            if placement in seen:
                continue
            seen.add(placement)
            moves.append({"type": "produce",
                          "placements": [{"color": c, "column": col} for c, col in placement]})
    return rules.production_moves(state, seat, moves)


def _choose(items: list, n: int) -> list[tuple]:
    from itertools import combinations

    return sorted(set(combinations(items, n)))


def check(state: dict, rules, seat: int, move: dict) -> list[tuple[str, str]]:
    expect_type(move, "produce")
    placements = move.get("placements")
    if not isinstance(placements, list) or not all(
            isinstance(p, dict) and isinstance(p.get("color"), str) and isinstance(p.get("column"), str)
            for p in placements):
        raise IllegalMove("BAD_MOVE", "placements is a list of {color, column}")
    need = placements_needed(state, rules)
    if len(placements) != need:
        raise IllegalMove("BAD_PLACEMENT", f"place exactly {need} cube(s)", need=need)
    drawn = list(state["production"]["drawn"])
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


def apply(state: dict, rules, seat: int, move: dict, events: list) -> None:
    placements = check(state, rules, seat, move)
    rules.apply_production_extra(state, seat, move, events)
    finish_production(state, placements, events)


def finish_production(state: dict, placements: list[tuple[str, str]], events: list) -> None:
    drawn = list(state["production"]["drawn"])
    for colour, column in placements:
        squares = state["display"][column]
        squares[squares.index(None)] = colour
        drawn.remove(colour)
    for colour in drawn:
        state["bag"][colour] += 1
    events.append({"type": "production", "seat": state["production"]["seat"],
                   "placements": [{"color": c, "column": col} for c, col in placements],
                   "returned": drawn})
    state["production"] = None
    state["queue"] = []


def column_target(state: dict, rules, column: str):
    """The city a display column feeds now, or None."""
    if column in NEW_CITY_COLUMNS:
        for k, letter in state["new_cities"].items():
            if letter == column:
                return parse_key(k)
        return None
    return rules.map.column_city.get(column)


def roll_growth(state: dict, rules, events: list) -> None:
    dice_count = rules.growth_dice(state)
    lettered_under = {t.column_under: t.letter for t in rules.map.new_city_tiles.values()
                      if t.letter in state["display"]}
    for side in ("light", "dark"):
        dice = [roll_die(state) for _ in range(dice_count)]
        events.append({"type": "dice_rolled", "side": side, "dice": dice})
        moved = []
        for value in dice:
            number_column = f"{side}-{value}"
            for column in (number_column, lettered_under.get(number_column)):
                if column is None:
                    continue
                target = column_target(state, rules, column)
                squares = state["display"][column]
                if target is None or not any(squares):
                    continue
                i = next(j for j, c in enumerate(squares) if c)
                colour = squares[i]
                squares[i] = None
                state["cubes"].setdefault(key(target), []).append(colour)
                moved.append({"column": column, "color": colour, "city": as_dict(target)})
        events.append({"type": "goods_grown", "side": side, "moved": moved})
