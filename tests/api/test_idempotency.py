"""Idempotency-Key on creates and moves: a retry gets the first answer, and nothing more.

Issue 11, defect 5: a create's key once named its game (`sha256("aos-create:" + key)`), so a
public game id let anyone test guessed keys offline and then replay the create for every seat's
token. Game ids are now random; a create's record is kept for a short retry window under the
key's digest; keys too short to be secret are refused. A move's record keeps what a retry needs
(the version it made), not the whole answer.
"""

from __future__ import annotations

import base64
import hashlib
import uuid

import pytest

from service.store import MemoryStore, RedisStore
from service.store.keys import create_record_key, idem_key, shard_of
from tests.api.conftest import NAMES

BODY = {"map": "rust_belt", "players": [{"name": n} for n in NAMES[:3]]}


def create(api, key: str, body: dict = BODY):
    return api.client.post("/v1/games", json=body, headers={"Idempotency-Key": key})


def old_id_for(key: str) -> str:
    digest = hashlib.sha256(b"aos-create:" + key.encode()).digest()
    return base64.urlsafe_b64encode(digest[:12]).decode()


def test_the_game_id_is_random_and_unrelated_to_the_key(api_on) -> None:
    key = str(uuid.uuid4())
    ids = {create(api_on(MemoryStore()), key).get_json()["game_id"] for _ in range(5)}
    assert len(ids) == 5  # the same key on five fresh stores: five unrelated ids
    assert old_id_for(key) not in ids


@pytest.mark.parametrize("key", ["123456", "short-key", "a" * 15])
def test_a_create_key_too_short_to_be_secret_is_refused(api, key: str) -> None:
    response = create(api, key)
    assert response.status_code == 400
    assert response.get_json()["code"] == "BAD_IDEMPOTENCY_KEY"
    assert "16" in response.get_json()["detail"]


def test_a_retry_gets_the_first_answer_even_after_the_game_moved_on(api) -> None:
    key = str(uuid.uuid4())
    first = create(api, key)
    game = first.get_json()
    seat = game["active_seat"]
    move = api.legal(game["game_id"], seat)[0]
    assert api.move(game["game_id"], game["seats"][seat]["token"], move).status_code == 200
    again = create(api, key)
    assert again.status_code == 201
    assert again.get_json() == game  # the view at version 0, and the same tokens
    assert again.headers["Location"] == first.headers["Location"]


def test_only_the_key_shows_the_tokens_again(api) -> None:
    key = str(uuid.uuid4())
    game = create(api, key).get_json()
    other = create(api, key[:-1] + ("0" if key[-1] != "0" else "1")).get_json()
    assert other["game_id"] != game["game_id"]
    assert not {s["token"] for s in other["seats"]} & {s["token"] for s in game["seats"]}


def test_the_create_record_lapses_after_the_retry_window(redis_server, redis_url, api_on) -> None:
    store = RedisStore(redis_url)
    api = api_on(store, create_retry_ttl=600)
    key = str(uuid.uuid4())
    game_id = create(api, key).get_json()["game_id"]
    digest = hashlib.sha256(b"aos-create:" + key.encode()).hexdigest()
    with redis_server.client() as client:
        ttl = client.ttl(create_record_key(shard_of(game_id), digest))
        record = client.get(create_record_key(shard_of(game_id), digest))
    assert 590 <= ttl <= 600
    assert b"seat" not in record and len(record) < 200  # names the game; holds no token, no view
    store.close()


def test_a_retry_after_its_game_is_gone_creates_a_game_that_exists(api_on) -> None:
    now = [0.0]
    store = MemoryStore(clock=lambda: now[0])
    api = api_on(store, game_ttl=100, finished_ttl=100, create_retry_ttl=600)
    key = str(uuid.uuid4())
    first = create(api, key).get_json()
    now[0] += 150  # the game expired; the record (kept at most as long as the game) too
    again = create(api, key)
    assert again.status_code == 201
    assert again.get_json()["game_id"] != first["game_id"]
    assert api.client.get(again.headers["Location"]).status_code == 200


def test_a_move_record_keeps_the_version_not_the_answer(redis_server, redis_url, api_on) -> None:
    store = RedisStore(redis_url)
    api = api_on(store)
    game = api.create()
    gid, seat = game["game_id"], game["active_seat"]
    token = game["seats"][seat]["token"]
    move = api.legal(gid, seat)[0]
    key = str(uuid.uuid4())
    first = api.move(gid, token, move, Idempotency_Key=key)
    assert first.status_code == 200
    name = idem_key(gid, "move:" + hashlib.sha256(key.encode()).hexdigest())
    with redis_server.client() as client:
        assert len(client.get(name)) < 100  # a fingerprint and a version, not ~9 KB of answer
    # The next seat moves; the retry still gets the first answer, byte for byte.
    view = first.get_json()["game"]
    nxt = view["active_seat"]
    assert api.move(gid, game["seats"][nxt]["token"], api.legal(gid, nxt)[0]).status_code == 200
    again = api.move(gid, token, move, Idempotency_Key=key)
    assert again.status_code == 200
    assert again.get_data() == first.get_data()
    assert api.view(gid)["version"] == 2
    store.close()
