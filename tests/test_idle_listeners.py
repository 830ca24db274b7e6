"""The side listeners (the API's metrics port, the worker's status port) hold a thread per
connection: an idle connection is closed after a while instead of holding its thread for ever."""

from __future__ import annotations

import socket
import time

import pytest

from service import serving
from service.worker import main as worker_main
from tests.conftest import free_port


def idle_for(port: int) -> float:
    """Seconds until the server closes a connection that sends nothing."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        started = time.monotonic()
        assert sock.recv(1) == b""
        return time.monotonic() - started


def test_the_metrics_listener_drops_an_idle_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(serving._RequestHandler, "timeout", 0.3)
    port = free_port()
    server = serving.start_metrics_server(port, "127.0.0.1", exposition=lambda: (b"", "text/plain"))
    try:
        assert idle_for(port) < 2
    finally:
        server.shutdown()


def test_the_worker_status_listener_drops_an_idle_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker_main, "STATUS_IDLE_SECONDS", 0.3)

    class Runner:
        last_round = time.monotonic()

    port = free_port()
    server = worker_main.serve_status(Runner(), "127.0.0.1", port)  # type: ignore[arg-type]
    try:
        assert idle_for(port) < 2
    finally:
        server.shutdown()
