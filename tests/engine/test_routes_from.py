"""Network.routes_from: the routes of a network traced from another's, again only where they read
hexes whose track differs, are the routes traced anew; Network.changed_on: a network made from
another's on those hexes is the network made anew."""

from __future__ import annotations

import random

import orjson
import pytest

from service.engine import game
from service.engine.hexgrid import parse_key
from service.engine.network import Network
from service.engine.playout import play_random_game
from service.engine.variants import rules_for
from tests.engine import board


def _states(map_id: str, seed: str) -> list[dict]:
    states: list[dict] = []
    play_random_game(map_id, 3, seed, random.Random(seed), cash=80,
                     on_move=lambda *args: states.append(orjson.loads(orjson.dumps(args[4]))))
    return states


def _changed(a: dict, b: dict) -> set:
    return {parse_key(k) for part in ("track", "towns")
            for k in a[part].keys() | b[part].keys() if a[part].get(k) != b[part].get(k)}


def _assert_same_network(made: Network, anew: Network) -> None:
    assert made.owner == anew.owner and made.end_index == anew.end_index
    assert {h: set(ps) for h, ps in made.by_hex.items() if ps} == {
        h: set(ps) for h, ps in anew.by_hex.items() if ps}
    assert (made.cities, made.towns) == (anew.cities, anew.towns)
    assert made.one_route_each() == anew.one_route_each()


@pytest.mark.parametrize("map_id", ["rust_belt", "iraq", "berlin", "holland", "madagascar"])
def test_routes_traced_from_another_network_are_the_routes_traced_anew(map_id: str) -> None:
    rules = rules_for(map_id)
    states = _states(map_id, f"routes-from-{map_id}")
    shuffled = states[:]
    random.Random(map_id).shuffle(shuffled)
    pairs = [*zip(states, states[1:], strict=False), *zip(states, shuffled, strict=True)]
    same_stops = 0
    for before, after in pairs:
        old, new = rules.network(before), rules.network(after)
        same_stops_here = old.cities == new.cities and old.towns == new.towns
        same_stops += same_stops_here
        assert new.routes_from(old, _changed(before, after)) == rules.network(after).routes()
        if same_stops_here:
            _assert_same_network(old.changed_on(after, _changed(before, after)), rules.network(after))
    assert same_stops > len(states) // 2  # most pairs trace again only some routes


def test_a_piece_that_may_be_on_two_routes_has_all_traced_anew() -> None:
    """Plain track through a town: a walk from outside stops at it, a walk from it goes on."""
    state = board.lay(game.new_game("rust_belt", ["A", "B", "C"], "two-routes"), board.chain(1), 0)
    before = orjson.loads(orjson.dumps(state))
    board.lay(state, [(board.FORT_WAYNE, [[2, 5]]), ((10, 10), [[2, 5]])], 1)
    rules = rules_for("rust_belt")
    old, new = rules.network(before), rules.network(state)
    assert old.one_route_each() and not new.one_route_each()
    assert new.routes_from(old, _changed(before, state)) == rules.network(state).routes()
    _assert_same_network(old.changed_on(state, _changed(before, state)), new)
