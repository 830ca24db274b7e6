"""A stream outlives a Redis restart: under gunicorn (gevent workers), a watcher's stream stays
open while Redis is down, and once Redis is back (its AOF intact) the moves made after the
restart reach it, in order, on the same connection: nothing lost, nothing repeated."""

from __future__ import annotations

import time

import requests

from tests.scale.conftest import Service, wait_for
from tests.scale.http_play import TIMEOUT, HttpGame
from tests.scale.test_live import Collector


def test_a_stream_outlives_a_redis_restart(durable_redis, tmp_path) -> None:  # type: ignore[no-untyped-def]
    service = Service(tmp_path, durable_redis.url)
    service.env.update(AOS_EVENTS_HEARTBEAT="0.5", WEB_CONCURRENCY="1")
    service.start()
    try:
        played = HttpGame(service.url, seed="restart")
        collector = Collector(service.url, played.game_id)
        time.sleep(0.5)
        for _ in range(3):
            played.step(service.url)
        assert [e.version for e in collector.wait_for(3)] == [1, 2, 3]

        durable_redis.kill()
        down = requests.get(f"{service.url}/v1/ready", timeout=TIMEOUT)
        assert down.status_code == 503
        time.sleep(1.0)  # the stream waits on, with its heartbeats
        durable_redis.start()
        wait_for(lambda: requests.get(f"{service.url}/v1/ready", timeout=TIMEOUT).status_code == 200,
                 "the service to see Redis again")
        for _ in range(3):
            played.step(service.url)
        events = collector.wait_for(6)
        assert [e.version for e in events] == [1, 2, 3, 4, 5, 6]
        history = requests.get(f"{service.url}/v1/games/{played.game_id}/history", timeout=TIMEOUT).json()
        assert [{k: v for k, v in e.to_dict().items() if k != "game"} for e in events] == history
        assert collector.connections == 1, "the stream had to be opened again"
    finally:
        service.stop()
