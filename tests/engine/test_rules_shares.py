"""Issue Shares (docs/rules-decisions.md base 3): $5 a share, 0 allowed, 15 issued in all,
one decision per player in turn order. Also the facade's general promises."""

from __future__ import annotations

import orjson

from service.engine import game

from .helpers import game_at, illegal, new, play, play_events, set_player


def test_shares_start_of_game_two_shares_ten_dollars():
    state = new(4)
    assert state["phase"] == "issue_shares"
    for p in state["players"]:
        assert (p["cash"], p["shares"], p["income"], p["loco"]) == (10, 2, 0, 1)


def test_shares_each_share_pays_five_dollars():
    state = game_at("issue_shares")
    state, events = play_events(state, 0, {"type": "issue_shares", "count": 3})
    assert state["players"][0]["cash"] == 10 + 15
    assert state["players"][0]["shares"] == 2 + 3
    assert {"type": "shares_issued", "seat": 0, "count": 3, "cash": 15} in events


def test_shares_zero_allowed_changes_nothing():
    state = game_at("issue_shares")
    after = play(state, 0, {"type": "issue_shares", "count": 0})
    assert after["players"][0] == state["players"][0]
    assert after["queue"] == [1, 2]


def test_shares_fifteen_may_be_reached_exactly():
    state = game_at("issue_shares")
    state = play(state, 0, {"type": "issue_shares", "count": 13})
    assert state["players"][0]["shares"] == 15
    assert state["players"][0]["cash"] == 10 + 13 * 5


def test_shares_above_fifteen_is_share_limit():
    state = game_at("issue_shares", seats={0: {"shares": 12}})
    with illegal("SHARE_LIMIT"):
        game.apply(state, 0, {"type": "issue_shares", "count": 4})
    after = play(state, 0, {"type": "issue_shares", "count": 3})
    assert after["players"][0]["shares"] == 15


def test_shares_at_fifteen_only_zero_is_legal():
    state = game_at("issue_shares", seats={0: {"shares": 15}})
    assert game.legal_moves(state, 0) == [{"type": "issue_shares", "count": 0}]
    with illegal("SHARE_LIMIT"):
        game.apply(state, 0, {"type": "issue_shares", "count": 1})


def test_shares_legal_moves_list_exactly_zero_to_the_room_left():
    state = game_at("issue_shares")
    assert game.legal_moves(state, 0) == [{"type": "issue_shares", "count": n} for n in range(14)]
    set_player(state, 0, shares=9)
    assert [m["count"] for m in game.legal_moves(state, 0)] == list(range(7))


def test_shares_negative_count_is_bad_move():
    state = game_at("issue_shares")
    with illegal("BAD_MOVE"):
        game.apply(state, 0, {"type": "issue_shares", "count": -1})


def test_shares_issued_in_turn_order():
    state = game_at("issue_shares", 4, turn_order=[2, 0, 3, 1])
    assert state["queue"] == [2, 0, 3, 1]
    for seat in (0, 3, 1):
        with illegal("NOT_YOUR_TURN"):
            game.apply(state, seat, {"type": "issue_shares", "count": 1})
    seen = []
    while state["phase"] == "issue_shares":
        seat = game.active_seat(state)
        seen.append(seat)
        state = play(state, seat, {"type": "issue_shares", "count": 1})
    assert seen == [2, 0, 3, 1]
    assert state["phase"] == "auction"
    assert [p["cash"] for p in state["players"]] == [15, 15, 15, 15]


def test_shares_one_decision_per_player_then_auction():
    state = game_at("issue_shares")
    state = play(state, 0, {"type": "issue_shares", "count": 2})
    with illegal("NOT_YOUR_TURN"):
        game.apply(state, 0, {"type": "issue_shares", "count": 1})
    state = play(state, 1, {"type": "issue_shares", "count": 0})
    state = play(state, 2, {"type": "issue_shares", "count": 0})
    assert state["phase"] == "auction"
    assert state["players"][0]["shares"] == 4


def test_shares_wrong_move_type_is_wrong_phase():
    state = game_at("issue_shares")
    with illegal("WRONG_PHASE"):
        game.apply(state, 0, {"type": "bid", "amount": 1})


# -- the facade's promises, checked here once ---------------------------------------------------

def test_apply_never_mutates_its_input_state():
    state = game_at("issue_shares")
    before = orjson.dumps(state)
    new_state, _ = game.apply(state, 0, {"type": "issue_shares", "count": 5})
    assert orjson.dumps(state) == before
    assert new_state is not state
    assert new_state["players"][0]["cash"] == 35
    # an illegal move leaves it unchanged too
    with illegal("SHARE_LIMIT"):
        game.apply(state, 0, {"type": "issue_shares", "count": 14})
    assert orjson.dumps(state) == before


def test_apply_never_mutates_its_input_state_across_phase_changes():
    """The last decision of a phase runs the automatic steps after it; the input stays as it was."""
    state = game_at("move_goods", round=1)
    before = orjson.dumps(state)
    while state["phase"] == "move_goods":
        previous, snapshot = state, orjson.dumps(state)
        state = play(state, game.active_seat(state), {"type": "pass"})
        assert orjson.dumps(previous) == snapshot
    assert state["round"] == 2
    assert orjson.dumps(game_at("move_goods", round=1)) == before


def test_legal_moves_for_a_seat_not_deciding_is_empty():
    state = game_at("issue_shares", turn_order=[1, 2, 0])
    assert game.legal_moves(state, 1) != []
    assert game.legal_moves(state, 0) == []
    assert game.legal_moves(state, 2) == []
    state = game_at("auction", turn_order=[2, 0, 1])
    assert game.legal_moves(state, 2) != []
    assert game.legal_moves(state, 0) == []
    assert game.legal_moves(state, 1) == []


def test_a_move_out_of_turn_is_not_your_turn():
    state = game_at("issue_shares", turn_order=[1, 2, 0])
    with illegal("NOT_YOUR_TURN") as info:
        game.apply(state, 0, {"type": "issue_shares", "count": 0})
    assert info.value.extra["active_seat"] == 1


def test_legal_moves_never_mutates_its_input_state():
    state = game_at("issue_shares")
    before = orjson.dumps(state)
    game.legal_moves(state, 0)
    game.validate(state, 0, {"type": "issue_shares", "count": 99})
    assert orjson.dumps(state) == before


def test_validate_reports_share_limit_without_applying():
    state = game_at("issue_shares", seats={0: {"shares": 14}})
    assert game.validate(state, 0, {"type": "issue_shares", "count": 2})["code"] == "SHARE_LIMIT"
    assert game.validate(state, 0, {"type": "issue_shares", "count": 1})["legal"] is True
    assert state["players"][0]["shares"] == 14


def test_shares_issued_only_in_the_issue_shares_phase():
    for phase in ("auction", "select_action", "move_goods"):
        state = game_at(phase)
        with illegal("WRONG_PHASE"):
            game.apply(state, game.active_seat(state), {"type": "issue_shares", "count": 1})
