"""Select Actions: in the new turn order each player takes one action no one else has."""

from __future__ import annotations

from service.engine.errors import IllegalMove
from service.engine.phases.common import expect_type
from service.engine.state import active_players


def start(state: dict, rules, events: list) -> None:
    state["phase"] = "select_action"
    state["queue"] = active_players(state)


def legal(state: dict, rules, seat: int) -> list[dict]:
    return [{"type": "select_action", "action": a} for a in rules.available_actions(state)]


def check(state: dict, rules, seat: int, move: dict) -> str:
    expect_type(move, "select_action")
    action = move.get("action")
    if not isinstance(action, str):
        raise IllegalMove("BAD_MOVE", "action must be an action id")
    if action not in rules.available_actions(state):
        raise IllegalMove("ACTION_UNAVAILABLE", f"{action!r} cannot be taken now",
                          action=action, available=rules.available_actions(state))
    return action


def apply(state: dict, rules, seat: int, move: dict, events: list) -> None:
    action = check(state, rules, seat, move)
    state["actions"]["taken"][action] = seat
    state["players"][seat]["action"] = action
    events.append({"type": "action_selected", "seat": seat, "action": action})
    rules.on_action_selected(state, seat, action, events)
    state["queue"].pop(0)
