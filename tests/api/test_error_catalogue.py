"""docs/error-codes.md lists every code the source can answer with, each with the status and the
fields the source gives it, and lists nothing the source cannot answer."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from service.api.error_codes import API_CODES, RULE_FIELDS
from service.engine.errors import CODE_FIELDS, CODES, SOMETIMES_FIELDS

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "error_codes_doc.py"


@pytest.fixture(scope="module")
def raised():  # type: ignore[no-untyped-def]
    """What tools/error_codes_doc.py finds raised in the source: scanned once for the module's
    tests (a scan walks every syntax tree of service/, some 0.7 CPU-s)."""
    spec = importlib.util.spec_from_file_location("error_codes_doc", TOOL)
    module = importlib.util.module_from_spec(spec)
    sys.modules["error_codes_doc"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module.raised_codes()


def test_the_page_is_up_to_date() -> None:
    result = subprocess.run([sys.executable, str(TOOL), "--check"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_the_scan_finds_the_raise_sites_it_should(raised) -> None:  # type: ignore[no-untyped-def]
    found = {(r.code, r.kind) for r in raised}
    # One of each way a code is named: a literal, a name assigned a choice, a module table.
    assert ("TOKEN_MISSING", "api") in found
    assert ("VALIDATION_ERROR", "api") in found and ("UNKNOWN_MOVE_TYPE", "api") in found
    assert ("METHOD_NOT_ALLOWED", "api") in found and ("HTTP_ERROR", "api") in found
    assert ("OFF_MAP", "rule") in found and ("PLAYER_COUNT", "setup") in found
    # In front of the app: the admission layer's refusals and the server's own answers.
    for code in FRONT_CODES:
        assert (code, "api") in found, code
    assert ("URI_TOO_LONG", "api") in found and ("AT_CAPACITY", "api") in found


# The admission layer's refusals (service/admission.py), answered before the app reads anything.
FRONT_CODES = ("TOO_MANY_REQUESTS", "TOO_MANY_WAITS", "TOO_MANY_AUTH_FAILURES", "BODY_TIMEOUT",
               "BAD_CHUNKED_BODY", "BODY_INCOMPLETE")


def test_every_code_the_admission_layer_answers_is_listed_with_its_status(raised) -> None:  # type: ignore[no-untyped-def]
    admission = {(r.code, r.status) for r in raised
                 if r.where.startswith("service/admission.py")}
    assert {code for code, _ in admission} == set(FRONT_CODES)
    assert {(code, API_CODES[code].status) for code, _ in admission} == admission
    contract = (ROOT / "openapi.yaml").read_text(encoding="utf-8")
    page = (ROOT / "docs" / "error-codes.md").read_text(encoding="utf-8")
    for code, status in admission:
        assert f"`{code}`" in contract, f"{code} is not in openapi.yaml"
        assert f"| `{code}` | {status} |" in page, code


def test_every_code_the_source_raises_is_listed_and_every_listed_code_is_raised(raised) -> None:  # type: ignore[no-untyped-def]
    api = {r.code for r in raised if r.kind in ("api", "setup")}
    rules = {r.code for r in raised if r.kind == "rule"}
    assert sorted(api - set(API_CODES)) == [], "raised but not in service/api/error_codes.py"
    assert sorted(set(API_CODES) - api) == [], "listed but never raised"
    assert sorted(rules - set(CODES)) == []
    assert sorted(set(CODES) - rules) == []
    page = (ROOT / "docs" / "error-codes.md").read_text(encoding="utf-8")
    for code in api | rules:
        assert f"| `{code}` |" in page, code


def test_statuses_and_fields_are_the_ones_the_source_gives(raised) -> None:  # type: ignore[no-untyped-def]
    fields_by_code: dict[str, set[str]] = {}
    for one in raised:
        if one.kind == "api":
            listed = API_CODES[one.code]
            if one.status is not None:
                assert one.status == listed.status, one
            # A code raised in several places may carry a field in some of them (the move's
            # `index` of a record import); every field is listed, and every listed one is sent.
            assert one.fields <= set(listed.fields), one
            fields_by_code.setdefault(one.code, set()).update(one.fields)
        elif one.kind == "setup":
            assert API_CODES[one.code].status == 422  # the API answers a SetupError so
        else:
            assert one.fields <= set(RULE_FIELDS), f"{one}: say in RULE_FIELDS what the field holds"
    for code, fields in fields_by_code.items():
        assert fields == set(API_CODES[code].fields), code


def test_every_raise_of_a_rule_code_carries_the_fields_the_engine_lists_for_it(raised) -> None:  # type: ignore[no-untyped-def]
    carried: dict[str, set[str]] = {}
    for one in raised:
        if one.kind != "rule":
            continue
        always = set(CODE_FIELDS.get(one.code, ()))
        allowed = always | set(SOMETIMES_FIELDS.get(one.code, {}))
        assert always <= one.fields, f"{one}: lacks {sorted(always - one.fields)}"
        assert one.fields <= allowed, f"{one}: list {sorted(one.fields - allowed)} in errors.py"
        carried.setdefault(one.code, set()).update(one.fields)
    # Nothing listed that no raise carries, and every field listed has its meaning on the page.
    for code, when in SOMETIMES_FIELDS.items():
        assert set(when) <= carried.get(code, set()), code
    assert set(CODE_FIELDS) | set(SOMETIMES_FIELDS) <= set(CODES)
    listed = {f for names in CODE_FIELDS.values() for f in names} | {
        f for names in SOMETIMES_FIELDS.values() for f in names}
    assert listed <= set(RULE_FIELDS)
    page = (ROOT / "docs" / "error-codes.md").read_text(encoding="utf-8")
    assert "| `OFF_MAP` | track may not be built off the map or point off it | `hex` (when" in page
    assert "| a bid must be at least $1 and above the high bid | `amount`, `minimum` |" in page


def to_phase(api, game: dict, phase: str) -> dict:  # type: ignore[no-untyped-def]
    simple = {"issue_shares": {"type": "issue_shares", "count": 0}, "auction": {"type": "drop_out"}}
    view = api.view(game["game_id"])
    while view["phase"] != phase:
        seat = view["active_seat"]
        move = simple.get(view["phase"]) or api.legal(game["game_id"], seat)[0]
        view = api.move(game["game_id"], game["seats"][seat]["token"], move).get_json()["game"]
    return view


def test_off_map_and_bid_too_low_over_http_say_which_hex_and_amount(api) -> None:  # type: ignore[no-untyped-def]
    game = api.create(seed="fields")
    gid = game["game_id"]
    view = to_phase(api, game, "auction")
    first = view["active_seat"]
    assert api.move(gid, game["seats"][first]["token"], {"type": "bid", "amount": 3}).status_code == 200
    second = api.view(gid)["active_seat"]
    low = api.move(gid, game["seats"][second]["token"], {"type": "bid", "amount": 2}).get_json()
    assert (low["code"], low["amount"], low["minimum"]) == ("BID_TOO_LOW", 2, 4)
    view = to_phase(api, game, "build")
    seat = view["active_seat"]
    off = {"type": "build", "hex": {"q": 0, "r": 0}, "tracks": [[0, 3]], "seat": seat}
    verdict = api.client.post(f"/v1/games/{gid}/moves/validate", json=off).get_json()
    assert verdict["legal"] is False and verdict["code"] == "OFF_MAP"
    assert verdict["hex"] == {"q": 0, "r": 0}
    refused = api.move(gid, game["seats"][seat]["token"], {k: v for k, v in off.items() if k != "seat"})
    assert refused.status_code == 422 and refused.get_json()["hex"] == {"q": 0, "r": 0}


def test_a_rule_error_over_http_carries_the_fields_the_page_lists(api) -> None:  # type: ignore[no-untyped-def]
    game = api.create()
    seat = game["active_seat"]
    wrong = (seat + 1) % 3
    response = api.move(game["game_id"], game["seats"][wrong]["token"], {"type": "issue_shares", "count": 1})
    body = response.get_json()
    assert response.status_code == 422 and body["code"] == "NOT_YOUR_TURN"
    assert body["active_seat"] == seat
    page = (ROOT / "docs" / "error-codes.md").read_text(encoding="utf-8")
    assert "| `NOT_YOUR_TURN` | another seat decides now | `active_seat` |" in page


@pytest.mark.parametrize("header", ["0", "3", "abc", '"1",', "W/1"])
def test_an_unquoted_if_match_is_a_clear_400(api, header: str) -> None:  # type: ignore[no-untyped-def]
    game = api.create()
    token = game["seats"][game["active_seat"]]["token"]
    before = api.snapshot(game["game_id"])
    response = api.move(game["game_id"], token, {"type": "issue_shares", "count": 0}, If_Match=header)
    body = response.get_json()
    assert response.status_code == 400 and body["code"] == "BAD_ETAG"
    assert 'If-Match: "3"' in body["detail"]
    assert api.snapshot(game["game_id"]) == before
    quoted = api.move(game["game_id"], token, {"type": "issue_shares", "count": 0}, If_Match='"0"')
    assert quoted.status_code == 200


def test_an_unquoted_if_none_match_is_a_clear_400_too(api) -> None:  # type: ignore[no-untyped-def]
    game = api.create()
    response = api.client.get(f"/v1/games/{game['game_id']}", headers={"If-None-Match": "0"})
    assert response.status_code == 400 and response.get_json()["code"] == "BAD_ETAG"
