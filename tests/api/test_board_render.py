"""board.svg: the board a player can play from, rendered to PNG by a real renderer (cairosvg) on
every map, and read back as XML for what it must show."""

from __future__ import annotations

import io
import math
import random
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import cairosvg
import pytest
from PIL import Image

from service.engine import game
from service.engine.playout import RandomPlayer
from service.render.board import CUBE, NEIGHBOUR, SEATS, WALL, Geometry, board_svg, describe

MAPS = ["rust_belt", "madagascar", "holland", "iraq", "berlin"]
SVG = "{http://www.w3.org/2000/svg}"


def midgame(map_id: str, names: list[str], rounds: int = 3, seed: str = "board") -> tuple[dict, dict]:
    """A random game (players funded so it lasts) played into round `rounds`: its view and the
    last history entry."""
    options = {"windmills": True} if map_id == "holland" else {}
    state = game.new_game(map_id, names, seed, options)
    for player in state["players"]:
        player["cash"] = 300
    chooser = RandomPlayer(random.Random(4))
    last: dict = {}
    while not game.is_finished(state) and (state["round"] < rounds or state["phase"] != "build"):
        seat = game.active_seat(state)
        move = chooser.choose(state, seat, game.legal_moves(state, seat))
        state, events = game.apply(state, seat, move)
        last = {"index": 0, "seat": seat, "move": move, "events": events, "version": 1}
    return {"game_id": "g", "version": 1, **game.view(state)}, last


def render(svg: str) -> Image.Image:
    return Image.open(io.BytesIO(cairosvg.svg2png(bytestring=svg.encode("utf-8"))))


def texts(root: ET.Element, kind: str | None = None) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(f"{SVG}text") if kind is None or t.get("class") == kind]


@pytest.mark.parametrize("map_id", MAPS)
def test_the_board_of_every_map_renders_and_shows_what_a_player_needs(map_id: str, tmp_path: Path) -> None:
    names = ["Ann", "Bob", "Cat"] if map_id == "holland" else ["Ann", "Bob", "Cat", "Dan"]
    view, last = midgame(map_id, names)
    info = game.map_info(map_id)
    svg = board_svg(view, info, last=last)
    root = ET.fromstring(svg)  # well-formed XML
    width, height = float(root.get("width")), float(root.get("height"))
    png = render(svg)
    png.save(tmp_path / f"{map_id}.png")
    assert png.size == (round(width), round(height))
    assert 800 < png.size[0] < 2000 and 500 < png.size[1] < 1400
    colours = png.convert("RGB").getcolors(1 << 20)
    assert colours is not None and len(colours) > 50  # not blank: terrain, track, cubes, text
    panel = png.convert("L").crop((int(width) - 400, 0, int(width), 200))
    assert panel.getextrema()[0] < 80  # dark text on the light panel

    # Round, phase and whose decision it is.
    assert f"Round {view['round']} of {view['last_round']} \u00b7 Build track" in texts(root, "status")
    deciding = names[view["active_seat"]]
    assert texts(root, "deciding") == [f"Deciding: {deciding}"]
    # Each player's cash, income, shares, locomotive and action, by seat.
    for p in view["players"]:
        row = {t.get("class"): "".join(t.itertext()) for t in root.iter(f"{SVG}text")
               if t.get("data-seat") == str(p["seat"])}
        assert p["name"] in row["player-name"]
        assert row["player-cash"] == f"${p['cash']}"
        assert row["player-income"] == str(p["income"])
        assert row["player-shares"] == str(p["shares"])
        assert row["player-locomotive"] == str(p["locomotive"])
        assert row["player-action"] == (p["action"] or "\u2013").replace("_", " ")
    # The goods display: exactly the columns in play (a column the map removes is absent).
    columns = [t.get("data-column") for t in root.iter(f"{SVG}text") if t.get("class") == "display-column"]
    assert columns == list(view["goods_display"])
    panel_group = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "panel")
    shown = sum(1 for r in panel_group.iter(f"{SVG}rect") if r.get("class") == "cube")
    assert shown == sum(1 for squares in view["goods_display"].values() for c in squares if c)
    # Every named town by name, every city by name.
    for town in view["board"].get("towns", []):
        if town["name"]:
            assert town["name"][:15] in " ".join(texts(root, "town-name"))
    shown_cities = " ".join(texts(root, "city-name")).replace("- ", "")  # a long name, broken
    for city in view["board"]["cities"]:
        label = f"{city['new_city'] or ''} {city['name'] or ''}".strip()
        assert label in shown_cities, label
    # The last move, in words, and a legend.
    assert texts(root, "last-move-text")[0].startswith(last["move"] and names[last["seat"]])
    assert sum(1 for g in root.iter(f"{SVG}g") if g.get("class") == "legend") >= 6


def test_holland_has_no_display_column_for_its_removed_new_city() -> None:
    view, last = midgame("holland", ["Ann", "Bob", "Cat"], rounds=1)
    assert "E" not in view["goods_display"]
    root = ET.fromstring(board_svg(view, game.map_info("holland"), last=last))
    columns = {t.get("data-column") for t in root.iter(f"{SVG}text") if t.get("class") == "display-column"}
    assert "E" not in columns and {"A", "B", "light-1", "dark-6"} <= columns


def test_cubes_are_readable_at_1x() -> None:
    view, _ = midgame("rust_belt", ["Ann", "Bob", "Cat"], rounds=1)
    svg = board_svg(view, game.map_info("rust_belt"))
    cubes = re.findall(r'<rect class="cube" data-color="(\w+)" x="[\d.]+" y="[\d.]+" width="([\d.]+)" '
                       r'height="([\d.]+)"[^>]*fill="(#\w+)" stroke="(#\w+)"', svg)
    assert cubes
    for colour, w, h, fill, stroke in cubes:
        assert float(w) >= 9 and float(h) >= 9  # 9 px squares, outlined so yellow shows on yellow
        assert fill == CUBE[colour] and stroke == "#212529"
    # On the picture, a city's cubes are their own colour, not blended with the city's.
    png = render(svg).convert("RGB")
    match = re.search(r'<rect class="cube" data-color="red" x="([\d.]+)" y="([\d.]+)"', svg)
    x, y = float(match.group(1)), float(match.group(2))
    assert png.getpixel((round(x + 4.5), round(y + 4.5))) == (0xD7, 0x26, 0x3D)


def test_the_last_move_is_marked_in_the_movers_colour_under_track_and_cubes() -> None:
    view, _ = midgame("rust_belt", ["Ann", "Bob", "Cat"], rounds=2)
    h = view["board"]["tracks"][0]["hex"]
    move = {"type": "build", "hex": h, "tracks": [[0, 3]]}
    built = {"seat": 2, "move": move, "events": [
        {"type": "track_built", "seat": 2, "hex": h, "cost": 3, "tile": "straight", "kind": "new",
         "tracks": [[0, 3]]}]}
    svg = board_svg(view, game.map_info("rust_belt"), last=built)
    outline = re.findall(r'<polygon class="last-move" points="([^"]+)" fill="(#\w+)"', svg)
    assert len(outline) == 1 and outline[0][1] == SEATS[built["seat"]]
    geometry = Geometry(game.map_info("rust_belt")["hexes"])
    xs = [float(p.split(",")[0]) for p in outline[0][0].split()]
    ys = [float(p.split(",")[1]) for p in outline[0][0].split()]
    assert math.dist((sum(xs) / 6, sum(ys) / 6), geometry.centres[(h["q"], h["r"])]) < 1
    # Drawn before the track, the cities and their cubes, so that it hides none of them.
    assert svg.index('class="last-move"') < svg.index('<g class="track"') < svg.index('class="cube"')
    place = game.map_info("rust_belt")["hexes"]
    where = next(x["place"] for x in place if (x["q"], x["r"]) == (h["q"], h["r"]))
    assert f"Cat builds a straight {where} for $3." in svg
    # A delivery glows along its route; a bid has nothing to mark but is told in words.
    link = view["board"]["links"][0]
    delivered = {"seat": 1, "move": {"type": "deliver", "from": link["stops"][0], "color": "red",
                                      "links": [link["id"]]}, "events": []}
    svg = board_svg(view, game.map_info("rust_belt"), last=delivered)
    assert len(re.findall(r'<polyline class="last-move"[^>]+stroke="' + SEATS[1], svg)) == 1
    assert svg.index('class="last-move"') < svg.index('<g class="track"')
    bid = {"seat": 2, "move": {"type": "bid", "amount": 7}, "events": [],
           "text": "Cat bids $7 for turn order"}
    svg = board_svg(view, game.map_info("rust_belt"), last=bid)
    assert 'class="last-move"' not in svg and "Cat bids $7 for turn order." in svg


def test_each_hex_is_labelled_with_its_place_on_request_clear_of_the_names() -> None:
    view, _ = midgame("berlin", ["Ann", "Bob", "Cat"], rounds=1)
    info = game.map_info("berlin")
    assert 'class="coord"' not in board_svg(view, info)
    root = ET.fromstring(board_svg(view, info, coords=True))
    shown = {g.get("data-place") for g in root.iter(f"{SVG}g") if g.get("class") == "coord"}
    named = {(c["hex"]["q"], c["hex"]["r"]) for c in view["board"]["cities"]} | {
        (t["hex"]["q"], t["hex"]["r"]) for t in view["board"]["towns"]}
    assert shown == {h["place"] for h in info["hexes"] if (h["q"], h["r"]) not in named}
    assert not any(re.search(r"\d+,\d+", t) for t in texts(root))
    # In the lower half of its hex: below the centre, where no town's or city's name is.
    geometry = Geometry(info["hexes"])
    for g in root.iter(f"{SVG}g"):
        if g.get("class") == "coord":
            hexes = [h for h in info["hexes"] if h["place"] == g.get("data-place")]
            centre = geometry.centres[(hexes[0]["q"], hexes[0]["r"])]
            for t in g.iter(f"{SVG}text"):
                assert 0 < float(t.get("y")) - centre[1] < 30 * 0.9


def test_city_names_fit_their_hex() -> None:
    for map_id in MAPS:
        view, _ = midgame(map_id, ["Ann", "Bob", "Cat"], rounds=1)
        view["board"]["cities"][-1].update(new_city="D", name="Hohenschönhausen")  # the longest
        root = ET.fromstring(board_svg(view, game.map_info(map_id)))
        shown = " ".join(texts(root, "city-name")).replace("- ", "")
        assert "D Hohenschönhausen" in shown
        for t in root.iter(f"{SVG}text"):
            if t.get("class") == "city-name":
                width = len("".join(t.itertext())) * 0.64 * float(t.get("font-size"))
                assert width <= 30 * 1.6, ("".join(t.itertext()), t.get("font-size"))


def test_the_legend_shows_owned_track_in_no_seats_colour() -> None:
    view, _ = midgame("rust_belt", ["Ann", "Bob", "Cat"], rounds=1)
    root = ET.fromstring(board_svg(view, game.map_info("rust_belt")))
    legend = [g for g in root.iter(f"{SVG}g") if g.get("class") == "legend"]
    owned = next(g for g in legend if "owner" in "".join(g.itertext()))
    assert not {e.get("stroke") for e in owned.iter()} & set(SEATS)


def test_a_finished_board_shows_the_winner_ranks_and_points_and_turn_order_as_such() -> None:
    view, _ = midgame("rust_belt", ["Ann", "Bob", "Cat", "Dan"], rounds=1)
    root = ET.fromstring(board_svg(view, game.map_info("rust_belt")))
    order = " \u2192 ".join(["Ann", "Bob", "Cat", "Dan"][s] for s in view["turn_order"])
    assert texts(root, "turn-order") == [f"Turn order: {order}"]
    assert not any(re.match(r"\d\. ", t) for t in texts(root, "player-name"))
    finished = {**view, "status": "finished", "phase": "finished", "active_seat": None, "scores": [
        {"seat": 0, "points": 16, "rank": 2}, {"seat": 1, "points": 10, "rank": 3},
        {"seat": 2, "points": 27, "rank": 1}, {"seat": 3, "points": -24, "rank": 4}]}
    root = ET.fromstring(board_svg(finished, game.map_info("rust_belt")))
    assert texts(root, "deciding") == ["The game is over: Cat wins with 27 points."]
    assert texts(root, "player-name") == ["\u2605 1. Cat", "2. Ann", "3. Bob", "4. Dan"]
    assert texts(root, "player-points") == ["27", "16", "10", "-24"]
    assert texts(root, "turn-order") == []


def test_names_with_control_characters_and_markup_stay_well_formed() -> None:
    view, last = midgame("rust_belt", ["Ann", "Bob", "Cat"], rounds=1)
    view["players"][0]["name"] = "A\x01<b>&\x07\x1b[31m\ud800"
    svg = board_svg(view, game.map_info("rust_belt"), last=last)
    root = ET.fromstring(svg)
    name = next(t for t in texts(root, "player-name") if "<b>" in t)
    assert "\x01" not in name and "\ufffd<b>&" in name
    assert render(svg).size[0] > 0


# ---- the map drawing --------------------------------------------------------------------------------


@pytest.mark.parametrize("map_id", MAPS)
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
    view, _ = midgame("holland", ["Ann", "Bob", "Cat"], rounds=1)
    info = game.map_info("holland")
    h = info["hexes"][40]
    view["board"] = {**view["board"], "tracks": [{"hex": {"q": h["q"], "r": h["r"]},
                                                  "tracks": [{"edges": [0, 3], "owner": 0}]}]}
    svg = board_svg(view, info)
    assert len(re.findall('<polygon class="hex"', svg)) == len(info["hexes"])
    assert len(re.findall(r'<path d="[^"]+" stroke="#e8590c"/>', svg)) == 1


def _svg(map_id: str, options: dict | None = None) -> str:
    state = game.new_game(map_id, ["Ada", "Bo", "Cy"], "render", options or {})
    return board_svg({"game_id": "g", "version": 0, **game.view(state)}, game.map_info(map_id))


def test_berlin_draws_every_standing_wall_disc_on_its_edge() -> None:
    svg = _svg("berlin")
    walls = re.findall(r'<line class="wall" x1="([\d.]+)" y1="([\d.]+)" x2="([\d.]+)" y2="([\d.]+)" '
                       f'stroke="{WALL}"', svg)
    assert len(walls) == 19
    geometry = Geometry(game.map_info("berlin")["hexes"])
    for disc, (x1, y1, x2, y2) in zip(game.map_info("berlin")["features"]["wall"], walls, strict=True):
        a = geometry.centres[(disc["a"]["q"], disc["a"]["r"])]
        b = geometry.centres[(disc["b"]["q"], disc["b"]["r"])]
        middle = ((float(x1) + float(x2)) / 2, (float(y1) + float(y2)) / 2)
        assert math.dist(middle, ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)) < 0.5  # on the shared edge
    assert "the Wall: a disc on the edge between two hexes" in svg


def test_iraq_oil_fields_show_their_cubes_and_holland_its_closed_polders_and_windmills() -> None:
    state = game.new_game("iraq", ["Ada", "Bo", "Cy"], "render")
    on_fields = sum(min(6, len(state["cubes"][f"{f['hex']['q']},{f['hex']['r']}"]))
                    for f in game.map_info("iraq")["features"]["oil_fields"])
    on_cities = sum(c["goods"].count("black") for c in game.view(state)["board"]["cities"])
    assert on_fields > 0
    root = ET.fromstring(_svg("iraq"))
    board = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "map")
    cubes = [r.get("data-color") for r in board.iter(f"{SVG}rect") if r.get("class") == "cube"]
    assert cubes.count("black") == on_fields + on_cities
    holland = _svg("holland", {"windmills": True})
    assert holland.count('class="closed-polder"') == 45
    assert holland.count('class="windmill"') == 5


def test_board_svg_over_http_outlines_the_last_history_entry(api) -> None:  # type: ignore[no-untyped-def]
    game_ = api.create()
    gid = game_["game_id"]
    first = api.client.get(f"/v1/games/{gid}/board.svg")
    assert first.status_code == 200 and first.headers["ETag"] == '"0"'
    assert "No move yet." in first.get_data(as_text=True)
    view = api.play(game_, 4)
    history = api.client.get(f"/v1/games/{gid}/history").get_json()
    last = history[-1]
    response = api.client.get(f"/v1/games/{gid}/board.svg", query_string={"coords": "1"})
    svg = response.get_data(as_text=True)
    assert response.status_code == 200 and response.headers["ETag"] == f'"{view["version"]}"'
    root = ET.fromstring(svg)
    names = {p["seat"]: p["name"] for p in view["players"]}
    assert " ".join(texts(root, "last-move-text")) == describe(last, names, view["map"])
    assert last["text"] + "." == describe(last, names)
    assert sum(1 for g in root.iter(f"{SVG}g") if g.get("class") == "coord") > 100
    # While the game stands at a version, asking again with it answers 304 and no picture.
    again = api.client.get(f"/v1/games/{gid}/board.svg", headers={"If-None-Match": response.headers["ETag"]})
    assert again.status_code == 304 and again.get_data() == b""
    assert again.headers["ETag"] == response.headers["ETag"]
    older = api.client.get(f"/v1/games/{gid}/board.svg", headers={"If-None-Match": '"0"'})
    assert older.status_code == 200
    bad = api.client.get(f"/v1/games/{gid}/board.svg", query_string={"coords": "yes"})
    assert bad.status_code == 400 and bad.get_json()["code"] == "BAD_QUERY"
