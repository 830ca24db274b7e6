"""The worker's queues in the store (clocks, webhook deliveries), the same on Redis and in memory:
a claim holds a member until its lease ends, so two workers never hold one at once; a worker that
dies lets the lease run out and another takes over; finishing needs the claim to still hold."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from service.store import Delivery, GameStore, MemoryStore, RedisStore
from service.store.keys import SHARDS, shard_of


@pytest.fixture(params=["memory", "redis"])
def store(request: pytest.FixtureRequest) -> Iterator[GameStore]:
    if request.param == "memory":
        yield MemoryStore()
        return
    store = RedisStore(request.getfixturevalue("redis_url"))
    yield store
    store.close()


def game(store: GameStore, game_id: str, deadline: float | None) -> None:
    store.create(game_id, state=b"s", meta=b'{"m":1}', view=b"v", ttl=60, deadline=deadline)


def test_meta_reads_the_version_and_metadata(store: GameStore) -> None:
    game(store, "g1", None)
    assert store.meta("g1") == (0, b'{"m":1}')
    store.commit("g1", expected_version=0, ttl=60, entries=[b"{}"], meta=b'{"m":2}')
    assert store.meta("g1") == (1, b'{"m":2}')
    assert store.meta("nope") is None


def test_a_claimed_clock_is_held_until_its_lease_and_then_taken_over(store: GameStore) -> None:
    game(store, "early", 100.0)
    game(store, "late", 500.0)
    assert store.clock_backlog(200.0) == (2, 1)
    [claimed] = store.claim_clocks(200.0, lease=230.5)
    assert (claimed.game_id, claimed.lease) == ("early", 230.5)
    assert store.claim_clocks(229.0, lease=260.0) == []  # held: nobody else takes it
    assert store.clock_backlog(229.0) == (2, 0)
    # The worker died; once the lease has run out another takes it, under its own lease.
    [heir] = store.claim_clocks(231.0, lease=261.25)
    assert heir.game_id == "early" and heir.lease == 261.25
    assert not store.set_clock("early", 230.5, None)  # the dead worker's claim is void
    assert store.set_clock("early", 261.25, 999.0)  # postponed by its holder
    assert [c.game_id for c in store.claim_clocks(998.0, lease=2000.0)] == ["late"]
    assert [c.game_id for c in store.claim_clocks(999.0, lease=2000.0)] == ["early"]


def test_a_commit_sets_the_clock_anew_over_a_claim(store: GameStore) -> None:
    game(store, "g", 100.0)
    [claimed] = store.claim_clocks(150.0, lease=180.0)
    store.commit("g", expected_version=0, ttl=60, entries=[b"{}"], deadline=400.0)
    # The claim's holder finds the clock moved on: it changes nothing.
    assert not store.set_clock("g", claimed.lease, None)
    assert store.claim_clocks(399.0, lease=500.0) == []
    assert [c.game_id for c in store.claim_clocks(400.0, lease=500.0)] == ["g"]
    assert store.set_clock("g", 500.0, None)
    assert store.clock_backlog(1e9) == (0, 0)


def test_deliveries_are_queued_once_claimed_once_and_finished_under_their_claim(store: GameStore) -> None:
    ids = [f"msg_{n}" for n in range(5)]
    deliveries = [Delivery(i, f"game{n}", f"job {n}".encode()) for n, i in enumerate(ids)]
    assert store.queue_deliveries(deliveries, due=100.0) == 5
    assert store.queue_deliveries(deliveries[:2], due=50.0) == 0  # queued already: left as is
    assert store.delivery_backlog(99.0) == (5, 0)
    assert store.claim_deliveries(99.0, lease=130.0) == []
    first = store.claim_deliveries(100.0, lease=130.0, limit=3)
    assert len(first) == 3 and all(d.lease == 130.0 for d in first)
    rest = store.claim_deliveries(100.0, lease=131.0, limit=10)
    assert sorted(d.id for d in first + rest) == ids  # every one once, none twice
    by_id = {d.id: d for d in first + rest}
    assert by_id["msg_3"].game_id == "game3" and by_id["msg_3"].job == b"job 3"
    assert store.delivery_backlog(120.0) == (5, 0)

    sent, failed = by_id["msg_0"], by_id["msg_1"]
    assert store.finish_delivery(sent)
    assert store.finish_delivery(failed, retry_at=200.0, job=b"job 1, attempt 2")
    assert not store.finish_delivery(sent)  # finished already
    assert store.delivery_backlog(200.0) == (4, 4)  # three leases past, one retry due
    again = {d.id: d for d in store.claim_deliveries(200.0, lease=230.0)}
    assert again["msg_1"].job == b"job 1, attempt 2"
    # msg_2's first worker died; its heir took it: the dead worker's finish changes nothing.
    assert not store.finish_delivery(by_id["msg_2"])
    assert store.finish_delivery(again["msg_2"])
    for delivery in again.values():
        store.finish_delivery(delivery)
    assert store.delivery_backlog(1e9) == (0, 0)


def test_a_claim_takes_from_every_shard_and_no_more_than_asked(store: GameStore) -> None:
    games = {}
    n = 0
    while len(games) < SHARDS:  # one game in each shard, three deliveries each
        games.setdefault(shard_of(f"g{n}"), f"g{n}")
        n += 1
    queued = [Delivery(f"{g}:{k}", g, b"j") for g in games.values() for k in range(3)]
    assert store.queue_deliveries(queued, due=1.0) == 3 * SHARDS
    taken: list[Delivery] = []
    while batch := store.claim_deliveries(2.0, lease=60.0, limit=10):
        assert len(batch) <= 10
        taken += batch
    assert sorted(d.id for d in taken) == sorted(d.id for d in queued)
