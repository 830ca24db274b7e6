"""The game state: plain JSON-able data, and the small operations every phase shares.

The state is a dict so that it serialises with orjson as it is and replays byte for byte.
Layout (keys in hex form "q,r"):
  format, rules_version, map, options, seed, seed_given, seed_commitment, rng (int)
  round, last_round, phase, queue (seats still to decide in this step; the first decides)
  start_players, players [{name, cash, income, shares, loco, action, eliminated}]
  turn_order [seat], pass_holder (seat holding this auction's Turn Order pass, or None)
  actions {taken: {id: seat}, locked: [id]}, auction, build, move_goods, production
  display {column in play: [colour|None]} (no column for a new city the map removes)
  bag {colour: n}, cubes {hex: [colour]}
  new_cities {hex: letter}, track {hex: [[a, b, owner]]}, towns {hex: [[edge, owner]]}
  tiles {hex: tile id}, supply {tile id: n}, scores, variant (the map's own data)
"""

from __future__ import annotations

import orjson

from service.engine import rng
from service.engine.rules_data import CUBE_COUNTS

FORMAT = "aos-state/1"
COLOURS = tuple(CUBE_COUNTS)


def copy_state(state: dict) -> dict:
    return orjson.loads(orjson.dumps(state))


def roll_die(state: dict) -> int:
    state["rng"], value = rng.below(state["rng"], 6)
    return value + 1


def draw_cube(state: dict) -> str | None:
    """Draws one cube at random from the bag; None when the bag is empty."""
    bag = state["bag"]
    total = sum(bag.values())
    if total == 0:
        return None
    state["rng"], pick = rng.below(state["rng"], total)
    for colour in COLOURS:
        if pick < bag[colour]:
            bag[colour] -= 1
            return colour
        pick -= bag[colour]
    raise AssertionError("bag count mismatch")


def shuffle(state: dict, items: list) -> list:
    items = list(items)
    for i in range(len(items) - 1, 0, -1):
        state["rng"], j = rng.below(state["rng"], i + 1)
        items[i], items[j] = items[j], items[i]
    return items


def active_players(state: dict) -> list[int]:
    """Seats still in the game, in turn order."""
    return [s for s in state["turn_order"] if not state["players"][s]["eliminated"]]


def action_holder(state: dict, action: str) -> int | None:
    return state["actions"]["taken"].get(action)


def cubes_in_play(state: dict) -> int:
    """Every cube not in the bag: on cities, on the display, and wherever a map keeps them."""
    n = sum(len(c) for c in state["cubes"].values())
    n += sum(1 for col in state["display"].values() for c in col if c)
    if state.get("production"):
        n += len(state["production"]["drawn"])
    return n + state.get("variant", {}).get("cubes_held", 0)
