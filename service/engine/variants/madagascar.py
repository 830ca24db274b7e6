"""Madagascar: the eight Bad Actions replace the seven actions (docs/rules-decisions.md, Madagascar).

Each round 7 - players of the eight are locked by dice counted over the chart (see
`lock_actions`); every Bad Action hinders its holder:

  last_build              builds last                      (build_order)
  last_move               moves last in both move rounds   (move_order)
  locomotive_no_build     +1 locomotive at once, no tiles  (on_action_selected, tiles_allowed)
  urbanization_one_track  may urbanize, 1 tile             (may_urbanize, tiles_allowed)
  slow_engineer           2 tiles                          (tiles_allowed)
  last_player             drops out at their first turn of the next auction (forced_drop_out)
  high_cost               +$4 on every tile this round     (extra_cost_per_tile)
  single_transport        one move opportunity in all      (move_opportunities)

Everyone else lays 3 tiles. There is no Production, First Move, First Build or Turn Order action,
so no production step, and the build and move orders are the turn order with the "last" holder
moved to the end. state["variant"]: {"double_disc": action id | None (None before round 1's
locking), "must_drop_out": seat | None (the previous round's last_player holder)}.
"""

from __future__ import annotations

from service.engine.layout import Event, State
from service.engine.state import action_holder, active_players, raise_locomotive, roll_die
from service.engine.variants.base import Rules

BAD_ACTIONS: tuple[str, ...] = (
    "last_build",
    "last_move",
    "locomotive_no_build",
    "urbanization_one_track",
    "slow_engineer",
    "last_player",
    "high_cost",
    "single_transport",
)
TILES = {"locomotive_no_build": 0, "urbanization_one_track": 1, "slow_engineer": 2}
OTHER_TILES = 3
HIGH_COST_EXTRA = 4


def count_locks(state: State) -> int:
    """7 - X: X + 1 of the eight actions stay open, X the players still in the game."""
    return max(0, len(BAD_ACTIONS) - 1 - len(active_players(state)))


def lock_by_dice(double_disc: str | None, dice: list[int]) -> list[str]:
    """The actions the dice lock, in order. Counting starts at the action carrying the double
    disc (before action 1 when None); each die counts that many actions forward over the chart,
    wrapping and skipping actions already locked this round; counting goes on from the action
    just locked."""
    n = len(BAD_ACTIONS)
    pos = -1 if double_disc is None else BAD_ACTIONS.index(double_disc)
    locked: list[str] = []
    for die in dice:
        for _ in range(die):
            pos = (pos + 1) % n
            while BAD_ACTIONS[pos] in locked:
                pos = (pos + 1) % n
        locked.append(BAD_ACTIONS[pos])
    return locked


def last_in_order(state: State, last: int | None) -> list[int]:
    order = active_players(state)
    if last is not None and last in order:
        order.remove(last)
        order.append(last)
    return order


class Madagascar(Rules):
    def setup(self, state: State, events: list[Event]) -> None:
        state["variant"] = {"double_disc": None, "must_drop_out": None}

    def map_features(self) -> dict:
        return {**super().map_features(), "action_chart": list(BAD_ACTIONS),
                "locked_each_round": "7 - players, by dice counted over the chart",
                "tiles": {**TILES, "others": OTHER_TILES}, "high_cost_extra": HIGH_COST_EXTRA}

    def actions(self) -> tuple[str, ...]:
        return BAD_ACTIONS

    def start_round(self, state: State, events: list[Event]) -> None:
        variant = state["variant"]
        dice = [roll_die(state) for _ in range(count_locks(state))]
        locked = lock_by_dice(variant["double_disc"], dice)
        state["actions"]["locked"] = locked
        if locked:
            variant["double_disc"] = locked[-1]
        events.append({"type": "actions_locked", "actions": list(locked), "dice": dice,
                       "double_disc": variant["double_disc"]})

    def end_round(self, state: State, events: list[Event]) -> None:
        state["variant"]["must_drop_out"] = action_holder(state, "last_player")

    def on_action_selected(self, state: State, seat: int, action: str, events: list[Event]) -> None:
        if action == "locomotive_no_build":
            raise_locomotive(state, seat, events)

    def forced_drop_out(self, state: State, seat: int) -> bool:
        return state["variant"].get("must_drop_out") == seat

    def build_order(self, state: State) -> list[int]:
        return last_in_order(state, action_holder(state, "last_build"))

    def tiles_allowed(self, state: State, seat: int) -> int:
        return TILES.get(state["players"][seat]["action"] or "", OTHER_TILES)

    def may_urbanize(self, state: State, seat: int) -> bool:
        return action_holder(state, "urbanization_one_track") == seat

    def extra_cost_per_tile(self, state: State, seat: int) -> int:
        return HIGH_COST_EXTRA if action_holder(state, "high_cost") == seat else 0

    def move_order(self, state: State) -> list[int]:
        return last_in_order(state, action_holder(state, "last_move"))

    def move_opportunities(self, state: State, seat: int) -> int:
        return 1 if action_holder(state, "single_transport") == seat else 2

    def board_features(self, state: State) -> dict:
        return {"bad_actions": {"chart": list(BAD_ACTIONS),
                                "double_disc": state["variant"].get("double_disc"),
                                "must_drop_out": state["variant"].get("must_drop_out")}}
