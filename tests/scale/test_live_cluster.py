"""Live updates on a three-master Redis Cluster: one reader per process subscribed to the 32
shard channels through the cluster client (on every master that serves some of them), and a
watcher on one instance following games on every master moved through the other."""

from __future__ import annotations

import time

from service.live import RedisNotices
from service.store import RedisStore
from service.store.keys import SHARDS, shard_keys
from tests.scale.http_play import HttpGame
from tests.scale.test_cluster import one_game_per_master
from tests.scale.test_live import Collector


def test_the_reader_subscribes_on_every_master_and_hears_every_shard(cluster) -> None:
    store = RedisStore(cluster.url)
    heard: list[str] = []
    notices = RedisNotices(store.url, store.prefix, lambda g, v: heard.append(g), lambda: None)
    notices.start()
    try:
        deadline = time.monotonic() + 20
        while notices.subscriptions < 1:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        # Every master serves some shards' channels, and each counts its own subscriptions.
        counts = []
        for node in cluster.nodes:
            with node.client() as client:
                counts.append(len(client.execute_command("PUBSUB", "SHARDCHANNELS")))
        assert sum(counts) == SHARDS and all(counts), counts
        # A notice on every shard's channel reaches the one reader.
        client = cluster.client()
        for shard in range(SHARDS):
            client.spublish(shard_keys(shard).events, f"game-{shard} 1")
        client.close()
        while len(heard) < SHARDS:
            assert time.monotonic() < deadline, f"{len(heard)} of {SHARDS} notices"
            time.sleep(0.02)
        assert sorted(heard) == sorted(f"game-{s}" for s in range(SHARDS))
    finally:
        notices.stop()
        store.close()


def test_watchers_on_one_instance_follow_games_moved_through_the_other(cluster, services) -> None:
    watcher, mover = services(cluster.url, 2)
    games: list[HttpGame] = one_game_per_master(cluster, mover.url)
    collectors = [Collector(watcher.url, g.game_id) for g in games]
    time.sleep(0.5)
    for _ in range(6):
        for g in games:
            g.step(mover.url)
    for collector in collectors:
        assert [e.version for e in collector.wait_for(6)] == [1, 2, 3, 4, 5, 6]
