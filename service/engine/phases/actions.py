"""Select Actions: in the new turn order each player takes one action no one else has."""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.engine.errors import IllegalMove
from service.engine.layout import Event, GivenMove, Move, State
from service.engine.moves import expect_type, leave_queue, next_in_queue
from service.engine.state import active_players

if TYPE_CHECKING:
    from service.engine.variants.base import Rules

MOVE_TYPES = ("select_action",)


def start(state: State, rules: Rules, events: list[Event]) -> None:
    state["phase"] = "select_action"
    state["queue"] = active_players(state)


def legal(state: State, rules: Rules, seat: int) -> list[Move]:
    return [{"type": "select_action", "action": a} for a in rules.available_actions(state)]


def check(state: State, rules: Rules, seat: int, move: GivenMove) -> str:
    expect_type(move, *MOVE_TYPES)
    action = move.get("action")
    if not isinstance(action, str):
        raise IllegalMove("BAD_MOVE", "action must be an action id")
    if action not in rules.available_actions(state):
        raise IllegalMove("ACTION_UNAVAILABLE", f"{action!r} cannot be taken now",
                          action=action, available=rules.available_actions(state))
    return action


def apply(state: State, rules: Rules, seat: int, move: GivenMove, events: list[Event]) -> None:
    action = check(state, rules, seat, move)
    state["actions"]["taken"][action] = seat
    state["players"][seat]["action"] = action
    events.append({"type": "action_selected", "seat": seat, "action": action})
    rules.on_action_selected(state, seat, action, events)
    next_in_queue(state)


def leave(state: State, rules: Rules, seat: int, events: list[Event]) -> None:
    """A player out of the game (resign.py) makes no decision still to come here; when it was
    theirs to make now, the next seat decides."""
    leave_queue(state, seat)


def finish(state: State, rules: Rules, events: list[Event]) -> None:
    """Nothing to settle: the actions stay taken until the round ends (next_round)."""
