"""Final scoring (docs/rules-decisions.md base 18): 3 x income - 3 x shares + 1 per track segment
the player owns in complete links; cash scores nothing and breaks no tie; ties stand."""

from __future__ import annotations

from service.engine import game

from .helpers import finish_phase, game_at

# Complete links (two segments each: a plain hex and a town spur):
#   Chicago (7,11) - (7,10) - town (7,9)      and      Chicago (7,11) - (8,11) - town (9,10)
# Incomplete track: (6,12) from Chicago pointing south at nothing.


def link_north(state: dict, owner: int | None) -> None:
    state["track"]["7,10"] = [[0, 3, owner]]
    state["towns"]["7,9"] = [[3, owner]]


def link_east(state: dict, owner: int | None) -> None:
    state["track"]["8,11"] = [[1, 5, owner]]
    state["towns"]["9,10"] = [[4, owner]]


def dangling(state: dict, owner: int | None) -> None:
    state["track"]["6,12"] = [[1, 3, owner]]


def final(players: int = 3, **seats: dict) -> dict:
    """Move goods of the last round with player fields set; cash 50 so expenses never bite."""
    fields = {int(k[1:]): {"cash": 50, **v} for k, v in seats.items()}
    last = {3: 10, 4: 8, 5: 7, 6: 6}[players]
    return game_at("move_goods", players, round=last, seats=fields)


def finish(state: dict) -> dict[int, dict]:
    state = finish_phase(state)
    assert game.is_finished(state)
    return {row["seat"]: row for row in state["scores"]}


def test_scoring_three_per_income_minus_three_per_share_plus_track():
    state = final(s0={"income": 10, "shares": 4}, s1={"income": 5, "shares": 2},
                  s2={"income": 0, "shares": 7})
    link_north(state, 0)
    link_east(state, 0)
    scores = finish(state)
    assert (scores[0]["income_points"], scores[0]["share_points"], scores[0]["track_points"]) == (
        30, -12, 4)
    assert scores[0]["points"] == 22
    assert scores[1]["points"] == 15 - 6
    assert scores[2]["points"] == -21
    assert [scores[s]["rank"] for s in (0, 1, 2)] == [1, 2, 3]


def test_scoring_uses_income_after_the_last_reduction():
    state = final(s0={"income": 25, "shares": 2})
    scores = finish(state)
    assert scores[0]["income_points"] == 3 * 21


def test_scoring_one_point_per_segment_in_each_complete_link_owned():
    state = final()
    link_north(state, 1)
    link_east(state, 2)
    scores = finish(state)
    assert [scores[s]["track_points"] for s in (0, 1, 2)] == [0, 2, 2]


def test_scoring_incomplete_track_scores_nothing():
    state = final()
    dangling(state, 0)
    scores = finish(state)
    assert scores[0]["track_points"] == 0
    assert scores[0]["points"] == scores[1]["points"] == -6


def test_scoring_unowned_track_scores_for_nobody():
    state = final()
    link_north(state, None)
    scores = finish(state)
    assert [scores[s]["track_points"] for s in (0, 1, 2)] == [0, 0, 0]


def test_scoring_cash_scores_nothing():
    state = final(s0={"cash": 500}, s1={"cash": 3})
    scores = finish(state)
    assert scores[0]["points"] == scores[1]["points"] == 3 * 0 - 3 * 2


def test_scoring_ties_share_a_rank_and_cash_breaks_no_tie():
    state = final(4, s0={"income": 4, "cash": 90}, s1={"income": 6}, s2={"income": 4, "cash": 5},
                  s3={"income": 1})
    scores = finish(state)
    assert [scores[s]["points"] for s in range(4)] == [6, 12, 6, -3]
    assert [scores[s]["rank"] for s in range(4)] == [2, 1, 2, 4]


def test_scoring_ties_for_first_place_stand():
    state = final(s0={"income": 3}, s1={"income": 3, "cash": 99}, s2={"income": 2})
    scores = finish(state)
    assert [scores[s]["rank"] for s in range(3)] == [1, 1, 3]


def test_scoring_rows_for_every_seat_in_seat_order():
    state = final(5)
    state = finish_phase(state)
    assert [row["seat"] for row in state["scores"]] == [0, 1, 2, 3, 4]
    assert set(state["scores"][0]) == {"seat", "points", "income_points", "share_points",
                                       "track_points", "rank"}


def test_scoring_eliminated_player_no_points_rank_below_survivors():
    state = final(4, s2={"cash": 0, "income": 0}, s0={"income": 1, "shares": 9})
    scores = finish(state)
    assert scores[2]["points"] is None and scores[2]["track_points"] is None
    assert scores[0]["points"] == 3 - 27
    assert scores[2]["rank"] == 4
    assert scores[0]["rank"] == 3
