"""`release`: a game whose versions are archived may leave the store after the short cache
expiry, if it is still at the archived version; its next commit brings the usual expiry back."""

from __future__ import annotations

import time

from service.store import MemoryStore, RedisStore
from service.store.keys import game_keys


def test_memory_store_releases_a_game_at_the_archived_version_only() -> None:
    now = [0.0]
    store = MemoryStore(clock=lambda: now[0])
    store.create("g1", state=b"s", meta=b"m", view=b"v", ttl=1000)
    store.commit("g1", expected_version=0, entries=[b"e1"], ttl=1000)
    assert store.release("g1", 0, 10) is False  # the game moved on: the archive lags behind it
    assert store.release("g1", 1, 10) is True
    assert store.release("g1", 1, 5000) is True  # never a longer life than the game had
    now[0] = 9.0
    assert store.load("g1") is not None  # a read within the short expiry keeps it
    now[0] = 18.5
    assert store.load("g1") is not None
    now[0] = 30.0
    assert store.load("g1") is None
    assert store.release("nope", 0, 10) is False


def test_memory_store_commit_after_release_brings_the_usual_expiry_back() -> None:
    now = [0.0]
    store = MemoryStore(clock=lambda: now[0])
    store.create("g1", state=b"s", meta=b"m", view=b"v", ttl=1000)
    store.release("g1", 0, 10)
    store.commit("g1", expected_version=0, entries=[b"e1"], ttl=1000)
    now[0] = 500.0
    assert store.version("g1") == 1


def test_redis_store_release(redis_url: str) -> None:
    store = RedisStore(redis_url)
    client = store._redis()
    keys = game_keys("g1")
    store.create("g1", state=b"s", meta=b"m", view=b"v", ttl=1000)
    store.commit("g1", expected_version=0, entries=[b"e1"], ttl=1000)
    assert store.release("g1", 0, 2) is False and client.ttl(keys.state) > 900
    assert store.release("g1", 1, 5000) is True and client.ttl(keys.state) > 900  # not longer
    assert store.release("g1", 1, 2) is True
    assert 0 < client.ttl(keys.state) <= 2 and 0 < client.ttl(keys.log) <= 2
    assert client.hget(keys.state, "ttl") == b"2"
    store.commit("g1", expected_version=1, entries=[b"e2"], ttl=1000)
    assert client.ttl(keys.state) > 900 and client.ttl(keys.log) > 900
    store.release("g1", 2, 1)
    time.sleep(1.2)
    assert store.load("g1") is None and store.history("g1") is None
    assert store.release("g1", 2, 1) is False
    store.close()
