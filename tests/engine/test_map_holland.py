"""Holland: players, the removed new city, the sea, polders and when they open, the 3-player
Urbanization/Engineer block, and the windmill variant.

Rules: docs/rules-decisions.md, Expansion maps: Holland; service/engine/variants/holland.py."""

from __future__ import annotations

import random

import pytest

from service.engine import game
from service.engine.errors import SetupError
from service.engine.maps import load_map
from service.engine.state import cubes_in_play
from tests.engine.board import build_move as build
from tests.engine.board import builds_listed, key, lay, links
from tests.engine.board import deliver_move as deliver
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
from tests.engine.test_random_play import canonical, mutations

MAP = "holland"
DELFT, DEN_HAAG, LEIDEN = (4, 10), (6, 11), (8, 12)  # yellow, red, red
WINDMILL = (5, 10)  # a windmill polder between Delft and (5, 11), which touches Den Haag
WINDMILLS = [(2, 10), (5, 10), (11, 8), (17, 8), (18, 11)]
WATER = (16, 8)
# Delft -(5,10 windmill)-(5,11)- Den Haag, and Delft -(4,11)-(4,12)-(5,12)- Den Haag (polders).
VIA_WINDMILL = [(WINDMILL, [[3, 5]]), ((5, 11), [[0, 2]])]
VIA_POLDERS = [((4, 11), [[0, 3]]), ((4, 12), [[0, 2]]), ((5, 12), [[1, 5]])]
TOTAL_CUBES = 96


def hx(h) -> dict:
    return {"q": h[0], "r": h[1]}


def builder(players: int = 3, round: int = 5, windmills: bool = False, cash: int = 50) -> dict:
    options = {"windmills": windmills}
    return game_at("build", players, round=round, map_id=MAP, options=options,
                   turn_order=list(range(players)), actions={"first_build": 0},
                   seats={0: {"cash": cash}})


# -- players, data -----------------------------------------------------------------------------

@pytest.mark.parametrize("players", [2, 5])
def test_holland_takes_3_to_4_players(players):
    with pytest.raises(SetupError) as info:
        game.new_game(MAP, [f"P{i}" for i in range(players)], "s")
    assert info.value.code == "PLAYER_COUNT"


@pytest.mark.parametrize(("players", "last_round"), [(3, 10), (4, 8)])
def test_holland_uses_the_base_round_table(players, last_round):
    assert new(players, map_id=MAP)["last_round"] == last_round


def test_two_goods_on_each_city_at_setup():
    state = new(3, map_id=MAP)
    assert all(len(state["cubes"][key(h)]) == 2 for h in load_map(MAP).cities)


def test_new_city_tile_e_yellow_is_removed():
    state = game_at("build", 4, map_id=MAP, actions={"urbanization": 0}, turn_order=[0, 1, 2, 3])
    assert "E" not in rules(state).new_city_letters()
    assert "E" not in state["display"] and "E" not in game.view(state)["goods_display"]
    assert not any(m.get("new_city") == "E" for m in game.legal_moves(state, 0))
    with illegal("NEW_CITY_UNAVAILABLE"):
        play(state, 0, {"type": "urbanize", "hex": hx((6, 13)), "new_city": "E"})
    assert play(state, 0, {"type": "urbanize", "hex": hx((6, 13)), "new_city": "F"})


def display_cubes(state: dict) -> int:
    return sum(1 for column in state["display"].values() for c in column if c)


def test_removed_new_city_has_no_display_column_at_setup():
    # 12 number columns of 3 squares and the 7 new-city columns left (A-D, F-H) of 2, all full.
    state = new(4, map_id=MAP)
    assert sorted(c for c in state["display"] if len(c) == 1) == ["A", "B", "C", "D", "F", "G", "H"]
    assert display_cubes(state) == 12 * 3 + 7 * 2 == 50
    assert cubes_in_play(state) + sum(state["bag"].values()) == TOTAL_CUBES


def test_production_with_the_display_full_returns_both_cubes_to_the_bag():
    # Round 1: the display is full but for the removed E, so Production has nowhere to place
    # (docs/rules-decisions.md base 15): no decision, both drawn cubes go back to the bag, none is lost.
    state = game_at("move_goods", 4, map_id=MAP, actions={"production": 0}, turn_order=[0, 1, 2, 3])
    bag, in_play, shown = sum(state["bag"].values()), cubes_in_play(state), display_cubes(state)
    assert shown == 50
    events: list[dict] = []
    after = skip_to(state, "issue_shares", round=2, events=events)
    [drawn] = events_of(events, "production_drawn")
    [production] = events_of(events, "production")
    assert len(drawn["drawn"]) == 2
    assert production["placements"] == [] and sorted(production["returned"]) == sorted(drawn["drawn"])
    assert not any(e["type"] == "production" and e.get("seat") is None for e in events)
    grown = sum(len(e["moved"]) for e in events_of(events, "goods_grown"))
    assert display_cubes(after) == shown - grown  # production added none, growth moved `grown`
    assert sum(after["bag"].values()) == bag
    assert cubes_in_play(after) == in_play
    assert "E" not in after["display"]


def test_production_places_only_in_columns_in_play():
    state = game_at("move_goods", 4, map_id=MAP, actions={"production": 0}, turn_order=[0, 1, 2, 3])
    state["display"]["light-2"][0] = None  # one empty square; E is no square at all
    state["bag"]["red"] += 1
    state = finish_phase(state)
    assert state["phase"] == "production"
    moves = game.legal_moves(state, 0)
    columns = {p["column"] for m in moves for p in m["placements"]}
    assert columns == {"light-2"} and all(len(m["placements"]) == 1 for m in moves)
    with illegal("BAD_PLACEMENT"):
        play(state, 0, {"type": "produce", "placements": [{"color": c, "column": "E"}
                                                          for c in state["production"]["drawn"]]})
    bag = sum(state["bag"].values())
    events: list[dict] = []
    after = finish_phase(state, events)
    [production] = events_of(events, "production")
    assert len(production["placements"]) == 1 and len(production["returned"]) == 1
    assert sum(after["bag"].values()) == bag + 1


def test_growth_dice_of_dark_1_feed_no_removed_city():
    # E sat beneath dark 1: a 1 on the dark side moves dark 1's top cube and no lettered one.
    state = game_at("move_goods", 3, map_id=MAP)
    state["rng"] = rng_for_dice([6, 6, 6], [1, 6, 6])
    events: list[dict] = []
    finish_phase(state, events)
    dark = events_of(events, "goods_grown")[1]["moved"]
    assert [m["column"] for m in dark] == ["dark-1", "dark-6", "dark-6"]


def test_sea_is_impassable():
    state = builder()
    assert load_map(MAP).terrain[WATER] == "water"
    with illegal("NOT_BUILDABLE"):
        play(state, 0, build(WATER, [[0, 3]]))
    with illegal("INTO_IMPASSABLE"):  # (17,8) beside Alkmaar, pointing NW into the sea
        play(state, 0, build((17, 8), [[4, 5]]))
    assert not any(h == WATER for (h, _) in builds_listed(state, 0))


# -- polders -----------------------------------------------------------------------------------

def polder_builds(state: dict) -> dict:
    polders = {h for h, t in load_map(MAP).terrain.items() if t == "polder"}
    return {hs: cost for hs, cost in builds_listed(state, 0).items() if hs[0] in polders}


@pytest.mark.parametrize(("players", "opens"), [(3, 5), (4, 4)])
def test_polders_closed_before_round_5_with_3_players_round_4_with_4(players, opens):
    closed = builder(players, round=opens - 1)
    assert polder_builds(closed) == {}
    with illegal("NOT_BUILDABLE"):
        play(closed, 0, build((5, 9), [[0, 4]]))  # polder beside Delft
    open_ = builder(players, round=opens)
    assert polder_builds(open_)
    after = play(open_, 0, build((5, 9), [[0, 4]]))
    assert after["players"][0]["cash"] == 47


def test_polder_costs_3():
    state = builder()
    listed = polder_builds(state)
    assert listed[((5, 9), ((0, 4),))] == 3
    assert listed[((4, 11), ((0, 3),))] == 3
    assert builds_listed(state, 0)[((4, 9), ((3, 5),))] == 2  # plain beside Delft


def test_track_may_point_into_a_polder_before_it_opens():
    state = builder(round=2)
    assert load_map(MAP).terrain[(5, 8)] == "polder"
    after = play(state, 0, build((4, 9), [[1, 3]]))  # plain above Delft, pointing NE at (5,8)
    assert after["players"][0]["cash"] == 48


# -- the 3-player block -------------------------------------------------------------------------

def test_three_players_blocked_action_swaps_every_round():
    state = new(3, map_id=MAP, options={"blocked_action": "engineer"})
    assert state["actions"]["locked"] == ["engineer"]
    state = skip_to(state, "select_action")
    listed = [m["action"] for m in game.legal_moves(state, decider(state))]
    assert "engineer" not in listed and "urbanization" in listed
    with illegal("ACTION_UNAVAILABLE"):
        play(state, decider(state), {"type": "select_action", "action": "engineer"})
    assert "urbanization" in game.view(state)["actions"]["available"]
    state = skip_to(state, "issue_shares", round=2)
    assert state["actions"]["locked"] == ["urbanization"]
    assert game.view(state)["board"]["blocked_action"] == "urbanization"
    state = skip_to(state, "issue_shares", round=3)
    assert state["actions"]["locked"] == ["engineer"]


def test_three_players_blocked_action_chosen_by_the_seed_by_default():
    chosen = {s: new(3, map_id=MAP, seed=f"seed-{s}")["actions"]["locked"] for s in range(12)}
    assert {tuple(v) for v in chosen.values()} == {("urbanization",), ("engineer",)}
    assert new(3, map_id=MAP, seed="seed-3")["actions"]["locked"] == chosen[3]
    assert new(3, map_id=MAP)["options"]["blocked_action"] is None


def test_four_players_block_nothing():
    state = new(4, map_id=MAP)
    assert state["actions"]["locked"] == []
    assert len(game.view(state)["actions"]["available"]) == 7
    with pytest.raises(SetupError) as info:
        new(4, map_id=MAP, options={"blocked_action": "engineer"})
    assert info.value.code == "BAD_OPTION"


def test_blocked_action_option_takes_urbanization_or_engineer():
    with pytest.raises(SetupError) as info:
        new(3, map_id=MAP, options={"blocked_action": "production"})
    assert info.value.code == "BAD_OPTION"
    assert new(3, map_id=MAP, options={"blocked_action": "urbanization"})["actions"]["locked"] == [
        "urbanization"]


# -- windmills ---------------------------------------------------------------------------------

def test_windmills_hold_one_cube_each_from_setup():
    state = new(3, map_id=MAP, options={"windmills": True})
    held = state["variant"]["windmills"]
    assert sorted(held) == sorted(key(h) for h in WINDMILLS)
    assert all(c in ("red", "blue", "yellow", "purple", "black") for c in held.values())
    assert state["variant"]["cubes_held"] == 5
    assert cubes_in_play(state) + sum(state["bag"].values()) == TOTAL_CUBES
    plain = new(3, map_id=MAP)
    assert plain["variant"]["windmills"] == {} and plain["variant"]["cubes_held"] == 0
    assert cubes_in_play(plain) + sum(plain["bag"].values()) == TOTAL_CUBES
    assert sum(plain["bag"].values()) == sum(state["bag"].values()) + 5


def test_windmill_hex_costs_5_with_the_variant_3_without():
    with_variant = builder(windmills=True)
    assert builds_listed(with_variant, 0)[(WINDMILL, ((3, 5),))] == 5
    after, events = play_events(with_variant, 0, build(WINDMILL, [[3, 5]]))
    assert events_of(events, "track_built")[0]["cost"] == 5
    assert after["players"][0]["cash"] == 45
    assert builds_listed(builder(windmills=False), 0)[(WINDMILL, ((3, 5),))] == 3


def mover(cube: str = "red", loco: int = 2, track: list | None = None) -> dict:
    """Seat 0 moves first in round 5 of a windmill game; the windmill between Delft and Den Haag
    holds a `cube`; every city is empty; `track` (default: both routes) is laid, the windmill's
    link owned by seat 1 and the polder link by seat 2."""
    state = game_at("move_goods", 3, round=5, map_id=MAP, options={"windmills": True},
                    actions={"first_move": 0}, turn_order=[0, 1, 2], seats={0: {"loco": loco}})
    for k, colours in state["cubes"].items():
        for c in colours:
            state["bag"][c] += 1
        state["cubes"][k] = []
    held = state["variant"]["windmills"]
    state["bag"][held[key(WINDMILL)]] += 1
    state["bag"][cube] -= 1
    held[key(WINDMILL)] = cube
    if track is None:
        lay(state, VIA_WINDMILL, owner=1)
        lay(state, VIA_POLDERS, owner=2)
    else:
        lay(state, track, owner=1)
    return state


def windmill_moves(state: dict) -> list[dict]:
    return [m for m in game.legal_moves(state, 0) if m["type"] == "deliver"
            and (m["from"]["q"], m["from"]["r"]) == WINDMILL]


def test_windmill_cube_waits_until_track_is_on_the_windmill():
    state = mover(track=[((5, 11), [[0, 2]])])  # beside the windmill, not on it
    assert windmill_moves(state) == []
    with illegal("NO_CUBE"):
        play(state, 0, deliver(WINDMILL, "red", ["x"], toward=DEN_HAAG))
    state = mover(track=[(WINDMILL, [[3, 5]])])  # on it, but no complete link yet
    assert windmill_moves(state) == []
    assert rules(state).cube_sources(state)[key(WINDMILL)] == ["red"]


def test_windmill_cube_delivered_along_its_link_whose_owner_gains_1():
    state = mover("red")
    link = windmill_link(state)
    move = deliver(WINDMILL, "red", [link], toward=DEN_HAAG)
    assert {**move, "income": {"1": 1}} in windmill_moves(state)
    bag_red = state["bag"]["red"]
    after, events = play_events(state, 0, move)
    assert [p["income"] for p in after["players"]] == [0, 1, 0]
    assert after["variant"]["windmills"][key(WINDMILL)] is None
    assert after["variant"]["cubes_held"] == 4
    assert after["bag"]["red"] == bag_red + 1
    assert cubes_in_play(after) + sum(after["bag"].values()) == TOTAL_CUBES
    delivered = events_of(events, "good_delivered")[0]
    assert delivered["from"] == hx(WINDMILL) and delivered["to"] == hx(DEN_HAAG)
    assert windmill_moves(after) == [] and windmill_moves(play_pass_round(after)) == []


def play_pass_round(state: dict) -> dict:
    while state["phase"] == "move_goods" and decider(state) != 0:
        state = play(state, decider(state), {"type": "pass"})
    return state


def windmill_link(state: dict) -> str:
    ids = [r.link_id for r in links(state) if any(p[0] == WINDMILL for p in r.pieces)]
    assert len(ids) == 1
    return ids[0]


def polder_link(state: dict) -> str:
    ids = [r.link_id for r in links(state) if any(p[0] == (4, 12) for p in r.pieces)]
    assert len(ids) == 1
    return ids[0]


def test_windmill_cube_goes_on_from_the_stop_it_reaches_counting_its_link_first():
    state = mover("red", loco=2)
    via_mill, via_polders = windmill_link(state), polder_link(state)
    move = deliver(WINDMILL, "red", [via_mill, via_polders], toward=DELFT)
    assert {**move, "income": {"1": 1, "2": 1}} in windmill_moves(state)
    after = play(state, 0, move)
    assert [p["income"] for p in after["players"]] == [0, 1, 1]
    with illegal("ROUTE_TOO_LONG"):
        play(mover("red", loco=1), 0, move)


def test_windmill_delivery_names_the_stop_it_goes_toward():
    state = mover("red")
    link = windmill_link(state)
    with illegal("BAD_MOVE"):
        play(state, 0, deliver(WINDMILL, "red", [link]))
    with illegal("WRONG_DESTINATION"):  # toward Delft, which takes no red
        play(state, 0, deliver(WINDMILL, "red", [link], toward=DELFT))
    with illegal("ROUTE_BROKEN"):  # Leiden is no end of the windmill's link
        play(state, 0, deliver(WINDMILL, "red", [link], toward=LEIDEN))
    with illegal("ROUTE_BROKEN"):  # the polder link does not pass the windmill
        play(state, 0, deliver(WINDMILL, "red", [polder_link(state)], toward=DEN_HAAG))
    with illegal("ROUTE_BROKEN"):  # back over its own link
        play(state, 0, deliver(WINDMILL, "red", [link, link], toward=DELFT))


def test_toward_only_for_a_cube_between_stops():
    state = mover("red")
    state["cubes"][key(DELFT)] = ["red"]
    state["bag"]["red"] -= 1
    link = windmill_link(state)
    with illegal("BAD_MOVE"):
        play(state, 0, deliver(DELFT, "red", [link], toward=DEN_HAAG))
    assert play(state, 0, deliver(DELFT, "red", [link]))


def test_passing_a_windmill_earns_nothing():
    state = mover("yellow")
    state["cubes"][key(DELFT)] = ["red"]
    state["bag"]["red"] -= 1
    after = play(state, 0, deliver(DELFT, "red", [windmill_link(state)]))
    assert [p["income"] for p in after["players"]] == [0, 1, 0]  # the link's 1, nothing more


def test_windmill_deliveries_are_listed_exactly_when_legal():
    chooser = random.Random(5)
    for cube in ("red", "yellow", "blue"):
        state = mover(cube, loco=3)
        options = game.legal_moves(state, 0)
        listed = {canonical(m) for m in options}
        assert len(listed) == len(options)
        mill = [m for m in options if m["type"] == "deliver" and "toward" in m]
        assert mill or cube == "blue"
        for move in mill:
            game.apply(state, 0, move)
            near = mutations(move, state, 0, chooser) + [
                {**move, "toward": hx(s)} for s in (DELFT, DEN_HAAG, LEIDEN)] + [
                {k: v for k, v in move.items() if k != "toward"}]
            for m in near:
                verdict = game.validate(state, 0, m)
                assert verdict["legal"] == (canonical(m) in listed), (m, verdict)


# -- the view ----------------------------------------------------------------------------------

def test_board_features_polders_block_and_windmills():
    state = new(3, map_id=MAP, options={"windmills": True, "blocked_action": "urbanization"})
    board = game.view(state)["board"]
    assert board["polders"]["open_from_round"] == 5 and board["polders"]["open"] is False
    assert len(board["polders"]["hexes"]) == 45
    assert board["blocked_action"] == "urbanization"
    assert [w["hex"] for w in board["windmills"]] == [hx(h) for h in WINDMILLS]
    assert all(w["color"] and w["on_track"] is False for w in board["windmills"])
    four = game.view(new(4, map_id=MAP))["board"]
    assert four["polders"]["open_from_round"] == 4 and four["blocked_action"] is None
    assert four["windmills"] == []
