"""Madagascar: the eight Bad Actions, their locking by dice and their effects; costs; the map.

Rules: docs/rules-decisions.md, Expansion maps: Madagascar; service/engine/variants/madagascar.py."""

from __future__ import annotations

import pytest

from service.engine import game
from service.engine.maps import load_map
from service.engine.variants.madagascar import BAD_ACTIONS, lock_by_dice
from tests.engine.board import build_move as build
from tests.engine.board import builds_listed, key, lay, link_between
from tests.engine.helpers import (
    decider,
    events_of,
    finish_phase,
    game_at,
    illegal,
    new,
    play,
    play_events,
    rng_for_dice,
    rules,
    skip_to,
)

MAP = "madagascar"
FIANARANTSOA, TOLANARO = (5, 10), (1, 14)
ANTSIRAHE, ANTANANARIVO = (8, 9), (10, 9)  # both red; (9, 9) lies between them


def lock_round(state: dict, dice: list[int], double_disc: str | None) -> tuple[dict, list]:
    """Runs the round-start locking with these dice, counting from `double_disc`."""
    state["actions"]["locked"] = []
    state["variant"]["double_disc"] = double_disc
    state["rng"] = rng_for_dice(dice)
    events: list = []
    rules(state).start_round(state, events)
    return state, events


# -- the chart and the locking ------------------------------------------------------------------

def test_bad_actions_replace_the_seven_actions_in_chart_order():
    state = new(4, map_id=MAP)
    assert rules(state).actions() == (
        "last_build", "last_move", "locomotive_no_build", "urbanization_one_track",
        "slow_engineer", "last_player", "high_cost", "single_transport")
    state = skip_to(state, "select_action")
    available = game.view(state)["actions"]["available"]
    assert set(available) <= set(BAD_ACTIONS)
    with illegal("ACTION_UNAVAILABLE"):
        play(state, decider(state), {"type": "select_action", "action": "engineer"})


@pytest.mark.parametrize(("players", "locked"), [(3, 4), (4, 3), (5, 2), (6, 1)])
def test_seven_minus_players_actions_are_locked_each_round(players, locked):
    state = new(players, map_id=MAP)
    view = game.view(state)
    assert len(view["actions"]["locked"]) == locked
    assert len(set(view["actions"]["locked"])) == locked
    assert len(view["actions"]["available"]) == players + 1
    state = skip_to(state, "issue_shares", round=2)
    assert len(game.view(state)["actions"]["locked"]) == locked


def test_seed_example_five_players_rolls_3_and_6_lock_actions_3_and_1():
    state = new(5, map_id=MAP)
    state, events = lock_round(state, [3, 6], double_disc=None)
    # Round 1: counting starts before action 1; 3 -> action 3; 6 further on wraps to action 1.
    assert state["actions"]["locked"] == ["locomotive_no_build", "last_build"]
    assert state["variant"]["double_disc"] == "last_build"
    assert events_of(events, "actions_locked") == [
        {"type": "actions_locked", "actions": ["locomotive_no_build", "last_build"], "dice": [3, 6],
         "double_disc": "last_build"}]
    assert "last_build" not in game.view(state)["actions"]["available"]
    assert len(game.view(state)["actions"]["available"]) == 6


def test_locking_counts_from_the_double_disc_skipping_actions_locked_this_round():
    # 3 players lock 4. The double disc is on action 1 (last_build) from the round before.
    state = new(3, map_id=MAP)
    state, _ = lock_round(state, [2, 6, 6, 1], double_disc="last_build")
    # 1+2 -> 3; 3+6 wraps -> 1; 1+6 skipping 3 -> 8; 8+1 skipping 1 -> 2.
    assert state["actions"]["locked"] == ["locomotive_no_build", "last_build", "single_transport",
                                          "last_move"]
    assert state["variant"]["double_disc"] == "last_move"
    assert lock_by_dice(None, [6, 6]) == ["last_player", "urbanization_one_track"]  # 6; 6 on wraps to 4


def test_next_round_counts_from_the_action_with_the_double_disc():
    state = new(4, map_id=MAP)
    first = state["variant"]["double_disc"]
    assert first == state["actions"]["locked"][-1]
    events: list = []
    state = skip_to(state, "issue_shares", round=2, events=events)
    locking = events_of(events, "actions_locked")[-1]
    assert locking["actions"] == lock_by_dice(first, locking["dice"])
    assert state["actions"]["locked"] == locking["actions"]
    assert state["variant"]["double_disc"] == locking["actions"][-1]


# -- the effects --------------------------------------------------------------------------------

def test_last_build_holder_builds_last():
    state = game_at("build", 4, map_id=MAP, turn_order=[0, 1, 2, 3], actions={"last_build": 0})
    assert state["queue"] == [1, 2, 3, 0]


def test_last_move_holder_moves_last_in_both_move_rounds():
    state = game_at("move_goods", 4, map_id=MAP, turn_order=[1, 0, 2, 3], actions={"last_move": 1})
    assert state["queue"] == [0, 2, 3, 1]
    for seat in (0, 2, 3, 1):
        state = play(state, seat, {"type": "pass"})
    assert state["move_goods"]["round"] == 2
    assert state["queue"] == [0, 2, 3, 1]


def test_locomotive_no_build_raises_locomotive_at_once_and_lays_no_track():
    state = game_at("select_action", 3, map_id=MAP, turn_order=[0, 1, 2])
    state["actions"]["locked"] = []
    after, events = play_events(state, 0, {"type": "select_action", "action": "locomotive_no_build"})
    assert after["players"][0]["loco"] == 2
    assert events_of(events, "locomotive_upgraded") == [
        {"type": "locomotive_upgraded", "seat": 0, "locomotive": 2}]
    assert rules(after).tiles_allowed(after, 0) == 0
    after = play(after, 1, {"type": "select_action", "action": "last_build"})
    after = play(after, 2, {"type": "select_action", "action": "last_move"})
    assert after["phase"] == "build"
    builders = []
    while after["phase"] == "build":
        builders.append(decider(after))
        after = play(after, decider(after), {"type": "end_build"})
    assert builders == [2, 1]  # seat 0 gets no build turn; last_build (seat 1) builds last


def test_locomotive_no_build_never_raises_above_6():
    state = game_at("select_action", 3, map_id=MAP, turn_order=[0, 1, 2], seats={0: {"loco": 6}})
    state["actions"]["locked"] = []
    after = play(state, 0, {"type": "select_action", "action": "locomotive_no_build"})
    assert after["players"][0]["loco"] == 6


def test_urbanization_one_track_may_urbanize_and_lays_one_tile():
    state = game_at("build", 3, map_id=MAP, turn_order=[0, 1, 2],
                    actions={"urbanization_one_track": 0}, seats={0: {"cash": 30}})
    assert state["build"]["tiles_left"] == 1
    urbanizing = [m for m in game.legal_moves(state, 0) if m["type"] == "urbanize"]
    assert len(urbanizing) == 8 * 12  # every new city on every town
    town = (3, 12)  # Ihosy
    state = play(state, 0, {"type": "urbanize", "hex": {"q": 3, "r": 12}, "new_city": "A"})
    assert state["new_cities"] == {key(town): "A"}
    assert state["build"]["seat"] == 0 and state["build"]["tiles_left"] == 1
    state = play(state, 0, build((5, 9), [[0, 3]]))
    assert state["players"][0]["cash"] == 28
    assert state["build"]["seat"] == 1  # one tile and the turn is over


def test_only_the_urbanization_one_track_holder_urbanizes():
    state = game_at("build", 3, map_id=MAP, turn_order=[0, 1, 2], actions={"slow_engineer": 0})
    with illegal("URBANIZE_NOT_HOLDER"):
        play(state, 0, {"type": "urbanize", "hex": {"q": 3, "r": 12}, "new_city": "A"})


def test_slow_engineer_lays_two_tiles_others_three():
    state = game_at("build", 4, map_id=MAP, turn_order=[0, 1, 2, 3],
                    actions={"slow_engineer": 0, "last_move": 1, "high_cost": 2, "single_transport": 3})
    r = rules(state)
    assert [r.tiles_allowed(state, s) for s in range(4)] == [2, 3, 3, 3]
    assert state["build"]["tiles_left"] == 2
    state["players"][0]["cash"] = 30
    state = play(state, 0, build((5, 9), [[0, 3]]))
    state = play(state, 0, build((5, 8), [[0, 3]]))
    assert state["build"]["seat"] == 1 and state["build"]["tiles_left"] == 3


def test_last_player_must_drop_out_at_first_turn_of_next_auction_and_pays_nothing():
    state = game_at("move_goods", 3, map_id=MAP, turn_order=[0, 1, 2],
                    actions={"last_player": 1, "last_build": 0, "last_move": 2})
    state = skip_to(state, "auction", round=2)
    assert state["variant"]["must_drop_out"] == 1
    state = play(state, 0, {"type": "bid", "amount": 1})
    assert decider(state) == 1
    assert game.legal_moves(state, 1) == [{"type": "drop_out"}]
    with illegal("MUST_DROP_OUT"):
        play(state, 1, {"type": "bid", "amount": 2})
    cash = state["players"][1]["cash"]
    state, events = play_events(state, 1, {"type": "drop_out"})
    assert events_of(events, "dropped_out") == [{"type": "dropped_out", "seat": 1, "place": 3}]
    state, events = play_events(state, 2, {"type": "drop_out"})
    order = events_of(events, "turn_order_set")[0]
    assert order["order"] == [0, 2, 1]
    assert state["players"][1]["cash"] == cash
    assert [p["paid"] for p in order["payments"] if p["seat"] == 1] == [0]
    # Only the round after: nobody holds Last Player in round 2 here, so round 3 is free.
    state = skip_to(state, "auction", round=3)
    assert state["variant"]["must_drop_out"] is None


def test_high_cost_pays_4_on_top_of_every_tile():
    state = game_at("build", 3, map_id=MAP, turn_order=[0, 1, 2], actions={"high_cost": 0},
                    seats={0: {"cash": 50}})
    assert builds_listed(state, 0)[((5, 9), ((0, 3),))] == 6
    after, events = play_events(state, 0, build((5, 9), [[0, 3]]))
    assert events_of(events, "track_built")[0]["cost"] == 6
    after, events = play_events(after, 0, build((5, 8), [[0, 3]]))
    assert events_of(events, "track_built")[0]["cost"] == 6
    assert after["players"][0]["cash"] == 38
    other = game_at("build", 3, map_id=MAP, turn_order=[1, 0, 2], actions={"high_cost": 0},
                    seats={1: {"cash": 50}})
    assert builds_listed(other, 1)[((5, 9), ((0, 3),))] == 2


def test_high_cost_on_a_hill_is_7():
    state = game_at("build", 3, map_id=MAP, turn_order=[0, 1, 2], actions={"high_cost": 0},
                    seats={0: {"cash": 50}})
    after, events = play_events(state, 0, build((2, 13), [[1, 4]]))  # hill beside Tolanaro
    assert events_of(events, "track_built")[0]["cost"] == 7


def single_transport_state(cubes: list[str]) -> dict:
    state = game_at("move_goods", 3, map_id=MAP, turn_order=[0, 1, 2],
                    actions={"single_transport": 0})
    for k in state["cubes"]:
        state["cubes"][k] = []
    state["cubes"][key(ANTSIRAHE)] = cubes
    return lay(state, [((9, 9), [[2, 5]])], owner=1)


def test_single_transport_one_delivery_in_all():
    state = single_transport_state(["red", "red"])
    link = link_between(state, ANTSIRAHE, ANTANANARIVO)
    move = {"type": "deliver", "from": {"q": 8, "r": 9}, "color": "red", "links": [link]}
    state = play(state, 0, move)
    assert state["players"][1]["income"] == 1
    state = play(state, 1, {"type": "pass"})
    state = play(state, 2, {"type": "pass"})
    assert state["move_goods"]["round"] == 2
    assert state["queue"] == [1, 2]  # seat 0 has used its one opportunity


def test_single_transport_locomotive_upgrade_uses_the_one_opportunity():
    state = single_transport_state([])
    state = play(state, 0, {"type": "upgrade_locomotive"})
    assert state["players"][0]["loco"] == 2
    state = play(play(state, 1, {"type": "pass"}), 2, {"type": "pass"})
    assert state["queue"] == [1, 2]


def test_single_transport_a_pass_does_not_use_the_opportunity():
    state = single_transport_state(["red"])
    state = play(play(play(state, 0, {"type": "pass"}), 1, {"type": "pass"}), 2, {"type": "pass"})
    assert state["move_goods"]["round"] == 2
    assert state["queue"] == [0, 1, 2]
    assert any(m["type"] == "deliver" for m in game.legal_moves(state, 0))


# -- costs and the map -------------------------------------------------------------------------

def test_build_cost_2_plain_3_hill():
    state = game_at("build", 3, map_id=MAP, turn_order=[0, 1, 2], actions={"last_move": 0},
                    seats={0: {"cash": 50}})
    listed = builds_listed(state, 0)
    assert load_map(MAP).terrain[(5, 9)] == "plain" and listed[((5, 9), ((0, 3),))] == 2
    assert load_map(MAP).terrain[(2, 13)] == "hill" and listed[((2, 13), ((1, 4),))] == 3


def test_antananarivo_has_no_display_column():
    board = load_map(MAP)
    assert board.cities[ANTANANARIVO].name == "Antananarivo"
    assert board.cities[ANTANANARIVO].columns == ()
    assert ANTANANARIVO not in board.column_city.values()
    state = new(3, map_id=MAP)
    assert len(state["cubes"][key(ANTANANARIVO)]) == 2
    # Growth over a round never brings it a cube.
    state["cubes"][key(ANTANANARIVO)] = []
    state = skip_to(state, "issue_shares", round=2)
    assert state["cubes"][key(ANTANANARIVO)] == []


def test_no_production_step():
    state = game_at("move_goods", 3, map_id=MAP, turn_order=[0, 1, 2])
    events: list = []
    state = finish_phase(state, events)
    assert state["phase"] == "issue_shares" and state["round"] == 2
    assert events_of(events, "production") == [] and events_of(events, "production_drawn") == []
    assert "production" not in BAD_ACTIONS


def test_board_features_show_the_chart_and_double_disc():
    state = new(4, map_id=MAP)
    view = game.view(state)
    features = view["board"]["bad_actions"]
    assert features["chart"] == list(BAD_ACTIONS)
    assert features["double_disc"] == view["actions"]["locked"][-1]
    assert features["must_drop_out"] is None
