"""The game state's small operations that every phase and map shares: dice, the bag, turn order.

The state is a plain dict so that it serialises with orjson as it is and replays byte for byte;
its layout, key by key, is the State type in layout.py."""

from __future__ import annotations

import orjson

from service.engine import rng
from service.engine import rules_data as R
from service.engine.layout import Auction, BuildTurn, Event, MoveGoods, Production, State
from service.engine.rules_data import COLOURS

FORMAT = "aos-state/1"


def copy_state(state: State) -> State:
    return orjson.loads(orjson.dumps(state))


DIE = rng.Draw("die", (1,) * 6, (1, 2, 3, 4, 5, 6))


def roll_die(state: State) -> int:
    state["rng"], value = rng.choose(state["rng"], DIE)
    return value + 1


def draw_cube(state: State) -> str | None:
    """Draws one cube at random from the bag; None when the bag is empty."""
    bag = state["bag"]
    weights = tuple(bag[c] for c in COLOURS)
    if not any(weights):
        return None
    state["rng"], i = rng.choose(state["rng"], rng.Draw("cube", weights, COLOURS))
    bag[COLOURS[i]] -= 1
    return COLOURS[i]


def shuffle(state: State, items: list[int]) -> list[int]:
    items = list(items)
    for i in range(len(items) - 1, 0, -1):
        state["rng"], j = rng.choose(state["rng"], rng.Draw("shuffle", (1,) * (i + 1), tuple(range(i + 1))))
        items[i], items[j] = items[j], items[i]
    return items


def active_players(state: State) -> list[int]:
    """Seats still in the game, in turn order."""
    return [s for s in state["turn_order"] if not state["players"][s]["eliminated"]]


def action_holder(state: State, action: str) -> int | None:
    return state["actions"]["taken"].get(action)


def open_auction(state: State) -> Auction:
    """The record of the auction under way; there must be one."""
    record = state["auction"]
    assert record is not None, "no auction is open"
    return record


def open_build_turn(state: State) -> BuildTurn:
    """The record of the build turn under way; there must be one."""
    record = state["build"]
    assert record is not None, "no build turn is open"
    return record


def open_move_goods(state: State) -> MoveGoods:
    """The record of the move-goods phase under way; there must be one."""
    record = state["move_goods"]
    assert record is not None, "move goods is not open"
    return record


def open_production(state: State) -> Production:
    """The record of the Production action under way; there must be one."""
    record = state["production"]
    assert record is not None, "no production is open"
    return record


def cubes_in_play(state: State) -> int:
    """Every cube not in the bag: on cities, on the display, and wherever a map keeps them."""
    n = sum(len(c) for c in state["cubes"].values())
    n += sum(1 for col in state["display"].values() for c in col if c)
    production = state.get("production")
    if production:
        n += len(production["drawn"])
    return n + state.get("variant", {}).get("cubes_held", 0)


def raise_locomotive(state: State, seat: int, events: list[Event]) -> None:
    """+1 locomotive level (the Locomotive action, the move-goods upgrade), never above 6."""
    player = state["players"][seat]
    if player["loco"] < R.MAX_LOCOMOTIVE:
        player["loco"] += 1
        events.append({"type": "locomotive_upgraded", "seat": seat, "locomotive": player["loco"]})
