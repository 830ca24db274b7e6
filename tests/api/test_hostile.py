"""Hostile and careless requests: each gets the right 4xx, and the stored game is untouched."""

from __future__ import annotations

import pytest


@pytest.fixture
def game(api) -> dict:
    game = api.create()
    game["before"] = api.snapshot(game["game_id"])
    return game


def seat_token(game: dict, seat: int | None = None) -> tuple[int, str]:
    seat = game["active_seat"] if seat is None else seat
    return seat, game["seats"][seat]["token"]


def post_raw(api, game: dict, data: bytes, token: str | None = None, **headers):
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    headers.setdefault("Content-Type", "application/json")
    return api.client.post(f"/v1/games/{game['game_id']}/moves", data=data, headers=headers)


def assert_problem(response, status: int, code: str | None = None) -> dict:
    assert response.status_code == status, response.get_data()[:500]
    assert response.content_type == "application/problem+json"
    body = response.get_json()
    assert body["status"] == status and body["type"].startswith("urn:aos:problem:")
    if code is not None:
        assert body["code"] == code
    return body


@pytest.mark.parametrize(
    "data",
    [b"{", b"", b"not json", b'{"type": "pass"', b"\xff\xfe", b"[" * 5000 + b"]" * 5000],
)
def test_malformed_json(api, game, data: bytes) -> None:
    _, token = seat_token(game)
    assert_problem(post_raw(api, game, data, token), 400)
    assert api.snapshot(game["game_id"]) == game["before"]


@pytest.mark.parametrize(
    "move, code",
    [
        ([], "VALIDATION_ERROR"),
        ("pass", "VALIDATION_ERROR"),
        (None, "MALFORMED_JSON"),  # the test client sends no body at all
        ({}, "UNKNOWN_MOVE_TYPE"),
        ({"type": "teleport"}, "UNKNOWN_MOVE_TYPE"),
        ({"type": 7}, "UNKNOWN_MOVE_TYPE"),
        ({"type": "issue_shares"}, "VALIDATION_ERROR"),
        ({"type": "issue_shares", "count": "1"}, "VALIDATION_ERROR"),
        ({"type": "issue_shares", "count": 1.5}, "VALIDATION_ERROR"),
        ({"type": "issue_shares", "count": True}, "VALIDATION_ERROR"),
        ({"type": "issue_shares", "count": -1}, "VALIDATION_ERROR"),
        ({"type": "issue_shares", "count": 10**30}, "VALIDATION_ERROR"),
        ({"type": "issue_shares", "count": 1, "bonus": 1}, "VALIDATION_ERROR"),
        ({"type": "bid", "amount": 3, "seat": "0"}, "VALIDATION_ERROR"),
        ({"type": "build", "hex": {"q": 1, "r": 1}}, "VALIDATION_ERROR"),
        ({"type": "build", "hex": {"q": 1}, "tracks": [[0, 3]]}, "VALIDATION_ERROR"),
        ({"type": "build", "hex": {"q": 1, "r": 1}, "tracks": [[0, 9]]}, "VALIDATION_ERROR"),
        ({"type": "build", "hex": {"q": 1, "r": 1}, "tracks": [[0, 3, 4]]}, "VALIDATION_ERROR"),
        (
            {"type": "build", "hex": {"q": 1, "r": 1}, "tracks": [[0, 3]], "town_exits": [1]},
            "VALIDATION_ERROR",
        ),
        ({"type": "deliver", "from": {"q": 1, "r": 1}, "color": "green", "links": ["a"]}, None),
        ({"type": "produce", "placements": [{"color": "red", "column": "light-9"}]}, None),
        ({"type": "select_action", "action": "teleport"}, "VALIDATION_ERROR"),
    ],
)
def test_wrong_shapes_are_400(api, game, move, code) -> None:
    _, token = seat_token(game)
    response = api.move(game["game_id"], token, move)
    body = assert_problem(response, 400, code)
    assert "errors" in body or body["code"] == "MALFORMED_JSON"
    assert api.snapshot(game["game_id"]) == game["before"]


def test_huge_body_is_413(api_on, openapi) -> None:
    from service.store import MemoryStore

    small = api_on(MemoryStore(), max_body_bytes=4096)
    game = small.create()
    before = small.snapshot(game["game_id"])
    _, token = seat_token(game)
    padding = {"type": "bid", "amount": 1, "x": "y" * 10_000}
    response = small.move(game["game_id"], token, padding)
    assert_problem(response, 413, "BODY_TOO_LARGE")
    big_create = small.client.post(
        "/v1/games", json={"map": "rust_belt", "players": [{"name": "n" * 30}] * 200}
    )
    assert_problem(big_create, 413)
    assert small.snapshot(game["game_id"]) == before


def test_default_body_limit(api, game) -> None:
    _, token = seat_token(game)
    data = b'{"type": "pass", "x": "' + b"y" * (2 << 20) + b'"}'
    assert_problem(post_raw(api, game, data, token), 413, "BODY_TOO_LARGE")
    assert api.snapshot(game["game_id"]) == game["before"]


def test_missing_token_is_401(api, game) -> None:
    seat, _ = seat_token(game)
    move = api.legal(game["game_id"], seat)[0]
    response = api.client.post(f"/v1/games/{game['game_id']}/moves", json=move)
    assert_problem(response, 401, "TOKEN_MISSING")
    assert response.headers["WWW-Authenticate"] == "Bearer"
    assert api.snapshot(game["game_id"]) == game["before"]


@pytest.mark.parametrize(
    "header",
    ["Bearer", "Bearer ", "Basic abc", "Token x", "Bearer nonsense", "Bearer a.b.c.d"],
)
def test_malformed_authorization_is_401(api, game, header: str) -> None:
    seat, _ = seat_token(game)
    move = api.legal(game["game_id"], seat)[0]
    response = api.client.post(
        f"/v1/games/{game['game_id']}/moves", json=move, headers={"Authorization": header}
    )
    assert_problem(response, 401)
    assert api.snapshot(game["game_id"]) == game["before"]


def test_forged_token_of_the_right_seat_is_401(api, game) -> None:
    seat, token = seat_token(game)
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    response = api.move(game["game_id"], forged, api.legal(game["game_id"], seat)[0])
    assert_problem(response, 401, "TOKEN_INVALID")
    assert api.snapshot(game["game_id"]) == game["before"]


def test_token_of_another_game_is_403(api, game) -> None:
    other = api.create(seed="other")
    seat, _ = seat_token(game)
    _, foreign = seat_token(other, seat)
    response = api.move(game["game_id"], foreign, api.legal(game["game_id"], seat)[0])
    assert_problem(response, 403, "TOKEN_OTHER_GAME")
    assert api.snapshot(game["game_id"]) == game["before"]


def test_token_of_another_seat_with_a_seat_field_is_403(api, game) -> None:
    seat, _ = seat_token(game)
    other = (seat + 1) % 3
    _, other_token = seat_token(game, other)
    move = {**api.legal(game["game_id"], seat)[0], "seat": seat}
    response = api.move(game["game_id"], other_token, move)
    assert_problem(response, 403, "SEAT_MISMATCH")
    assert api.snapshot(game["game_id"]) == game["before"]


def test_move_out_of_turn_is_422(api, game) -> None:
    seat, _ = seat_token(game)
    other = (seat + 1) % 3
    _, other_token = seat_token(game, other)
    response = api.move(game["game_id"], other_token, api.legal(game["game_id"], seat)[0])
    body = assert_problem(response, 422, "NOT_YOUR_TURN")
    assert body["active_seat"] == seat
    assert api.snapshot(game["game_id"]) == game["before"]


def test_move_of_the_wrong_phase_is_422(api, game) -> None:
    _, token = seat_token(game)
    response = api.move(game["game_id"], token, {"type": "bid", "amount": 3})
    assert_problem(response, 422, "WRONG_PHASE")
    assert api.snapshot(game["game_id"]) == game["before"]


def test_illegal_but_well_formed_move_is_422(api, game) -> None:
    _, token = seat_token(game)
    response = api.move(game["game_id"], token, {"type": "issue_shares", "count": 15})
    body = assert_problem(response, 422)
    assert body["code"] not in ("VALIDATION_ERROR", "INTERNAL")
    assert api.snapshot(game["game_id"]) == game["before"]


def test_bad_idempotency_key_is_400(api, game) -> None:
    seat, token = seat_token(game)
    move = api.legal(game["game_id"], seat)[0]
    response = api.move(game["game_id"], token, move, Idempotency_Key="has space")
    assert_problem(response, 400, "BAD_IDEMPOTENCY_KEY")
    assert api.snapshot(game["game_id"]) == game["before"]


@pytest.mark.parametrize(
    "body",
    [
        {"map": "rust_belt"},
        {"map": "atlantis", "players": [{"name": "a"}] * 3},
        {"map": "rust_belt", "players": [{"name": ""}] * 3},
        {"map": "rust_belt", "players": [{"name": "a", "colour": "red"}] * 3},
        {"map": "rust_belt", "players": [{"name": "a"}] * 3, "extra": 1},
        {"map": "rust_belt", "players": [{"name": "a"}] * 3, "options": {"a": [1]}},
        {"map": "rust_belt", "players": [{"name": "a"}] * 3, "seed": 5},
        {"record": {"format": "aos-record/1"}},
        {"record": {}, "map": "rust_belt"},
        [],
    ],
)
def test_bad_create_bodies_are_400(api, body) -> None:
    assert_problem(api.client.post("/v1/games", json=body), 400)


def test_wrong_method_is_405(api, game) -> None:
    response = api.client.put(f"/v1/games/{game['game_id']}")
    assert_problem(response, 405, "METHOD_NOT_ALLOWED")
    assert "GET" in response.headers["Allow"] and "DELETE" in response.headers["Allow"]


def test_unknown_path_is_404(api) -> None:
    assert_problem(api.client.get("/v1/nothing"), 404, "NOT_FOUND")


@pytest.mark.parametrize("game_id", ["a" * 65, "bad!id", "..", "%00"])
def test_odd_game_ids_are_404(api, game_id: str) -> None:
    assert api.client.get(f"/v1/games/{game_id}").status_code == 404
