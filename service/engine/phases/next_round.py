"""The end of one round and the start of the next: the actions go back, the round number moves
on, and the map's round hooks run (Berlin's wall, Madagascar's locks, Holland's block). No
decisions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.engine.layout import Event, State

if TYPE_CHECKING:
    from service.engine.variants.base import Rules


def start(state: State, rules: Rules, events: list[Event]) -> None:
    rules.end_round(state, events)
    # The Turn Order pass is read from this round's actions before they go back.
    state["pass_holder"] = rules.turn_order_pass_holder(state)
    state["actions"] = {"taken": {}, "locked": []}
    for player in state["players"]:
        player["action"] = None
    state["round"] += 1
    open_round(state, rules, events)


def open_round(state: State, rules: Rules, events: list[Event]) -> None:
    """What starts every round, the first (new_game) included, before shares are issued."""
    events.append({"type": "round_started", "round": state["round"]})
    rules.start_round(state, events)


def finish(state: State, rules: Rules, events: list[Event]) -> None:
    """Nothing to settle."""
