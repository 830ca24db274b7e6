"""Seat tokens are parsed as ASCII: a seat written with any other digit is a 401, never a 500.

`str.isdigit` accepts superscripts ('²'), which `int` refuses; `int` accepts Arabic-Indic or
fullwidth digits ('٣', '３'), which are not how a token names its seat. Every such character is
refused where the token is parsed, before the game is loaded.
"""

from __future__ import annotations

import unicodedata
from functools import cache

import pytest

from service.api.error_codes import status_of
from service.referee import tokens
from service.referee.errors import GameError
from service.store import MemoryStore, RedisStore


@cache
def numeric() -> list[str]:
    """Every non-ASCII character Python calls a digit, a decimal or a number. Worked out when a
    test asks (0.6 CPU-s), not when the module is imported: every xdist worker imports it."""
    return [chr(c) for c in range(0x80, 0x110000) if chr(c).isdigit() or chr(c).isnumeric()]


def digit_classes() -> dict[tuple[str, bool, bool], str]:
    """One character of each kind: (category, isdecimal, isdigit) -> its first character."""
    classes: dict[tuple[str, bool, bool], str] = {}
    for char in numeric():
        classes.setdefault((unicodedata.category(char), char.isdecimal(), char.isdigit()), char)
    return classes


def test_every_kind_of_non_ascii_digit_is_covered() -> None:
    classes = digit_classes()
    # Nd decimals (int() takes them), No digits (superscripts: int() refuses them), No and Nl
    # numbers, and Lo numerals (CJK): five kinds in all.
    assert {kind[0] for kind in classes} == {"Nd", "No", "Nl", "Lo"}
    assert len(classes) == 5 and len(numeric()) > 1800


def test_the_parser_refuses_every_non_ascii_seat() -> None:
    wrong = []
    for char in numeric():
        try:
            tokens.token_game(f"game.{char}.secret", "game")
            wrong.append((f"U+{ord(char):04X}", "accepted"))
        except GameError as exc:
            if (status_of(exc.code), exc.code) != (401, "TOKEN_INVALID"):
                wrong.append((f"U+{ord(char):04X}", exc.code))
        except Exception as exc:  # noqa: BLE001 - a crash is what this test looks for
            wrong.append((f"U+{ord(char):04X}", repr(exc)))
    assert wrong == []


def test_ascii_seats_still_parse() -> None:
    assert [tokens.token_game(f"g.{seat}.s", "g")[1] for seat in "0123456789"] == list(range(10))


def on_the_wire(char: str) -> str:
    """The header value a server hands the app when a client sends `char` in UTF-8: WSGI decodes
    header bytes as latin-1 (so '²' arrives as itself, '٣' as two latin-1 characters)."""
    return char.encode().decode("latin-1")


@pytest.fixture(params=["memory", "redis"])
def hostile_api(request, api_on):
    if request.param == "memory":
        return api_on(MemoryStore())
    store = RedisStore(request.getfixturevalue("redis_url"))
    request.addfinalizer(store.close)
    return api_on(store)


@pytest.mark.parametrize("path", ["moves", "moves/validate"])
def test_a_token_whose_seat_is_a_non_ascii_digit_is_401(hostile_api, path: str) -> None:
    api = hostile_api
    game = api.create()
    gid = game["game_id"]
    before = api.snapshot(gid)
    move = api.legal(gid, game["active_seat"])[0]
    secret = game["seats"][0]["token"].split(".")[2]
    sent = sorted({*"¹²³¼½¾", *(on_the_wire(c) for c in digit_classes().values()), "٣", "３"})
    for char in sent:
        response = api.client.post(
            f"/v1/games/{gid}/{path}", json=move, headers={"Authorization": f"Bearer {gid}.{char}.{secret}"}
        )
        assert response.status_code == 401, (char, response.get_data()[:300])
        assert response.get_json()["code"] == "TOKEN_INVALID"
    assert api.snapshot(gid) == before
