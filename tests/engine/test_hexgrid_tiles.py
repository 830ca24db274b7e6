"""The grid's edge numbering and the tile catalogue's shapes."""

from __future__ import annotations

from itertools import combinations

from service.engine import tiles
from service.engine.hexgrid import around, key, neighbour, opposite, parse_key
from service.engine.maps import MAP_IDS, load_map


def test_edges_are_numbered_clockwise_from_north_as_the_contract_says():
    assert [neighbour((5, 5), e) for e in range(6)] == [
        (5, 4), (6, 4), (6, 5), (5, 6), (4, 6), (4, 5)]
    for e in range(6):
        assert neighbour(neighbour((5, 5), e), opposite(e)) == (5, 5)


def test_a_hex_is_one_tuple_wherever_the_engine_names_it():
    # The map's hexes, the state's keys read back and the neighbours are the same objects
    # (hexgrid.canonical): the listing's dicts and sets of hexes find their keys without
    # comparing tuples.
    for map_id in MAP_IDS:
        board = load_map(map_id)
        for h in board.terrain:
            assert parse_key(key(h)) is h
            for n in around(h):
                assert n == neighbour(h, around(h).index(n))
                if n in board.terrain:
                    assert next(t for t in board.terrain if t == n) is n
        for h in [*board.cities, *board.towns]:
            assert next(t for t in board.terrain if t == h) is h


def test_every_rotation_of_every_tile_is_a_shape_of_that_tile():
    assert {s.tile for s in tiles.TRACK_SHAPES.values()} == {
        "straight", "gentle", "tight", "x", "bow_and_arrow", "crossing_curves", "straight_tight",
        "coexisting_curves", "curve_tight_1", "curve_tight_2"}
    straights = [s for s in tiles.TRACK_SHAPES.values() if s.tile == "straight"]
    assert sorted(tuple(s.tracks) for s in straights) == [((0, 3),), ((1, 4),), ((2, 5),)]
    assert len([s for s in tiles.TRACK_SHAPES.values() if s.tile == "gentle"]) == 6
    assert tiles.track_shape(frozenset({(1, 4), (2, 5)})).kind == "crossing"
    assert tiles.track_shape(frozenset({(0, 3), (4, 5)})).kind == "coexisting"
    assert tiles.track_shape(frozenset({(0, 1), (2, 3), (4, 5)})) is None


def test_towns_take_one_to_four_exits_two_and_four_on_a_disk():
    for n in range(1, 7):
        for exits in combinations(range(6), n):
            shape = tiles.town_shape(frozenset(exits))
            if n > 4:
                assert shape is None
            else:
                assert shape is not None and shape.uses_disk == (n in (2, 4))


def test_every_map_loads_with_its_cities_towns_and_display():
    counts = {m: (len(load_map(m).cities), len(load_map(m).towns)) for m in MAP_IDS}
    assert counts["rust_belt"] == (12, 14)
    assert all(cities >= 12 and towns >= 12 for cities, towns in counts.values())
    rust_belt = load_map("rust_belt")
    assert rust_belt.cities[rust_belt.column_city["dark-5"]].name == "Pittsburgh"
    assert rust_belt.cities[rust_belt.column_city["dark-5"]].starting_cubes == 3


def test_a_broken_map_file_is_refused_on_load():
    import json
    from pathlib import Path

    import pytest

    from service.engine.maps.loader import MapFormatError, parse_map

    path = Path(__file__).parents[2] / "service" / "engine" / "maps" / "rust_belt.json"
    raw = json.loads(path.read_text())
    assert parse_map("rust_belt", raw).name == load_map("rust_belt").name
    city = next(h for h in raw["hexes"] if h["terrain"] == "city")
    city["city"]["colors"] = ["green"]
    with pytest.raises(MapFormatError, match="bad colour"):
        parse_map("rust_belt", raw)
    raw = json.loads(path.read_text())
    raw["hexes"].append(dict(raw["hexes"][0]))
    with pytest.raises(MapFormatError, match="listed twice"):
        parse_map("rust_belt", raw)
