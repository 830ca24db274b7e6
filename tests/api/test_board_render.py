"""board.svg geometry: edges land between neighbours on every map, rotated ones included."""

from __future__ import annotations

import math
import re

import pytest

from service.engine import game
from service.render.board import NEIGHBOUR, Geometry, board_svg


@pytest.mark.parametrize("map_id", ["rust_belt", "madagascar", "holland", "iraq", "berlin"])
def test_edge_midpoints_lie_halfway_to_the_neighbour(map_id: str) -> None:
    geometry = Geometry(game.map_info(map_id)["hexes"])
    checked = 0
    for (q, r), centre in geometry.centres.items():
        for edge, (dq, dr) in enumerate(NEIGHBOUR):
            other = geometry.centres.get((q + dq, r + dr))
            if other is None:
                continue
            mid = geometry.edge_mid(centre, edge)
            halfway = ((centre[0] + other[0]) / 2, (centre[1] + other[1]) / 2)
            assert math.dist(mid, halfway) < 0.5
            checked += 1
    assert checked > 300


def test_track_is_drawn_in_its_owners_colour() -> None:
    info = game.map_info("holland")
    h = info["hexes"][40]
    view = {
        "round": 2,
        "phase": "build",
        "players": [{"seat": 0, "name": "Ada", "cash": 12, "eliminated": False}],
        "board": {
            "tracks": [{"hex": {"q": h["q"], "r": h["r"]}, "tracks": [{"edges": [0, 3], "owner": 0}]}],
            "links": [],
            "cities": [],
            "towns": [],
        },
    }
    svg = board_svg(view, info)
    assert len(re.findall("<polygon", svg)) == len(info["hexes"])
    assert re.search(r'<path d="[^"]+" stroke="#e8590c"/>', svg)
