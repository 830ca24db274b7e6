"""The notices on a real Redis: one reader per process subscribed to every shard's channel, and
after Redis restarts it subscribes again and makes every watcher read the store, so a move
committed while it was away is not missed."""

from __future__ import annotations

import time

import orjson

from service.live import Hub, RedisNotices, notices_for
from service.referee.live_source import GameEvents
from service.store import RedisStore
from service.store.keys import SHARDS, shard_of


def one_game_per_shard(store: RedisStore) -> list[str]:
    ids: dict[int, str] = {}
    n = 0
    while len(ids) < SHARDS:
        ids.setdefault(shard_of(f"game-{n}"), f"game-{n}")
        n += 1
    for game_id in ids.values():
        store.create(game_id, state=b"{}", meta=b"{}", view=b"{}", ttl=600)
    return [ids[s] for s in range(SHARDS)]


def commit(store: RedisStore, game_id: str) -> int:
    version = store.version(game_id)
    assert version is not None
    entry = orjson.dumps({"index": version, "version": version + 1, "seat": 0,
                          "move": {"type": "pass"}, "events": []})
    return store.commit(game_id, expected_version=version, ttl=600, entries=[entry]).version


def wait_until(check, seconds: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_one_reader_hears_every_shard(redis_url: str) -> None:
    store = RedisStore(redis_url)
    heard: list[tuple[str, int]] = []
    notices = RedisNotices(store.url, store.prefix, lambda g, v: heard.append((g, v)), lambda: None)
    notices.start()
    try:
        wait_until(lambda: notices.subscriptions == 1)
        with store._redis() as client:  # noqa: SLF001 - the server's own count of subscriptions
            assert len(client.execute_command("PUBSUB", "SHARDCHANNELS")) == SHARDS
        games = one_game_per_shard(store)
        for game_id in games:
            assert commit(store, game_id) == 1
        wait_until(lambda: len(heard) == SHARDS)
        assert sorted(heard) == sorted((g, 1) for g in games)
    finally:
        notices.stop()
        store.close()


def test_after_a_restart_the_reader_subscribes_again_and_nothing_is_missed(durable_redis) -> None:
    store = RedisStore(durable_redis.url, connect_timeout=0.2, socket_timeout=0.5)
    [game_id] = one_game_per_shard(store)[:1]

    def slow_notices(hub: Hub):  # type: ignore[no-untyped-def]
        # Waits a second and a half before each new try: a move committed right after Redis is
        # back lands while nobody listens, and only the resync can find it.
        return RedisNotices(store.url, store.prefix, hub.notify, hub.resync, min_backoff=1.5,
                            socket_timeout=0.5).start()

    hub = Hub(GameEvents(store), slow_notices)
    try:
        with hub.watch(game_id) as watch:
            wait_until(lambda: hub.resyncs == 1)  # subscribed
            watch.clear()
            assert commit(store, game_id) == 1
            assert watch.wait(10)  # the notice

            durable_redis.kill()
            durable_redis.start()  # same port, same AOF: the game is there
            time.sleep(0.3)  # the reader has seen its connection die and waits to retry
            watch.clear()
            assert commit(store, game_id) == 2  # published to nobody
            assert hub.resyncs == 1
            assert watch.wait(10)  # woken by the resync after the new subscription
            assert hub.resyncs == 2
            assert store.version(game_id) == 2
    finally:
        hub.close()
        store.close()


def test_the_memory_store_notices_through_its_listeners() -> None:
    from service.store import MemoryStore

    store = MemoryStore()
    store.create("g", state=b"{}", meta=b"{}", view=b"{}", ttl=60)
    hub = Hub(GameEvents(store), notices_for(store))
    with hub.watch("g") as watch:
        watch.clear()
        entry = orjson.dumps({"index": 0, "version": 1, "seat": 0, "move": {"type": "pass"}, "events": []})
        store.commit("g", expected_version=0, ttl=60, entries=[entry])
        assert watch.wait(1)
    hub.close()
    assert store._listeners == []  # noqa: SLF001 - closed: the listener is gone


def test_a_hub_starts_its_notices_once_per_process() -> None:
    from service.store import MemoryStore

    started: list[int] = []

    def notices(hub: Hub):  # type: ignore[no-untyped-def]
        started.append(1)
        return lambda: None

    hub = Hub(GameEvents(MemoryStore()), notices)
    with hub.watch("a"), hub.watch("b"):
        pass
    with hub.watch("a"):
        pass
    assert started == [1]
