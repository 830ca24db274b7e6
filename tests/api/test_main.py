"""`python -m service`: serves the API and says which store it uses."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve(env: dict[str, str]) -> tuple[subprocess.Popen[str], int]:
    port = free_port()
    env = {"AOS_METRICS_PORT": str(free_port()), **env}  # not the deploy's 9100: tests run side by side
    proc = subprocess.Popen(
        [sys.executable, "-m", "service", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/ready", timeout=1) as r:
                assert r.status == 200
                return proc, port
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.1)
    proc.kill()
    pytest.fail(f"python -m service did not come up:\n{proc.communicate()[0]}")


def stop(proc: subprocess.Popen[str]) -> str:
    proc.terminate()
    return proc.communicate(timeout=20)[0]


def test_runs_on_memory_without_redis_url() -> None:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    proc, port = serve(env)
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/ready") as response:
        assert b'"store":"memory"' in response.read()
    assert "REDIS_URL is not set" in stop(proc)


def test_runs_on_redis_with_redis_url(redis_url: str) -> None:
    proc, port = serve({**os.environ, "REDIS_URL": redis_url})
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/ready") as response:
        assert b'"store":"redis"' in response.read()
    assert "storing games in Redis at redis://127.0.0.1" in stop(proc)


def test_metrics_are_on_their_own_port_and_no_banner_names_the_software() -> None:
    metrics_port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    proc, port = serve({**env, "AOS_METRICS_PORT": str(metrics_port)})
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/health") as response:
            assert response.headers["Server"] == "aos-rules"
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics")
        assert missing.value.code == 404
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics") as response:
            text = response.read().decode()
            assert response.headers["Server"] == "aos-rules"
            assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert 'aos_http_requests_total{method="GET",route="/v1/health",status="200"}' in text
    finally:
        stop(proc)


def test_streams_events_on_flasks_threaded_server() -> None:
    """The dev server holds an event stream (a thread of its own) while other requests go on."""
    import json

    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    proc, port = serve(env)
    try:
        api = f"http://127.0.0.1:{port}/v1"
        body = json.dumps({"map": "rust_belt", "players": [{"name": n} for n in "abc"]}).encode()
        create = urllib.request.Request(f"{api}/games", data=body,
                                        headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(create) as response:
            game = json.loads(response.read())
        events = urllib.request.Request(f"{api}/games/{game['game_id']}/events",
                                        headers={"Accept": "application/x-ndjson"})
        with urllib.request.urlopen(events, timeout=10) as stream:
            assert stream.readline() == b"\n"  # open: the first heartbeat
            seat = game["active_seat"]
            move = urllib.request.Request(
                f"{api}/games/{game['game_id']}/moves", data=b'{"type": "issue_shares", "count": 0}',
                headers={"Content-Type": "application/json",
                         "Authorization": f"Bearer {game['seats'][seat]['token']}"})
            with urllib.request.urlopen(move) as response:
                assert response.status == 200
            event = json.loads(stream.readline())
        assert (event["version"], event["seat"], event["game"]["version"]) == (1, seat, 1)
    finally:
        stop(proc)
