"""Request bodies: the size limit holds whatever the framing, and only JSON is read as JSON."""

from __future__ import annotations

import io

import pytest

from tests.api.test_hostile import assert_problem

LIMIT = 1 << 20


def padded_move(move: bytes, size: int) -> bytes:
    """`move`, then spaces up to exactly the limit, then garbage up to `size` bytes: what a server
    that cuts a body at the limit would parse as the valid move alone."""
    return move + b" " * (LIMIT - len(move)) + b"x" * (size - LIMIT)


def post_chunked(api, path: str, data: bytes, token: str | None = None):
    """A body without Content-Length, as a server that decodes `Transfer-Encoding: chunked`
    hands it to the app: an input stream the server terminates (`wsgi.input_terminated`)."""
    headers = {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return api.client.post(
        path,
        input_stream=io.BytesIO(data),
        headers=headers,
        environ_overrides={"wsgi.input_terminated": True},
    )


@pytest.fixture
def game(api) -> dict:
    return api.create()


def test_a_chunked_move_over_the_limit_is_413_and_not_applied(api, game) -> None:
    gid, seat = game["game_id"], game["active_seat"]
    before = api.snapshot(gid)
    data = padded_move(b'{"type": "issue_shares", "count": 0}', 1_064_576)
    response = post_chunked(api, f"/v1/games/{gid}/moves", data, game["seats"][seat]["token"])
    assert_problem(response, 413, "BODY_TOO_LARGE")
    assert api.snapshot(gid) == before


@pytest.mark.parametrize("extra", [1, 4096, 64 << 10])
def test_a_chunked_create_over_the_limit_is_413(api, extra: int) -> None:
    data = padded_move(b'{"map": "rust_belt", "players": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}',
                       LIMIT + extra)
    assert_problem(post_chunked(api, "/v1/games", data), 413, "BODY_TOO_LARGE")


def test_a_chunked_body_at_the_limit_is_read_whole(api, game) -> None:
    gid, seat = game["game_id"], game["active_seat"]
    data = padded_move(b'{"type": "issue_shares", "count": 0}', LIMIT)
    response = post_chunked(api, f"/v1/games/{gid}/moves", data, game["seats"][seat]["token"])
    assert response.status_code == 200, response.get_data()[:300]
    assert response.get_json()["version"] == 1


def test_a_small_chunked_body_is_applied(api, game) -> None:
    gid, seat = game["game_id"], game["active_seat"]
    response = post_chunked(api, f"/v1/games/{gid}/moves", b'{"type": "issue_shares", "count": 0}',
                            game["seats"][seat]["token"])
    assert response.status_code == 200, response.get_data()[:300]


def test_a_body_over_the_app_s_own_limit_is_413_though_admission_read_it(api_on) -> None:
    # Admission reads bodies up to its own bound (1 MiB) and hands the bytes on; the app's
    # AOS_MAX_BODY_BYTES still holds, as werkzeug held it when it read the body itself.
    from service.store import MemoryStore

    api = api_on(MemoryStore(), max_body_bytes=1000)
    game = api.create()
    gid, seat = game["game_id"], game["active_seat"]
    token = game["seats"][seat]["token"]
    move = b'{"type": "issue_shares", "count": 0}'
    before = api.snapshot(gid)
    over = api.client.post(f"/v1/games/{gid}/moves", data=move + b" " * (1001 - len(move)),
                           headers={"Authorization": f"Bearer {token}",
                                    "Content-Type": "application/json"})
    assert_problem(over, 413, "BODY_TOO_LARGE")
    assert api.snapshot(gid) == before
    at = api.client.post(f"/v1/games/{gid}/moves", data=move + b" " * (1000 - len(move)),
                         headers={"Authorization": f"Bearer {token}",
                                  "Content-Type": "application/json"})
    assert at.status_code == 200 and at.get_json()["version"] == 1
