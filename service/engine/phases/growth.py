"""Goods Growth: the dice, after the Production action (phases/production.py). No decisions.

One die per player who started the game, light side then dark. Each die showing N moves the
topmost cube of light (or dark) column N to the city it feeds, and likewise from the lettered
new-city column beneath it once that city is on the map.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.engine.contract_types import GoodsGrownEventMovedItem
from service.engine.hexgrid import Hex, as_dict, key, parse_key
from service.engine.layout import Event, State
from service.engine.maps.loader import NEW_CITY_COLUMNS
from service.engine.state import roll_die

if TYPE_CHECKING:
    from service.engine.variants.base import Rules


def start(state: State, rules: Rules, events: list[Event]) -> None:
    roll_growth(state, rules, events)


def finish(state: State, rules: Rules, events: list[Event]) -> None:
    """Nothing to settle: every cube moved as its die was read."""


def column_target(state: State, rules: Rules, column: str) -> Hex | None:
    """The city a display column feeds now, or None."""
    if column in NEW_CITY_COLUMNS:
        for k, letter in state["new_cities"].items():
            if letter == column:
                return parse_key(k)
        return None
    return rules.map.column_city.get(column)


def roll_growth(state: State, rules: Rules, events: list[Event]) -> None:
    dice_count = rules.growth_dice(state)
    lettered_under = {t.column_under: t.letter for t in rules.map.new_city_tiles.values()
                      if t.letter in state["display"]}
    for side in ("light", "dark"):
        dice = [roll_die(state) for _ in range(dice_count)]
        events.append({"type": "dice_rolled", "side": side, "dice": dice})
        moved: list[GoodsGrownEventMovedItem] = []
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
                assert colour is not None
                squares[i] = None
                state["cubes"].setdefault(key(target), []).append(colour)
                moved.append({"column": column, "color": colour, "city": as_dict(target)})
        events.append({"type": "goods_grown", "side": side, "moved": moved})
