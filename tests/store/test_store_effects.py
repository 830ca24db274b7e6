"""What a commit queues besides the game (the outbox, the clock, the watchers' notice), and the
life of a game (reads extend it, expired games are swept), on MemoryStore and on a real Redis."""

from __future__ import annotations

import threading
import time

import redis

from service.store import GameStore, MemoryStore, Outcome, RedisStore
from service.store.keys import game_keys, shard_keys, shard_of


def create(store: GameStore, game_id: str, **kw: object) -> None:
    assert store.create(game_id, state=b"s0", meta=b"m0", view=b"v0", ttl=3600, **kw) is None


def test_one_commit_may_make_several_versions(store: GameStore) -> None:
    create(store, "g")
    result = store.commit("g", expected_version=0, ttl=3600, entries=[b"e1", b"e2", b"e3"],
                          state=b"s3", view=b"v3")
    assert (result.outcome, result.version) == (Outcome.APPLIED, 3)
    assert store.load_view("g") == (3, b"v3")
    assert store.history("g") == [b"e1", b"e2", b"e3"]
    assert store.history("g", 1, 3) == [b"e2", b"e3"]
    assert store.history("g", 2, 2) == []
    assert store.history("nope", 0, 1) is None


def test_a_commit_of_metadata_alone_keeps_the_version(store: GameStore) -> None:
    create(store, "g")
    result = store.commit("g", expected_version=0, ttl=3600, meta=b"m1")
    assert (result.outcome, result.version) == (Outcome.APPLIED, 0)
    stored = store.load("g")
    assert (stored.version, stored.state, stored.meta) == (0, b"s0", b"m1")
    assert store.commit("g", expected_version=1, ttl=3600, meta=b"m2").outcome is Outcome.CONFLICT


def test_the_outbox_holds_every_change_in_order(store: GameStore) -> None:
    create(store, "g", log=[b"i1"])
    store.commit("g", expected_version=1, ttl=3600, entries=[b"e2"], state=b"s2", view=b"v2")
    store.commit("g", expected_version=2, ttl=3600, meta=b"m2")
    store.commit("g", expected_version=2, ttl=3600, entries=[b"e3", b"e4"], state=b"s4", view=b"v4")
    items = store.outbox_read("archive", "w1")
    assert [(i.game_id, i.version, i.entries, i.meta, i.created) for i in items] == [
        ("g", 1, [b"i1"], b"m0", True),
        ("g", 2, [b"e2"], None, False),
        ("g", 2, [], b"m2", False),
        ("g", 4, [b"e3", b"e4"], None, False),
    ]
    assert items[0].state == b"s0" and items[1].state is None
    assert all(i.shard == shard_of("g") for i in items)
    ids = [i.id for i in items]
    assert ids == sorted(ids, key=lambda i: tuple(map(int, i.split("-"))))
    assert abs(items[0].time_ms / 1000 - time.time()) < 60


def test_a_group_hands_each_change_to_one_consumer_until_acknowledged(store: GameStore) -> None:
    for n in range(6):
        create(store, f"game-{n}")
    first = store.outbox_read("hooks", "w1", count=1)
    second = store.outbox_read("hooks", "w2")
    assert first and not {i.id for i in first} & {i.id for i in second}
    assert len(first) + len(second) == 6
    assert store.outbox_read("hooks", "w3") == []
    assert store.outbox_backlog("hooks") == 6  # all taken, none acknowledged
    store.outbox_ack("hooks", second)
    assert store.outbox_backlog("hooks") == len(first)
    # Another group reads the same changes from the start, on its own.
    assert len(store.outbox_read("archive", "a1")) == 6


def test_a_change_taken_by_a_consumer_that_died_is_claimed_by_another(store: GameStore) -> None:
    create(store, "g")
    [taken] = store.outbox_read("hooks", "dead")
    assert store.outbox_claim("hooks", "alive", min_idle_ms=60_000) == []
    time.sleep(0.05)
    [claimed] = store.outbox_claim("hooks", "alive", min_idle_ms=20)
    assert (claimed.id, claimed.game_id) == (taken.id, "g")
    store.outbox_ack("hooks", [claimed])
    assert store.outbox_backlog("hooks") == 0
    assert store.outbox_claim("hooks", "other", min_idle_ms=0) == []


def test_the_clock_is_set_with_each_new_version_and_cleared_by_none(store: GameStore) -> None:
    create(store, "a", deadline=100.0)
    create(store, "b", deadline=300.0)
    create(store, "c")
    assert store.due_clocks(now=200.0) == [("a", 100.0)]
    store.commit("a", expected_version=0, ttl=3600, entries=[b"e"], deadline=250.0)
    assert store.due_clocks(now=200.0) == []
    # A metadata change does not touch the clock; a new version without a deadline clears it.
    store.commit("b", expected_version=0, ttl=3600, meta=b"m")
    assert sorted(store.due_clocks(now=400.0)) == [("a", 250.0), ("b", 300.0)]
    store.commit("b", expected_version=0, ttl=3600, entries=[b"e"])
    assert store.due_clocks(now=400.0) == [("a", 250.0)]


def test_memory_store_tells_its_listeners_of_each_new_version() -> None:
    store = MemoryStore()
    heard: list[tuple[str, int]] = []
    stop = store.add_listener(lambda game_id, version: heard.append((game_id, version)))
    create(store, "g")
    store.commit("g", expected_version=0, ttl=60, entries=[b"e1", b"e2"])
    store.commit("g", expected_version=2, ttl=60, meta=b"m")  # no new version: nothing to tell
    stop()
    store.commit("g", expected_version=2, ttl=60, entries=[b"e3"])
    assert heard == [("g", 2)]


def test_redis_publishes_each_new_version_on_the_shards_channel(redis_url: str) -> None:
    store = RedisStore(redis_url)
    create(store, "g")
    client = redis.Redis.from_url(redis_url)
    pubsub = client.pubsub()
    pubsub.ssubscribe(shard_keys(shard_of("g")).events)
    heard: list[bytes] = []
    ready = threading.Event()

    def listen() -> None:
        for message in pubsub.listen():
            if message["type"] == "ssubscribe":
                ready.set()
            elif message["type"] == "smessage":
                heard.append(message["data"])
                return

    thread = threading.Thread(target=listen, daemon=True)
    thread.start()
    assert ready.wait(5)
    store.commit("g", expected_version=0, ttl=60, entries=[b"e1", b"e2"])
    thread.join(5)
    assert heard == [b"g 2"]
    pubsub.close()
    client.close()


def test_reads_extend_a_games_life_in_memory() -> None:
    now = [0.0]
    store = MemoryStore(clock=lambda: now[0])
    assert store.create("g", state=b"s", meta=b"m", view=b"v", ttl=100) is None
    for _ in range(5):
        now[0] += 60
        assert store.load_view("g") == (0, b"v")  # read within its life: pushed back to 100 s
    now[0] += 101
    assert store.load("g") is None


def test_reads_extend_a_games_life_in_redis(redis_server, redis_url: str) -> None:
    store = RedisStore(redis_url)
    assert store.create("g", state=b"s", meta=b"m", view=b"v", ttl=1000) is None
    keys = game_keys("g")
    with redis_server.client() as client:
        client.expire(keys.state, 950)
        store.load("g")
        assert client.ttl(keys.state) == 950  # over 90 % left: a read writes nothing
        client.expire(keys.state, 800)
        store.version("g")
        assert client.ttl(keys.state) >= 995


def test_memory_store_sweeps_expired_games_it_is_never_asked_for() -> None:
    now = [0.0]
    store = MemoryStore(clock=lambda: now[0])
    for n in range(50):
        store.create(f"old-{n}", state=b"s", meta=b"m", view=b"v", ttl=10, deadline=5.0)
    now[0] += 11
    for _ in range(MemoryStore.SWEEP_EVERY):
        store.version("someone-else")
    assert store.games_held() == 0
    assert store.due_clocks(now=100.0) == []
