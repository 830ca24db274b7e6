"""Iraq: oil fields, the EU and US flags, Baghdad, U.S. Army Escort and the Production variant.
Rules: docs/rules-decisions.md, Expansion maps: Iraq (the board is reconstructed: "Iraq, Berlin");
service/engine/variants/iraq.py.

Fixtures on the reconstructed map (q, r):
    Kirkuk (8,10) blue -(7,10)- Kirkuk field (6,11)                        [Engineer only]
    Baghdad (8,15) -(9,14)- East Baghdad field (10,14) -(10,13)- Baqubah (9,13), a town
    Kut (11,16) yellow -(11,15)-(10,15)-(9,15)- Baghdad -(7,16)- Fallujah (6,16) -(5,16)- Ramadi (4,17)
    Kuwait (16,21) purple -(17,20)- USA flag (18,19); EU flag (3,8) -(3,9)/(4,8) approach hexes
"""

from __future__ import annotations

import orjson
import pytest

from service.engine import game, rng
from service.engine import rules_data as R
from service.engine.hexgrid import as_dict
from service.engine.state import cubes_in_play, roll_die, shuffle
from service.engine.variants import rules_for
from tests.engine.board import build_move as build
from tests.engine.board import deliver_move as deliver
from tests.engine.board import key, lay, link_between
from tests.engine.helpers import (
    events_of,
    finish_phase,
    game_at,
    illegal,
    new,
    play,
    play_events,
    rng_for_dice,
)
from tests.engine.test_random_play import play_checked

MAP = "iraq"
KIRKUK, KIRKUK_FIELD = (8, 10), (6, 11)
BAGHDAD, EAST_BAGHDAD_FIELD, BAQUBAH = (8, 15), (10, 14), (9, 13)
RUMAILA_FIELD = (14, 20)
OIL_FIELDS = [KIRKUK_FIELD, EAST_BAGHDAD_FIELD, RUMAILA_FIELD]
KUT, FALLUJAH, RAMADI, MOSUL = (11, 16), (6, 16), (4, 17), (5, 9)
KUWAIT, USA, EU = (16, 21), (18, 19), (3, 8)
TIKRIT, AMARAH = (6, 13), (14, 16)

BAGHDAD_TO_FIELD = [((9, 14), [[2, 4]])]
FIELD_TO_BAQUBAH = [((10, 13), [[3, 5]]), (BAQUBAH, "town", [2])]
KUT_TO_BAGHDAD = [((11, 15), [[3, 5]]), ((10, 15), [[2, 5]]), ((9, 15), [[2, 5]])]
BAGHDAD_TO_FALLUJAH = [((7, 16), [[1, 5]])]
FALLUJAH_TO_RAMADI = [((5, 16), [[2, 4]])]
KUWAIT_TO_USA = [((17, 20), [[1, 4]])]
TOTAL_CUBES = 96


def h(x) -> dict:
    return as_dict(x)


def builder(seat: int = 0, actions: dict | None = None, cash: int = 50) -> dict:
    """A 3-player Iraq game in Build with `seat` first (First Build) and `cash`."""
    taken = {"first_build": seat, **(actions or {})}
    return game_at("build", 3, map_id=MAP, actions=taken, seats={seat: {"cash": cash}})


def mover(seat: int = 0, loco: int = 3, actions: dict | None = None,
          cubes: dict | None = None) -> dict:
    """Move Goods with `seat` moving first; every city and oil field holds exactly `cubes`."""
    state = game_at("move_goods", 3, map_id=MAP, actions={"first_move": seat, **(actions or {})},
                    seats={seat: {"loco": loco}})
    for k in state["cubes"]:
        state["cubes"][k] = []
    for where, colours in (cubes or {}).items():
        state["cubes"][key(where)] = list(colours)
    return state


def listed_deliveries(state: dict, seat: int) -> list[tuple]:
    return [(m["from"]["q"], m["from"]["r"], m["color"], tuple(m["links"]))
            for m in game.legal_moves(state, seat) if m["type"] == "deliver"]


# -- players, rounds, actions -----------------------------------------------------------------------

def test_iraq_takes_3_to_6_players_with_the_base_round_table() -> None:
    for players, rounds in R.ROUNDS_BY_PLAYERS.items():
        assert new(players, map_id=MAP)["last_round"] == rounds
    for players in (2, 7):
        with pytest.raises(game.SetupError) as info:
            game.new_game(MAP, [f"P{i}" for i in range(players)], "x")
        assert info.value.code == "PLAYER_COUNT"


def test_us_army_escort_is_an_eighth_action_beside_the_base_seven() -> None:
    state = game_at("select_action", 3, map_id=MAP)
    offered = [m["action"] for m in game.legal_moves(state, state["queue"][0])]
    assert offered == [*R.BASE_ACTIONS, "us_army_escort"]
    assert len(offered) == 8
    state = play(state, state["queue"][0], {"type": "select_action", "action": "us_army_escort"})
    assert "us_army_escort" not in game.view(state)["actions"]["available"]


def test_all_eight_new_city_tiles_stay_in() -> None:
    assert rules_for(MAP).new_city_letters() == list("ABCDEFGH")


# -- setup ------------------------------------------------------------------------------------------

def oil_setup(dice: list[int]) -> dict:
    """Runs the oil-field setup on a full bag with the given dice."""
    state = {"bag": dict(R.CUBE_COUNTS), "cubes": {}, "variant": {},
             "rng": rng_for_dice(dice)}
    rules_for(MAP).setup_before_draws(state, [])
    return state


def test_oil_fields_get_a_die_roll_of_black_cubes_each_in_map_order() -> None:
    state = oil_setup([3, 5, 2])
    assert [state["cubes"][key(f)] for f in OIL_FIELDS] == [["black"] * 3, ["black"] * 5,
                                                             ["black"] * 2]
    assert state["bag"]["black"] == 16 - 10  # the rest of the black cubes go back to the bag


def test_oil_fields_take_black_cubes_only_while_they_last() -> None:
    state = oil_setup([6, 6, 6])  # 18 rolled, 16 black cubes: the last field in map order gets 4
    assert [len(state["cubes"][key(f)]) for f in OIL_FIELDS] == [6, 6, 4]
    assert state["bag"]["black"] == 0


def test_oil_fields_are_filled_before_the_cities_and_display_draw_from_the_bag() -> None:
    # A seed whose three dice take all 16 black cubes: then no city or display square has one.
    for n in range(400):
        state = new(3, map_id=MAP, seed=f"oil-{n}")
        if sum(len(state["cubes"][key(f)]) for f in OIL_FIELDS) == 16:
            break
    else:
        pytest.fail("no seed in 400 takes every black cube")
    assert state["bag"]["black"] == 0
    assert not any("black" in state["cubes"][key(c)] for c in rules_for(MAP).map.cities)
    assert not any(c == "black" for col in state["display"].values() for c in col)
    # Every other seed: 1-6 black cubes per field and all 96 cubes accounted for.
    for n in range(20):
        state = new(4, map_id=MAP, seed=f"count-{n}")
        assert all(1 <= len(state["cubes"][key(f)]) <= 6 for f in OIL_FIELDS)
        assert all(c == "black" for f in OIL_FIELDS for c in state["cubes"][key(f)])
        assert cubes_in_play(state) + sum(state["bag"].values()) == TOTAL_CUBES


def test_oil_field_dice_come_from_the_game_rng_after_the_turn_order_shuffle() -> None:
    state = new(3, map_id=MAP, seed="dice")
    replica = game.new_game(MAP, ["Ann", "Bob", "Cat"], "dice")
    assert orjson.dumps(state) == orjson.dumps(replica)  # setup is reproducible from the seed
    probe = {"rng": rng.seed_state("dice")}
    shuffle(probe, [0, 1, 2])
    rolls = [roll_die(probe) for _ in OIL_FIELDS]
    expected, left = [], 16
    for roll in rolls:
        expected.append(min(roll, left))
        left -= expected[-1]
    assert [len(state["cubes"][key(f)]) for f in OIL_FIELDS] == expected


def test_baghdad_takes_blue_red_and_yellow_and_starts_empty() -> None:
    state = new(3, map_id=MAP)
    rules = rules_for(MAP)
    assert state["cubes"][key(BAGHDAD)] == []
    assert [c for c in ("red", "blue", "yellow", "purple", "black")
            if rules.accepts(state, BAGHDAD, c)] == ["red", "blue", "yellow"]


def test_flags_are_black_cities_that_hold_no_cubes_at_setup() -> None:
    state = new(5, map_id=MAP)
    rules = rules_for(MAP)
    for flag in (EU, USA):
        assert state["cubes"][key(flag)] == []
        assert [c for c in ("red", "blue", "yellow", "purple", "black")
                if rules.accepts(state, flag, c)] == ["black"]
    # Every other city starts with 2 cubes.
    others = [c for c in rules.map.cities if c not in (EU, USA, BAGHDAD)]
    assert len(others) == 12
    assert all(len(state["cubes"][key(c)]) == 2 for c in others)


def test_display_columns_5_and_6_of_both_sides_and_squares_c_and_d_start_empty() -> None:
    display = new(4, map_id=MAP)["display"]
    empty = ["light-5", "light-6", "dark-5", "dark-6", "C", "D"]
    for column in empty:
        assert display[column] == [None] * len(display[column]), column
    for column, squares in display.items():
        if column not in empty:
            assert None not in squares, column
    assert sum(1 for col in display.values() for c in col if c) == 8 * 3 + 6 * 2


# -- building ---------------------------------------------------------------------------------------

def test_desert_costs_3() -> None:
    state = builder()
    # (15,21) is desert beside Kuwait: a simple track from Kuwait costs $3.
    state, events = play_events(state, 0, build((15, 21), [[2, 5]]))
    assert events_of(events, "track_built")[0]["cost"] == 3
    assert state["players"][0]["cash"] == 47
    # Plain stays $2: (6,9) beside Mosul.
    state, events = play_events(state, 0, build((6, 9), [[2, 5]]))
    assert events_of(events, "track_built")[0]["cost"] == 2


def test_flag_approach_hexes_cost_5() -> None:
    state = builder()
    state, events = play_events(state, 0, build((17, 20), [[1, 4]]))
    assert events_of(events, "track_built")[0]["cost"] == 5
    assert state["players"][0]["cash"] == 45
    # The link Kuwait-USA is complete.
    assert link_between(state, KUWAIT, USA)


def test_flag_approach_hex_costs_5_whatever_the_tile() -> None:
    state = builder()
    rules = rules_for(MAP)
    for approach in ((3, 9), (4, 8), (17, 19), (17, 20)):
        assert [rules.new_tile_cost(state, approach, kind)
                for kind in ("simple", "coexisting", "crossing")] == [5, 5, 5]
    # Every build listed on the EU approach hexes costs $5; a desert hex's crossing costs 3 + 2.
    listed = {m["cost"] for m in game.legal_moves(state, 0)
              if m["type"] == "build" and m["hex"] in (h((3, 9)), h((4, 8)))}
    assert listed == {5}
    assert rules.new_tile_cost(state, (15, 21), "crossing") == 5


def test_no_track_is_laid_on_an_oil_field() -> None:
    state = builder(actions={"engineer": 0})
    with illegal("NOT_BUILDABLE"):
        play(state, 0, build(KIRKUK_FIELD, [[0, 3]]))
    assert not any(m.get("hex") == h(KIRKUK_FIELD) for m in game.legal_moves(state, 0))


def test_only_the_engineer_holder_builds_track_that_connects_to_an_oil_field() -> None:
    move = build((7, 10), [[2, 4]])  # Kirkuk to the Kirkuk field
    state = builder(seat=0, actions={"engineer": 1})
    with illegal("INTO_IMPASSABLE"):
        play(state, 0, move)
    assert not any(m.get("hex") == h((7, 10)) and 4 in sum(m.get("tracks", []), [])
                   for m in game.legal_moves(state, 0))
    state = builder(seat=0, actions={"engineer": 0})
    listed = [m for m in game.legal_moves(state, 0) if m["type"] == "build"
              and m["hex"] == h((7, 10)) and m["tracks"] == [[2, 4]]]
    assert listed and listed[0]["cost"] == 2
    state = play(state, 0, move)
    assert link_between(state, KIRKUK, KIRKUK_FIELD)
    assert state["build"]["tiles_left"] == 3  # the Engineer's 4 tiles


def test_track_joined_to_an_oil_field_is_not_turned_away_by_others() -> None:
    state = builder(seat=0, actions={"engineer": 1})
    lay(state, [((7, 10), [[2, 4]])], owner=0)  # the Engineer of a past round built it
    with illegal("REDIRECT_NOT_ALLOWED"):
        play(state, 0, build((7, 10), [[2, 3]]))


# -- moving goods -----------------------------------------------------------------------------------

def oil_chain(state: dict, new_city: str | None = "C") -> dict:
    """Baghdad -(seat 0)- East Baghdad field -(seat 1)- Baqubah, made a new city."""
    lay(state, BAGHDAD_TO_FIELD, owner=0)
    if new_city:
        lay(state, [FIELD_TO_BAQUBAH[0]], owner=1)
        state["new_cities"][key(BAQUBAH)] = new_city
        state["cubes"].setdefault(key(BAQUBAH), [])
    else:
        lay(state, FIELD_TO_BAQUBAH, owner=1)
    return state


def test_oil_field_counts_as_a_town_for_income() -> None:
    state = oil_chain(mover(cubes={BAQUBAH: ["yellow"]}))
    route = [link_between(state, BAQUBAH, EAST_BAGHDAD_FIELD),
             link_between(state, EAST_BAGHDAD_FIELD, BAGHDAD)]
    incomes = [p["income"] for p in state["players"]]
    state, events = play_events(state, 0, deliver(BAQUBAH, "yellow", route))
    assert events_of(events, "good_delivered")[0]["income"] == {"0": 1, "1": 1}
    assert [p["income"] - i for p, i in zip(state["players"], incomes, strict=True)] == [1, 1, 0]


def test_black_cubes_do_not_pass_through_an_oil_field_without_the_escort() -> None:
    state = oil_chain(mover(cubes={BAGHDAD: ["black"]}))
    route = [link_between(state, BAGHDAD, EAST_BAGHDAD_FIELD),
             link_between(state, EAST_BAGHDAD_FIELD, BAQUBAH)]
    with illegal("ROUTE_BLOCKED"):
        play(state, 0, deliver(BAGHDAD, "black", route))
    assert not [d for d in listed_deliveries(state, 0) if d[2] == "black"]
    # Other colours pass an oil field freely: a yellow cube from Baqubah reaches Baghdad.
    state["cubes"][key(BAQUBAH)] = ["yellow"]
    play(state, 0, deliver(BAQUBAH, "yellow", route[::-1]))


def test_black_cubes_pass_through_an_oil_field_with_the_escort() -> None:
    state = oil_chain(mover(cubes={BAGHDAD: ["black"]}, actions={"us_army_escort": 0}))
    route = [link_between(state, BAGHDAD, EAST_BAGHDAD_FIELD),
             link_between(state, EAST_BAGHDAD_FIELD, BAQUBAH)]
    assert (BAGHDAD[0], BAGHDAD[1], "black", tuple(route)) in listed_deliveries(state, 0)
    state, events = play_events(state, 0, deliver(BAGHDAD, "black", route))
    assert events_of(events, "good_delivered")[0]["to"] == h(BAQUBAH)
    assert events_of(events, "good_delivered")[0]["income"] == {"0": 1, "1": 1}


def test_black_cubes_may_start_on_an_oil_field() -> None:
    state = oil_chain(mover(cubes={EAST_BAGHDAD_FIELD: ["black", "black"]}))
    link = link_between(state, EAST_BAGHDAD_FIELD, BAQUBAH)
    assert (EAST_BAGHDAD_FIELD[0], EAST_BAGHDAD_FIELD[1], "black", (link,)) in \
        listed_deliveries(state, 0)
    state = play(state, 0, deliver(EAST_BAGHDAD_FIELD, "black", [link]))
    assert state["cubes"][key(EAST_BAGHDAD_FIELD)] == ["black"]
    assert state["players"][1]["income"] == 1


def test_an_oil_field_is_never_a_destination() -> None:
    state = oil_chain(mover(cubes={BAGHDAD: ["black", "red"]}, actions={"us_army_escort": 0}))
    link = link_between(state, BAGHDAD, EAST_BAGHDAD_FIELD)
    for colour in ("black", "red"):
        with illegal("WRONG_DESTINATION"):
            play(state, 0, deliver(BAGHDAD, colour, [link]))


def test_black_cube_delivered_to_a_flag_is_kept_by_the_deliverer() -> None:
    state = mover(seat=1, cubes={KUWAIT: ["black", "black"]})
    lay(state, KUWAIT_TO_USA, owner=2)
    bag_black = state["bag"]["black"]
    in_play = cubes_in_play(state)
    link = link_between(state, KUWAIT, USA)
    state, events = play_events(state, 1, deliver(KUWAIT, "black", [link]))
    assert state["bag"]["black"] == bag_black  # not back in the bag
    assert state["variant"]["drums"] == {"1": 1}
    assert state["variant"]["cubes_held"] == 1
    assert cubes_in_play(state) == in_play  # the kept drum still counts among the 96
    assert state["cubes"][key(USA)] == []
    assert events_of(events, "oil_drum_kept") == [
        {"type": "oil_drum_kept", "seat": 1, "flag": "USA", "drums": 1}]
    assert state["players"][2]["income"] == 1  # the link's owner is paid as usual
    assert game.view(state)["board"]["oil_drums"] == {"0": 0, "1": 1, "2": 0}


def test_drums_raise_income_by_1_each_before_the_last_income_reduction() -> None:
    last = R.ROUNDS_BY_PLAYERS[3]
    state = game_at("move_goods", 3, map_id=MAP, round=last,
                    seats={0: {"income": 10, "cash": 50}, 1: {"income": 10, "cash": 50},
                           2: {"income": 10, "cash": 50}})
    state["variant"]["drums"] = {"0": 3}
    state["variant"]["cubes_held"] += 3
    state["bag"]["black"] -= 3
    events: list = []
    state = finish_phase(state, events)
    assert game.is_finished(state)
    assert events_of(events, "oil_drums_counted") == [
        {"type": "oil_drums_counted", "income": {"0": 3}}]
    reductions = {r["seat"]: r for r in events_of(events, "income_reduced")[0]["reductions"]}
    # Seat 0: 10 + 3 drums = 13, reduced by 2 to 11. The others: 10, no reduction.
    assert reductions[0] == {"seat": 0, "reduction": 2, "income": 11}
    assert reductions[1] == {"seat": 1, "reduction": 0, "income": 10}
    kinds = [e["type"] for e in events]
    assert kinds.index("expenses_paid") < kinds.index("oil_drums_counted") < \
        kinds.index("income_reduced")


def test_drums_do_not_raise_income_before_the_last_round() -> None:
    state = game_at("move_goods", 3, map_id=MAP, round=2, seats={0: {"income": 10, "cash": 50}})
    state["variant"]["drums"] = {"0": 3}
    state["variant"]["cubes_held"] += 3
    state["bag"]["black"] -= 3
    events: list = []
    state = finish_phase(state, events)
    assert not events_of(events, "oil_drums_counted")
    assert state["players"][0]["income"] == 10


def escort_chain(state: dict, fallujah_city: bool) -> dict:
    lay(state, KUT_TO_BAGHDAD + BAGHDAD_TO_FALLUJAH + FALLUJAH_TO_RAMADI, owner=1)
    if fallujah_city:
        state["new_cities"][key(FALLUJAH)] = "E"  # yellow
        state["cubes"][key(FALLUJAH)] = []
    else:
        lay(state, [(FALLUJAH, "town", [2, 5])], owner=1)
    return state


def test_us_army_escort_lets_a_cube_pass_one_city_of_its_own_colour() -> None:
    for escort in (False, True):
        actions = {"us_army_escort": 0} if escort else {}
        state = escort_chain(mover(cubes={KUT: ["yellow"]}, actions=actions), fallujah_city=False)
        route = [link_between(state, KUT, BAGHDAD), link_between(state, BAGHDAD, FALLUJAH),
                 link_between(state, FALLUJAH, RAMADI)]
        move = deliver(KUT, "yellow", route)
        if not escort:
            with illegal("PASSES_OWN_COLOUR"):
                play(state, 0, move)
            continue
        assert (KUT[0], KUT[1], "yellow", tuple(route)) in listed_deliveries(state, 0)
        state, events = play_events(state, 0, move)
        assert events_of(events, "good_delivered")[0]["to"] == h(RAMADI)
        assert state["players"][1]["income"] == 3


def test_us_army_escort_passes_only_one_city_per_cube() -> None:
    state = escort_chain(mover(cubes={KUT: ["yellow"]}, actions={"us_army_escort": 0}),
                         fallujah_city=True)
    to_fallujah = [link_between(state, KUT, BAGHDAD), link_between(state, BAGHDAD, FALLUJAH)]
    route = to_fallujah + [link_between(state, FALLUJAH, RAMADI)]
    with illegal("PASSES_OWN_COLOUR"):
        play(state, 0, deliver(KUT, "yellow", route))  # Baghdad and new city E: two passes
    play(state, 0, deliver(KUT, "yellow", to_fallujah))


# -- production -------------------------------------------------------------------------------------

def producer(black_in_bag: int = 3) -> dict:
    """Seat 1 holds Production, at its decision; the bag holds `black_in_bag` black cubes (the
    difference is made up in red, so that 96 cubes stay in the game)."""
    state = game_at("move_goods", 3, map_id=MAP, actions={"production": 1})
    moved = state["bag"]["black"] - black_in_bag
    state["bag"]["black"] = black_in_bag
    state["bag"]["red"] += moved
    return finish_phase(state)


def test_production_sets_a_black_cube_aside_and_draws_4_cubes() -> None:
    state = producer()
    assert state["phase"] == "production" and state["queue"] == [1]
    assert len(state["production"]["drawn"]) == 4
    assert state["variant"]["oil_aside"] == 1
    assert cubes_in_play(state) + sum(state["bag"].values()) == TOTAL_CUBES


def test_production_puts_the_black_cube_on_an_oil_field_of_the_holders_choice() -> None:
    state = producer()
    moves = game.legal_moves(state, 1)
    assert {orjson.dumps(m["oil_field"]) for m in moves} == {orjson.dumps(h(f)) for f in OIL_FIELDS}
    before = len(state["cubes"][key(RUMAILA_FIELD)])
    move = next(m for m in moves if m["oil_field"] == h(RUMAILA_FIELD))
    state, events = play_events(state, 1, move)
    assert len(state["cubes"][key(RUMAILA_FIELD)]) == before + 1
    assert state["variant"]["oil_aside"] == 0 and state["variant"]["cubes_held"] == 0
    assert events_of(events, "oil_placed") == [
        {"type": "oil_placed", "seat": 1, "hex": h(RUMAILA_FIELD)}]
    assert cubes_in_play(state) + sum(state["bag"].values()) == TOTAL_CUBES


def test_production_places_1_of_the_4_cubes_and_returns_3() -> None:
    state = producer()
    drawn = list(state["production"]["drawn"])
    move = game.legal_moves(state, 1)[0]
    assert len(move["placements"]) == 1
    bag = dict(state["bag"])
    state, events = play_events(state, 1, move)
    record = events_of(events, "production")[0]
    assert len(record["placements"]) == 1 and len(record["returned"]) == 3
    assert sorted([record["placements"][0]["color"], *record["returned"]]) == sorted(drawn)
    assert sum(state["bag"].values()) == sum(bag.values()) + 3
    with illegal("BAD_PLACEMENT"):
        play(producer(), 1, {**move, "placements": []})


def test_production_never_places_on_dark_5_or_dark_6() -> None:
    state = producer()
    columns = {p["column"] for m in game.legal_moves(state, 1) for p in m["placements"]}
    assert "dark-5" not in columns and "dark-6" not in columns
    assert {"light-5", "light-6", "C", "D"} <= columns  # the empty squares elsewhere are open
    colour = state["production"]["drawn"][0]
    for column in ("dark-5", "dark-6"):
        with illegal("BAD_PLACEMENT"):
            play(state, 1, {"type": "produce", "placements": [{"color": colour, "column": column}],
                            "oil_field": h(KIRKUK_FIELD)})


def test_production_without_black_cubes_in_the_bag_sets_none_aside() -> None:
    state = producer(black_in_bag=0)
    assert state["variant"]["oil_aside"] == 0
    moves = game.legal_moves(state, 1)
    assert moves and not any("oil_field" in m for m in moves)
    with illegal("BAD_PLACEMENT"):
        play(state, 1, {**moves[0], "oil_field": h(KIRKUK_FIELD)})
    fields = [len(state["cubes"][key(f)]) for f in OIL_FIELDS]
    state = play(state, 1, moves[0])
    assert [len(state["cubes"][key(f)]) for f in OIL_FIELDS] == fields


def test_production_must_name_an_oil_field_when_a_black_cube_waits() -> None:
    state = producer()
    move = game.legal_moves(state, 1)[0]
    with illegal("BAD_PLACEMENT"):
        play(state, 1, {k: v for k, v in move.items() if k != "oil_field"})
    with illegal("BAD_PLACEMENT"):
        play(state, 1, {**move, "oil_field": h(BAGHDAD)})


# -- the game view ----------------------------------------------------------------------------------

def test_board_features_show_oil_fields_flags_and_drums() -> None:
    state = new(4, map_id=MAP)
    board = game.view(state)["board"]
    assert [f["hex"] for f in board["oil_fields"]] == [h(f) for f in OIL_FIELDS]
    assert [f["goods"] for f in board["oil_fields"]] == [state["cubes"][key(f)] for f in OIL_FIELDS]
    assert [(f["name"], f["hex"]) for f in board["flags"]] == [("EU", h(EU)), ("USA", h(USA))]
    assert board["oil_drums"] == {"0": 0, "1": 0, "2": 0, "3": 0}


# -- random play ------------------------------------------------------------------------------------

@pytest.mark.parametrize("players", [3, 4, 5, 6])
@pytest.mark.parametrize("seed", range(5))  # 20 games, 3,102 decisions
def test_random_iraq_game_keeps_invariants_and_replays(players: int, seed: int) -> None:
    final, record = play_checked(players, 5000 + seed * 10 + players,
                                 check_all_every=20 if seed < 2 else 0, map_id=MAP)
    assert final["phase"] == "finished"
    replayed = game.replay(game.record_header(final), record)
    assert orjson.dumps(replayed) == orjson.dumps(final)
