"""A deleted game leaves nothing in the store but its tombstone: state, log, idempotency
records, kept answers, clock and queued webhook deliveries go at once; its watchers are woken;
other games are untouched. On MemoryStore and on RedisStore over a real redis-server."""

from __future__ import annotations

import redis

from service.store import Delivery, GameStore, IdemRecord, MemoryStore, RedisStore
from service.store.keys import game_keys, shard_keys, shard_of


def _game(store: GameStore, game_id: str) -> None:
    assert store.create(game_id, state=b"s0", meta=b"m", view=b"v0", ttl=3600, deadline=50.0) is None
    result = store.commit(game_id, expected_version=0, state=b"s1", view=b"v1", entries=[b"e1"], ttl=3600,
                          idem=IdemRecord("key-1", b"answer with Ann's name", 3600), deadline=60.0)
    assert result.version == 1
    store.keep(game_id, "legal:0", 1, b"kept answer", 120)
    assert store.queue_deliveries([Delivery(f"{game_id}-d1", game_id, b"job")], due=10.0) == 1


def test_purge_deletes_everything_of_the_game_and_leaves_a_tombstone(store: GameStore) -> None:
    _game(store, "doomed")
    _game(store, "kept")
    assert not store.deleted("doomed")

    assert store.purge("doomed", tombstone_ttl=3600) is True

    assert store.load("doomed") is None and store.history("doomed") is None
    assert store.idempotency_record("doomed", "key-1") is None
    assert store.load_kept("doomed", "legal:0", 120) is None
    assert store.deleted("doomed") and not store.deleted("kept")
    assert [g for g, _ in store.due_clocks(now=100.0)] == ["kept"]
    claimed = store.claim_deliveries(now=100.0, lease=200.0)
    assert [d.game_id for d in claimed] == ["kept"]
    # The other game is as it was.
    stored = store.load("kept")
    assert stored is not None and stored.version == 1 and store.idempotency_record("kept", "key-1")
    # A second purge finds nothing to delete, and the tombstone stays.
    assert store.purge("doomed", tombstone_ttl=3600) is False and store.deleted("doomed")


def test_purge_leaves_no_key_of_the_game_in_redis(redis_url: str) -> None:
    store = RedisStore(redis_url)
    _game(store, "doomed")
    client = redis.Redis.from_url(redis_url)
    base = game_keys("doomed").base
    assert len(list(client.scan_iter(match=f"{base}:*"))) >= 4  # state, log, idem, kept
    store.purge("doomed", tombstone_ttl=77)
    assert [k.decode() for k in client.scan_iter(match=f"{base}:*")] == [f"{base}:deleted"]
    assert 0 < client.ttl(f"{base}:deleted") <= 77
    jobs = client.hgetall(shard_keys(shard_of("doomed")).delivery_jobs)
    assert not any(job.startswith(b"doomed\n") for job in jobs.values())
    store.close()


def test_purge_wakes_the_games_watchers() -> None:
    store = MemoryStore()
    _game(store, "doomed")
    heard: list[tuple[str, int]] = []
    store.add_listener(lambda game_id, version: heard.append((game_id, version)))
    store.purge("doomed", tombstone_ttl=60)
    assert heard == [("doomed", 0)]


def test_purge_notifies_on_the_games_shard_channel(redis_url: str) -> None:
    store = RedisStore(redis_url)
    _game(store, "doomed")
    client = redis.Redis.from_url(redis_url)
    pubsub = client.pubsub()
    pubsub.ssubscribe(shard_keys(shard_of("doomed")).events)
    first = pubsub.get_message(timeout=2)
    assert first is not None and first["type"] == "ssubscribe"
    store.purge("doomed", tombstone_ttl=60)
    message = pubsub.get_message(timeout=2)
    assert message is not None and message["data"] == b"doomed 0"
    pubsub.close()
    store.close()
