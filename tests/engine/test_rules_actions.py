"""Select Actions (docs/rules-decisions.md base 23 and 24): one action each, each action once a
round, and what each base action does (Locomotive, First Build, First Move, Engineer, Turn
Order)."""

from __future__ import annotations

from service.engine import game
from service.engine import rules_data as R

from .helpers import events_of, finish_phase, game_at, illegal, play, play_events, skip_to

END = {"type": "end_build"}


def select(action: str) -> dict:
    return {"type": "select_action", "action": action}


def choose(state: dict, choices: list[tuple[int, str]]) -> dict:
    for seat, action in choices:
        assert game.active_seat(state) == seat, (seat, state["queue"])
        state = play(state, seat, select(action))
    return state


def test_actions_the_seven_base_actions():
    state = game_at("select_action")
    assert [m["action"] for m in game.legal_moves(state, 0)] == [
        "first_move", "first_build", "engineer", "locomotive", "urbanization", "production",
        "turn_order"]


def test_actions_selected_in_the_new_turn_order():
    state = game_at("select_action", 4, turn_order=[3, 0, 2, 1])
    assert state["queue"] == [3, 0, 2, 1]
    with illegal("NOT_YOUR_TURN"):
        game.apply(state, 0, select("engineer"))


def test_actions_each_action_once_per_round():
    state = game_at("select_action", 3)
    state = play(state, 0, select("engineer"))
    assert select("engineer") not in game.legal_moves(state, 1)
    assert len(game.legal_moves(state, 1)) == 6
    with illegal("ACTION_UNAVAILABLE"):
        game.apply(state, 1, select("engineer"))
    state = play(state, 1, select("production"))
    with illegal("ACTION_UNAVAILABLE"):
        game.apply(state, 2, select("production"))
    assert {m["action"] for m in game.legal_moves(state, 2)} == {
        "first_move", "first_build", "locomotive", "urbanization", "turn_order"}


def test_actions_unknown_action_is_unavailable():
    state = game_at("select_action")
    with illegal("ACTION_UNAVAILABLE"):
        game.apply(state, 0, select("bribe"))


def test_actions_six_players_leave_one_action_unused():
    state = game_at("select_action", 6)
    state = choose(state, [(s, a) for s, a in enumerate(R.BASE_ACTIONS[:6])])
    assert state["phase"] == "build"
    assert "turn_order" not in state["actions"]["taken"]
    assert [p["action"] for p in state["players"]] == list(R.BASE_ACTIONS[:6])


def test_actions_free_again_next_round():
    state = game_at("select_action", 3)
    state = choose(state, [(0, "engineer"), (1, "first_move"), (2, "first_build")])
    state = skip_to(state, "select_action", round=2)
    assert state["actions"] == {"taken": {}, "locked": []}
    assert all(p["action"] is None for p in state["players"])
    assert select("engineer") in game.legal_moves(state, game.active_seat(state))


# -- Locomotive ---------------------------------------------------------------------------------

def test_actions_locomotive_raises_locomotive_at_once():
    state = game_at("select_action", 3, seats={1: {"loco": 3}})
    state = play(state, 0, select("first_move"))
    state, events = play_events(state, 1, select("locomotive"))
    assert state["players"][1]["loco"] == 4
    assert {"type": "locomotive_upgraded", "seat": 1, "locomotive": 4} in events
    assert state["phase"] == "select_action"  # at once: before anyone builds or moves


def test_actions_locomotive_at_six_has_no_effect():
    state = game_at("select_action", 3, seats={0: {"loco": 6}})
    state, events = play_events(state, 0, select("locomotive"))
    assert state["players"][0]["loco"] == 6
    assert events_of(events, "locomotive_upgraded") == []
    assert state["actions"]["taken"]["locomotive"] == 0


def test_actions_locomotive_raises_this_rounds_expenses():
    state = game_at("select_action", 3)
    state = choose(state, [(0, "locomotive"), (1, "first_move"), (2, "first_build")])
    events: list = []
    state = skip_to(state, "issue_shares", round=2, events=events)
    [expenses] = events_of(events, "expenses_paid")
    due = {e["seat"]: e["due"] for e in expenses["expenses"]}
    assert due == {0: 2 + 2, 1: 2 + 1, 2: 2 + 1}
    assert [p["cash"] for p in state["players"]] == [6, 7, 7]


# -- First Build and Engineer --------------------------------------------------------------------

def test_actions_first_build_holder_builds_first_then_turn_order():
    state = game_at("select_action", 4, turn_order=[2, 0, 3, 1])
    state = choose(state, [(2, "engineer"), (0, "locomotive"), (3, "first_build"),
                           (1, "urbanization")])
    assert state["phase"] == "build"
    assert state["queue"] == [3, 2, 0, 1]
    order = []
    while state["phase"] == "build":
        seat = game.active_seat(state)
        order.append(seat)
        state = play(state, seat, END)
    assert order == [3, 2, 0, 1]


def test_actions_without_first_build_build_in_turn_order():
    state = game_at("select_action", 3, turn_order=[1, 2, 0])
    state = choose(state, [(1, "engineer"), (2, "locomotive"), (0, "urbanization")])
    assert state["queue"] == [1, 2, 0]


def test_actions_engineer_gives_four_tiles_others_three():
    state = game_at("select_action", 3)
    state = choose(state, [(0, "first_build"), (1, "engineer"), (2, "locomotive")])
    tiles = {}
    while state["phase"] == "build":
        seat = game.active_seat(state)
        tiles[seat] = state["build"]["tiles_left"]
        state = play(state, seat, END)
    assert tiles == {0: 3, 1: 4, 2: 3}


# -- First Move ----------------------------------------------------------------------------------

def test_actions_first_move_holder_moves_first_in_both_move_rounds():
    state = game_at("select_action", 4, turn_order=[1, 3, 0, 2])
    state = choose(state, [(1, "engineer"), (3, "locomotive"), (0, "first_build"),
                           (2, "first_move")])
    state = finish_phase(state)
    assert state["phase"] == "move_goods"
    order = []
    while state["phase"] == "move_goods":
        seat = game.active_seat(state)
        order.append((state["move_goods"]["round"], seat))
        state = play(state, seat, {"type": "pass"})
    assert order == [(1, 2), (1, 1), (1, 3), (1, 0), (2, 2), (2, 1), (2, 3), (2, 0)]


def test_actions_without_first_move_move_in_turn_order():
    state = game_at("move_goods", 3, turn_order=[2, 0, 1])
    assert state["queue"] == [2, 0, 1]


# -- Turn Order ----------------------------------------------------------------------------------

def test_actions_turn_order_gives_the_pass_in_next_rounds_auction_only():
    state = game_at("select_action", 3)
    state = choose(state, [(0, "first_move"), (1, "turn_order"), (2, "engineer")])
    state = skip_to(state, "auction", round=2)
    assert game.active_seat(state) == 0
    state = play(state, 0, {"type": "bid", "amount": 1})
    assert game.active_seat(state) == 1
    assert {"type": "turn_order_pass"} in game.legal_moves(state, 1)
    state = play(state, 1, {"type": "turn_order_pass"})
    assert state["auction"]["in"] == [0, 1, 2]
    # nobody takes Turn Order in round 2 (the skip takes the first free actions)
    state = skip_to(state, "auction", round=3)
    assert all(s["type"] != "turn_order_pass" for s in game.legal_moves(state, game.active_seat(state)))
    while game.active_seat(state) != 1:
        state = play(state, game.active_seat(state), {"type": "bid",
                                                      "amount": state["auction"]["high_bid"] + 1})
    assert {"type": "turn_order_pass"} not in game.legal_moves(state, 1)
    with illegal("TURN_ORDER_PASS_UNAVAILABLE"):
        game.apply(state, 1, {"type": "turn_order_pass"})


def test_actions_turn_order_gives_no_pass_in_the_same_round():
    """Taking Turn Order in round N does not touch round N's auction (already over) and is not
    a pass for anyone else in round N+1."""
    state = game_at("select_action", 3)
    state = choose(state, [(0, "first_move"), (1, "turn_order"), (2, "engineer")])
    assert state["pass_holder"] is None
    state = skip_to(state, "auction", round=2)
    assert state["auction"]["pass_holder"] == 1
    assert {"type": "turn_order_pass"} not in game.legal_moves(state, 0)
