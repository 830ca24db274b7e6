"""The end of a round (docs/rules-decisions.md base 1 and 22): collect income, pay expenses
(a shortfall lowers income), eliminate income below 0, reduce income, and the last round."""

from __future__ import annotations

import pytest

from service.engine import game
from service.engine.network import Network
from service.engine.state import active_players
from service.engine.variants import rules_for

from .helpers import events_of, finish_phase, game_at, illegal, skip_to

# A complete link Chicago (7,11) - (7,10) - town (7,9): two track segments.
LINK_HEXES = ("7,10", "7,9")


def lay_link(state: dict, owner: int | None) -> None:
    state["track"]["7,10"] = [[0, 3, owner]]
    state["towns"]["7,9"] = [[3, owner]]


def end_of_round(phase_state: dict) -> tuple[dict, list[dict]]:
    """Everyone passes the rest of move goods; the income steps run. Returns state and events."""
    events: list[dict] = []
    state = finish_phase(phase_state, events)
    return state, events


def report(events: list[dict], kind: str, key: str) -> dict[int, dict]:
    [event] = events_of(events, kind)
    return {row["seat"]: row for row in event[key]}


def test_operations_income_collected():
    state = game_at("move_goods", seats={0: {"income": 7}, 1: {"income": 0}, 2: {"income": 10}})
    state, events = end_of_round(state)
    [collected] = events_of(events, "income_collected")
    assert collected["income"] == {"0": 7, "1": 0, "2": 10}
    # 10 cash + income - 3 expenses (2 shares + locomotive 1)
    assert [p["cash"] for p in state["players"]] == [14, 7, 17]


def test_operations_expenses_one_dollar_per_share_and_locomotive_level():
    state = game_at("move_goods", seats={0: {"shares": 5, "loco": 3, "cash": 20},
                                         1: {"shares": 15, "loco": 6, "cash": 30}})
    state, events = end_of_round(state)
    rows = report(events, "expenses_paid", "expenses")
    assert (rows[0]["due"], rows[0]["paid"], rows[0]["shortfall"]) == (8, 8, 0)
    assert (rows[1]["due"], rows[1]["paid"], rows[1]["shortfall"]) == (21, 21, 0)
    assert (rows[2]["due"], rows[2]["paid"]) == (3, 3)
    assert [p["cash"] for p in state["players"]] == [12, 9, 7]


def test_operations_expenses_paid_from_cash_including_this_rounds_income():
    state = game_at("move_goods", seats={0: {"cash": 0, "income": 3}})
    state, _ = end_of_round(state)
    assert (state["players"][0]["cash"], state["players"][0]["income"]) == (0, 3)


def test_operations_shortfall_lowers_income():
    state = game_at("move_goods", seats={0: {"cash": 1, "income": 5, "shares": 8, "loco": 2}})
    state, events = end_of_round(state)
    row = report(events, "expenses_paid", "expenses")[0]
    assert (row["due"], row["paid"], row["shortfall"]) == (10, 6, 4)
    assert state["players"][0]["cash"] == 0
    assert state["players"][0]["income"] == 1
    assert not state["players"][0]["eliminated"]


def test_operations_income_zero_survives():
    state = game_at("move_goods", seats={0: {"cash": 0, "income": 3, "shares": 4, "loco": 2}})
    state, events = end_of_round(state)
    assert state["players"][0]["income"] == 0
    assert state["players"][0]["cash"] == 0
    assert not state["players"][0]["eliminated"]
    assert events_of(events, "player_eliminated") == []
    assert state["round"] == 2 and 0 in state["queue"]


def test_operations_income_below_zero_eliminated():
    state = game_at("move_goods", seats={1: {"cash": 0, "income": 1}})
    state, events = end_of_round(state)
    # collects 1, pays 1 of 3, the $2 shortfall takes income from 1 to -1
    assert state["players"][1]["eliminated"]
    assert state["players"][1]["income"] == -1
    assert events_of(events, "player_eliminated") == [
        {"type": "player_eliminated", "seat": 1, "income": -1}]
    assert state["round"] == 2 and not game.is_finished(state)


def test_operations_eliminated_players_track_becomes_unowned():
    state = game_at("move_goods", seats={1: {"cash": 0, "income": 0}})
    lay_link(state, 1)
    state["track"]["8,11"] = [[1, 5, 0]]
    state["towns"]["9,10"] = [[4, 0]]
    state["track"]["6,12"] = [[1, 3, 1]]  # incomplete track of seat 1's
    state, _ = end_of_round(state)
    assert state["players"][1]["eliminated"]
    assert state["track"]["7,10"] == [[0, 3, None]]
    assert state["towns"]["7,9"] == [[3, None]]
    assert state["track"]["6,12"] == [[1, 3, None]]
    # the track stays on the board, a complete link still, owned by nobody
    links = Network(state, rules_for("rust_belt").map).links()
    assert sorted((len(link.pieces), str(link.owner)) for link in links) == [(2, "0"), (2, "None")]
    # others' track keeps its owner
    assert state["track"]["8,11"] == [[1, 5, 0]]


def test_operations_eliminated_player_leaves_the_turn_order():
    state = game_at("move_goods", 4, turn_order=[2, 1, 3, 0], seats={1: {"cash": 0, "income": 1}})
    state, _ = end_of_round(state)
    assert state["players"][1]["eliminated"]
    assert active_players(state) == [2, 3, 0]
    assert game.view(state)["turn_order"] == [2, 3, 0]
    assert state["phase"] == "issue_shares" and state["queue"] == [2, 3, 0]
    assert game.legal_moves(state, 1) == []
    with illegal("PLAYER_ELIMINATED"):
        game.apply(state, 1, {"type": "issue_shares", "count": 0})
    state = skip_to(state, "auction")
    assert state["auction"]["order"] == [2, 3, 0]
    state = skip_to(state, "select_action")
    assert state["queue"] == [0, 3, 2]
    assert 1 not in active_players(state)


def test_operations_eliminated_player_scores_none_and_ranks_last():
    state = game_at("move_goods", 4, round=8, seats={1: {"cash": 0, "income": 0},
                                                     0: {"income": 1}, 2: {"income": 2},
                                                     3: {"income": 3}})
    state, _ = end_of_round(state)
    assert game.is_finished(state)
    scores = {row["seat"]: row for row in state["scores"]}
    assert scores[1]["points"] is None
    assert scores[1]["rank"] == 4
    assert all(scores[s]["points"] is not None for s in (0, 2, 3))
    assert [scores[s]["rank"] for s in (3, 2, 0)] == [1, 2, 3]


def test_operations_game_ends_when_one_player_is_left():
    state = game_at("move_goods", 3, seats={0: {"cash": 0, "income": 0},
                                            2: {"cash": 0, "income": 1}, 1: {"income": 4}})
    state, events = end_of_round(state)
    assert game.is_finished(state) and state["phase"] == "finished"
    assert state["round"] == 1
    assert state["queue"] == []
    # the game ends at once: no income reduction, no growth
    assert events_of(events, "income_reduced") == [] and events_of(events, "dice_rolled") == []
    scores = {row["seat"]: row for row in state["scores"]}
    assert scores[1]["points"] == 3 * 4 - 3 * 2 and scores[1]["rank"] == 1
    assert scores[0]["points"] is None and scores[2]["points"] is None
    assert scores[0]["rank"] == scores[2]["rank"] == 2


def test_operations_game_ends_when_no_player_is_left():
    state = game_at("move_goods", 3, seats={s: {"cash": 0, "income": 0} for s in range(3)})
    state, _ = end_of_round(state)
    assert game.is_finished(state)
    assert all(p["eliminated"] for p in state["players"])
    assert [row["points"] for row in state["scores"]] == [None, None, None]
    assert game.legal_moves(state, 0) == []
    with illegal("GAME_FINISHED"):
        game.apply(state, 0, {"type": "issue_shares", "count": 0})


def test_operations_game_goes_on_with_two_players_left():
    state = game_at("move_goods", 4, seats={0: {"cash": 0, "income": 0},
                                            1: {"cash": 0, "income": 0}})
    state, _ = end_of_round(state)
    assert not game.is_finished(state)
    assert active_players(state) == [2, 3]
    assert state["round"] == 2


@pytest.mark.parametrize(("income", "after"), [
    (0, 0), (10, 10),            # 10 or less: no reduction
    (11, 9), (20, 18),           # 11-20: -2
    (21, 17), (30, 26),          # 21-30: -4
    (31, 25), (40, 34),          # 31-40: -6
    (41, 33), (49, 41),          # 41-49: -8
    (50, 40), (75, 65),          # 50 or more: -10
])
def test_operations_income_reduction_bands(income, after):
    state = game_at("move_goods", seats={0: {"income": income}})
    state, events = end_of_round(state)
    row = report(events, "income_reduced", "reductions")[0]
    assert row["reduction"] == income - after
    assert state["players"][0]["income"] == after
    assert state["players"][0]["cash"] == 10 + income - 3


def test_operations_income_reduction_applies_after_expenses_in_the_same_round():
    """Income 13 with a $3 shortfall is 10 after expenses, so no reduction (not 13 -> -2)."""
    state = game_at("move_goods", seats={0: {"cash": 0, "income": 13, "shares": 15, "loco": 1}})
    state, events = end_of_round(state)
    row = report(events, "expenses_paid", "expenses")[0]
    assert row["shortfall"] == 3
    assert report(events, "income_reduced", "reductions")[0]["reduction"] == 0
    assert state["players"][0]["income"] == 10


def test_operations_income_steps_run_in_order_collect_expenses_eliminate_reduce():
    state = game_at("move_goods", seats={0: {"income": 12}})
    state, events = end_of_round(state)
    kinds = [e["type"] for e in events
             if e["type"] in ("income_collected", "expenses_paid", "income_reduced", "dice_rolled")]
    assert kinds == ["income_collected", "expenses_paid", "income_reduced", "dice_rolled",
                     "dice_rolled"]


def test_operations_last_round_ends_after_reduction_with_no_growth():
    state = game_at("move_goods", 4, round=8, actions={"production": 2},
                    seats={0: {"income": 25}, 1: {"income": 12}})
    assert state["last_round"] == 8
    display, cubes, bag, rng_before = (dict(state["display"]), dict(state["cubes"]),
                                       dict(state["bag"]), state["rng"])
    state, events = end_of_round(state)
    assert state["phase"] == "finished" and game.is_finished(state)
    assert state["round"] == 8
    assert [p["income"] for p in state["players"]] == [21, 10, 0, 0]
    assert events_of(events, "dice_rolled") == [] and events_of(events, "production_drawn") == []
    assert (state["display"], state["cubes"], state["bag"], state["rng"]) == (
        display, cubes, bag, rng_before)
    scores = {row["seat"]: row for row in state["scores"]}
    assert scores[0]["income_points"] == 3 * 21


def test_operations_round_before_last_goes_on_to_growth():
    state = game_at("move_goods", 3, round=9)
    state, events = end_of_round(state)
    assert state["round"] == 10 and state["phase"] == "issue_shares"
    assert len(events_of(events, "dice_rolled")) == 2


def test_operations_rounds_by_player_count():
    assert [game_at("issue_shares", n)["last_round"] for n in (3, 4, 5, 6)] == [10, 8, 7, 6]


def test_operations_eliminated_player_pays_and_collects_nothing_afterwards():
    state = game_at("move_goods", seats={1: {"cash": 0, "income": 0}})
    state, _ = end_of_round(state)
    assert state["players"][1]["eliminated"]
    frozen = dict(state["players"][1])
    state = skip_to(state, "issue_shares", round=3)
    assert state["players"][1] == frozen
