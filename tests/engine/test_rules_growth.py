"""Goods Growth (docs/rules-decisions.md base 15 and 16): the Production action, then one die per
starting player for the light side and then the dark side.

Dice are controlled honestly: the rng state the engine rolls from is set to a value that
rng_for_dice finds by a deterministic search, just before the roll. Nothing between the last
move-goods pass and the dice uses the rng when nobody holds Production.
"""

from __future__ import annotations

import pytest

from service.engine import game
from service.engine.maps import load_map
from service.engine.maps.loader import NEW_CITY_COLUMNS, NUMBER_COLUMNS

from .helpers import (
    dice_from,
    events_of,
    finish_phase,
    game_at,
    illegal,
    play_events,
    rng_for_dice,
)

CHICAGO, ST_LOUIS, KANSAS_CITY = "7,11", "5,16", "0,19"
DES_MOINES, MINNEAPOLIS, DULUTH = "2,15", "1,11", "2,8"
EVANSVILLE, CINCINNATI, DETROIT = "9,14", "12,11", "13,6"
WHEELING, PITTSBURGH, TORONTO = "16,9", "17,6", "16,2"
TOWN = "7,9"


def bare(state: dict) -> dict:
    """Empties the display and every city, so a test sets exactly the cubes it needs."""
    state["display"] = {c: [None] * len(sq) for c, sq in state["display"].items()}
    state["cubes"] = {k: [] for k in state["cubes"]}
    return state


def grow(state: dict, light: list[int], dark: list[int]) -> tuple[dict, list[dict]]:
    """Ends the round from move goods with these dice rolled (and checks they were)."""
    state["rng"] = rng_for_dice(light, dark)
    events: list[dict] = []
    state = finish_phase(state, events)
    rolled = [(e["side"], e["dice"]) for e in events_of(events, "dice_rolled")]
    assert rolled == [("light", light), ("dark", dark)]
    return state, events


# -- the dice -----------------------------------------------------------------------------------

def test_growth_dice_one_per_starting_player():
    for players in (3, 4, 5, 6):
        state = game_at("move_goods", players)
        events: list[dict] = []
        finish_phase(state, events)
        assert [len(e["dice"]) for e in events_of(events, "dice_rolled")] == [players, players]


def test_growth_dice_count_players_at_start_even_after_elimination():
    state = game_at("move_goods", 4, seats={3: {"cash": 0, "income": 0}})
    events: list[dict] = []
    state = finish_phase(state, events)
    assert state["players"][3]["eliminated"]
    assert [len(e["dice"]) for e in events_of(events, "dice_rolled")] == [4, 4]
    # and in a later round too
    state = finish_phase(finish_phase(finish_phase(finish_phase(state))))  # to move goods
    assert state["phase"] == "move_goods" and state["round"] == 2
    events = []
    finish_phase(state, events)
    assert [len(e["dice"]) for e in events_of(events, "dice_rolled")] == [4, 4]


def test_growth_light_side_then_dark_side():
    state = bare(game_at("move_goods", 3))
    state["display"]["light-1"] = ["red", None, None]
    state["display"]["dark-1"] = ["blue", None, None]
    state, events = grow(state, [1, 6, 6], [1, 6, 6])
    sides = [e["side"] for e in events if e["type"] in ("dice_rolled", "goods_grown")]
    assert sides == ["light", "light", "dark", "dark"]
    grown = events_of(events, "goods_grown")
    assert grown[0]["moved"] == [{"column": "light-1", "color": "red", "city": {"q": 7, "r": 11}}]
    assert grown[1]["moved"] == [{"column": "dark-1", "color": "blue", "city": {"q": 9, "r": 14}}]


def test_growth_each_die_moves_topmost_cube_of_its_column_to_its_city():
    state = bare(game_at("move_goods", 3))
    state["display"].update({
        "light-1": ["red", "blue", "black"], "light-2": [None, "yellow", "purple"],
        "light-3": [None, None, "black"], "dark-4": ["blue", "red", None],
        "dark-5": [None, "purple", None], "dark-6": ["yellow", "yellow", "yellow"],
    })
    state, _ = grow(state, [1, 2, 3], [4, 5, 6])
    assert state["display"]["light-1"] == [None, "blue", "black"]
    assert state["display"]["light-2"] == [None, None, "purple"]
    assert state["display"]["light-3"] == [None, None, None]
    assert state["display"]["dark-4"] == [None, "red", None]
    assert state["display"]["dark-5"] == [None, None, None]
    assert state["display"]["dark-6"] == [None, "yellow", "yellow"]
    assert state["cubes"][CHICAGO] == ["red"]
    assert state["cubes"][ST_LOUIS] == ["yellow"]
    assert state["cubes"][KANSAS_CITY] == ["black"]
    assert state["cubes"][WHEELING] == ["blue"]
    assert state["cubes"][PITTSBURGH] == ["purple"]
    assert state["cubes"][TORONTO] == ["yellow"]
    assert state["cubes"][DES_MOINES] == state["cubes"][EVANSVILLE] == []


def test_growth_cubes_join_those_already_in_the_city():
    state = bare(game_at("move_goods", 3))
    state["cubes"][CHICAGO] = ["yellow", "blue"]
    state["display"]["light-1"] = ["red", None, None]
    state, _ = grow(state, [1, 6, 6], [6, 6, 6])
    assert sorted(state["cubes"][CHICAGO]) == ["blue", "red", "yellow"]


def test_growth_repeated_dice_move_two_cubes():
    state = bare(game_at("move_goods", 3))
    state["display"]["light-2"] = ["red", "blue", "black"]
    state["display"]["dark-3"] = ["purple", "yellow", "blue"]
    state, _ = grow(state, [2, 2, 6], [3, 3, 3])
    assert state["display"]["light-2"] == [None, None, "black"]
    assert sorted(state["cubes"][ST_LOUIS]) == ["blue", "red"]
    assert state["display"]["dark-3"] == [None, None, None]
    assert sorted(state["cubes"][DETROIT]) == ["blue", "purple", "yellow"]


def test_growth_repeated_dice_beyond_the_cubes_left_move_what_there_is():
    state = bare(game_at("move_goods", 3))
    state["display"]["light-4"] = [None, None, "red"]
    state, _ = grow(state, [4, 4, 4], [6, 6, 6])
    assert state["display"]["light-4"] == [None, None, None]
    assert state["cubes"][DES_MOINES] == ["red"]


def test_growth_empty_column_does_nothing():
    state = bare(game_at("move_goods", 3))
    state["display"]["light-5"] = ["red", None, None]
    before = {k: list(v) for k, v in state["cubes"].items()}
    state, events = grow(state, [6, 6, 6], [2, 2, 6])
    assert [e["moved"] for e in events_of(events, "goods_grown")] == [[], []]
    assert state["cubes"] == before
    assert state["display"]["light-5"] == ["red", None, None]


def test_growth_lettered_column_keeps_its_cubes_before_urbanization():
    state = bare(game_at("move_goods", 3))
    state["display"]["light-3"] = ["red", None, None]
    state["display"]["A"] = ["blue", "black"]
    state, _ = grow(state, [3, 6, 6], [6, 6, 6])
    assert state["cubes"][KANSAS_CITY] == ["red"]
    assert state["display"]["A"] == ["blue", "black"]
    assert TOWN not in state["cubes"]


def test_growth_lettered_column_feeds_its_new_city_once_urbanized():
    state = bare(game_at("move_goods", 3))
    state["new_cities"][TOWN] = "A"
    state["display"]["light-3"] = ["red", None, None]
    state["display"]["A"] = ["blue", "black"]
    state["display"]["B"] = ["yellow", "yellow"]  # B is not on the map: keeps its cubes
    state, events = grow(state, [3, 4, 6], [3, 6, 6])
    assert state["cubes"][KANSAS_CITY] == ["red"]
    assert state["cubes"][TOWN] == ["blue"]
    assert state["display"]["A"] == [None, "black"]
    assert state["display"]["B"] == ["yellow", "yellow"]
    # dark 3 is not the column A sits under: A is fed by light 3 only
    assert events_of(events, "goods_grown")[1]["moved"] == []


def test_growth_lettered_column_repeated_dice_feed_new_city_twice():
    state = bare(game_at("move_goods", 3))
    state["new_cities"][TOWN] = "E"   # E sits under dark 1
    state["display"]["E"] = ["purple", "red"]
    state, _ = grow(state, [6, 6, 6], [1, 1, 6])
    assert state["display"]["E"] == [None, None]
    assert sorted(state["cubes"][TOWN]) == ["purple", "red"]


# -- production ---------------------------------------------------------------------------------

def production_state(bag: dict[str, int], display: dict[str, list], players: int = 3) -> dict:
    """Move goods with seat 0 holding Production, the display and bag as given; ends the round
    so that seat 0 is asked to place the drawn cubes (or nothing happens when no room)."""
    state = bare(game_at("move_goods", players, actions={"production": 0}))
    state["display"].update(display)
    state["bag"] = {"red": 0, "blue": 0, "purple": 0, "yellow": 0, "black": 0, **bag}
    return state


def full(**columns: list) -> dict[str, list]:
    """A display with every square taken (by red cubes) except in the columns given."""
    display = {c: ["red"] * (2 if len(c) == 1 else 3) for c in game_at("issue_shares")["display"]}
    display.update({c.replace("_", "-"): v for c, v in columns.items()})
    return display


def produce(*placements: tuple[str, str]) -> dict:
    return {"type": "produce", "placements": [{"color": c, "column": col} for c, col in placements]}


def test_growth_production_draws_two_cubes_for_the_holder():
    state = production_state({"red": 1, "blue": 5}, {"light-1": [None, "black", None]})
    events: list[dict] = []
    state = finish_phase(state, events)
    assert state["phase"] == "production" and state["queue"] == [0]
    drawn = state["production"]["drawn"]
    assert len(drawn) == 2
    assert state["bag"] == {"red": 1 - drawn.count("red"), "blue": 5 - drawn.count("blue"),
                            "purple": 0, "yellow": 0, "black": 0}
    assert events_of(events, "production_drawn")[0]["drawn"] == drawn
    assert events_of(events, "dice_rolled") == []  # production comes before the dice
    assert game.legal_moves(state, 1) == [] and game.legal_moves(state, 2) == []


def test_growth_production_places_on_topmost_empty_square_then_dice():
    state = production_state({"red": 2}, {"light-1": [None, None, "black"],
                                          "dark-2": ["blue", None, None]})
    state = finish_phase(state)
    assert state["production"]["drawn"] == ["red", "red"]
    state["rng"] = rng_for_dice([6, 6, 6], [6, 6, 6])  # columns 6 are empty: no growth moves
    state, events = play_events(state, 0, produce(("red", "light-1"), ("red", "dark-2")))
    assert state["display"]["light-1"] == ["red", None, "black"]
    assert state["display"]["dark-2"] == ["blue", "red", None]
    assert events_of(events, "production")[0]["returned"] == []
    assert [e["dice"] for e in events_of(events, "dice_rolled")] == [[6, 6, 6], [6, 6, 6]]
    assert state["phase"] == "issue_shares" and state["round"] == 2
    assert state["bag"]["red"] == 0


def test_growth_production_both_cubes_may_go_in_one_column():
    state = finish_phase(production_state({"blue": 2}, {"light-2": [None, None, None]}))
    state["rng"] = rng_for_dice([6, 6, 6], [6, 6, 6])
    state, _ = play_events(state, 0, produce(("blue", "light-2"), ("blue", "light-2")))
    assert state["display"]["light-2"] == ["blue", "blue", None]


def test_growth_production_new_city_columns_take_cubes_too():
    state = finish_phase(production_state({"black": 2}, full(H=[None, None])))
    assert game.legal_moves(state, 0) == [produce(("black", "H"), ("black", "H"))]


def test_growth_production_legal_moves_are_every_placement():
    state = finish_phase(production_state({"red": 1, "blue": 1},
                                          full(light_1=["red", None, "red"], C=[None, "red"])))
    moves = game.legal_moves(state, 0)
    as_sets = sorted(sorted((p["color"], p["column"]) for p in m["placements"]) for m in moves)
    assert as_sets == [[("blue", "C"), ("red", "light-1")], [("blue", "light-1"), ("red", "C")]]


def test_growth_production_fewer_empty_squares_rest_back_to_bag():
    state = production_state({"purple": 2}, full(dark_5=["red", "red", None]))
    state = finish_phase(state)
    assert state["production"]["drawn"] == ["purple", "purple"]
    assert game.legal_moves(state, 0) == [produce(("purple", "dark-5"))]
    with illegal("BAD_PLACEMENT"):
        game.apply(state, 0, produce(("purple", "dark-5"), ("purple", "dark-5")))
    state["rng"] = rng_for_dice([1, 1, 1], [1, 1, 1])
    state, events = play_events(state, 0, produce(("purple", "dark-5")))
    assert events_of(events, "production")[0]["returned"] == ["purple"]
    assert state["bag"]["purple"] == 1
    assert state["display"]["dark-5"] == ["red", "red", "purple"]


def test_growth_production_no_empty_square_all_back_to_bag_no_decision():
    state = production_state({"yellow": 3}, full())
    events: list[dict] = []
    state = finish_phase(state, events)
    assert state["phase"] == "issue_shares" and state["round"] == 2
    [prod] = events_of(events, "production")
    assert prod["placements"] == [] and prod["returned"] == ["yellow", "yellow"]
    assert state["bag"]["yellow"] == 3


def test_growth_production_empty_bag_draws_fewer():
    state = production_state({"black": 1}, full(light_1=[None, None, None]))
    state = finish_phase(state)
    assert state["production"]["drawn"] == ["black"]
    assert game.legal_moves(state, 0) == [produce(("black", "light-1"))]
    with illegal("BAD_PLACEMENT"):
        game.apply(state, 0, produce(("black", "light-1"), ("red", "light-1")))


def test_growth_production_bad_placement():
    state = finish_phase(production_state({"red": 2}, full(light_1=[None, "red", "red"],
                                                           light_2=[None, None, "red"])))
    with illegal("BAD_PLACEMENT"):   # two cubes must be placed
        game.apply(state, 0, produce(("red", "light-2")))
    with illegal("BAD_PLACEMENT"):   # no blue cube was drawn
        game.apply(state, 0, produce(("red", "light-2"), ("blue", "light-2")))
    with illegal("BAD_PLACEMENT"):   # light-3 has no empty square
        game.apply(state, 0, produce(("red", "light-2"), ("red", "light-3")))
    with illegal("BAD_PLACEMENT"):   # light-1 has only one empty square
        game.apply(state, 0, produce(("red", "light-1"), ("red", "light-1")))
    with illegal("BAD_MOVE"):
        game.apply(state, 0, {"type": "produce", "placements": "light-1"})
    state["rng"] = rng_for_dice([6, 6, 6], [6, 6, 6])
    state, _ = play_events(state, 0, produce(("red", "light-1"), ("red", "light-2")))
    assert state["display"]["light-1"] == ["red", "red", "red"]
    assert state["display"]["light-2"] == ["red", None, "red"]


def test_growth_production_holder_eliminated_this_round_does_not_produce():
    state = production_state({"red": 2}, {"light-1": [None, None, None]})
    state["players"][0].update(cash=0, income=0)
    events: list[dict] = []
    state = finish_phase(state, events)
    assert state["players"][0]["eliminated"]
    assert events_of(events, "production_drawn") == [] and events_of(events, "production") == []
    assert state["bag"]["red"] == 2
    assert state["phase"] == "issue_shares" and state["round"] == 2


def test_growth_production_cubes_may_grow_the_same_round():
    """Production comes before the dice: a produced cube on a rolled column moves at once."""
    state = finish_phase(production_state({"blue": 2}, {"light-1": [None, None, None]}))
    state["rng"] = rng_for_dice([1, 6, 6], [6, 6, 6])
    state, _ = play_events(state, 0, produce(("blue", "light-1"), ("blue", "light-1")))
    assert state["display"]["light-1"] == [None, "blue", None]
    assert state["cubes"][CHICAGO] == ["blue"]


def test_growth_rng_for_dice_helper_is_exact():
    r = rng_for_dice([3, 1, 4], [1, 5, 6])
    assert dice_from(r, 6)[0] == [3, 1, 4, 1, 5, 6]


@pytest.mark.parametrize("map_id", game.MAP_IDS)
def test_display_has_a_column_for_every_new_city_in_play_and_none_for_a_removed_one(map_id):
    # Seed 003 takes Holland's yellow new city out of the game; no other map removes a column
    # or a tile, and every map keeps all twelve number columns.
    board = load_map(map_id)
    state = game.new_game(map_id, ["Ann", "Bob", "Cat"], "columns")
    letters = [c for c in NEW_CITY_COLUMNS if c not in board.removed_new_cities]
    assert list(state["display"]) == [*NUMBER_COLUMNS, *letters]
    assert list(game.view(state)["goods_display"]) == [*NUMBER_COLUMNS, *letters]
    assert board.removed_new_cities == (frozenset({"E"}) if map_id == "holland" else frozenset())
