"""HTTP semantics of the requests: media types (415), preconditions (If-Match compares strongly,
RFC 9110 13.1.1), and integers as JSON Schema counts them (2.0 is the integer 2)."""

from __future__ import annotations

import orjson
import pytest

from tests.api.test_hostile import assert_problem


@pytest.fixture
def game(api) -> dict:
    game = api.create()
    game["token"] = game["seats"][game["active_seat"]]["token"]
    game["before"] = api.snapshot(game["game_id"])
    return game


def post(api, path: str, data: bytes, content_type: str | None, token: str | None = None, **headers: str):
    if content_type is not None:
        headers["Content-Type"] = content_type
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return api.client.post(path, data=data, headers=headers)


# -- media types ---------------------------------------------------------------------------------

NOT_JSON = [None, "text/plain", "application/xml", "application/x-www-form-urlencoded",
            "application/json-patch+json", "application/json; charset=latin-1", "json"]


@pytest.mark.parametrize("content_type", NOT_JSON)
def test_a_body_that_is_not_labelled_json_is_415(api, game, content_type: str | None) -> None:
    move = orjson.dumps({"type": "issue_shares", "count": 0})
    gid = game["game_id"]
    for path in (f"/v1/games/{gid}/moves", f"/v1/games/{gid}/moves/validate"):
        response = post(api, path, move, content_type, game["token"])
        body = assert_problem(response, 415, "UNSUPPORTED_MEDIA_TYPE")
        assert "application/json" in body["detail"]
        assert response.headers["Accept"] == "application/json"
    create = orjson.dumps({"map": "rust_belt", "players": [{"name": n} for n in "abc"]})
    assert_problem(post(api, "/v1/games", create, content_type), 415, "UNSUPPORTED_MEDIA_TYPE")
    assert api.snapshot(gid) == game["before"]


JSON_LABELS = ["application/json", "application/json; charset=utf-8", "Application/JSON; Charset=UTF-8",
               'application/json;charset="utf-8"']


@pytest.mark.parametrize("content_type", JSON_LABELS)
def test_json_is_read_however_its_label_is_spelled(api, game, content_type: str) -> None:
    move = orjson.dumps({"type": "issue_shares", "count": 0})
    response = post(api, f"/v1/games/{game['game_id']}/moves", move, content_type, game["token"])
    assert response.status_code == 200, response.get_json()


@pytest.mark.parametrize("content_type", [None, "application/json", "text/plain"])
def test_a_post_without_a_body_is_400_whatever_its_label(api, game, content_type: str | None) -> None:
    # Nothing was sent to mislabel: the body is missing, and a missing body is malformed JSON.
    response = post(api, f"/v1/games/{game['game_id']}/moves", b"", content_type, game["token"])
    assert_problem(response, 400, "MALFORMED_JSON")
    assert_problem(post(api, "/v1/games", b"", content_type), 400, "MALFORMED_JSON")
    assert api.snapshot(game["game_id"]) == game["before"]


def test_an_unknown_path_is_404_whatever_its_body(api) -> None:
    assert_problem(post(api, "/v1/nothing", b"x", "text/plain"), 404, "NOT_FOUND")


# -- preconditions ---------------------------------------------------------------------------------

NO_SHARES = {"type": "issue_shares", "count": 0}


@pytest.mark.parametrize("if_match", ['W/"0"', 'W/"0", W/"1"'])
def test_if_match_refuses_weak_tags(api, game, if_match: str) -> None:
    response = api.move(game["game_id"], game["token"], NO_SHARES, If_Match=if_match)
    body = assert_problem(response, 412, "VERSION_MISMATCH")
    assert body["version"] == 0 and response.headers["ETag"] == '"0"'
    assert api.snapshot(game["game_id"]) == game["before"]


@pytest.mark.parametrize("if_match", ['"0"', '*', 'W/"0", "0"', '"7", "0"'])
def test_if_match_accepts_a_strong_tag_of_the_version(api, game, if_match: str) -> None:
    response = api.move(game["game_id"], game["token"], NO_SHARES, If_Match=if_match)
    assert response.status_code == 200, response.get_json()


def test_if_none_match_still_compares_weakly(api, game) -> None:
    for tag in ('"0"', 'W/"0"', '"3", W/"0"', "*"):
        response = api.client.get(f"/v1/games/{game['game_id']}", headers={"If-None-Match": tag})
        assert response.status_code == 304, tag


# -- integers --------------------------------------------------------------------------------------


def test_integers_written_with_a_zero_fraction_are_integers(api, game) -> None:
    gid = game["game_id"]
    verdict = api.client.post(f"/v1/games/{gid}/moves/validate",
                              json={"type": "issue_shares", "count": 1.0, "seat": float(game["active_seat"])})
    assert verdict.status_code == 200 and verdict.get_json()["legal"] is True, verdict.get_json()
    seat = float(game["active_seat"])
    response = api.move(gid, game["token"], {"type": "issue_shares", "count": 1.0, "seat": seat})
    assert response.status_code == 200, response.get_json()
    entry = api.client.get(f"/v1/games/{gid}/history").get_json()[0]
    assert entry["move"] == {"type": "issue_shares", "count": 1} and isinstance(entry["move"]["count"], int)
    # 1e0 is JSON for the number one as well.
    nxt = api.view(gid)["active_seat"]
    raw = b'{"type": "issue_shares", "count": 1e0}'
    response = post(api, f"/v1/games/{gid}/moves", raw, "application/json", game["seats"][nxt]["token"])
    assert response.status_code == 200, response.get_json()


@pytest.mark.parametrize("count", [1.5, "1", True, 1e30, -0.5])
def test_numbers_that_are_not_integers_stay_400(api, game, count) -> None:
    response = api.move(game["game_id"], game["token"], {"type": "issue_shares", "count": count})
    assert_problem(response, 400, "VALIDATION_ERROR")
    assert api.snapshot(game["game_id"]) == game["before"]


def test_integral_floats_in_a_create_and_a_record(api) -> None:
    body = {"map": "rust_belt", "players": [{"name": n} for n in "abc"], "seed": "ints"}
    played = api.create(seed="ints")
    api.play(played, 6)
    record = api.client.get(f"/v1/games/{played['game_id']}/record").get_json()
    record["seed"] = "ints"
    for entry in record["moves"]:
        entry["seat"] = float(entry["seat"])
        entry["move"] = {k: float(v) if isinstance(v, int) and not isinstance(v, bool) else v
                         for k, v in entry["move"].items()}
    imported = api.client.post("/v1/games", json={"record": record})
    assert imported.status_code == 201, imported.get_json()
    assert imported.get_json()["version"] == 6
    options = api.client.post("/v1/games", json={**body, "map": "holland", "options": {"windmills": True}})
    assert options.status_code == 201, options.get_json()


def test_a_query_seat_is_a_decimal_numeral(api, game) -> None:
    # A query string is not JSON: the contract's form serialisation of an integer is "2".
    response = api.client.get(f"/v1/games/{game['game_id']}/legal-moves", query_string={"seat": "2.0"})
    assert_problem(response, 400, "BAD_SEAT")


def test_a_legal_moves_query_is_seat_once_and_nothing_else(api, game) -> None:
    # `seat=N` is read as it is (the query every client sends); any other query is parsed and
    # judged: the same seat written otherwise is the same listing, a seat given twice or
    # anything besides it is refused.
    path = f"/v1/games/{game['game_id']}/legal-moves"
    plain = api.client.get(f"{path}?seat=1")
    assert plain.status_code == 200
    assert api.client.get(f"{path}?seat=%31").data == plain.data
    assert_problem(api.client.get(f"{path}?seat=1&seat=1"), 400, "BAD_SEAT")
    assert_problem(api.client.get(f"{path}?seat=6"), 400, "BAD_SEAT")
    assert_problem(api.client.get(f"{path}?seat=1&x=2"), 400, "BAD_QUERY")
    assert_problem(api.client.get(f"{path}?seat="), 400, "BAD_SEAT")
