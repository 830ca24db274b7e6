"""The track-tile catalogue: every tile of the manifest in every rotation, and the supply.

A hex's track is named by what it holds: a set of edge pairs on an ordinary hex, or a set of
exits on a town hex. This module says which tile (or tile plus town disk) makes each shape.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

Track = tuple[int, int]  # an edge pair, smaller edge first

_DATA = json.loads((Path(__file__).parent / "data" / "tiles.json").read_text())


def norm(a: int, b: int) -> Track:
    return (a, b) if a < b else (b, a)


def rotate_track(t: Track, steps: int) -> Track:
    return norm((t[0] + steps) % 6, (t[1] + steps) % 6)


@dataclass(frozen=True)
class TrackShape:
    """One rotation of a track tile: the tracks it holds and the tile it uses."""

    tile: str
    kind: str  # simple | coexisting | crossing
    tracks: frozenset[Track]


@dataclass(frozen=True)
class TownShape:
    """A town with these exits, made by a town tile or by a track tile plus a disk."""

    exits: frozenset[int]
    tiles: tuple[str, ...]  # the tiles that can make it, in the order they are taken
    uses_disk: bool


def _build_track_shapes() -> dict[frozenset[Track], TrackShape]:
    shapes: dict[frozenset[Track], TrackShape] = {}
    for tile in _DATA["track_tiles"]:
        for steps in range(6):
            tracks = frozenset(rotate_track(norm(*t), steps) for t in tile["tracks"])
            shapes.setdefault(tracks, TrackShape(tile["id"], tile["kind"], tracks))
    return shapes


def _build_town_shapes() -> dict[frozenset[int], TownShape]:
    makers: dict[frozenset[int], list[str]] = {}
    disk: dict[frozenset[int], bool] = {}
    for tile in _DATA["town_tiles"]:
        for steps in range(6):
            exits = frozenset((e + steps) % 6 for e in tile["exits"])
            if tile["id"] not in makers.setdefault(exits, []):
                makers[exits].append(tile["id"])
            disk[exits] = False
    for tile in _DATA["track_tiles"]:
        for steps in range(6):
            exits = frozenset((e + steps) % 6 for t in tile["tracks"] for e in t)
            if tile["id"] not in makers.setdefault(exits, []):
                makers[exits].append(tile["id"])
            disk[exits] = True
    return {e: TownShape(e, tuple(ts), disk[e]) for e, ts in makers.items()}


TRACK_SHAPES: dict[frozenset[Track], TrackShape] = _build_track_shapes()
TOWN_SHAPES: dict[frozenset[int], TownShape] = _build_town_shapes()
TILE_KIND: dict[str, str] = {t["id"]: t["kind"] for t in _DATA["track_tiles"]}
TILE_KIND.update({t["id"]: "town" for t in _DATA["town_tiles"]})
TOWN_DISKS: int = _DATA["town_disks"]
DISK = "town_disk"


def initial_supply() -> dict[str, int]:
    supply = {t["id"]: t["count"] for t in _DATA["track_tiles"]}
    supply.update({t["id"]: t["count"] for t in _DATA["town_tiles"]})
    supply[DISK] = TOWN_DISKS
    return supply


def track_shape(tracks: frozenset[Track]) -> TrackShape | None:
    return TRACK_SHAPES.get(tracks)


def town_shape(exits: frozenset[int]) -> TownShape | None:
    return TOWN_SHAPES.get(exits)


def town_tile_from_supply(shape: TownShape, supply: dict[str, int]) -> str | None:
    """The tile that makes this town shape now (the first of its makers still in supply)."""
    for tile in shape.tiles:
        if supply.get(tile, 0) > 0:
            return tile
    return None
