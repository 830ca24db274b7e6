"""Draws a board: hexes coloured by terrain, cities with their cubes, towns, and track coloured
by its owner, with a legend of the players. Input is the game view and the map's geometry
(GET /v1/maps/{map}); output is a self-contained SVG document."""

from __future__ import annotations

import math
import re
from xml.sax.saxutils import escape as _escape
from xml.sax.saxutils import quoteattr

SIZE = 28.0  # hex circumradius in pixels
MARGIN = 20.0
LEGEND_HEIGHT = 24.0

TERRAIN = {
    "plain": "#d9e8b0",
    "river": "#a9d6e5",
    "mountain": "#b59b7c",
    "hill": "#cdb38b",
    "desert": "#f0e0a8",
    "polder": "#8cc7a8",
    "water": "#4f8fc9",
    "city": "#ffffff",
    "oil_field": "#3b3b3b",
    "flag_link": "#e4e4e4",
}
CUBE = {
    "red": "#d7263d",
    "blue": "#1b6ec2",
    "yellow": "#f4c20d",
    "purple": "#7b3fa0",
    "black": "#202020",
}
# Owners' track colours, chosen apart from the cube colours.
SEATS = ("#e8590c", "#0ca678", "#c2255c", "#1098ad", "#5f3dc4", "#74b816")
UNOWNED = "#868e96"


# Characters XML 1.0 cannot hold at all, not even as references: replaced, so that a name stored
# before names were checked cannot make the document ill-formed.
NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def escape(text: str) -> str:
    return _escape(NOT_XML.sub("\ufffd", text))


# The neighbour across each edge, in axial coordinates (the contract's numbering).
NEIGHBOUR = ((0, -1), (1, -1), (1, 0), (0, 1), (-1, 1), (-1, 0))

Point = tuple[float, float]


class Geometry:
    """Where a map's hexes, edges and corners fall on the page. The edge directions are measured
    from the map's own board positions, so a map drawn rotated (Holland, Madagascar) comes out
    right without knowing its rotation."""

    def __init__(self, hexes: list[dict]) -> None:
        self.centres: dict[tuple[int, int], Point] = {
            (h["q"], h["r"]): (MARGIN + SIZE + h["x"] * SIZE, MARGIN + SIZE + h["y"] * SIZE) for h in hexes
        }
        self.edges: list[Point] = [self._direction(dq, dr) for dq, dr in NEIGHBOUR]
        # A corner lies between two neighbouring edges' midpoints, at the circumradius.
        self.corners: list[Point] = []
        for e in range(6):
            (ax, ay), (bx, by) = self.edges[e], self.edges[(e + 1) % 6]
            length = math.hypot(ax + bx, ay + by)
            self.corners.append(((ax + bx) / length * SIZE, (ay + by) / length * SIZE))

    def _direction(self, dq: int, dr: int) -> Point:
        for (q, r), (x, y) in self.centres.items():
            other = self.centres.get((q + dq, r + dr))
            if other is not None:
                dx, dy = other[0] - x, other[1] - y
                length = math.hypot(dx, dy)
                return dx / length, dy / length
        raise ValueError("a map with no two neighbouring hexes")

    def polygon(self, centre: Point) -> str:
        cx, cy = centre
        return " ".join(f"{cx + dx:.1f},{cy + dy:.1f}" for dx, dy in self.corners)

    def edge_mid(self, centre: Point, edge: int) -> Point:
        apothem = SIZE * math.sqrt(3) / 2
        dx, dy = self.edges[edge]
        return centre[0] + dx * apothem, centre[1] + dy * apothem


def _owner_colour(owner: int | None) -> str:
    return UNOWNED if owner is None else SEATS[owner % len(SEATS)]


def _cubes(goods: list[str], cx: float, top: float) -> list[str]:
    """A row of cubes centred on cx."""
    side, gap = 7.0, 1.5
    left = cx - (len(goods) * (side + gap) - gap) / 2
    return [
        f'<rect x="{left + i * (side + gap):.1f}" y="{top:.1f}" width="{side}" height="{side}" '
        f'fill="{CUBE.get(colour, "#adb5bd")}" stroke="#ffffff" stroke-width="0.8"/>'
        for i, colour in enumerate(goods)
    ]


def _hex(d: dict) -> tuple[int, int]:
    return d["q"], d["r"]


def _map_features(board: dict, geometry: Geometry) -> list[str]:
    """What a map adds to the board: Berlin's wall discs, Iraq's oil fields and their cubes,
    Holland's closed polders and windmills (from the view's board features)."""
    centres = geometry.centres
    out: list[str] = []
    polders = board.get("polders")
    if polders and not polders["open"]:
        for h in polders["hexes"]:
            if _hex(h) in centres:
                out.append(f'<polygon points="{geometry.polygon(centres[_hex(h)])}" fill="#495057" '
                           'fill-opacity="0.35"><title>closed until round '
                           f'{polders["open_from_round"]}</title></polygon>')
    for disc in (board.get("wall") or {}).get("discs", []):
        a, b = _hex(disc["a"]), _hex(disc["b"])
        if a not in centres:
            continue
        edge = NEIGHBOUR.index((b[0] - a[0], b[1] - a[1]))
        (x1, y1), (x2, y2) = ((centres[a][0] + dx, centres[a][1] + dy)
                              for dx, dy in (geometry.corners[edge - 1], geometry.corners[edge]))
        out.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
                   'stroke="#c92a2a" stroke-width="5" stroke-linecap="round"/>')
    for field in board.get("oil_fields", []):
        if _hex(field["hex"]) in centres:
            cx, cy = centres[_hex(field["hex"])]
            out.extend(_cubes(field["goods"][:6], cx, cy - 3))
    for mill in board.get("windmills", []):
        if _hex(mill["hex"]) in centres:
            cx, cy = centres[_hex(mill["hex"])]
            out.append(f'<text x="{cx:.1f}" y="{cy - 6:.1f}" font-size="14" text-anchor="middle">'
                       "\u2723</text>")
            if mill["color"]:
                out.extend(_cubes([mill["color"]], cx, cy + 2))
    return out


def board_svg(view: dict, map_info: dict) -> str:
    geometry = Geometry(map_info["hexes"])
    centres = geometry.centres
    width = max(x for x, _ in centres.values()) + SIZE + MARGIN
    height = max(y for _, y in centres.values()) + SIZE + MARGIN + LEGEND_HEIGHT

    out = [
        '<svg xmlns="http://www.w3.org/2000/svg" '
        f'width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" '
        'font-family="sans-serif">',
        f"<title>{escape(map_info['name'])}: round {view['round']}, {view['phase']}</title>",
        '<rect width="100%" height="100%" fill="#f8f9fa"/>',
    ]
    out.append('<g stroke="#6c757d" stroke-width="1">')
    for h in map_info["hexes"]:
        cx, cy = centres[(h["q"], h["r"])]
        fill = TERRAIN.get(h["terrain"], "#dee2e6")
        out.append(f'<polygon points="{geometry.polygon((cx, cy))}" fill="{fill}"/>')
    out.append("</g>")

    board = view["board"]
    out.append('<g fill="none" stroke-linecap="round" stroke-width="5">')
    for entry in board["tracks"]:
        key = (entry["hex"]["q"], entry["hex"]["r"])
        if key not in centres:
            continue
        cx, cy = centres[key]
        for track in entry["tracks"]:
            (ax, ay), (bx, by) = (geometry.edge_mid((cx, cy), e) for e in track["edges"])
            colour = _owner_colour(track["owner"])
            out.append(
                f'<path d="M{ax:.1f},{ay:.1f} Q{cx:.1f},{cy:.1f} {bx:.1f},{by:.1f}" stroke="{colour}"/>'
            )
        for town_exit in entry.get("town_exits", []):
            ex, ey = geometry.edge_mid((cx, cy), town_exit["edge"])
            colour = _owner_colour(town_exit["owner"])
            out.append(f'<line x1="{cx:.1f}" y1="{cy:.1f}" x2="{ex:.1f}" y2="{ey:.1f}" stroke="{colour}"/>')
    out.append("</g>")

    for town in board.get("towns", map_info.get("towns", [])):
        key = (town["hex"]["q"], town["hex"]["r"])
        if key in centres:
            cx, cy = centres[key]
            out.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="6" fill="#ffffff" stroke="#212529"/>')

    for city in board["cities"]:
        key = (city["hex"]["q"], city["hex"]["r"])
        if key not in centres:
            continue
        cx, cy = centres[key]
        fill = CUBE.get(city["colors"][0], "#ffffff") if city["colors"] else "#ffffff"
        out.append(
            f'<polygon points="{geometry.polygon((cx, cy))}" fill="{fill}" fill-opacity="0.85" '
            'stroke="#212529" stroke-width="2"/>'
        )
        label = city["name"] or ""
        if city["new_city"]:
            label = f"{city['new_city']} {label}".strip()
        out.append(
            f'<text x="{cx:.1f}" y="{cy - 8:.1f}" font-size="8" text-anchor="middle" '
            f'font-weight="bold" fill="#ffffff" stroke="#000000" stroke-width="2" '
            f'paint-order="stroke">{escape(label)}</text>'
        )
        out.extend(_cubes(city["goods"], cx, cy + 2))

    out.extend(_map_features(board, geometry))

    y = height - LEGEND_HEIGHT + 6
    x = MARGIN
    for player in view["players"]:
        colour = _owner_colour(player["seat"])
        text = f"{player['name']} ${player['cash']}"
        if player["eliminated"]:
            text += " (out)"
        out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="12" height="12" fill="{colour}"/>')
        out.append(
            f'<text x="{x + 16:.1f}" y="{y + 10:.1f}" font-size="11" '
            f"data-seat={quoteattr(str(player['seat']))}>{escape(text)}</text>"
        )
        x += 24 + 7 * len(text)
    out.append("</svg>")
    return "\n".join(out)
