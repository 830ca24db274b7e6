"""Servers for the client's tests: the real Flask app on a real HTTP server, and a tiny scripted
server whose answers (and the requests it got) the tests choose and inspect."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from client_test_servers import ScriptedServer, free_port
from werkzeug.serving import make_server

from service.api import create_app
from service.store import MemoryStore


@pytest.fixture(scope="session")
def live_url() -> Iterator[str]:
    """The service (in-memory store) behind werkzeug's threaded HTTP server on a free port."""
    app = create_app(store=MemoryStore())
    server = make_server("127.0.0.1", free_port(), app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(10)


@pytest.fixture
def scripted() -> Iterator[ScriptedServer]:
    server = ScriptedServer()
    yield server
    server.close()
