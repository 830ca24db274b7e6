"""Draws the board a player can play from: the map (terrain, cities with their goods, named towns,
track in its owner's colour, the map's own features, the last move outlined, hex coordinates on
request) and beside it a panel: round, phase and whose decision it is; each player's cash, income,
shares, locomotive and action; the goods display (only the columns in play); the last move in
words; a legend. Input is the game view, the map's geometry (GET /v1/maps/{map}) and the last
history entry; output is a self-contained SVG document that renders the same in a browser and
in cairosvg (no CSS, no paint-order)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from service.engine.places import COMPASS_16, places
from service.engine.words import Teller

SIZE = 30.0  # hex circumradius in pixels
MARGIN = 16.0
PANEL_WIDTH = 420.0
LINE = 17.0  # the panel's line height
CUBE_SIDE = 9.0
CUBE_GAP = 2.0

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
TERRAIN_NAMES = {"flag_link": "flag link", "oil_field": "oil field"}
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
WALL = "#1f1f1f"  # Berlin's wall: black and dashed, apart from every owner's colour
INK = "#212529"
PHASES = {
    "issue_shares": "Issue shares",
    "auction": "Auction for turn order",
    "select_action": "Select actions",
    "build": "Build track",
    "move_goods": "Move goods",
    "production": "Production",
    "finished": "Game over",
}

# The neighbour across each edge, in axial coordinates (the contract's numbering).
NEIGHBOUR = ((0, -1), (1, -1), (1, 0), (0, 1), (-1, 1), (-1, 0))
# Characters XML 1.0 cannot hold at all, not even as references (outside its Char production):
# replaced, so that a name stored before names were checked cannot make the document ill-formed.
NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

Point = tuple[float, float]


def text(value: object, limit: int | None = None) -> str:
    """`value` as XML character data: unrepresentable characters become U+FFFD, markup is escaped,
    and over `limit` characters it is cut with an ellipsis."""
    s = NOT_XML.sub("\ufffd", str(value))
    if limit is not None and len(s) > limit:
        s = s[: limit - 1] + "\u2026"
    return escape(s)


def attr(value: object) -> str:
    return quoteattr(NOT_XML.sub("\ufffd", str(value)))


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

    def polygon(self, centre: Point, scale: float = 1.0) -> str:
        cx, cy = centre
        return " ".join(f"{cx + dx * scale:.1f},{cy + dy * scale:.1f}" for dx, dy in self.corners)

    def edge_mid(self, centre: Point, edge: int) -> Point:
        apothem = SIZE * math.sqrt(3) / 2
        dx, dy = self.edges[edge]
        return centre[0] + dx * apothem, centre[1] + dy * apothem

    def size(self) -> Point:
        return (
            max(x for x, _ in self.centres.values()) + SIZE + MARGIN,
            max(y for _, y in self.centres.values()) + SIZE + MARGIN,
        )


def _owner_colour(owner: int | None) -> str:
    return UNOWNED if owner is None else SEATS[owner % len(SEATS)]


def _hex(d: dict) -> tuple[int, int]:
    return d["q"], d["r"]


def _label(x: float, y: float, value: str, size: float, *, anchor: str = "middle",
           weight: str = "bold", fill: str = INK, halo: str = "#ffffff", kind: str = "label") -> list[str]:
    """Text with a halo: drawn twice, the stroked copy first, so it reads on any background in
    every renderer (paint-order is not everywhere)."""
    common = f'x="{x:.1f}" y="{y:.1f}" font-size="{size:g}" text-anchor="{anchor}" font-weight="{weight}"'
    return [
        f'<text {common} fill="{halo}" stroke="{halo}" stroke-width="3" stroke-linejoin="round" '
        f'aria-hidden="true">{value}</text>',
        f'<text class="{kind}" {common} fill="{fill}">{value}</text>',
    ]


def _cubes(goods: list[str], cx: float, top: float, per_row: int = 3) -> list[str]:
    """Cubes in rows of `per_row` centred on cx, on a white plate so every colour shows on
    every city colour; more than two rows' worth end in a `+n`."""
    if not goods:
        return []
    shown = goods[: per_row * 2] if len(goods) > per_row * 2 else goods
    rest = len(goods) - len(shown)
    rows = [shown[i : i + per_row] for i in range(0, len(shown), per_row)]
    step = CUBE_SIDE + CUBE_GAP
    width = min(len(shown), per_row) * step + CUBE_GAP
    out = [
        f'<rect x="{cx - width / 2:.1f}" y="{top - CUBE_GAP:.1f}" width="{width:.1f}" '
        f'height="{len(rows) * step + CUBE_GAP:.1f}" rx="2" fill="#ffffff" fill-opacity="0.9"/>'
    ]
    for row_index, row in enumerate(rows):
        left = cx - (len(row) * step - CUBE_GAP) / 2
        for i, colour in enumerate(row):
            out.append(
                f'<rect class="cube" data-color={attr(colour)} x="{left + i * step:.1f}" '
                f'y="{top + row_index * step:.1f}" width="{CUBE_SIDE:g}" height="{CUBE_SIDE:g}" rx="1" '
                f'fill="{CUBE.get(colour, "#adb5bd")}" stroke="{INK}" stroke-width="0.8"/>'
            )
    if rest:
        out += _label(cx + width / 2 + 2, top + step, f"+{rest}", 9, anchor="start")
    return out


def _map_features(board: dict, geometry: Geometry) -> list[str]:
    """What a map adds to the board: Berlin's wall discs, Iraq's oil fields and their cubes,
    Holland's closed polders and windmills (from the view's board features)."""
    centres = geometry.centres
    out: list[str] = []
    polders = board.get("polders")
    if polders and not polders["open"]:
        for h in polders["hexes"]:
            if _hex(h) in centres:
                out.append(f'<polygon class="closed-polder" points="{geometry.polygon(centres[_hex(h)])}" '
                           'fill="#495057" fill-opacity="0.35"><title>closed until round '
                           f'{polders["open_from_round"]}</title></polygon>')
    for disc in (board.get("wall") or {}).get("discs", []):
        a, b = _hex(disc["a"]), _hex(disc["b"])
        if a not in centres:
            continue
        edge = NEIGHBOUR.index((b[0] - a[0], b[1] - a[1]))
        (x1, y1), (x2, y2) = ((centres[a][0] + dx, centres[a][1] + dy)
                              for dx, dy in (geometry.corners[edge - 1], geometry.corners[edge]))
        out.append(f'<line class="wall" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
                   f'stroke="{WALL}" stroke-width="7" stroke-linecap="round"/>')
        out.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#ffffff" '
                   'stroke-width="1.5" stroke-dasharray="3 3"/>')
    for oil in board.get("oil_fields", []):
        if _hex(oil["hex"]) in centres:
            cx, cy = centres[_hex(oil["hex"])]
            out.extend(_cubes(oil["goods"][:6], cx, cy - 6))
    for mill in board.get("windmills", []):
        if _hex(mill["hex"]) in centres:
            cx, cy = centres[_hex(mill["hex"])]
            out.append(f'<text class="windmill" x="{cx:.1f}" y="{cy - 6:.1f}" font-size="14" '
                       'text-anchor="middle">\u2723</text>')
            if mill["color"]:
                out.extend(_cubes([mill["color"]], cx, cy + 1))
    return out


# ---- the last move --------------------------------------------------------------------------------


def describe(last: dict | None, names: dict[int, str], map_id: str | None = None) -> str:
    """The last move in words, for the panel: the history entry's own `text`, or (an entry
    written before entries had words) the same words made from its move and events."""
    if not last:
        return "No move yet."
    if isinstance(last.get("text"), str) and last["text"]:
        return last["text"] + "."
    seats = [names.get(s, f"seat {s}") for s in range(max(names, default=-1) + 1)]
    teller = Teller(map_id or "rust_belt", seats)
    return teller.entry(last["seat"], last["move"], last.get("events", [])) + "."


def wrap(words: str, width: int) -> list[str]:
    """`words` in lines of at most `width` characters, broken at spaces."""
    lines: list[str] = []
    for word in words.split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def _last_move_marks(last: dict | None, board: dict, geometry: Geometry) -> list[str]:
    """The last move marked on the map in the mover's colour, drawn under the track, the
    cities and the cubes so that it hides none of them: the hex built or urbanized tinted and
    ringed, the route of a delivery as a broad glow along its track, the wall disc removed
    ringed."""
    if not last:
        return []
    centres, move = geometry.centres, last["move"]
    colour = _owner_colour(last["seat"])
    ring = f'fill="{colour}" fill-opacity="0.3" stroke="{colour}" stroke-width="4" stroke-linejoin="round"'
    out: list[str] = []
    if move.get("type") in ("build", "urbanize") and isinstance(move.get("hex"), dict):
        h = _hex(move["hex"])
        if h in centres:
            out.append(f'<polygon class="last-move" points="{geometry.polygon(centres[h], 0.9)}" {ring}/>')
    elif move.get("type") == "deliver":
        links = {link["id"]: link for link in board.get("links", [])}
        glow = (f'fill="none" stroke="{colour}" stroke-opacity="0.45" stroke-width="15" '
                'stroke-linecap="round" stroke-linejoin="round"')
        for link_id in move.get("links", []):
            link = links.get(link_id)
            if link is None:
                continue
            hexes = [link["stops"][0], *link["hexes"], link["stops"][1]]
            points = " ".join(f"{centres[_hex(h)][0]:.1f},{centres[_hex(h)][1]:.1f}"
                              for h in hexes if _hex(h) in centres)
            out.append(f'<polyline class="last-move" points="{points}" {glow}/>')
    elif move.get("type") == "remove_wall" and isinstance(move.get("edge"), dict):
        a, b = _hex(move["edge"]["a"]), _hex(move["edge"]["b"])
        if a in centres and b in centres:
            (ax, ay), (bx, by) = centres[a], centres[b]
            circle = f'cx="{(ax + bx) / 2:.1f}" cy="{(ay + by) / 2:.1f}" r="{SIZE / 2:.1f}"'
            out.append(f'<circle class="last-move" {circle} {ring}/>')
    return out


def _fit(name: str, width: float, size: float, minimum: float = 6.0) -> tuple[list[str], float]:
    """A name in one or two lines and the font size at which it fits `width` pixels (bold
    DejaVu Sans is at most about 0.64 em a character)."""
    lines = [name]
    if len(name) * 0.64 * size > width and " " in name:
        words = name.split(" ")
        best = min(range(1, len(words)), key=lambda i: max(len(" ".join(words[:i])),
                                                             len(" ".join(words[i:]))))
        lines = [" ".join(words[:best]), " ".join(words[best:])]
    broken = []
    for line in lines:  # a word too long even in the smallest size: broken, with a hyphen
        if len(line) * 0.64 * minimum > width:
            half = (len(line) + 1) // 2
            broken += [line[:half] + "-", line[half:]]
        else:
            broken.append(line)
    lines = broken
    longest = max(len(line) for line in lines)
    return lines, max(minimum, min(size, width / (0.64 * max(1, longest))))


WORD_DIRECTION = {"north": "N", "south": "S", "east": "E", "west": "W", "northeast": "NE",
                  "northwest": "NW", "southeast": "SE", "southwest": "SW"}
# The compass points as a board writes them: "north-northeast" -> "NNE".
SHORT_DIRECTION = {name: "".join(WORD_DIRECTION[w] for w in name.split("-")) for name in COMPASS_16}


def _short_place(label: str) -> tuple[str, str]:
    """A hex's place as two short lines for the board: "2 NE of", "Chicago"."""
    where, _, name = label.partition(" of ")
    steps, _, direction = where.rpartition(" hexes ")
    short = SHORT_DIRECTION.get(direction, direction)
    return (f"{steps} {short} of" if steps else f"{short} of"), name


# ---- the map ---------------------------------------------------------------------------------------


def _draw_map(view: dict, map_info: Mapping[str, Any], geometry: Geometry, last: dict | None,
              coords: bool) -> list[str]:
    centres = geometry.centres
    out = ['<g class="hexes" stroke="#6c757d" stroke-width="1">']
    for h in map_info["hexes"]:
        centre = centres[(h["q"], h["r"])]
        out.append(f'<polygon class="hex" data-q="{h["q"]}" data-r="{h["r"]}" '
                   f'points="{geometry.polygon(centre)}" fill="{TERRAIN.get(h["terrain"], "#dee2e6")}"/>')
    out.append("</g>")

    board = view["board"]
    marks = _last_move_marks(last, board, geometry)
    urbanized = _hex(last["move"]["hex"]) if last and last["move"].get("type") == "urbanize" else None
    if urbanized is None:
        out.extend(marks)
    out.append('<g class="track" fill="none" stroke-linecap="round" stroke-width="5">')
    for entry in board["tracks"]:
        key = _hex(entry["hex"])
        if key not in centres:
            continue
        cx, cy = centres[key]
        for track in entry["tracks"]:
            (ax, ay), (bx, by) = (geometry.edge_mid((cx, cy), e) for e in track["edges"])
            colour = _owner_colour(track["owner"])
            curve = f"M{ax:.1f},{ay:.1f} Q{cx:.1f},{cy:.1f} {bx:.1f},{by:.1f}"
            out.append(f'<path d="{curve}" stroke="{colour}"/>')
        for town_exit in entry.get("town_exits", []):
            ex, ey = geometry.edge_mid((cx, cy), town_exit["edge"])
            colour = _owner_colour(town_exit["owner"])
            out.append(f'<line x1="{cx:.1f}" y1="{cy:.1f}" x2="{ex:.1f}" y2="{ey:.1f}" stroke="{colour}"/>')
    out.append("</g>")

    out.extend(_map_features(board, geometry))

    for town in board.get("towns", map_info.get("towns", [])):
        key = _hex(town["hex"])
        if key in centres:
            cx, cy = centres[key]
            out.append(f'<circle class="town" cx="{cx:.1f}" cy="{cy:.1f}" r="7" fill="#ffffff" '
                       f'stroke="{INK}" stroke-width="1.5"/>')
            if town.get("name"):
                out += _label(cx, cy + 17, text(town["name"], 16), 9, weight="normal", kind="town-name")

    for city in board["cities"]:
        key = _hex(city["hex"])
        if key not in centres:
            continue
        cx, cy = centres[key]
        fill = CUBE.get(city["colors"][0], "#ffffff") if city["colors"] else "#ffffff"
        out.append(f'<polygon class="city" points="{geometry.polygon((cx, cy))}" fill="{fill}" '
                   f'fill-opacity="0.85" stroke="{INK}" stroke-width="2"/>')
        if urbanized == key:  # the new city's ring, under its cubes
            out.extend(marks)
        label = city["name"] or ""
        if city["new_city"]:
            label = f"{city['new_city']} {label}".strip()
        # The name fits the hex's width above its cubes: smaller, or on two lines, if long.
        lines, size = _fit(label, SIZE * 1.55, 10)
        top = cy - 11 - (len(lines) - 1) * size
        for i, line in enumerate(lines):
            out += _label(cx, top + i * size, text(line), size, kind="city-name")
        out.extend(_cubes(city["goods"], cx, cy - 4))

    if coords:
        # Each hex's place as players call it (GET /v1/maps/{map}: `place`), in its lower half,
        # clear of the names above; a city or a town is called by the name it shows already.
        named = {_hex(c["hex"]) for c in board["cities"]} | {
            _hex(t["hex"]) for t in board.get("towns", map_info.get("towns", []))}
        label = places(map_info["id"]).label if "id" in map_info else {}
        for h in map_info["hexes"]:
            at = (h["q"], h["r"])
            place = h.get("place") or label.get(at)
            if at in named or not place:
                continue
            cx, cy = centres[at]
            first, second = _short_place(place)
            out.append(f'<g class="coord" data-place={attr(place)}><title>{text(place)}</title>')
            out += _label(cx, cy + SIZE * 0.42, text(first), 7, weight="normal", fill="#343a40",
                          kind="coord-line")
            size = max(5.5, min(7.0, SIZE * 1.6 / (0.6 * max(1, len(second)))))
            out += _label(cx, cy + SIZE * 0.42 + 7.5, text(second), round(size, 1), weight="normal",
                          fill="#343a40", kind="coord-line")
            out.append("</g>")
    return out


# ---- the panel -------------------------------------------------------------------------------------


def _swatch(x: float, baseline: float, colour: str) -> str:
    return f'<rect x="{x:.1f}" y="{baseline - 10:.1f}" width="11" height="11" fill="{colour}"/>'


def _heading(x: float, y: float, words: str) -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" font-size="12" font-weight="bold" fill="{INK}">{words}</text>'


def _result(view: dict, names: dict[int, str]) -> str:
    """The end in a sentence: who won with how many points."""
    scores = sorted(view.get("scores") or [], key=lambda s: (s.get("rank") or 99, s["seat"]))
    winners = [s for s in scores if s.get("rank") == 1 and s.get("points") is not None]
    if not winners:
        return "The game is over: no one is left to win."
    who = " and ".join(names.get(s["seat"], str(s["seat"])) for s in winners)
    verb = "wins" if len(winners) == 1 else "share the win"
    return f"The game is over: {who} {verb} with {winners[0]['points']} points."


def _action_name(action: str | None) -> str:
    return "\u2013" if not action else action.replace("_", " ")


def _draw_panel(view: dict, map_info: Mapping[str, Any], last: dict | None,
                left: float) -> tuple[list[str], float]:
    out: list[str] = []
    y = MARGIN + 14
    x = left
    name, _, subtitle = map_info["name"].partition(" (")
    out.append(f'<text class="title" x="{x:.1f}" y="{y:.1f}" font-size="17" font-weight="bold" '
               f'fill="{INK}">{text(name, 34)}</text>')
    if subtitle:
        y += LINE - 2
        out.append(f'<text x="{x:.1f}" y="{y:.1f}" font-size="11" fill="#495057">'
                   f"{text('(' + subtitle, 60)}</text>")
    y += LINE + 4
    players = view["players"]
    names = {p["seat"]: p["name"] for p in players}
    phase = view["phase"]
    status = f"Round {view['round']} of {view.get('last_round', '?')} \u00b7 {PHASES.get(phase, phase)}"
    out.append(f'<text class="status" x="{x:.1f}" y="{y:.1f}" font-size="13" fill="{INK}">'
               f"{text(status)}</text>")
    y += LINE
    active = view.get("active_seat")
    finished = view.get("status") == "finished" or phase == "finished"
    scores = {s["seat"]: s for s in view.get("scores") or []} if finished else {}
    if finished:
        deciding = _result(view, names)
    elif active is None:
        deciding = "No decision pending."
    else:
        deciding = f"Deciding: {names.get(active, active)}"
    indent = 0.0
    if active is not None and not finished:
        out.append(_swatch(x, y, _owner_colour(active)))
        indent = 16.0
    for line in wrap(deciding, 46)[:3]:
        out.append(f'<text class="deciding" x="{x + indent:.1f}" y="{y:.1f}" font-size="13" '
                   f'font-weight="bold" fill="{INK}">{text(line)}</text>')
        y += LINE
    if not finished and view.get("turn_order"):
        order = " \u2192 ".join(names.get(s, str(s)) for s in view["turn_order"])
        out.append(f'<text class="turn-order" x="{x:.1f}" y="{y:.1f}" font-size="12" fill="{INK}">'
                   f"{text('Turn order: ' + order, 60)}</text>")
        y += LINE
    y += 6

    # The players: at the end, by rank with their points.
    last_column = ("points", 292) if finished else ("action", 292)
    columns = (("", 0), ("rank" if finished else "player", 16), ("cash", 144), ("income", 186),
               ("shares", 228), ("loco", 264), last_column)
    for title, dx in columns:
        out.append(f'<text x="{x + dx:.1f}" y="{y:.1f}" font-size="10" fill="#495057">{title}</text>')
    y += LINE - 2
    rows = sorted(players, key=lambda p: (scores.get(p["seat"], {}).get("rank") or 99, p["seat"])) \
        if finished else players
    for p in rows:
        seat = p["seat"]
        score = scores.get(seat)
        winner = bool(score and score.get("rank") == 1 and score.get("points") is not None)
        weight = "bold" if seat == active or winner else "normal"
        fill = "#868e96" if p.get("eliminated") else INK
        out.append(_swatch(x, y, _owner_colour(seat)))
        out_of_game = bool(p.get("eliminated"))
        name = text(p["name"], 10 if out_of_game else 11) + (" (out)" if out_of_game else "")
        if score is not None and score.get("rank") is not None:
            name = f"{score['rank']}. {name}"  # its rank at the end
        if winner:
            name = "\u2605 " + name
        elif seat == active and not finished:
            name = "\u25b6 " + name
        if finished:
            points = score.get("points") if score else None
            last_cell = (292, "\u2013" if points is None else str(points), "points")
        else:
            last_cell = (292, text(_action_name(p.get("action")), 22), "action")
        cells = [
            (16, name, "name"),
            (144, f"${p.get('cash', 0)}", "cash"),
            (186, str(p.get("income", "")), "income"),
            (228, str(p.get("shares", "")), "shares"),
            (264, str(p.get("locomotive", "")), "locomotive"),
            last_cell,
        ]
        for dx, value, kind in cells:
            size = 10.5 if kind == "action" else 12
            out.append(f'<text class="player-{kind}" data-seat="{seat}" x="{x + dx:.1f}" y="{y:.1f}" '
                       f'font-size="{size}" font-weight="{weight}" fill="{fill}">{value}</text>')
        y += LINE
    y += 8

    # The goods display: only its columns in play.
    display = view.get("goods_display") or {}
    if display:
        out.append(_heading(x, y, "Goods display"))
        bag = sum((view.get("bag") or {}).values())
        out.append(f'<text x="{x + PANEL_WIDTH - 30:.1f}" y="{y:.1f}" font-size="11" text-anchor="end" '
                   f'fill="#495057">{bag} in the bag</text>')
        y += 6
        step = min(17.0, (PANEL_WIDTH - 30) / max(1, len(display)))
        depth = max((len(squares) for squares in display.values()), default=0)
        for i, (column, squares) in enumerate(display.items()):
            cx = x + i * step + step / 2
            dark = column.startswith("dark")
            label = column.split("-")[-1]
            out.append(f'<rect x="{cx - step / 2 + 0.5:.1f}" y="{y:.1f}" width="{step - 1:.1f}" '
                       f'height="{14 + depth * 12:.1f}" rx="2" fill="{"#495057" if dark else "#e9ecef"}"/>')
            out.append(f'<text class="display-column" data-column={attr(column)} x="{cx:.1f}" '
                       f'y="{y + 11:.1f}" font-size="10" text-anchor="middle" '
                       f'fill="{"#ffffff" if dark else INK}">{text(label)}</text>')
            for j, colour in enumerate(squares):
                top = y + 15 + j * 12
                if colour is None:
                    out.append(f'<rect x="{cx - 4.5:.1f}" y="{top:.1f}" width="9" height="9" fill="none" '
                               f'stroke="{"#ced4da" if dark else "#adb5bd"}" stroke-width="0.8"/>')
                else:
                    fill = CUBE.get(colour, "#adb5bd")
                    out.append(f'<rect class="cube" data-color={attr(colour)} x="{cx - 4.5:.1f}" '
                               f'y="{top:.1f}" width="9" height="9" rx="1" fill="{fill}" '
                               f'stroke="{INK}" stroke-width="0.8"/>')
        y += 14 + depth * 12 + LINE
        out.append(f'<text x="{x:.1f}" y="{y - 4:.1f}" font-size="10" fill="#495057">'
                   "light: 1-6 \u00b7 dark: 1-6 \u00b7 A-H: new cities</text>")
        y += 14

    # The last move.
    out.append(_heading(x, y, "Last move"))
    y += LINE - 2
    told = wrap(describe(last, names, view.get("map")), 60)
    if len(told) > 3:
        told = [*told[:2], told[2][:59] + "\u2026"]
    for line in told:
        out.append(f'<text class="last-move-text" x="{x:.1f}" y="{y:.1f}" font-size="12" fill="{INK}">'
                   f"{text(line)}</text>")
        y += LINE - 1
    y += 9

    # The legend.
    out.append(_heading(x, y, "Legend"))
    y += LINE - 2
    entries: list[tuple[str, str]] = [
        (f'<line x1="{x:.1f}" y1="{{y}}" x2="{x + 16:.1f}" y2="{{y}}" stroke="{UNOWNED}" stroke-width="5" '
         'stroke-linecap="round"/>', "unowned track"),
        # Owned track in no one's colour: the players' swatches say whose colour is whose.
        (f'<line x1="{x:.1f}" y1="{{y}}" x2="{x + 16:.1f}" y2="{{y}}" stroke="{INK}" stroke-width="5" '
         f'stroke-linecap="round"/><line x1="{x:.1f}" y1="{{y}}" x2="{x + 16:.1f}" y2="{{y}}" '
         'stroke="#ffffff" stroke-width="2.5" stroke-linecap="round"/>',
         "track, in its owner's colour (see the players)"),
        (f'<circle cx="{x + 8:.1f}" cy="{{y}}" r="6" fill="#ffffff" stroke="{INK}" stroke-width="1.5"/>',
         "town"),
        (f'<rect x="{x:.1f}" y="{{top}}" width="16" height="11" fill="{INK}" fill-opacity="0.2" '
         f'stroke="{INK}" stroke-width="2.5"/>', "the last move, in the mover's colour"),
    ]
    present = sorted({h["terrain"] for h in map_info["hexes"]} - {"city"})
    for terrain in present:
        entries.append((f'<rect x="{x:.1f}" y="{{top}}" width="16" height="11" fill="{TERRAIN.get(terrain)}" '
                        'stroke="#6c757d"/>', TERRAIN_NAMES.get(terrain, terrain)))
    entries.append((f'<rect x="{x:.1f}" y="{{top}}" width="16" height="11" fill="{CUBE["red"]}" '
                    f'fill-opacity="0.85" stroke="{INK}" stroke-width="2"/>',
                    "city, in the colour it takes"))
    board = view["board"]
    if (board.get("wall") or {}).get("discs"):
        entries.append((f'<line x1="{x:.1f}" y1="{{y}}" x2="{x + 16:.1f}" y2="{{y}}" stroke="{WALL}" '
                        'stroke-width="7"/>', "the Wall: a disc on the edge between two hexes"))
    polders = board.get("polders")
    if polders and not polders["open"]:
        box = f'x="{x:.1f}" y="{{top}}" width="16" height="11"'
        entries.append((f'<rect {box} fill="{TERRAIN["polder"]}" stroke="#6c757d"/>'
                        f'<rect {box} fill="#495057" fill-opacity="0.35"/>',
                        f"polder closed until round {polders['open_from_round']}"))
    if board.get("windmills"):
        entries.append((f'<text x="{x + 8:.1f}" y="{{text_y}}" font-size="14" text-anchor="middle">'
                        "\u2723</text>", "windmill (its cube)"))
    if board.get("oil_fields"):
        entries.append((f'<rect x="{x:.1f}" y="{{top}}" width="16" height="11" fill="{TERRAIN["oil_field"]}" '
                        'stroke="#6c757d"/>', "oil field, with the black cubes it holds"))
    for mark, meaning in entries:
        mark = mark.format(y=f"{y - 4:.1f}", top=f"{y - 10:.1f}", text_y=f"{y + 1:.1f}")
        out.append(f'<g class="legend">{mark}')
        out.append(f'<text x="{x + 24:.1f}" y="{y:.1f}" font-size="11" fill="{INK}">{meaning}</text></g>')
        y += LINE - 2
    return out, y + MARGIN


def board_svg(view: dict, map_info: Mapping[str, Any], *, last: dict | None = None,
              coords: bool = False) -> str:
    """The board as an SVG document. `last` is the last history entry ({seat, move, events}), to
    outline and describe; `coords` writes each hex's `q,r`."""
    geometry = Geometry(map_info["hexes"])
    map_width, map_height = geometry.size()
    panel, panel_height = _draw_panel(view, map_info, last, map_width + 8)
    width = map_width + 8 + PANEL_WIDTH
    height = max(map_height, panel_height)
    title = f"{map_info['name']}: round {view['round']}, {view['phase']}"
    out = [
        '<svg xmlns="http://www.w3.org/2000/svg" '
        f'width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" '
        'font-family="DejaVu Sans, Verdana, sans-serif">',
        f"<title>{text(title)}</title>",
        '<rect width="100%" height="100%" fill="#f8f9fa"/>',
        '<g class="map">',
        *_draw_map(view, map_info, geometry, last, coords),
        "</g>",
        f'<line x1="{map_width:.1f}" y1="{MARGIN:.1f}" x2="{map_width:.1f}" y2="{height - MARGIN:.1f}" '
        'stroke="#dee2e6"/>',
        '<g class="panel">',
        *panel,
        "</g>",
        "</svg>",
    ]
    return "\n".join(out)
