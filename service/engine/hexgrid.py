"""Axial coordinates on a flat-top hex grid, as in the map files and the HTTP contract.

Edges are numbered clockwise from north: 0 N, 1 NE, 2 SE, 3 S, 4 SW, 5 NW.
"""

from __future__ import annotations

from functools import lru_cache

from service.engine.contract_types import Hex as HexObject

Hex = tuple[int, int]

DIRECTIONS: tuple[Hex, ...] = ((0, -1), (1, -1), (1, 0), (0, 1), (-1, 1), (-1, 0))


def neighbour(h: Hex, edge: int) -> Hex:
    dq, dr = DIRECTIONS[edge]
    return (h[0] + dq, h[1] + dr)


# One tuple per hex, for the hexes the maps, the state's keys and their neighbours name
# (canonical): a dict or set of hexes then finds the very key it filed, and compares no tuples
# (an equal tuple of another object is compared item by item on every lookup that finds it).
# The bound only guards memory; past it a hex is its own tuple, as equal as before.
_CANONICAL: dict[Hex, Hex] = {}
_CANONICAL_KEPT = 1 << 15


def canonical(h: Hex) -> Hex:
    """The one tuple kept for the hex h (h itself the first time)."""
    found = _CANONICAL.get(h)
    if found is not None:
        return found
    if len(_CANONICAL) < _CANONICAL_KEPT:
        _CANONICAL[h] = h
    return h


@lru_cache(maxsize=1 << 14)
def around(h: Hex) -> tuple[Hex, ...]:
    """The six neighbours of h, by edge (kept: every build listing asks for the same hexes)."""
    q, r = h
    return tuple(canonical((q + dq, r + dr)) for dq, dr in DIRECTIONS)


def opposite(edge: int) -> int:
    return (edge + 3) % 6


def key(h: Hex) -> str:
    """The string form used as a JSON object key in the state."""
    return f"{h[0]},{h[1]}"


@lru_cache(maxsize=1 << 14)
def parse_key(k: str) -> Hex:
    """The hex of a state key (kept: the state names the same few hundred hexes again and again)."""
    q, r = k.split(",")
    return canonical((int(q), int(r)))


def as_dict(h: Hex) -> HexObject:
    """The hex as the contract writes it, {q, r}."""
    return {"q": h[0], "r": h[1]}
