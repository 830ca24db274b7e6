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

from tests.conftest import distinct_free_ports


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve(env: dict[str, str]) -> tuple[subprocess.Popen[str], int]:
    # Not the deploy's 9100 for the metrics: tests run side by side.
    taken = env.get("AOS_METRICS_PORT")
    port, metrics = [p for p in distinct_free_ports(3) if str(p) != taken][:2]
    env = {"AOS_METRICS_PORT": str(metrics), **env}
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


def test_a_slow_body_whose_client_hangs_up_is_one_log_line_not_a_traceback() -> None:
    """A body sent slowly and cut off by its client, or not whole by the deadline: the dev
    server logs one line for each (werkzeug's ClientDisconnected surfaced as a traceback)."""
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    proc, port = serve({**env, "AOS_BODY_TIMEOUT_SECONDS": "1"})
    head = (b"POST /v1/games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\n\r\n")
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as hangs_up:
            hangs_up.sendall(head + b'{"map')
            time.sleep(0.3)
            hangs_up.sendall(b'_id"')
            time.sleep(0.3)
        with socket.create_connection(("127.0.0.1", port), timeout=5) as too_slow:
            too_slow.sendall(head + b'{"map')
            # The deadline passes: the answer, then the close. Read to the close: the server
            # writes the head and the body apart, and one recv may return the head alone.
            answer = b""
            while part := too_slow.recv(65536):
                answer += part
        assert answer.startswith(b"HTTP/1.1 408") and b"BODY_TIMEOUT" in answer
        time.sleep(0.5)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/health", timeout=5) as response:
            assert response.status == 200
    finally:
        log = stop(proc)
    assert "Traceback" not in log and "ClientDisconnected" not in log
    refused = [line for line in log.splitlines() if '"event":"body_refused"' in line]
    assert len(refused) == 2, log
    assert '"code":"BODY_INCOMPLETE"' in refused[0] and "broke off after 9 of 100 bytes" in refused[0]
    assert '"code":"BODY_TIMEOUT"' in refused[1]
