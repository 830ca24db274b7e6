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


def _svg(map_id: str, options: dict | None = None) -> str:
    state = game.new_game(map_id, ["Ada", "Bo", "Cy"], "render", options or {})
    return board_svg({"game_id": "g", "version": 0, **game.view(state)}, game.map_info(map_id))


def test_berlin_draws_every_standing_wall_disc_on_its_edge() -> None:
    svg = _svg("berlin")
    walls = re.findall(r'<line x1="([\d.]+)" y1="([\d.]+)" x2="([\d.]+)" y2="([\d.]+)" stroke="#c92a2a"', svg)
    assert len(walls) == 19
    geometry = Geometry(game.map_info("berlin")["hexes"])
    for disc, (x1, y1, x2, y2) in zip(game.map_info("berlin")["features"]["wall"], walls, strict=True):
        a = geometry.centres[(disc["a"]["q"], disc["a"]["r"])]
        b = geometry.centres[(disc["b"]["q"], disc["b"]["r"])]
        middle = ((float(x1) + float(x2)) / 2, (float(y1) + float(y2)) / 2)
        assert math.dist(middle, ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)) < 0.5  # on the shared edge


def test_iraq_oil_fields_show_their_cubes_and_holland_its_closed_polders_and_windmills() -> None:
    state = game.new_game("iraq", ["Ada", "Bo", "Cy"], "render")
    on_fields = sum(min(6, len(state["cubes"][f"{f['hex']['q']},{f['hex']['r']}"]))
                    for f in game.map_info("iraq")["features"]["oil_fields"])
    on_cities = sum(c["goods"].count("black") for c in game.view(state)["board"]["cities"])
    assert on_fields > 0
    assert _svg("iraq").count('fill="#202020" stroke="#ffffff"') == on_fields + on_cities
    holland = _svg("holland", {"windmills": True})
    assert holland.count("closed until round 5") == 45
    assert holland.count("\u2723") == 5
