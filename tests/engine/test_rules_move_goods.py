"""Move Goods: routes over complete links, capacity, the first city of the cube's colour, income
to link owners, the locomotive upgrade. Rules: docs/rules-decisions.md base 17 and 23;
service/engine/phases/move_goods.py."""

from __future__ import annotations

from service.engine import game
from tests.engine.board import (
    CHICAGO,
    CINCINNATI,
    EVANSVILLE,
    FORT_WAYNE,
    INDIANAPOLIS,
    MICHIGAN_CITY,
    chain,
    key,
    lay,
    link_between,
)
from tests.engine.board import deliver_move as deliver
from tests.engine.helpers import events_of, game_at, illegal, play, play_events


def mover(loco: int = 3, seat: int = 0, players: int = 3, cubes: dict | None = None) -> dict:
    """Seat `seat` moves first (First Move) with a level-`loco` locomotive; cities hold `cubes`."""
    state = game_at("move_goods", players, actions={"first_move": seat},
                    seats={seat: {"loco": loco}})
    for k in state["cubes"]:
        state["cubes"][k] = []
    for h, colours in (cubes or {}).items():
        state["cubes"][key(h)] = list(colours)
    return state


def chain_links(state: dict, count: int = 3) -> list[str]:
    """The ids of the first `count` links of the chain, from Chicago."""
    stops = [CHICAGO, MICHIGAN_CITY, FORT_WAYNE, CINCINNATI, INDIANAPOLIS, EVANSVILLE]
    return [link_between(state, a, b) for a, b in zip(stops[:count], stops[1:count + 1], strict=True)]


def listed_deliveries(state: dict, seat: int) -> list[dict]:
    return [m for m in game.legal_moves(state, seat) if m["type"] == "deliver"]


def test_delivery_raises_each_used_links_owner_income_by_one_and_charges_no_toll():
    state = mover(cubes={CHICAGO: ["blue"]})
    lay(state, chain(upto=1), owner=1)
    lay(state, [p for p in chain(upto=2)[2:]], owner=2)
    lay(state, chain(upto=3)[5:], owner=1)
    l1, l2, l3 = chain_links(state)
    cash = [p["cash"] for p in state["players"]]
    after, events = play_events(state, 0, deliver(CHICAGO, "blue", [l1, l2, l3]))
    assert [p["income"] for p in after["players"]] == [0, 2, 1]
    assert [p["cash"] for p in after["players"]] == cash
    assert events_of(events, "good_delivered")[0]["income"] == {"1": 2, "2": 1}
    listed = {tuple(m["links"]): m["income"] for m in listed_deliveries(state, 0)}
    assert listed[(l1, l2, l3)] == {"1": 2, "2": 1}


def test_delivered_cube_goes_back_to_the_bag():
    state = mover(cubes={CHICAGO: ["blue", "red"]})
    lay(state, chain(upto=3), owner=0)
    bag = state["bag"]["blue"]
    after = play(state, 0, deliver(CHICAGO, "blue", chain_links(state)))
    assert after["bag"]["blue"] == bag + 1
    assert after["cubes"][key(CHICAGO)] == ["red"]


def test_a_cube_must_stop_at_the_first_city_of_its_colour():
    state = mover(loco=6, cubes={CHICAGO: ["blue"]})
    lay(state, chain(upto=5), owner=0)
    ids = chain_links(state, 5)
    with illegal("PASSES_OWN_COLOUR"):
        play(state, 0, deliver(CHICAGO, "blue", ids))  # through Cincinnati on to Evansville
    routes = [m["links"] for m in listed_deliveries(state, 0)]
    assert routes == [ids[:3]]
    after = play(state, 0, deliver(CHICAGO, "blue", ids[:3]))
    assert after["players"][0]["income"] == 3


def test_capacity_counts_links_not_hexes():
    state = mover(loco=1, cubes={CHICAGO: ["blue"]})
    # One link of four tiles, Chicago straight east to Cincinnati.
    lay(state, [((q, 11), [[2, 5]]) for q in (8, 9, 10, 11)], owner=0)
    link = link_between(state, CHICAGO, CINCINNATI)
    after = play(state, 0, deliver(CHICAGO, "blue", [link]))
    assert after["players"][0]["income"] == 1


def test_a_route_longer_than_the_locomotive_is_refused():
    state = mover(loco=2, cubes={CHICAGO: ["blue"]})
    lay(state, chain(upto=3), owner=0)
    with illegal("ROUTE_TOO_LONG") as info:
        play(state, 0, deliver(CHICAGO, "blue", chain_links(state)))
    assert info.value.extra == {"links": 3, "locomotive": 2}
    assert listed_deliveries(state, 0) == []


def test_no_city_or_town_is_visited_twice():
    state = mover(loco=3, cubes={CHICAGO: ["blue"]})
    lay(state, chain(upto=3), owner=0)
    l1 = chain_links(state, 1)[0]
    with illegal("REVISITS_STOP"):
        play(state, 0, deliver(CHICAGO, "blue", [l1, l1]))


def test_only_complete_links_carry_goods():
    state = mover(cubes={CHICAGO: ["blue"]})
    lay(state, chain(upto=2)[:3], owner=0)  # Michigan City -> (10,10), Fort Wayne not built
    with illegal("NO_SUCH_LINK"):
        play(state, 0, deliver(CHICAGO, "blue", [chain_links(state, 1)[0], "10,10,5"]))


def test_the_route_must_join_up_and_end_at_a_city_of_the_colour():
    state = mover(cubes={CHICAGO: ["blue", "yellow"]})
    lay(state, chain(upto=3), owner=0)
    l1, l2, l3 = chain_links(state)
    with illegal("ROUTE_BROKEN"):
        play(state, 0, deliver(CHICAGO, "blue", [l2, l3]))
    with illegal("WRONG_DESTINATION"):
        play(state, 0, deliver(CHICAGO, "blue", [l1, l2]))  # ends at a town
    with illegal("WRONG_DESTINATION"):
        play(state, 0, deliver(CHICAGO, "yellow", [l1, l2, l3]))  # Cincinnati is blue
    with illegal("NO_CUBE"):
        play(state, 0, deliver(CHICAGO, "red", [l1, l2, l3]))


def test_towns_and_other_colour_cities_are_passed_through():
    state = mover(loco=5, cubes={CHICAGO: ["purple"]})
    lay(state, chain(upto=5), owner=0)
    state["cubes"][key(EVANSVILLE)] = []
    # Evansville is blue, so a purple cube has nowhere to go on this chain...
    assert listed_deliveries(state, 0) == []
    # ...and a red cube from Evansville passes Indianapolis, blue Cincinnati and two towns.
    state["cubes"][key(EVANSVILLE)] = ["red"]
    routes = [m["links"] for m in listed_deliveries(state, 0)]
    assert routes == [chain_links(state, 5)[::-1]]


def test_an_unowned_link_pays_nobody():
    state = mover(cubes={CHICAGO: ["blue"]})
    lay(state, chain(upto=3), owner=None)
    after, events = play_events(state, 0, deliver(CHICAGO, "blue", chain_links(state)))
    assert [p["income"] for p in after["players"]] == [0, 0, 0]
    assert events_of(events, "good_delivered")[0]["income"] == {}


def test_locomotive_upgrade_once_per_phase():
    state = game_at("move_goods", 3, turn_order=[0, 1, 2], seats={0: {"loco": 2}})
    state = play(state, 0, {"type": "upgrade_locomotive"})
    assert state["players"][0]["loco"] == 3
    state = play(state, 1, {"type": "pass"})
    state = play(state, 2, {"type": "pass"})
    assert state["move_goods"]["round"] == 2
    assert {"type": "upgrade_locomotive"} not in game.legal_moves(state, 0)
    with illegal("LOCOMOTIVE_UPGRADED"):
        play(state, 0, {"type": "upgrade_locomotive"})


def test_locomotive_never_above_six():
    state = game_at("move_goods", 3, turn_order=[0, 1, 2], seats={0: {"loco": 6}})
    assert {"type": "upgrade_locomotive"} not in game.legal_moves(state, 0)
    with illegal("LOCOMOTIVE_MAX"):
        play(state, 0, {"type": "upgrade_locomotive"})


def test_two_rounds_first_move_holder_first_in_both():
    state = game_at("move_goods", 4, turn_order=[2, 0, 3, 1], actions={"first_move": 3})
    order = []
    while state["phase"] == "move_goods":
        seat = game.active_seat(state)
        order.append((state["move_goods"]["round"], seat))
        state = play(state, seat, {"type": "pass"})
    assert order == [(1, 3), (1, 2), (1, 0), (1, 1), (2, 3), (2, 2), (2, 0), (2, 1)]
