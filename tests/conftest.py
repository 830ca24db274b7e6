"""Shared fixtures: real redis-server processes that the tests start on free ports and stop."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RedisServer:
    """One redis-server process; `durable` servers keep an fsync-always AOF so that a restart
    after a kill shows exactly what was committed."""

    def __init__(self, workdir: Path, *, durable: bool = False) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.durable = durable
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        persistence = (
            ["--appendonly", "yes", "--appendfsync", "always"]
            if self.durable
            else ["--appendonly", "no"]
        )
        args = [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        args += persistence + ["--dir", str(self.workdir), "--daemonize", "no"]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis(port=self.port, socket_connect_timeout=0.2)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                break
            except redis.RedisError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.02)
            finally:
                client.close()

    def kill(self) -> None:
        """Stop it at once, as a crash would."""
        if self.process is not None:
            self.process.kill()
            self.process.wait(10)
            self.process = None

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
            self.process = None

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> Iterator[str]:
    """The shared server's URL, emptied before each test."""
    with redis_server.client() as client:
        client.flushall()
    yield redis_server.url


@pytest.fixture
def durable_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A server of the test's own, to kill and restart."""
    server = RedisServer(tmp_path, durable=True)
    server.start()
    yield server
    server.stop()


# ---- a real HTTP server and a real browser -----------------------------------------------------

CHROMIUM = "/usr/bin/chromium"  # Debian's package; test.sh installs it
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]


class LiveServer:
    """A WSGI app behind werkzeug's threaded HTTP server on a free port of 127.0.0.1."""

    def __init__(self, app: object, host: str = "127.0.0.1") -> None:
        import threading

        from werkzeug.serving import make_server

        self.server = make_server(host, free_port(), app, threaded=True)
        self.url = f"http://{host}:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)


@pytest.fixture
def live_server() -> Iterator[object]:
    """A factory: `live_server(app)` serves a WSGI app until the test ends, returns its URL."""
    servers: list[LiveServer] = []

    def serve(app: object) -> str:
        servers.append(LiveServer(app))
        return servers[-1].url

    yield serve
    for server in servers:
        server.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """Headless Chromium (Debian's) driven by Playwright; a test opens its own page."""
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: ./test.sh installs Debian's chromium"
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
