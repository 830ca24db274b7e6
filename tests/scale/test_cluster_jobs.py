"""The worker's jobs on a real three-master Redis Cluster, and a REDIS_URL naming several seed
nodes. A Cluster client refuses Lua scripts in a pipeline, so the jobs that run a script on every
shard (claiming clocks and deliveries, queuing deliveries) must reach each shard's node by
itself; and a process must start while any one of the seeds it names is up."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import requests
from redis.crc import key_slot

from service.store import Delivery, RedisStore, StoreUnavailable
from service.store.keys import SHARDS, shard_keys, shard_of
from service.store.redis_store import cluster_seeds
from tests.conftest import free_port
from tests.worker.conftest import Api, Receiver, WorkerProcess


def one_game_per_shard() -> list[str]:
    ids: dict[int, str] = {}
    n = 0
    while len(ids) < SHARDS:
        ids.setdefault(shard_of(f"cj-{n}"), f"cj-{n}")
        n += 1
    return list(ids.values())


def test_the_queues_claim_and_queue_on_every_shard_of_a_cluster(cluster) -> None:
    store = RedisStore(cluster.url)
    try:
        games = one_game_per_shard()
        for game_id in games:
            store.create(game_id, state=b"s", meta=b"{}", view=b"v", ttl=60, deadline=100.0)
        # Each shard's keys are in one slot, and the shards are spread over every master.
        client = cluster.client()
        nodes = {client.get_node_from_key(shard_keys(n).clocks).name for n in range(SHARDS)}
        client.close()
        assert len(nodes) == len(cluster.nodes)
        for n in range(SHARDS):
            keys = shard_keys(n)
            names = (keys.clocks, keys.deliveries, keys.delivery_jobs)
            assert len({key_slot(k.encode()) for k in names}) == 1

        claimed = store.claim_clocks(200.0, lease=260.0, limit=SHARDS)
        assert sorted(c.game_id for c in claimed) == sorted(games)
        assert all(c.lease == 260.0 for c in claimed)
        assert store.claim_clocks(250.0, lease=300.0, limit=SHARDS) == []  # held under the lease
        assert all(store.set_clock(g, 260.0, None) for g in games)

        deliveries = [Delivery(f"d-{g}", g, b"job-" + g.encode()) for g in games]
        assert store.queue_deliveries(deliveries, due=100.0) == SHARDS
        assert store.queue_deliveries(deliveries, due=100.0) == 0  # once per delivery id
        taken = store.claim_deliveries(150.0, lease=400.0, limit=SHARDS)
        assert sorted((d.id, d.game_id, d.job) for d in taken) == sorted(
            (d.id, d.game_id, d.job) for d in deliveries)
        assert store.claim_deliveries(150.0, lease=400.0, limit=SHARDS) == []
        assert all(store.finish_delivery(d) for d in taken)
        assert store.delivery_backlog(1000.0) == (0, 0)
    finally:
        store.close()


@pytest.fixture
def cluster_api(cluster, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("AOS_WEBHOOKS_ALLOW_PRIVATE", "1")  # the receiver is on 127.0.0.1
    api = Api(cluster.url)
    yield api
    api.store.close()


def test_a_worker_on_a_cluster_runs_the_clocks_and_sends_the_webhooks(
    cluster, cluster_api, tmp_path: Path
) -> None:
    receiver = Receiver()
    worker = WorkerProcess(cluster.url, tmp_path / "worker.log", AOS_WEBHOOKS_CONCURRENCY="4")
    try:
        # One clocked game and one with a webhook, on different masters when the ids allow.
        clocked = cluster_api.create(clock={"turn_seconds": 1})
        hooked = cluster_api.create()
        hook = cluster_api.register(hooked, 0, receiver.url("h"), ["move"])
        receiver.secrets["h"] = hook["secret"]
        cluster_api.move(hooked, {"type": "issue_shares", "count": 0})
        expected = f"msg_{hook['id']}_1_move"
        receiver.wait_for(lambda: expected in receiver.ids(), timeout=20)
        assert all(r["valid"] for r in receiver.received)

        deadline = time.monotonic() + 20
        while cluster_api.view(clocked["game_id"])["version"] < 2:
            assert time.monotonic() < deadline, "the clock never fired on the cluster"
            time.sleep(0.1)
        history = cluster_api.history(clocked["game_id"])
        assert [e["by"] for e in history[:2]] == ["clock", "clock"]
        assert worker.metric("aos_worker_job_errors_total", job="clocks") == 0
        assert worker.metric("aos_worker_job_errors_total", job="webhook-deliveries") == 0
        assert worker.metric("aos_worker_job_errors_total", job="webhook-outbox") == 0
        assert "job_error" not in worker.log.read_text()
    finally:
        worker.stop()
        receiver.server.shutdown()


def test_cluster_urls_name_every_seed() -> None:
    assert cluster_seeds("redis+cluster://a:7000,b:7001,[::1]:7002") == (
        "redis://a:7000", [("a", 7000), ("b", 7001), ("::1", 7002)])
    assert cluster_seeds("rediss+cluster://u:p%40ss@a:7000,b/?ssl_cert_reqs=none") == (
        "rediss://u:p%40ss@a:7000/?ssl_cert_reqs=none", [("a", 7000), ("b", 6379)])
    with pytest.raises(ValueError):
        cluster_seeds("redis+cluster://")


def test_a_process_starts_and_serves_while_any_seed_is_up(cluster, services, tmp_path: Path) -> None:
    live = [f"127.0.0.1:{node.port}" for node in cluster.nodes]
    down = [f"127.0.0.1:{free_port()}" for _ in range(2)]  # nothing listens there
    url = "redis+cluster://" + ",".join([*down, live[1]])
    store = RedisStore(url)
    try:
        store.create("seeded", state=b"s", meta=b"{}", view=b"v", ttl=60)
        assert store.load("seeded").state == b"s"
    finally:
        store.close()
    # The API under gunicorn, and the worker, with the first seeds down.
    [service] = services(url, 1)
    created = requests.post(f"{service.url}/v1/games", timeout=10,
                            json={"map": "rust_belt", "players": [{"name": n} for n in "ABC"]})
    assert created.status_code == 201, created.text
    assert requests.get(f"{service.url}/v1/ready", timeout=5).status_code == 200
    worker = WorkerProcess(url, tmp_path / "seeded-worker.log")
    try:
        time.sleep(1.0)  # rounds of every job, each reaching every shard
        assert worker.process.poll() is None
        assert worker.metric("aos_worker_job_errors_total", job="clocks") == 0
        assert "job_error" not in worker.log.read_text()
    finally:
        worker.stop()
    # Every seed down: no cluster to find, a store failure (a 503), not a crash.
    none = RedisStore("redis+cluster://" + ",".join(down), connect_timeout=0.2, retries=0)
    with pytest.raises(StoreUnavailable):
        none.ping()
