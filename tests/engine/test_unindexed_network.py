"""The build listing's network without its indexes (UnindexedNetwork) and its reading of the
state's track by rank (build._beyond): the same answers as the network made whole."""

from __future__ import annotations

import random

import orjson
import pytest

from service.engine import game, words
from service.engine.network import Network, UnindexedNetwork
from service.engine.phases import build
from service.engine.playout import play_random_game
from service.engine.variants import rules_for
from tests.engine import board


def _states(map_id: str, seed: str) -> list[dict]:
    states: list[dict] = []
    play_random_game(map_id, 3, seed, random.Random(seed), cash=80,
                     on_move=lambda *args: states.append(orjson.loads(orjson.dumps(args[4]))))
    return states


def _track_around(state: dict, rules, net: Network) -> build.TrackAround:
    lm = build._listing_map(rules.map)
    return build._track_around(state, lm, net, 0, build.stops_made(net), None)


@pytest.mark.parametrize("map_id", ["rust_belt", "iraq", "berlin", "holland", "madagascar"])
def test_an_unindexed_network_answers_as_the_whole_one(map_id: str) -> None:
    rules = rules_for(map_id)
    for state in _states(map_id, f"unindexed-{map_id}")[::7]:
        whole, lazy = rules.network(state), rules.network(state, unindexed=True)
        assert isinstance(lazy, UnindexedNetwork)
        assert (lazy.cities, lazy.towns) == (whole.cities, whole.towns)
        for seat in range(len(state["players"])):
            assert lazy.owns_track(seat) == whole.owns_track(seat)
        assert "end_index" not in vars(lazy)  # owns_track read the state, not the indexes
        assert (lazy.owner, lazy.end_index, lazy.by_hex) == (
            whole.owner, whole.end_index, whole.by_hex)
        assert lazy.routes() == whole.routes()


def _as_listed(end, lm: build.ListingMap) -> object:
    if end is None:
        return None
    if end.kind == "stop":
        return lm.rank.get(end.hex, end.hex)
    return build._CYCLE if end.kind == "cycle" else build._OPEN


def _every_end_beyond(state: dict, map_id: str) -> int:
    """Checks build._beyond against net.end_beyond at every edge of every hex of the map on
    which track might be laid; returns how many ends it told."""
    rules = rules_for(map_id)
    net = rules.network(state, unindexed=True)
    track = _track_around(state, rules, net)
    lm, whole = track.map, rules.network(state)
    for r, h in enumerate(lm.hexes):
        for edge in range(6):
            told = build._beyond(net, track, r, h, edge, {})
            assert told == _as_listed(whole.end_beyond(h, edge, {}), lm), (h, edge)
    return len(lm.hexes) * 6


@pytest.mark.parametrize("map_id", ["rust_belt", "iraq", "berlin"])
def test_the_listing_tells_the_end_beyond_each_edge_as_the_network_walks_it(map_id: str) -> None:
    states = _states(map_id, f"beyond-{map_id}")
    assert sum(_every_end_beyond(state, map_id) for state in states[::5])


def test_track_held_as_no_tile_holds_it_is_walked() -> None:
    """Two tracks at one edge of a hex, and town exits off a town: the state's track by rank
    cannot tell which piece a walk follows, the network's index can."""
    state = board.lay(game.new_game("rust_belt", ["A", "B", "C"], "unsure"), board.chain(1), 0)
    k, tracks = next(iter(state["track"].items()))
    a, b, owner = tracks[0]
    tracks.append([a, (b + 1) % 6 if (b + 1) % 6 != a else (b + 2) % 6, owner])
    plain = next(h for h in build._listing_map(rules_for("rust_belt").map).keys
                 if h not in state["track"] and h not in state["towns"])
    state["towns"][plain] = [[0, None]]
    _every_end_beyond(state, "rust_belt")


def test_most_worded_listings_make_no_index_of_the_network() -> None:
    states = _states("rust_belt", "listing-unindexed")
    made: list[type] = []
    whole = Network._index

    def counted(net: Network, state: dict) -> None:
        made.append(type(net))
        whole(net, state)

    listed = 0
    Network._index = counted  # type: ignore[method-assign]
    try:
        for state in states:
            seat = game.active_seat(state)
            if state["phase"] == "build" and seat is not None:
                words.listing_json(state, seat, {})
                listed += 1
    finally:
        Network._index = whole  # type: ignore[method-assign]
    assert listed > 20
    assert made.count(UnindexedNetwork) < listed // 2
