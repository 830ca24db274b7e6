"""A commit whose reply is lost on the way back from Redis is applied once, not twice.

A TCP proxy between the app and a real redis-server forwards everything, but drops the reply to
the first commit script it sees after being armed, and cuts that connection: the move is written
in Redis, yet the app hears a connection error, exactly as when a network blip eats a reply."""

from __future__ import annotations

import hashlib
import socket
import threading

from service.store import RedisStore
from service.store.redis_store import _COMMIT
from tests.conftest import free_port

COMMIT_SHA = hashlib.sha1(_COMMIT.encode()).hexdigest().encode()


class ReplyDroppingProxy:
    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = free_port()
        self.armed = threading.Event()
        self.dropped = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", self.port))
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            pending = threading.Event()  # a commit went up on this connection: drop its reply
            threading.Thread(target=self._up, args=(client, upstream, pending), daemon=True).start()
            threading.Thread(target=self._down, args=(upstream, client, pending), daemon=True).start()

    def _up(self, client: socket.socket, upstream: socket.socket, pending: threading.Event) -> None:
        try:
            while data := client.recv(65536):
                if self.armed.is_set() and COMMIT_SHA in data:
                    self.armed.clear()
                    pending.set()
                upstream.sendall(data)
        except OSError:
            pass

    def _down(self, upstream: socket.socket, client: socket.socket, pending: threading.Event) -> None:
        try:
            while data := upstream.recv(65536):
                if pending.is_set():
                    self.dropped.set()
                    break
                client.sendall(data)
        except OSError:
            pass
        for s in (client, upstream):
            s.close()

    def close(self) -> None:
        self.listener.close()


def test_a_commit_whose_reply_is_lost_is_applied_once(redis_server, api_on) -> None:
    proxy = ReplyDroppingProxy(redis_server.port)
    store = RedisStore(f"redis://127.0.0.1:{proxy.port}/0")
    try:
        api = api_on(store)
        game = api.create()
        game_id = game["game_id"]
        tokens = [s["token"] for s in game["seats"]]
        # A first move puts the commit script into Redis's cache, so the armed commit runs at
        # once (no NOSCRIPT round trip whose reply the proxy would drop instead).
        first = api.move(game_id, tokens[game["active_seat"]], {"type": "issue_shares", "count": 0})
        seat = first.get_json()["game"]["active_seat"]
        proxy.armed.set()
        response = api.move(game_id, tokens[seat], {"type": "issue_shares", "count": 1})
        assert proxy.dropped.is_set(), "the proxy never saw the commit"
        assert response.status_code == 200, response.get_json()
        assert response.get_json()["version"] == 2
        view = api.view(game_id)
        assert view["version"] == 2
        assert view["players"][seat]["shares"] == 3 and view["players"][seat]["cash"] == 15
        history = api.client.get(f"/v1/games/{game_id}/history").get_json()
        assert [entry["move"] for entry in history] == [{"type": "issue_shares", "count": 0},
                                                        {"type": "issue_shares", "count": 1}]
    finally:
        store.close()
        proxy.close()
