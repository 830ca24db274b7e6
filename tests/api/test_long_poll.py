"""Long-poll: GET /v1/games/{id} with If-None-Match and Prefer: wait answers as soon as the game
moves, or 304 when the wait runs out; the wait is bounded."""

from __future__ import annotations

import threading
import time

import pytest

from service.store import MemoryStore, RedisStore


def move_later(api, game: dict, delay: float) -> threading.Thread:  # type: ignore[no-untyped-def]
    gid, seat = game["game_id"], game["active_seat"]
    token = game["seats"][seat]["token"]
    move = api.legal(gid, seat)[0]

    def run() -> None:
        time.sleep(delay)
        assert api.move(gid, token, move).status_code == 200

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def poll(api, gid: str, version: int, prefer: str | None):  # type: ignore[no-untyped-def]
    headers = {"If-None-Match": f'"{version}"'}
    if prefer is not None:
        headers["Prefer"] = prefer
    started = time.monotonic()
    response = api.client.get(f"/v1/games/{gid}", headers=headers)
    return response, time.monotonic() - started


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_a_long_poll_answers_as_soon_as_the_game_moves(api_on, kind: str, request) -> None:  # type: ignore[no-untyped-def]
    store = MemoryStore() if kind == "memory" else RedisStore(request.getfixturevalue("redis_url"))
    api = api_on(store)
    request.addfinalizer(api.app.extensions["aos.live"].hub.close)
    game = api.create(seed="long-poll")
    mover = move_later(api, game, 0.3)
    response, seconds = poll(api, game["game_id"], 0, "wait=20")
    mover.join()
    assert response.status_code == 200
    assert response.get_json()["version"] == 1 and response.headers["ETag"] == '"1"'
    assert response.headers["Preference-Applied"] == "wait=20"
    assert 0.25 <= seconds < 10  # woken by the move, long before the wait ran out


def test_a_long_poll_is_304_when_the_wait_runs_out(api_on) -> None:
    api = api_on(MemoryStore())
    gid = api.create(seed="timeout")["game_id"]
    response, seconds = poll(api, gid, 0, "respond-async, wait=1")
    assert response.status_code == 304 and response.get_data() == b""
    assert response.headers["ETag"] == '"0"' and response.headers["Preference-Applied"] == "wait=1"
    assert seconds >= 0.95


def test_a_game_already_past_the_version_answers_at_once(api_on) -> None:
    api = api_on(MemoryStore())
    game = api.create(seed="past")
    api.play(game, 2)
    response, seconds = poll(api, game["game_id"], 0, "wait=30")
    assert response.status_code == 200 and response.get_json()["version"] == 2
    assert "Preference-Applied" not in response.headers
    assert seconds < 5


def test_the_wait_is_bounded_and_odd_preferences_are_ignored(api_on) -> None:
    api = api_on(MemoryStore(), long_poll_max=1)
    gid = api.create(seed="bounded")["game_id"]
    response, seconds = poll(api, gid, 0, "wait=3600")
    assert response.status_code == 304 and response.headers["Preference-Applied"] == "wait=1"
    assert 0.95 <= seconds < 10
    for prefer in (None, "wait=0", "wait=soon", "wait=-5", "handling=lenient", ""):
        response, seconds = poll(api, gid, 0, prefer)
        assert response.status_code == 304 and "Preference-Applied" not in response.headers, prefer
        assert seconds < 0.9, prefer
    response = api.client.get(f"/v1/games/{gid}", headers={"If-None-Match": "*", "Prefer": "wait=1"})
    assert response.status_code == 304  # every version matches "*": nothing to wait for
    assert "Preference-Applied" not in response.headers


def test_a_long_poll_of_an_unknown_game_is_404(api_on) -> None:
    api = api_on(MemoryStore())
    response, _ = poll(api, "no-such-game", 0, "wait=5")
    assert response.status_code == 404
