"""The service as it runs in production: gunicorn with several workers (deploy/gunicorn.conf.py)
on a real Redis that the tests start on a free port and stop afterwards."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
WORKERS = 3


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(
    check, what: str, process: subprocess.Popen, log: Path | None = None, seconds: float = 30
) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            if check():
                return
        except (OSError, requests.RequestException):
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            detail = log.read_text(errors="replace")[-3000:] if log and log.exists() else ""
            raise RuntimeError(f"{what} did not start (exit {process.poll()})\n{detail}")
        time.sleep(0.05)


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


@pytest.fixture(scope="session")
def e2e_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    workdir = tmp_path_factory.mktemp("e2e-redis")
    args = [
        REDIS_SERVER,
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        str(workdir),
        "--daemonize",
        "no",
    ]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def ping() -> bool:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")

    try:
        wait_for(ping, "redis-server", process)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop(process)


@pytest.fixture(scope="session")
def metrics_port() -> int:
    """The port the master serves /metrics on (never the deploy's 9100: tests run side by side)."""
    return free_port()


@pytest.fixture(scope="session")
def gunicorn(
    e2e_redis: str, metrics_port: int, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, int]]:
    """gunicorn 'service.api:create_app()' with WORKERS sync workers on the e2e Redis: (URL, master pid)."""
    port = free_port()
    log = tmp_path_factory.mktemp("gunicorn") / "gunicorn.log"
    env = {
        **os.environ,
        "REDIS_URL": e2e_redis,
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "WEB_CONCURRENCY": str(WORKERS),
        "LOG_LEVEL": "warning",
        "AOS_METRICS_PORT": str(metrics_port),
        # The deploy's limits, but for record imports: the whole-games test imports every game it
        # plays (about 20 in a minute) from one address. The limits have tests of their own.
        "AOS_RATE_LIMIT_IMPORT": "100/minute;1000/hour",
    }
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)  # the config makes a fresh one
    args = [
        sys.executable,
        "-m",
        "gunicorn",
        "--config",
        str(ROOT / "deploy" / "gunicorn.conf.py"),
        "--workers",
        str(WORKERS),
        "--bind",
        f"127.0.0.1:{port}",
        "service.api:create_app()",
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(
            args, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(
            lambda: requests.get(f"{url}/v1/ready", timeout=1).json().get("store") == "redis",
            "gunicorn",
            process,
            log,
            seconds=120,  # each worker plays its warm-up games first: over 30 s on a loaded machine
        )
        yield url, process.pid
    finally:
        stop(process)


@pytest.fixture(scope="session")
def service_url(gunicorn: tuple[str, int]) -> str:
    return gunicorn[0]


@pytest.fixture(scope="session")
def metrics_url(gunicorn: tuple[str, int], metrics_port: int) -> str:
    return f"http://127.0.0.1:{metrics_port}/metrics"


@pytest.fixture(scope="session")
def gevent_url(e2e_redis: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The same service on our gevent worker (service/serving.py), one worker, no metrics port."""
    port = free_port()
    log = tmp_path_factory.mktemp("gunicorn-gevent") / "gunicorn.log"
    env = {**os.environ, "REDIS_URL": e2e_redis, "LOG_LEVEL": "warning", "AOS_METRICS_PORT": "off"}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    args = [
        sys.executable, "-m", "gunicorn", "--config", str(ROOT / "deploy" / "gunicorn.conf.py"),
        "--worker-class", "service.serving.GeventWorker", "--workers", "1",
        "--bind", f"127.0.0.1:{port}", "service.api:create_app()",
    ]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(
            args, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: requests.get(f"{url}/v1/ready", timeout=1).ok, "gunicorn (gevent)", process, log)
        yield url
    finally:
        stop(process)
