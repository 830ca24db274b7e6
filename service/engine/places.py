"""What a player calls each hex of a map: a stable label made from the map's own data.

A city or town hex is called by its name ("Pittsburgh"). Every other hex is called by where it
lies from the nearest named place, as a player would point at it: "northwest of Pittsburgh",
"2 hexes east of Chicago". Directions are read from the board as it is drawn (the map's board
positions), so "north" is up on the page on the rotated maps too. A hex one or more straight
steps from the place takes the 8-point compass name of that step; any other hex the 16-point
name of its bearing. The nearest place wins (then a straight line over a slant, a city over a
town, the name's order); a label another hex already has goes to the next place, so every hex
of a map has a label of its own. The labels depend on the map data alone, so they never change.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from service.engine.hexgrid import DIRECTIONS, Hex
from service.engine.maps import load_map

COMPASS_8 = ("north", "northeast", "east", "southeast", "south", "southwest", "west", "northwest")
COMPASS_16 = ("north", "north-northeast", "northeast", "east-northeast", "east", "east-southeast",
              "southeast", "south-southeast", "south", "south-southwest", "southwest",
              "west-southwest", "west", "west-northwest", "northwest", "north-northwest")


def distance(a: Hex, b: Hex) -> int:
    dq, dr = a[0] - b[0], a[1] - b[1]
    return (abs(dq) + abs(dr) + abs(dq + dr)) // 2


def _compass(dx: float, dy: float, names: tuple[str, ...]) -> str:
    """The compass name of a bearing on the page (y grows down), from `names` evenly spaced."""
    bearing = math.degrees(math.atan2(dx, -dy)) % 360
    return names[round(bearing / (360 / len(names))) % len(names)]


def _straight(offset: Hex) -> int | None:
    """The edge a straight line of steps from a place to `offset` leaves by, or None."""
    steps = distance(offset, (0, 0))
    for edge, (dq, dr) in enumerate(DIRECTIONS):
        if (dq * steps, dr * steps) == offset:
            return edge
    return None


@dataclass(frozen=True)
class Places:
    """One map's labels: `label[hex]`, and the compass name of each edge as drawn."""

    label: dict[Hex, str]
    named: dict[Hex, str]  # the city and town hexes and their names
    edge_direction: tuple[str, ...]

    def where(self, h: Hex) -> str:
        """The hex as a place in a sentence: "at Chicago", "northwest of Chicago"."""
        name = self.named.get(h)
        if name is not None:
            return f"at {name}"
        return self.label.get(h, "off the map")

    def name(self, h: Hex) -> str:
        """The hex's label as a noun: "Chicago", "the hex northwest of Chicago"."""
        name = self.named.get(h)
        if name is not None:
            return name
        return "the hex " + self.label.get(h, "off the map")


@cache
def places(map_id: str) -> Places:
    board = load_map(map_id)
    position = {h: (raw["board_x"], raw["board_y"]) for h, raw in board.raw_hexes.items()}
    named: dict[Hex, str] = dict(board.towns)
    named.update({h: c.name for h, c in board.cities.items()})
    # Each step's direction on the page, measured from any two neighbours the map holds.
    edge_direction = []
    for dq, dr in DIRECTIONS:
        a = next(h for h in position if (h[0] + dq, h[1] + dr) in position)
        b = (a[0] + dq, a[1] + dr)
        edge_direction.append(_compass(position[b][0] - position[a][0],
                                       position[b][1] - position[a][1], COMPASS_8))

    def candidates(h: Hex) -> list[tuple[tuple, str]]:
        out = []
        for p, name in named.items():
            steps = distance(h, p)
            if steps == 0:
                out.append(((0, 0, 0, name), name))
                continue
            edge = _straight((h[0] - p[0], h[1] - p[1]))
            if edge is not None:
                direction = edge_direction[edge]
            else:
                direction = _compass(position[h][0] - position[p][0],
                                     position[h][1] - position[p][1], COMPASS_16)
            far = f"{steps} hexes " if steps > 1 else ""
            rank = (steps, edge is None, p in board.towns, name)
            out.append((rank, f"{far}{direction} of {name}"))
        return sorted(out)

    # Nearer hexes choose first, so a label goes to the hex it describes best.
    options = {h: candidates(h) for h in position}
    label: dict[Hex, str] = {}
    taken: set[str] = set()
    for h in sorted(position, key=lambda h: (options[h][0][0], h)):
        chosen = next((words for _, words in options[h] if words not in taken), None)
        assert chosen is not None, f"{map_id}: no label left for {h}"
        label[h] = chosen
        taken.add(chosen)
    return Places(label, named, tuple(edge_direction))
