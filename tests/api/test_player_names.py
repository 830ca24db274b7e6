"""Player names: 1-64 characters, trimmed, no control, format, private-use, surrogate or
unassigned characters (nor U+FFFE/U+FFFF); the rest is refused with 400, on creates and imports
alike. Whatever a stored game holds, board.svg is well-formed XML."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from service.engine import game
from service.render import board_svg
from tests.api.test_hostile import assert_problem

HOSTILE = {
    "NUL": "a\x00b",
    "U+0001": "\x01",
    "ESC": "Ann\x1b[31m",
    "DEL": "a\x7f",
    "C1 control": "a\x85b",
    "U+FFFE": "a\ufffe",
    "U+FFFF": "\uffff",
    "bidi override (Cf)": "evil\u202eexe.txt",
    "zero-width space (Cf)": "a\u200bb",
    "BOM (Cf)": "\ufeffAnn",
    "private use (Co)": "a\ue000",
    "astral private use (Co)": "a\U000f0000",
    "unassigned (Cn)": "a\u0378",
    "leading space": " Ann",
    "trailing tab": "Ann\t",
    "newline inside": "Ann\nLee",
    "only spaces": "   ",
    "empty": "",
    "65 characters": "x" * 65,
}
FINE = ["Ann", "Ann Lee", "Zoë", "李小龍", "🚂 Stephenson", "x" * 64, "O'Brien & <Sons>"]


def new_game(names: list[str]) -> dict:
    return {"map": "rust_belt", "players": [{"name": n} for n in names], "seed": "names"}


@pytest.mark.parametrize("name", list(HOSTILE.values()), ids=list(HOSTILE))
def test_a_hostile_name_is_refused_on_create(api, name: str) -> None:
    response = api.client.post("/v1/games", json=new_game([name, "Bo", "Cy"]))
    body = assert_problem(response, 400, "VALIDATION_ERROR")
    assert "players" in body["errors"]


@pytest.mark.parametrize("name", list(HOSTILE.values()), ids=list(HOSTILE))
def test_a_hostile_name_is_refused_on_import(api, name: str) -> None:
    created = api.create()
    record = api.client.get(f"/v1/games/{created['game_id']}/record").get_json()
    record = {**record, "seed": "test-seed", "players": [{"name": name}, *record["players"][1:]]}
    assert_problem(api.client.post("/v1/games", json={"record": record}), 400, "VALIDATION_ERROR")


def test_names_of_every_script_are_welcome_and_kept_as_sent(api) -> None:
    for i in range(0, len(FINE), 3):
        names = (FINE[i : i + 3] + ["Bo", "Cy"])[:3]
        response = api.client.post("/v1/games", json=new_game(names))
        assert response.status_code == 201, response.get_json()
        assert [p["name"] for p in response.get_json()["players"]] == names


@pytest.mark.parametrize("name", [n for n in HOSTILE.values() if n], ids=[k for k, n in HOSTILE.items() if n])
def test_board_svg_is_well_formed_whatever_a_stored_name_holds(name: str) -> None:
    # A game stored before names were checked may hold anything: the picture must still parse.
    state = game.new_game("rust_belt", [name, "<b>&amp;", "]]>"], "svg")
    view = {"game_id": "g", "version": 0, **game.view(state)}
    svg = board_svg(view, game.map_info("rust_belt"))
    root = ET.fromstring(svg.encode())
    texts = "".join(root.itertext())
    assert "<b>&amp;" in texts and "]]>" in texts  # shown as text, not markup
