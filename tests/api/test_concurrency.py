"""If-Match, Idempotency-Key and racing writers, through the HTTP layer."""

from __future__ import annotations

import pytest

from service.api.error_codes import status_of
from service.referee.errors import GameError


def first_move(api, game: dict) -> tuple[str, int, dict]:
    gid, seat = game["game_id"], game["active_seat"]
    return gid, seat, api.legal(gid, seat)[0]


def test_if_match_applies_at_the_named_version(api) -> None:
    game = api.create()
    gid, seat, move = first_move(api, game)
    token = game["seats"][seat]["token"]
    response = api.move(gid, token, move, If_Match='"0"')
    assert response.status_code == 200
    gid, seat = game["game_id"], response.get_json()["game"]["active_seat"]
    stale = api.move(gid, game["seats"][seat]["token"], api.legal(gid, seat)[0], If_Match='"0"')
    assert stale.status_code == 412
    assert stale.get_json()["code"] == "VERSION_MISMATCH"
    assert stale.get_json()["version"] == 1
    assert stale.headers["ETag"] == '"1"'
    assert api.view(gid)["version"] == 1


def test_if_match_garbage_is_refused_and_another_tag_is_a_mismatch(api) -> None:
    game = api.create()
    gid, seat, move = first_move(api, game)
    before = api.snapshot(gid)
    response = api.move(gid, game["seats"][seat]["token"], move, If_Match="not-an-etag")
    assert response.status_code == 400 and response.get_json()["code"] == "BAD_ETAG"
    response = api.move(gid, game["seats"][seat]["token"], move, If_Match='"99", W/"98"')
    assert response.status_code == 412 and response.get_json()["version"] == 0
    assert api.snapshot(gid) == before


def test_idempotent_move_is_applied_once(api) -> None:
    game = api.create()
    gid, seat, move = first_move(api, game)
    token = game["seats"][seat]["token"]
    first = api.move(gid, token, move, Idempotency_Key="k-1")
    again = api.move(gid, token, move, Idempotency_Key="k-1")
    assert first.status_code == again.status_code == 200
    assert first.get_data() == again.get_data()
    assert api.view(gid)["version"] == 1
    assert len(api.client.get(f"/v1/games/{gid}/history").get_json()) == 1


def test_idempotency_key_with_another_body_is_422(api) -> None:
    game = api.create()
    gid, seat, _ = first_move(api, game)
    token = game["seats"][seat]["token"]
    moves = api.legal(gid, seat)
    assert api.move(gid, token, moves[0], Idempotency_Key="k-2").status_code == 200
    before = api.snapshot(gid)
    reused = api.move(gid, token, moves[1], Idempotency_Key="k-2")
    assert reused.status_code == 422
    assert reused.get_json()["code"] == "IDEMPOTENCY_KEY_REUSED"
    assert api.snapshot(gid) == before


CREATE_KEY = "create-2d6f0c8e-0b7a-4c1e"


def test_idempotent_create_shows_the_same_tokens(api) -> None:
    body = {"map": "rust_belt", "players": [{"name": n} for n in "abc"]}
    first = api.client.post("/v1/games", json=body, headers={"Idempotency-Key": CREATE_KEY})
    again = api.client.post("/v1/games", json=body, headers={"Idempotency-Key": CREATE_KEY})
    assert first.status_code == again.status_code == 201
    assert first.get_json() == again.get_json()
    assert first.headers["Location"] == again.headers["Location"]
    other = api.client.post("/v1/games", json={**body, "seed": "x"}, headers={"Idempotency-Key": CREATE_KEY})
    assert other.status_code == 422
    assert other.get_json()["code"] == "IDEMPOTENCY_KEY_REUSED"
    game = first.get_json()
    seat = game["active_seat"]
    move = api.legal(game["game_id"], seat)[0]
    assert api.move(game["game_id"], game["seats"][seat]["token"], move).status_code == 200


def test_a_losing_writer_is_rejudged_against_the_new_state(api) -> None:
    """Simulate the race the store settles: the first writer's commit lands between the
    second's load and its commit; the second is re-judged and, its seat no longer deciding,
    refused with the rule it now breaks."""
    game = api.create()
    gid, seat, move = first_move(api, game)
    token = game["seats"][seat]["token"]
    games = api.app.extensions["aos.games"]
    stale = games.load(gid)
    assert api.move(gid, token, move).status_code == 200
    with api.app.test_request_context(), pytest.raises(GameError) as refused:
        games.apply(gid, seat, move, if_match=None, idempotency_key=None, stored=stale)
    assert refused.value.code == "NOT_YOUR_TURN" and status_of(refused.value.code) == 422
    assert api.view(gid)["version"] == 1
