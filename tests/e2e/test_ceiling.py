"""The ceilings of the deploy's gevent worker: at most 90 % of its connections are event streams
(AOS_STREAMS_PER_WORKER; the app answers the next stream 503 AT_CAPACITY, and other requests still
get through), and at most `worker_connections` connections (service/serving.py, Ceiling; the
worker answers the next connection 503 AT_CAPACITY); both at once with Retry-After, never left
waiting in the listen backlog. The gauges on /metrics say how near the instance is to them, and a
freed slot is taken again."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.conftest import distinct_free_ports
from tests.e2e.conftest import ROOT, stop, wait_for

CEILING = 6
STREAMS = 5  # 90 % of the connections, as deploy/gunicorn.conf.py sets AOS_STREAMS_PER_WORKER


@pytest.fixture
def one_worker(e2e_redis: str, tmp_path: Path) -> Iterator[tuple[str, str]]:
    port, metrics = distinct_free_ports(2)
    log = tmp_path / "gunicorn.log"
    inherited = {k: v for k, v in os.environ.items() if k != "AOS_STREAMS_PER_WORKER"}  # the config's
    env = {**inherited, "REDIS_URL": e2e_redis, "HOST": "127.0.0.1", "PORT": str(port),
           "LOG_LEVEL": "warning", "WEB_CONCURRENCY": "1", "GUNICORN_WORKER_CONNECTIONS": str(CEILING),
           "AOS_METRICS_PORT": str(metrics), "AOS_METRICS_HOST": "127.0.0.1",
           "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"), "AOS_RATE_LIMITS": "off",
           # A stream whose client left is noticed at its next write: a heartbeat every second.
           "AOS_EVENTS_HEARTBEAT": "1"}
    args = [sys.executable, "-m", "gunicorn", "--config", str(ROOT / "deploy" / "gunicorn.conf.py"),
            "service.api:create_app()"]
    with log.open("wb") as out:
        process = subprocess.Popen(args, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: requests.get(f"{url}/v1/ready", timeout=1, headers={"Connection": "close"}).ok,
                 "gunicorn", process, log)
        yield url, f"http://127.0.0.1:{metrics}/metrics"
    finally:
        stop(process)


def gauge(metrics_url: str, name: str) -> float:
    for line in requests.get(metrics_url, timeout=5).text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} not on /metrics")


def test_past_the_ceilings_a_stream_is_refused_at_once_and_a_freed_slot_is_taken(one_worker) -> None:
    url, metrics_url = one_worker
    created = requests.post(f"{url}/v1/games", timeout=5, headers={"Connection": "close"},
                            json={"map": "rust_belt", "players": [{"name": n} for n in "abc"]}).json()
    events = f"{url}/v1/games/{created['game_id']}/events"
    streams = []
    for _ in range(STREAMS):
        stream = requests.get(events, stream=True, timeout=10)
        assert stream.status_code == 200
        streams.append(stream)
    assert gauge(metrics_url, "aos_event_streams_open") == STREAMS
    assert gauge(metrics_url, "aos_event_streams_ceiling") == STREAMS
    assert gauge(metrics_url, "aos_connections_ceiling") == CEILING
    # And the worker runs the engine as built (scripts/bootstrap.sh built it for the suite).
    assert gauge(metrics_url, 'aos_engine_processes{native="compiled"}') == 1

    # Past the streams' share of the connections: the app refuses the stream at once ...
    started = time.monotonic()
    refused = requests.get(events, timeout=10, headers={"Connection": "close"})
    took = time.monotonic() - started
    assert refused.status_code == 503 and took < 2, (refused.status_code, took)
    assert refused.headers["Retry-After"] == "2"
    assert refused.headers["Content-Type"] == "application/problem+json"
    assert refused.json()["code"] == "AT_CAPACITY"
    # ... and a move or a view still finds a connection.
    assert requests.get(f"{url}/v1/games/{created['game_id']}", timeout=10,
                        headers={"Connection": "close"}).status_code == 200

    # Past the worker's connection ceiling (the streams and one idle connection hold every
    # slot), any connection is answered 503 at once by the worker itself.
    idle = socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])), timeout=10)
    deadline = time.monotonic() + 5
    while gauge(metrics_url, "aos_connections_open") < CEILING and time.monotonic() < deadline:
        time.sleep(0.05)
    refused_before = gauge(metrics_url, "aos_connections_refused_total")
    started = time.monotonic()
    full = requests.get(f"{url}/v1/games/{created['game_id']}", timeout=10)
    assert full.status_code == 503 and time.monotonic() - started < 2
    assert full.headers["Retry-After"] == "2" and full.json()["code"] == "AT_CAPACITY"
    assert gauge(metrics_url, "aos_connections_refused_total") == refused_before + 1
    # ... but /v1/health, the reserved path, which the worker answers itself (not a refusal).
    health = requests.get(f"{url}/v1/health", timeout=10)
    assert health.status_code == 200 and health.json() == {"status": "ok"}
    assert gauge(metrics_url, "aos_connections_refused_total") == refused_before + 1
    # A connection that sends nothing is answered too (after the 1 s the worker waits for its
    # request), never closed in silence.
    silent = socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])), timeout=10)
    started = time.monotonic()
    answer = silent.recv(4096)
    assert answer.startswith(b"HTTP/1.1 503 ") and b"AT_CAPACITY" in answer
    assert time.monotonic() - started < 3
    silent.close()
    idle.close()

    streams.pop().close()  # a stream ends: the next one is held again
    deadline = time.monotonic() + 5
    while gauge(metrics_url, "aos_event_streams_open") >= STREAMS and time.monotonic() < deadline:
        time.sleep(0.05)
    again = requests.get(events, stream=True, timeout=10)
    assert again.status_code == 200
    again.close()
    for stream in streams:
        stream.close()
