"""Berlin, the Wall map: 2 tiles a turn, $3 a hex, the wall of 19 discs, Engineer's remove_wall,
the occupation cubes and the fall of the wall. Rules: docs/rules-decisions.md, Expansion maps:
Berlin (the board is reconstructed: "Iraq, Berlin"); service/engine/variants/berlin.py.

Fixtures on the reconstructed map (q, r); disc n is special.wall_edges id n (a West, b East):
    Reichstag (8,9) W blue -(8,8)- Pankow (9,7) E red, across disc 1 ((8,8)|(9,7))
    disc 2 ((8,8)|(9,8)) has no city across
    Pankow -(10,7)- Prenzlauer Berg (10,8) town -(11,8)- East Berlin (11,9) E red
        -(12,9)- Ostbahnhof (12,10) E yellow
    Bahnhof Zoo (5,12) W yellow -(6,12)- West Berlin (6,13) W blue -(7,13)- Tempelhof (8,13) W blue
"""

from __future__ import annotations

import orjson
import pytest

from service.engine import game
from service.engine import rules_data as R
from service.engine.hexgrid import as_dict
from service.engine.phases import scoring
from service.engine.state import cubes_in_play
from service.engine.variants import rules_for
from tests.engine.board import build_move as build
from tests.engine.board import deliver_move as deliver
from tests.engine.board import key, lay, link_between
from tests.engine.helpers import events_of, game_at, illegal, new, play, play_events, skip_to
from tests.engine.test_random_play import play_checked

MAP = "berlin"
REICHSTAG, PANKOW, PRENZLAUER_BERG = (8, 9), (9, 7), (10, 8)
EAST_BERLIN, OSTBAHNHOF = (11, 9), (12, 10)
ZOO, WEST_BERLIN, TEMPELHOF = (5, 12), (6, 13), (8, 13)
DISC_1 = {"a": {"q": 8, "r": 8}, "b": {"q": 9, "r": 7}}
DISC_2 = {"a": {"q": 8, "r": 8}, "b": {"q": 9, "r": 8}}

REICHSTAG_TO_PANKOW = [((8, 8), [[1, 3]])]
PANKOW_TO_PRENZLAUER_BERG = [((10, 7), [[3, 5]]), (PRENZLAUER_BERG, "town", [0])]
PRENZLAUER_BERG_TO_EAST_BERLIN = [(PRENZLAUER_BERG, "town", [2]), ((11, 8), [[3, 5]])]
EAST_BERLIN_TO_OSTBAHNHOF = [((12, 9), [[3, 5]])]
ZOO_TO_WEST_BERLIN = [((6, 12), [[3, 5]])]
WEST_BERLIN_TO_TEMPELHOF = [((7, 13), [[2, 5]])]
TOTAL_CUBES = 96


def h(x) -> dict:
    return as_dict(x)


def remove_wall(edge: dict) -> dict:
    return {"type": "remove_wall", "edge": edge}



def builder(seat: int = 0, actions: dict | None = None, cash: int = 50) -> dict:
    taken = {"first_build": seat, **(actions or {})}
    return game_at("build", 3, map_id=MAP, actions=taken, seats={seat: {"cash": cash}})


def mover(seat: int = 0, loco: int = 3, cubes: dict | None = None) -> dict:
    """Move Goods with `seat` moving first; every city holds exactly `cubes`."""
    state = game_at("move_goods", 3, map_id=MAP, actions={"first_move": seat},
                    seats={seat: {"loco": loco}})
    for k in state["cubes"]:
        state["cubes"][k] = []
    for where, colours in (cubes or {}).items():
        state["cubes"][key(where)] = list(colours)
    return state


def listed(state: dict, seat: int, kind: str) -> list[dict]:
    return [m for m in game.legal_moves(state, seat) if m["type"] == kind]


def east_chain(state: dict) -> list[str]:
    lay(state, PANKOW_TO_PRENZLAUER_BERG + PRENZLAUER_BERG_TO_EAST_BERLIN
        + EAST_BERLIN_TO_OSTBAHNHOF, owner=1)
    return [link_between(state, PANKOW, PRENZLAUER_BERG),
            link_between(state, PRENZLAUER_BERG, EAST_BERLIN),
            link_between(state, EAST_BERLIN, OSTBAHNHOF)]


# -- players, tiles, costs --------------------------------------------------------------------------

def test_berlin_takes_3_to_6_players_with_the_base_round_table() -> None:
    for players, rounds in R.ROUNDS_BY_PLAYERS.items():
        state = new(players, map_id=MAP)
        assert state["last_round"] == rounds
        assert state["variant"]["wall_falls"] == rounds - 1
    for players in (2, 7):
        with pytest.raises(game.SetupError) as info:
            game.new_game(MAP, [f"P{i}" for i in range(players)], "x")
        assert info.value.code == "PLAYER_COUNT"


def test_two_tiles_a_turn_and_three_for_the_engineer() -> None:
    state = builder(seat=0, actions={"engineer": 1})
    assert state["build"]["tiles_left"] == 2
    state = play(state, 0, build((6, 12), [[3, 5]]))
    state = play(state, 0, build((7, 13), [[2, 5]]))
    assert state["build"]["seat"] == 1  # seat 0's turn ended after 2 tiles
    assert state["build"]["tiles_left"] == 3


def test_laying_costs_3_on_every_non_town_hex() -> None:
    rules = rules_for(MAP)
    state = builder()
    for hex_ in ((6, 12), (8, 8), (10, 9)):  # plain, plain, river
        assert [rules.new_tile_cost(state, hex_, kind)
                for kind in ("simple", "coexisting", "crossing")] == [3, 3, 3]
    state, events = play_events(state, 0, build((6, 12), [[3, 5]]))
    assert events_of(events, "track_built")[0]["cost"] == 3
    assert state["players"][0]["cash"] == 47
    builds = listed(state, 0, "build")
    assert builds and {m["cost"] for m in builds if "tracks" in m} == {3}


def test_towns_cost_as_normal() -> None:
    state = builder()
    lay(state, [((10, 7), [[3, 5]])], owner=0)  # from Pankow toward Prenzlauer Berg
    state, events = play_events(state, 0, build(PRENZLAUER_BERG, exits=[0]))
    assert events_of(events, "track_built")[0]["cost"] == 1 + 1  # $1 + $1 per exit
    assert state["players"][0]["cash"] == 48


def test_replacing_and_redirecting_track_costs_3() -> None:
    rules = rules_for(MAP)
    state = builder()
    assert rules.replace_cost(state, (6, 12), 2) == 3
    assert rules.replace_cost(state, (6, 12), 3) == 3
    # A redirect of seat 0's dangling track from West Berlin: (6,12) turns from NE to NW (Zoo).
    lay(state, [((6, 12), [[1, 3]])], owner=0)
    state, events = play_events(state, 0, build((6, 12), [[3, 5]]))
    built = events_of(events, "track_built")[0]
    assert (built["kind"], built["cost"]) == ("redirect", 3)
    # An upgrade to a crossing ($3 in the base rules) and to another complex tile ($2): both $3.
    state = builder()
    lay(state, [((6, 12), [[3, 5]]), ((7, 11), [[1, 4]]), ((5, 13), [[1, 4]])], owner=0)
    upgrades = [m for m in listed(state, 0, "build") if m["hex"] == h((6, 12))]
    assert upgrades and {m["cost"] for m in upgrades} == {3}


# -- the wall ---------------------------------------------------------------------------------------

def test_the_wall_is_19_discs_standing_at_setup() -> None:
    state = new(4, map_id=MAP)
    assert state["variant"]["wall"] == list(range(1, 20))
    wall = game.view(state)["board"]["wall"]
    assert len(wall["discs"]) == 19 and wall["falls_in_round"] == 7 and not wall["fallen"]
    assert wall["discs"][0] == {"id": 1, **DISC_1}


def test_no_track_crosses_a_wall_disc() -> None:
    state = builder()
    with illegal("INTO_IMPASSABLE"):
        play(state, 0, build((8, 8), [[2, 3]]))  # Reichstag toward (9,8), across disc 2
    assert not [m for m in listed(state, 0, "build")
                if m["hex"] == h((8, 8)) and 2 in sum(m["tracks"], [])]


def test_track_toward_the_wall_only_where_a_city_lies_across() -> None:
    state = builder()
    on_hex = [m["tracks"] for m in listed(state, 0, "build") if m["hex"] == h((8, 8))]
    assert [[1, 3]] in on_hex  # toward Pankow, across disc 1
    assert not [t for t in on_hex if 2 in sum(t, [])]  # never toward disc 2: no city across
    state = play(state, 0, build((8, 8), [[1, 3]]))  # Reichstag to Pankow, across disc 1
    assert link_between(state, REICHSTAG, PANKOW)


def test_a_link_at_a_wall_disc_is_complete_scores_and_keeps_its_owner() -> None:
    state = builder()
    state = play(state, 0, build((8, 8), [[1, 3]]))
    state = play(state, 0, {"type": "end_build"})
    assert state["track"][key((8, 8))] == [[1, 3, 0]]  # not expired: the link is complete
    route = next(r for r in rules_for(MAP).network(state).links() if set(r.stops) == {REICHSTAG,
                                                                                       PANKOW})
    assert route.owner == 0 and route.complete
    scores = scoring.score(state, rules_for(MAP))
    assert next(s for s in scores if s["seat"] == 0)["track_points"] == 1


def test_a_link_at_a_wall_disc_carries_nothing_while_the_disc_stands() -> None:
    state = mover(cubes={REICHSTAG: ["red"]})
    lay(state, REICHSTAG_TO_PANKOW, owner=2)
    link = link_between(state, REICHSTAG, PANKOW)
    with illegal("ROUTE_BLOCKED"):
        play(state, 0, deliver(REICHSTAG, "red", [link]))
    assert not listed(state, 0, "deliver")
    state["variant"]["wall"].remove(1)  # disc 1 removed by an Engineer
    state, events = play_events(state, 0, deliver(REICHSTAG, "red", [link]))
    assert events_of(events, "good_delivered")[0]["income"] == {"2": 1}


def test_engineer_may_remove_one_wall_disc_instead_of_a_tile() -> None:
    state = builder(seat=0, actions={"engineer": 0})
    offered = listed(state, 0, "remove_wall")
    assert len(offered) == 19 and offered[0] == remove_wall(DISC_1)
    state, events = play_events(state, 0, remove_wall(DISC_1))
    assert events_of(events, "wall_removed") == [
        {"type": "wall_removed", "seat": 0, "disc": 1, "edge": DISC_1}]
    assert 1 not in state["variant"]["wall"] and len(state["variant"]["wall"]) == 18
    assert state["build"]["tiles_left"] == 2  # it took one of the 3 tile slots
    assert not listed(state, 0, "remove_wall")  # once
    with illegal("REMOVE_WALL_NOT_ALLOWED"):
        play(state, 0, remove_wall(DISC_2))
    state = play(state, 0, build((6, 12), [[3, 5]]))
    state = play(state, 0, build((7, 13), [[2, 5]]))
    assert state["build"]["seat"] != 0  # 2 tiles and a disc: the turn is over


def test_engineer_removes_a_disc_after_two_tiles() -> None:
    state = builder(seat=0, actions={"engineer": 0})
    state = play(state, 0, build((6, 12), [[3, 5]]))
    state = play(state, 0, build((7, 13), [[2, 5]]))
    assert listed(state, 0, "remove_wall")
    state = play(state, 0, remove_wall(DISC_2))
    assert state["build"]["seat"] != 0 and 2 not in state["variant"]["wall"]


def test_only_the_engineer_holder_removes_a_wall_disc() -> None:
    state = builder(seat=0, actions={"engineer": 1})
    assert not listed(state, 0, "remove_wall")
    with illegal("REMOVE_WALL_NOT_ALLOWED"):
        play(state, 0, remove_wall(DISC_1))


def test_remove_wall_names_a_standing_disc_west_hex_first() -> None:
    state = builder(seat=0, actions={"engineer": 0})
    with illegal("REMOVE_WALL_NOT_ALLOWED"):
        play(state, 0, remove_wall({"a": DISC_1["b"], "b": DISC_1["a"]}))
    with illegal("REMOVE_WALL_NOT_ALLOWED"):
        play(state, 0, remove_wall({"a": {"q": 6, "r": 12}, "b": {"q": 6, "r": 13}}))
    with illegal("BAD_MOVE"):
        play(state, 0, remove_wall({"a": DISC_1["a"]}))
    state["variant"]["wall"].remove(1)
    with illegal("REMOVE_WALL_NOT_ALLOWED"):
        play(state, 0, remove_wall(DISC_1))


def test_track_crosses_the_wall_where_a_disc_was_removed() -> None:
    state = builder(seat=0, actions={"engineer": 0})
    with illegal("INTO_IMPASSABLE"):
        play(state, 0, build((8, 8), [[2, 3]]))
    state = play(state, 0, remove_wall(DISC_2))
    state, events = play_events(state, 0, build((8, 8), [[2, 3]]))
    assert events_of(events, "track_built")[0]["cost"] == 3


# -- the occupation cubes ---------------------------------------------------------------------------

def test_setup_replaces_blue_cubes_in_the_east_and_red_cubes_in_the_west() -> None:
    rules = rules_for(MAP)
    for n in range(30):
        state = new(3 + n % 4, map_id=MAP, seed=f"occupation-{n}")
        for city in rules.map.cities:
            cubes = state["cubes"][key(city)]
            assert len(cubes) == 2
            banned = "blue" if rules.side[city] == "east" else "red"
            assert banned not in cubes, (n, city, cubes)
        assert cubes_in_play(state) + sum(state["bag"].values()) == TOTAL_CUBES


def test_setup_replacement_puts_the_cube_back_and_draws_another_colour() -> None:
    rules = rules_for(MAP)
    state = new(3, map_id=MAP)
    state["cubes"][key(EAST_BERLIN)] = ["blue", "yellow"]
    state["cubes"][key(ZOO)] = ["red", "red"]
    state["bag"]["blue"] -= 1
    state["bag"]["red"] -= 2
    state["bag"]["yellow"] -= 1
    state["bag"]["purple"] += 4  # the four cubes set by hand came from elsewhere
    bag = sum(state["bag"].values())
    events: list = []
    rules.setup(state, events)
    assert state["cubes"][key(EAST_BERLIN)][1] == "yellow"
    assert state["cubes"][key(EAST_BERLIN)][0] != "blue"
    assert "red" not in state["cubes"][key(ZOO)]
    assert sum(state["bag"].values()) == bag
    assert [(e["hex"], e["removed"]) for e in events_of(events, "cube_replaced")] == [
        (h(EAST_BERLIN), "blue"), (h(ZOO), "red"), (h(ZOO), "red")]


def test_an_east_city_holding_a_red_cube_lets_only_red_cubes_pass_through() -> None:
    state = mover(cubes={PANKOW: ["yellow"], EAST_BERLIN: ["red"]})
    route = east_chain(state)
    with illegal("ROUTE_BLOCKED"):
        play(state, 0, deliver(PANKOW, "yellow", route))  # through East Berlin to Ostbahnhof
    assert not [m for m in listed(state, 0, "deliver") if m["color"] == "yellow"]
    state["cubes"][key(EAST_BERLIN)] = ["yellow"]  # no red cube: the city is open again
    play(state, 0, deliver(PANKOW, "yellow", route))


def test_an_east_city_holding_a_red_cube_takes_only_red_cubes() -> None:
    state = mover(cubes={EAST_BERLIN: ["yellow", "red"], OSTBAHNHOF: ["red"]})
    route = east_chain(state)
    with illegal("ROUTE_BLOCKED"):
        play(state, 0, deliver(EAST_BERLIN, "yellow", route[2:]))
    # A cube may still start from a city holding a red cube: the red one goes to Pankow.
    state = play(state, 0, deliver(EAST_BERLIN, "red", route[1::-1]))
    assert state["cubes"][key(EAST_BERLIN)] == ["yellow"]


def test_a_west_city_holding_a_blue_cube_lets_only_blue_cubes_in() -> None:
    state = mover(cubes={TEMPELHOF: ["yellow", "blue"], ZOO: ["blue"], WEST_BERLIN: ["blue"]})
    lay(state, ZOO_TO_WEST_BERLIN + WEST_BERLIN_TO_TEMPELHOF, owner=1)
    route = [link_between(state, TEMPELHOF, WEST_BERLIN), link_between(state, WEST_BERLIN, ZOO)]
    with illegal("ROUTE_BLOCKED"):
        play(state, 0, deliver(TEMPELHOF, "yellow", route))  # through West Berlin, into Zoo
    state["cubes"][key(WEST_BERLIN)] = []
    with illegal("ROUTE_BLOCKED"):
        play(state, 0, deliver(TEMPELHOF, "yellow", route))  # Zoo holds a blue cube
    # Blue cubes go where they like: from Tempelhof, which holds one, to West Berlin.
    play(state, 0, deliver(TEMPELHOF, "blue", route[:1]))
    state["cubes"][key(ZOO)] = []
    state, events = play_events(state, 0, deliver(TEMPELHOF, "yellow", route))
    assert events_of(events, "good_delivered")[0]["to"] == h(ZOO)


def test_the_wall_falls_when_the_round_marker_reaches_the_round_before_the_last() -> None:
    state = new(3, map_id=MAP)  # 10 rounds: the wall falls at the start of round 9
    for seat in range(3):
        state["players"][seat]["cash"] = 500
    state["round"] = 8
    events: list = []
    state = skip_to(state, "issue_shares", round=8, events=events)
    assert state["variant"]["wall"] and not events_of(events, "wall_fallen")
    state = skip_to(state, "issue_shares", round=9, events=events)
    assert events_of(events, "wall_fallen") == [
        {"type": "wall_fallen", "round": 9, "discs": list(range(1, 20))}]
    assert state["variant"] == {"wall": [], "wall_falls": 9, "fallen": True}
    board = game.view(state)["board"]["wall"]
    assert board["discs"] == [] and board["fallen"]


def test_after_the_fall_no_wall_and_no_occupation_blocking() -> None:
    state = mover(cubes={PANKOW: ["yellow"], EAST_BERLIN: ["red"], REICHSTAG: ["red"]})
    route = east_chain(state)
    lay(state, REICHSTAG_TO_PANKOW, owner=2)
    state["variant"]["wall"] = []
    state["variant"]["fallen"] = True
    play(state, 0, deliver(PANKOW, "yellow", route))
    play(state, 0, deliver(REICHSTAG, "red", [link_between(state, REICHSTAG, PANKOW)]))
    state = builder(seat=0, actions={"engineer": 0})
    state["variant"]["wall"] = []
    state["variant"]["fallen"] = True
    assert not listed(state, 0, "remove_wall")
    play(state, 0, build((8, 8), [[2, 3]]))


# -- random play ------------------------------------------------------------------------------------

@pytest.mark.parametrize("players", [3, 4, 5, 6])
@pytest.mark.parametrize("seed", range(5))  # 20 games, 2,674 decisions
def test_random_berlin_game_keeps_invariants_and_replays(players: int, seed: int) -> None:
    final, record = play_checked(players, 7000 + seed * 10 + players,
                                 check_all_every=20 if seed < 2 else 0, map_id=MAP)
    assert final["phase"] == "finished"
    replayed = game.replay(game.record_header(final), record)
    assert orjson.dumps(replayed) == orjson.dumps(final)
