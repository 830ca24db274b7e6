"""Reads and checks the `aos-map-json/1` files beside this module.

A map is immutable data shared by every game on it, so each is loaded once per process.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from service.engine.errors import SetupError
from service.engine.hexgrid import DIRECTIONS, Hex, canonical
from service.engine.rules_data import COLOURS

MAP_IDS = ("rust_belt", "madagascar", "holland", "iraq", "berlin")
NUMBER_COLUMNS = tuple(f"{side}-{n}" for side in ("light", "dark") for n in range(1, 7))
NEW_CITY_COLUMNS = tuple("ABCDEFGH")


class MapFormatError(ValueError):
    """A map file that breaks aos-map-json/1: a bug in the shipped data, not a user error."""


@dataclass(frozen=True)
class City:
    hex: Hex
    name: str
    colors: tuple[str, ...]
    columns: tuple[str, ...]  # display columns that feed it
    starting_cubes: int


@dataclass(frozen=True)
class NewCityTile:
    letter: str
    color: str
    column_under: str  # the number column it sits beneath; its own column is its letter


@dataclass
class MapData:
    id: str
    name: str
    min_players: int
    max_players: int
    rounds_by_players: dict[int, int] | None
    terrain: dict[Hex, str]
    terrain_costs: dict[str, int | None]
    towns: dict[Hex, str]
    cities: dict[Hex, City]
    column_city: dict[str, Hex]  # number column -> the city it feeds
    new_city_tiles: dict[str, NewCityTile]
    removed_new_cities: frozenset[str]
    special: dict
    raw_hexes: dict[Hex, dict] = field(repr=False)
    source_kind: str = "transcribed"
    rotation: str = "none"

    def on_map(self, h: Hex) -> bool:
        return h in self.terrain

    def neighbours(self, h: Hex) -> list[tuple[int, Hex]]:
        out = []
        for edge, (dq, dr) in enumerate(DIRECTIONS):
            n = (h[0] + dq, h[1] + dr)
            if n in self.terrain:
                out.append((edge, n))
        return out


def _path(map_id: str) -> Path:
    return Path(__file__).parent / f"{map_id}.json"


def _check(cond: bool, map_id: str, what: str) -> None:
    if not cond:
        raise MapFormatError(f"{map_id}.json: {what}")


@cache
def load_map(map_id: str) -> MapData:
    if map_id not in MAP_IDS:
        raise SetupError("UNKNOWN_MAP", f"no map {map_id!r}; maps: {', '.join(MAP_IDS)}")
    return parse_map(map_id, json.loads(_path(map_id).read_text(encoding="utf-8")))


def parse_map(map_id: str, raw: dict) -> MapData:
    """Checks one map file's data and indexes it; MapFormatError names what is wrong."""
    _check(raw.get("format") == "aos-map-json/1", map_id, "format is not aos-map-json/1")
    _check(raw.get("id") == map_id, map_id, "id does not match the file name")

    terrain: dict[Hex, str] = {}
    towns: dict[Hex, str] = {}
    cities: dict[Hex, City] = {}
    raw_hexes: dict[Hex, dict] = {}
    for h in raw["hexes"]:
        pos = canonical((h["q"], h["r"]))
        _check(pos not in terrain, map_id, f"hex {pos} listed twice")
        _check(h["terrain"] in raw["terrain_costs"], map_id, f"terrain {h['terrain']} has no cost")
        terrain[pos] = h["terrain"]
        raw_hexes[pos] = h
        if h.get("town"):
            towns[pos] = h["town_name"]
        if h["terrain"] == "city":
            c = h["city"]
            _check(all(col in COLOURS for col in c["colors"]), map_id, f"bad colour in {c['name']}")
            columns = tuple(f"{g['side']}-{g['number']}" for g in c["goods_display"])
            cities[pos] = City(pos, c["name"], tuple(c["colors"]), columns, c["starting_cubes"])
    _check(len(terrain) == raw["grid"]["hex_count"], map_id, "hex_count disagrees with hexes")
    _check(len(cities) == len(raw["cities"]), map_id, "cities list disagrees with hexes")
    _check(len(towns) == len(raw["towns"]), map_id, "towns list disagrees with hexes")

    by_name = {c.name: c.hex for c in cities.values()}
    column_city: dict[str, Hex] = {}
    for side in ("light", "dark"):
        for number, names in raw["goods_display"][side].items():
            _check(len(names) <= 1, map_id, f"{side} {number} feeds more than one city")
            for name in names:
                _check(name in by_name, map_id, f"display column feeds unknown city {name}")
                column_city[f"{side}-{number}"] = by_name[name]
    for c in cities.values():
        for col in c.columns:
            _check(column_city.get(col) == c.hex, map_id, f"{c.name}'s column {col} disagrees")

    new_city_tiles = {
        t["tile"]: NewCityTile(t["tile"], t["color"], f"{t['side']}-{t['number']}")
        for t in raw["goods_display"]["new_city_tiles"]
    }
    _check(sorted(new_city_tiles) == list(NEW_CITY_COLUMNS), map_id, "new-city tiles are not A-H")
    rounds = raw.get("rounds_by_players")
    return MapData(
        id=map_id,
        name=raw["name"],
        min_players=raw["players"]["min"],
        max_players=raw["players"]["max"],
        rounds_by_players={int(k): v for k, v in rounds.items()} if rounds else None,
        terrain=terrain,
        terrain_costs=raw["terrain_costs"],
        towns=towns,
        cities=cities,
        column_city=column_city,
        new_city_tiles=new_city_tiles,
        removed_new_cities=frozenset(raw["goods_display"]["new_city_tiles_removed"]),
        special=raw["special"],
        raw_hexes=raw_hexes,
        source_kind=raw["source"]["kind"],
        rotation=raw["rotation"],
    )
