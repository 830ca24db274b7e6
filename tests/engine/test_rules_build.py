"""Build Track: costs, where track may go, tile supply, ownership and its expiry, urbanization.

Rules: docs/rules-decisions.md base 4-14 and 21; service/engine/phases/build.py."""

from __future__ import annotations

import pytest

from service.engine import game
from tests.engine.board import INDIANAPOLIS, builds_listed, key, lay, owner_of
from tests.engine.board import build_move as build
from tests.engine.helpers import events_of, game_at, illegal, play, play_events

CHICAGO = (7, 11)
MICHIGAN_CITY = (9, 10)


def build_turn(seat: int = 0, cash: int = 50, actions: dict | None = None, players: int = 3) -> dict:
    """Seat `seat` is first to build (it holds First Build) with `cash`."""
    taken = {"first_build": seat, **(actions or {})}
    return game_at("build", players, actions=taken, seats={seat: {"cash": cash}})


def reopen_turn(state: dict, seat: int = 0) -> dict:
    """Makes the seat's build turn start afresh on this board (its next build turn)."""
    from service.engine.phases import build as phase
    from service.engine.variants import rules_for

    state["queue"] = [seat]
    phase.begin_turn(state, rules_for(state["map"]), [])
    return state


# -- costs ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("hex_", "tracks", "terrain", "cost"), [
    ((8, 11), [[2, 5]], "plain", 2),      # edge 5 meets Chicago
    ((5, 15), [[0, 3]], "river", 3),      # edge 3 meets St. Louis
    ((16, 10), [[0, 3]], "mountain", 4),  # edge 0 meets Wheeling
])
def test_build_cost_simple_tile_by_terrain(hex_, tracks, terrain, cost):
    state = build_turn()
    from service.engine.maps import load_map

    assert load_map("rust_belt").terrain[hex_] == terrain
    after, events = play_events(state, 0, build(hex_, tracks))
    assert events_of(events, "track_built")[0]["cost"] == cost
    assert after["players"][0]["cash"] == 50 - cost
    assert builds_listed(state, 0)[(hex_, tuple(map(tuple, tracks)))] == cost


def two_anchors() -> dict:
    """(8,11) meets Chicago at edge 5 and seat 0's own track end at edge 3."""
    state = build_turn()
    return lay(state, [((8, 12), [[0, 3]])], owner=0)


def test_build_cost_complex_crossing_placed_directly_is_terrain_plus_2():
    state = two_anchors()
    after, events = play_events(state, 0, build((8, 11), [[1, 3], [2, 5]]))
    assert events_of(events, "track_built")[0]["cost"] == 4
    assert events_of(events, "track_built")[0]["tile"] == "bow_and_arrow"
    assert after["players"][0]["cash"] == 46


def test_build_cost_complex_coexisting_placed_directly_is_terrain_plus_1():
    state = two_anchors()
    after, events = play_events(state, 0, build((8, 11), [[1, 3], [4, 5]]))
    assert events_of(events, "track_built")[0]["cost"] == 3
    assert after["players"][0]["cash"] == 47


@pytest.mark.parametrize(("exits", "cost"), [([4], 2), ([2, 4], 3), ([2, 3, 4], 4), ([1, 2, 3, 4], 5)])
def test_build_cost_town_is_1_plus_1_per_exit(exits, cost):
    state = build_turn()
    lay(state, [((8, 11), [[1, 5]])], owner=0)  # Chicago -> points into Michigan City (edge 4)
    after, events = play_events(state, 0, build(MICHIGAN_CITY, exits=exits))
    assert events_of(events, "track_built")[0]["cost"] == cost
    assert after["players"][0]["cash"] == 50 - cost
    uses_disk = len(exits) in (2, 4)
    assert after["supply"]["town_disk"] == state["supply"]["town_disk"] - uses_disk


def test_build_cost_upgrade_simple_to_crossing_is_3_whatever_the_terrain():
    state = two_anchors()
    lay(state, [((8, 11), [[2, 5]])], owner=0)
    after, events = play_events(state, 0, build((8, 11), [[2, 5], [1, 3]]))
    built = events_of(events, "track_built")[0]
    assert (built["cost"], built["kind"]) == (3, "upgrade")
    assert after["supply"]["straight"] == state["supply"]["straight"] + 1  # old tile back


def test_build_cost_upgrade_simple_to_coexisting_is_2():
    state = build_turn()
    lay(state, [((8, 11), [[3, 5]]), ((9, 11), [[4, 5]])], owner=0)  # (9,11) meets edge 2
    after, events = play_events(state, 0, build((8, 11), [[3, 5], [1, 2]]))
    assert events_of(events, "track_built")[0]["cost"] == 2


def test_build_cost_upgrade_on_a_mountain_is_not_raised_by_terrain():
    state = build_turn()
    lay(state, [((16, 10), [[0, 3]]), ((15, 10), [[2, 5]])], owner=0)  # (15,10) meets edge 4
    after, events = play_events(state, 0, build((16, 10), [[0, 3], [4, 5]]))
    assert events_of(events, "track_built")[0]["cost"] == 2


def test_build_cost_town_upgrade_is_3():
    state = build_turn()
    lay(state, [((8, 11), [[1, 5]]), (MICHIGAN_CITY, "town", [4])], owner=0)
    after, events = play_events(state, 0, build(MICHIGAN_CITY, exits=[2, 4]))
    assert events_of(events, "track_built")[0]["cost"] == 3
    assert after["players"][0]["cash"] == 47


def test_build_cost_redirect_is_2():
    state = build_turn()
    lay(state, [((8, 11), [[1, 5]])], owner=0)  # dangling at edge 1 (town without track)
    after, events = play_events(state, 0, build((8, 11), [[2, 5]]))
    built = events_of(events, "track_built")[0]
    assert (built["cost"], built["kind"]) == (2, "redirect")
    assert owner_of(after, (8, 11)) == [0]


def test_insufficient_cash_rejects_the_build_with_need_and_have():
    state = build_turn(cash=3)
    with illegal("INSUFFICIENT_CASH") as info:
        play(state, 0, build((16, 10), [[0, 3]]))
    assert info.value.extra == {"need": 4, "have": 3}
    assert ((16, 10), ((0, 3),)) not in builds_listed(state, 0)


# -- where track may go -------------------------------------------------------------------------

@pytest.mark.parametrize(("hex_", "tracks", "code"), [
    ((7, 11), [[0, 3]], "NOT_BUILDABLE"),          # on a city
    ((8, 10), [[1, 4]], "NOT_BUILDABLE"),          # on water
    ((17, 8), [[1, 4]], "OFF_MAP"),                # edge 1 points off the board
    ((16, 3), [[0, 3]], "INTO_IMPASSABLE"),        # edge 3 points into water
    ((10, 10), [[2, 5]], "NOT_CONNECTED"),         # meets no city and no own track
    ((30, 30), [[0, 3]], "OFF_MAP"),               # not a hex of the map
    (MICHIGAN_CITY, [[1, 4]], "TOWN_NEEDS_TOWN_TRACK"),
    ((8, 11), [[0, 1], [2, 3], [4, 5]], "TILE_UNKNOWN"),
])
def test_illegal_build_is_rejected_and_not_listed(hex_, tracks, code):
    state = build_turn()
    with illegal(code):
        play(state, 0, build(hex_, tracks))
    assert (hex_, tuple(map(tuple, tracks))) not in builds_listed(state, 0)


def test_town_exits_on_a_plain_hex_are_rejected():
    with illegal("TOWN_NEEDS_TOWN_TRACK"):
        play(build_turn(), 0, build((8, 11), exits=[5]))


def test_no_building_into_another_players_track_end():
    state = build_turn()
    lay(state, [((8, 12), [[0, 3]])], owner=1)  # seat 1's end faces (8,11) edge 3
    lay(state, [((6, 12), [[1, 4]])], owner=0)  # seat 0 has track elsewhere
    with illegal("INTO_OPPONENT_TRACK"):
        play(state, 0, build((8, 11), [[3, 5]]))
    assert ((8, 11), ((3, 5),)) not in builds_listed(state, 0)
    assert ((8, 11), ((2, 5),)) in builds_listed(state, 0)  # beside it is fine


def test_no_loop_a_link_may_not_start_and_end_at_one_city():
    state = build_turn()
    lay(state, [((8, 11), [[4, 5]])], owner=0)  # Chicago -> (7,12)
    with illegal("LOOP"):
        play(state, 0, build((7, 12), [[0, 1]]))  # (7,12) back into Chicago


def test_first_tile_must_be_simple_track_from_a_city():
    state = build_turn()
    # Unowned track from Chicago, (7,12) then (8,12), meets (8,11) edge 3: a connection.
    lay(state, [((7, 12), [[0, 2]]), ((8, 12), [[0, 5]])], owner=None)
    with illegal("FIRST_TILE_SIMPLE"):
        play(state, 0, build((8, 11), [[1, 3], [2, 5]]))  # complex, though anchored twice
    with illegal("FIRST_TILE_SIMPLE"):
        play(state, 0, build((8, 11), [[1, 3]]))  # simple, but from unowned track, not a city
    play(state, 0, build((8, 11), [[2, 5]]))


def test_replacement_must_keep_every_track():
    state = build_turn()
    lay(state, [((8, 11), [[2, 5]]), ((9, 11), [[4, 5]])], owner=0)
    with illegal("MUST_KEEP_TRACK"):
        play(state, 0, build((8, 11), [[1, 4]]))


def test_a_redirect_may_not_turn_another_players_track():
    state = build_turn()
    lay(state, [((6, 12), [[1, 4]])], owner=0)
    lay(state, [((8, 11), [[1, 5]])], owner=1)
    with illegal("REDIRECT_NOT_ALLOWED"):
        play(state, 0, build((8, 11), [[2, 5]]))


def test_a_complete_link_is_not_redirected():
    state = build_turn()
    lay(state, [((8, 11), [[1, 5]]), (MICHIGAN_CITY, "town", [4])], owner=0)
    with illegal("REDIRECT_NOT_ALLOWED"):
        play(state, 0, build((8, 11), [[2, 5]]))


def test_tile_supply_runs_out():
    state = build_turn()
    state["supply"]["gentle"] = 0
    with illegal("TILE_UNAVAILABLE"):
        play(state, 0, build((8, 11), [[1, 5]]))  # edges two apart: a gentle curve
    assert ((8, 11), ((1, 5),)) not in builds_listed(state, 0)
    play(state, 0, build((8, 11), [[2, 5]]))  # a straight is still there


def test_town_disks_run_out_at_eight():
    state = build_turn()
    lay(state, [((8, 11), [[1, 5]])], owner=0)
    state["supply"]["town_disk"] = 0
    with illegal("TOWN_DISKS_EXHAUSTED"):
        play(state, 0, build(MICHIGAN_CITY, exits=[2, 4]))
    play(state, 0, build(MICHIGAN_CITY, exits=[4]))  # a one-exit town tile needs no disk


def test_the_manifest_has_136_tiles_and_8_disks():
    from service.engine import tiles

    supply = tiles.initial_supply()
    assert supply.pop("town_disk") == 8
    assert sum(supply.values()) == 136
    assert (supply["straight"], supply["gentle"], supply["tight"]) == (48, 55, 7)


# -- turn structure ------------------------------------------------------------------------------

def test_three_tiles_a_turn_then_the_turn_ends():
    state = build_turn(players=3)
    state = play(state, 0, build((8, 11), [[2, 5]]))
    state = play(state, 0, build((9, 11), [[2, 5]]))
    assert state["build"]["tiles_left"] == 1
    state = play(state, 0, build((10, 11), [[2, 5]]))
    assert state["build"]["seat"] != 0  # the next seat builds


def test_engineer_builds_four_tiles():
    state = build_turn(actions={"engineer": 0})
    assert state["build"]["tiles_left"] == 4
    for q in (8, 9, 10, 11):
        assert state["build"]["seat"] == 0
        state = play(state, 0, build((q, 11), [[2, 5]]))
    assert state["build"]["seat"] != 0
    assert state["players"][0]["cash"] == 50 - 8


def test_no_tile_beyond_the_turns_allowance():
    # A turn with no tile left but still open (an urbanizer whose map allows no tile) builds none.
    state = urbanizer()
    state["build"]["tiles_left"] = 0
    with illegal("NO_TILES_LEFT"):
        play(state, 0, build((8, 11), [[2, 5]]))
    assert {m["type"] for m in game.legal_moves(state, 0)} == {"urbanize", "end_build"}


def test_one_build_per_hex_per_turn():
    state = build_turn()
    state = play(state, 0, build((8, 11), [[2, 5]]))
    lay(state, [((9, 12), [[0, 3]])], owner=0)
    with illegal("HEX_ALREADY_BUILT"):
        play(state, 0, build((8, 11), [[2, 5], [1, 3]]))


def test_build_order_first_build_holder_then_turn_order():
    state = game_at("build", 4, turn_order=[2, 0, 3, 1], actions={"first_build": 3})
    order = []
    while state["phase"] == "build":
        order.append(state["build"]["seat"])
        state = play(state, state["build"]["seat"], {"type": "end_build"})
    assert order == [3, 2, 0, 1]


# -- ownership -------------------------------------------------------------------------------

def test_unextended_incomplete_track_goes_unowned_at_the_end_of_the_owners_next_turn():
    state = build_turn()
    lay(state, [((8, 11), [[1, 5]])], owner=0)  # incomplete, owned at the start of this turn
    state = reopen_turn(state)
    after, events = play_events(state, 0, {"type": "end_build"})
    assert owner_of(after, (8, 11)) == [None]
    assert events_of(events, "track_unowned")[0]["seat"] == 0


def test_track_built_this_turn_stays_owned_until_the_next_turn():
    state = build_turn()
    state = play(state, 0, build((8, 11), [[1, 5]]))
    state = play(state, 0, {"type": "end_build"})
    assert owner_of(state, (8, 11)) == [0]


def test_extending_incomplete_track_keeps_it_owned():
    state = build_turn()
    lay(state, [((8, 11), [[2, 5]])], owner=0)
    state = reopen_turn(state)
    state = play(state, 0, build((9, 11), [[2, 5]]))
    state = play(state, 0, {"type": "end_build"})
    assert owner_of(state, (8, 11)) == [0] and owner_of(state, (9, 11)) == [0]


def test_redirecting_alone_is_not_extending():
    state = build_turn()
    lay(state, [((8, 11), [[1, 5]])], owner=0)
    state = reopen_turn(state)
    state = play(state, 0, build((8, 11), [[2, 5]]))
    state = play(state, 0, {"type": "end_build"})
    assert owner_of(state, (8, 11)) == [None]


def test_a_complete_link_keeps_its_owner():
    state = build_turn()
    lay(state, [((8, 11), [[1, 5]]), (MICHIGAN_CITY, "town", [4])], owner=0)
    state = reopen_turn(state)
    state = play(state, 0, {"type": "end_build"})
    assert owner_of(state, (8, 11)) == [0] and owner_of(state, MICHIGAN_CITY) == [0]


def test_extending_unowned_track_takes_the_whole_route():
    state = build_turn()
    lay(state, [((6, 12), [[1, 4]])], owner=0)
    lay(state, [((8, 11), [[1, 5]])], owner=None)  # from Chicago, pointing into Michigan City
    after, events = play_events(state, 0, build(MICHIGAN_CITY, exits=[4]))
    assert owner_of(after, (8, 11)) == [0] and owner_of(after, MICHIGAN_CITY) == [0]
    assert events_of(events, "track_claimed")


# -- urbanization -----------------------------------------------------------------------------

def urbanizer() -> dict:
    return build_turn(actions={"urbanization": 0})


def test_urbanization_is_free_and_not_a_tile():
    state = urbanizer()
    after, events = play_events(state, 0, {"type": "urbanize", "hex": {"q": 9, "r": 10},
                                           "new_city": "B"})
    assert after["players"][0]["cash"] == 50
    assert after["build"]["tiles_left"] == 3
    city = next(c for c in game.view(after)["board"]["cities"] if c["new_city"] == "B")
    assert (city["name"], city["colors"], city["goods"]) == ("Michigan City", ["blue"], [])
    assert events_of(events, "city_urbanized")[0]["color"] == "blue"


def test_urbanization_comes_before_the_first_tile():
    state = urbanizer()
    state = play(state, 0, build((8, 11), [[2, 5]]))
    with illegal("URBANIZE_ALREADY"):
        play(state, 0, {"type": "urbanize", "hex": {"q": 9, "r": 10}, "new_city": "B"})


def test_only_the_urbanization_holder_urbanizes():
    with illegal("URBANIZE_NOT_HOLDER"):
        play(build_turn(), 0, {"type": "urbanize", "hex": {"q": 9, "r": 10}, "new_city": "B"})


def test_urbanize_needs_a_town_and_a_free_tile():
    state = urbanizer()
    with illegal("URBANIZE_NOT_TOWN"):
        play(state, 0, {"type": "urbanize", "hex": {"q": 8, "r": 11}, "new_city": "B"})
    state["new_cities"]["4,10"] = "B"
    with illegal("NEW_CITY_UNAVAILABLE"):
        play(state, 0, {"type": "urbanize", "hex": {"q": 9, "r": 10}, "new_city": "B"})


def test_urbanizing_gives_unowned_track_it_completes_to_the_urbanizer():
    state = urbanizer()
    lay(state, [((8, 11), [[1, 5]])], owner=None)
    lay(state, [((10, 10), [[2, 5]])], owner=1)  # seat 1's track into Michigan City's edge 2
    after = play(state, 0, {"type": "urbanize", "hex": {"q": 9, "r": 10}, "new_city": "A"})
    assert owner_of(after, (8, 11)) == [0]
    assert owner_of(after, (10, 10)) == [1]
    view = game.view(after)["board"]["links"]
    assert {tuple(sorted((s["q"], s["r"]) for s in link["stops"])) for link in view} == {
        ((7, 11), (9, 10))}


def test_urbanizing_a_town_with_track_returns_its_tile_and_keeps_links():
    state = urbanizer()
    lay(state, [((8, 11), [[1, 5]]), (MICHIGAN_CITY, "town", [4])], owner=1)
    disks = state["supply"]["town_disk"]
    after = play(state, 0, {"type": "urbanize", "hex": {"q": 9, "r": 10}, "new_city": "A"})
    assert key(MICHIGAN_CITY) not in after["towns"]
    assert after["supply"]["town_1"] == state["supply"]["town_1"] + 1
    assert after["supply"]["town_disk"] == disks
    links = game.view(after)["board"]["links"]
    assert len(links) == 1 and links[0]["owner"] == 1 and links[0]["segments"] == 1


# -- connection through unowned track: docs/rules-decisions.md base 8 ------------------------------
#
# "Later construction must ultimately reach a city through that player's track": an unowned track
# end connects new track only when the unowned route behind it runs back to a city, or to a town
# where the builder has track. Seat 0 owns (6,12), away from all of these, so no build below is a
# first tile. The builds are on plain hexes, $2 a new simple tile, $2 a redirect.

ELSEWHERE = [((6, 12), [[1, 4]])]
UNOWNED_INTO_9_12 = {  # unowned track whose open end meets (9,12) edge 0, ending...
    "at a city": [((8, 11), [[2, 5]]), ((9, 11), [[3, 5]])],  # Chicago -(8,11)-(9,11)->
    "at a town": [(MICHIGAN_CITY, "town", [3]), ((9, 11), [[0, 3]])],  # Michigan City -(9,11)->
    "nowhere": [((9, 11), [[0, 3]])],  # points at Michigan City, which has no town track
}
STRANDED = "UNOWNED_TRACK_UNCONNECTED"


def unowned_route(end: str, seat_0_at_michigan_city: bool = False,
                  seat_1_at_michigan_city: bool = False, actions: dict | None = None) -> dict:
    state = build_turn(actions=actions)
    lay(state, ELSEWHERE, owner=0)
    lay(state, UNOWNED_INTO_9_12[end], owner=None)
    for seat, there in ((0, seat_0_at_michigan_city), (1, seat_1_at_michigan_city)):
        if there:  # the complete link Chicago -(8,11)- Michigan City, exit 4
            lay(state, [((8, 11), [[1, 5]]), (MICHIGAN_CITY, "town", [4])], owner=seat)
    return state


@pytest.mark.parametrize(("end", "seat_0_there"), [("at a city", False), ("at a town", True)])
def test_extending_unowned_track_that_runs_back_to_a_city_or_the_builders_town(end, seat_0_there):
    state = unowned_route(end, seat_0_at_michigan_city=seat_0_there)
    assert builds_listed(state, 0)[((9, 12), ((0, 3),))] == 2
    after, events = play_events(state, 0, build((9, 12), [[0, 3]]))
    assert events_of(events, "track_built")[0]["cost"] == 2
    assert after["players"][0]["cash"] == 48
    assert owner_of(after, (9, 11)) == [0] and owner_of(after, (9, 12)) == [0]  # the route is taken
    assert len(events_of(events, "track_claimed")) == 1


@pytest.mark.parametrize(("end", "seat_1_there"), [
    ("at a town", False),  # Michigan City holds no track of seat 0
    ("at a town", True),   # nor does seat 1's track there count for seat 0
    ("nowhere", False),    # its far end points at a town hex with no town track
])
def test_extending_unowned_track_that_reaches_no_city_is_refused_and_not_listed(end, seat_1_there):
    state = unowned_route(end, seat_1_at_michigan_city=seat_1_there)
    with illegal(STRANDED) as info:
        play(state, 0, build((9, 12), [[0, 3]]))
    assert info.value.extra == {"hex": {"q": 9, "r": 12}, "edge": 0}
    assert [shape for (h, shape) in builds_listed(state, 0) if h == (9, 12)] == []
    verdict = game.validate(state, 0, build((9, 12), [[0, 3]]))
    assert (verdict["legal"], verdict["code"]) == (False, STRANDED)


def test_new_track_from_a_city_may_join_stranded_unowned_track_and_takes_it():
    state = build_turn()
    lay(state, ELSEWHERE, owner=0)
    lay(state, [((8, 12), [[0, 3]])], owner=None)  # meets (8,11) edge 3; points at a bare town
    with illegal(STRANDED) as info:
        play(state, 0, build((8, 11), [[1, 3]]))  # edge 1 meets Michigan City, no town track
    assert info.value.extra == {"hex": {"q": 8, "r": 11}, "edge": 3}
    assert ((8, 11), ((1, 3),)) not in builds_listed(state, 0)
    assert builds_listed(state, 0)[((8, 11), ((3, 5),))] == 2  # edge 5 meets Chicago
    after, events = play_events(state, 0, build((8, 11), [[3, 5]]))
    assert after["players"][0]["cash"] == 48
    assert owner_of(after, (8, 12)) == [0] and events_of(events, "track_claimed")


def indianapolis_between_two_unowned_routes() -> dict:
    """Indianapolis has no town track; unowned (9,13) runs from Evansville into its edge 4, and
    unowned (9,12) into its edge 5 from (8,12), where nothing is."""
    state = build_turn()
    lay(state, ELSEWHERE, owner=0)
    lay(state, [((9, 13), [[1, 3]]), ((9, 12), [[2, 5]])], owner=None)
    return state


@pytest.mark.parametrize(("exits", "cost"), [([4], 2), ([4, 5], 3)])
def test_a_town_tile_connects_through_unowned_track_from_a_city(exits, cost):
    state = indianapolis_between_two_unowned_routes()
    assert builds_listed(state, 0)[(INDIANAPOLIS, ("town", *exits))] == cost
    after = play(state, 0, build(INDIANAPOLIS, exits=exits))
    assert after["players"][0]["cash"] == 50 - cost
    assert owner_of(after, (9, 13)) == [0]
    assert owner_of(after, (9, 12)) == [0 if 5 in exits else None]


def test_a_town_tile_through_stranded_unowned_track_alone_is_refused_and_not_listed():
    state = indianapolis_between_two_unowned_routes()
    with illegal(STRANDED) as info:
        play(state, 0, build(INDIANAPOLIS, exits=[5]))
    assert info.value.extra == {"hex": {"q": 10, "r": 12}, "edge": 5}
    assert (INDIANAPOLIS, ("town", 5)) not in builds_listed(state, 0)


def test_a_town_where_the_builder_has_track_takes_a_stranded_route_it_meets():
    state = build_turn()
    # Seat 0's link Evansville -(9,13)- Indianapolis; unowned (9,12) meets Indianapolis' edge 5.
    lay(state, [((9, 13), [[1, 3]]), (INDIANAPOLIS, "town", [4])], owner=0)
    lay(state, [((9, 12), [[2, 5]])], owner=None)
    assert builds_listed(state, 0)[(INDIANAPOLIS, ("town", 4, 5))] == 3
    after = play(state, 0, build(INDIANAPOLIS, exits=[4, 5]))
    assert after["players"][0]["cash"] == 47  # a town upgrade
    assert owner_of(after, (9, 12)) == [0]


def test_redirecting_unowned_track_that_runs_back_to_a_city():
    state = build_turn()
    lay(state, ELSEWHERE, owner=0)
    lay(state, [((8, 11), [[3, 5]]), ((8, 12), [[0, 2]])], owner=None)  # Chicago -(8,11)-(8,12)->
    assert builds_listed(state, 0)[((8, 12), ((0, 4),))] == 2
    after, events = play_events(state, 0, build((8, 12), [[0, 4]]))
    built = events_of(events, "track_built")[0]
    assert (built["cost"], built["kind"]) == (2, "redirect")
    assert after["players"][0]["cash"] == 48
    assert owner_of(after, (8, 12)) == [0] and owner_of(after, (8, 11)) == [0]


def test_redirecting_stranded_unowned_track_needs_a_connection_of_its_own():
    state = build_turn()
    lay(state, ELSEWHERE, owner=0)
    # (8,11) points at Michigan City (no town track) and joins (8,12), which points at (9,12).
    lay(state, [((8, 11), [[1, 3]]), ((8, 12), [[0, 2]])], owner=None)
    with illegal(STRANDED) as info:
        play(state, 0, build((8, 12), [[0, 4]]))  # keeps edge 0, which meets the stranded route
    assert info.value.extra == {"hex": {"q": 8, "r": 12}, "edge": 0}
    assert [shape for (h, shape) in builds_listed(state, 0) if h == (8, 12)] == []
    # Turned into Chicago, the redirected track connects, and the route is the builder's.
    assert builds_listed(state, 0)[((8, 11), ((3, 5),))] == 2
    after, events = play_events(state, 0, build((8, 11), [[3, 5]]))
    assert events_of(events, "track_built")[0]["kind"] == "redirect"
    assert after["players"][0]["cash"] == 48
    assert owner_of(after, (8, 11)) == [0] and owner_of(after, (8, 12)) == [0]


@pytest.mark.parametrize("end", ["at a town", "nowhere"])
def test_urbanizing_the_town_a_stranded_route_runs_to_makes_it_a_connection(end):
    state = unowned_route(end, actions={"urbanization": 0})
    assert ((9, 12), ((0, 3),)) not in builds_listed(state, 0)
    state = play(state, 0, {"type": "urbanize", "hex": {"q": 9, "r": 10}, "new_city": "A"})
    assert owner_of(state, (9, 11)) == [None]  # still incomplete: nobody takes it yet
    assert builds_listed(state, 0)[((9, 12), ((0, 3),))] == 2
    after = play(state, 0, build((9, 12), [[0, 3]]))
    assert after["players"][0]["cash"] == 48
    assert owner_of(after, (9, 11)) == [0]
