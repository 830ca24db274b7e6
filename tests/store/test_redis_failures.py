"""How RedisStore fails and recovers: retries on a fresh connection (reported through on_retry),
and failures labelled with the operation and its kind."""

from __future__ import annotations

import pytest
import redis
from redis.utils import HIREDIS_AVAILABLE

from service.store import RedisStore, StoreUnavailable
from service.store.redis_store import connect, error_kind
from tests.conftest import free_port


def test_an_idle_connection_dropped_is_replaced_without_a_retry(redis_server, redis_url: str) -> None:
    store = RedisStore(redis_url)
    retries: list[tuple[str, str]] = []
    store.on_retry = lambda op, reason: retries.append((op, reason))
    store.create("g", state=b"s", meta=b"m", view=b"v", ttl=60)
    with redis_server.client() as admin:
        admin.client_kill_filter(_type="normal", skipme=True)  # as a Redis restart would
    # redis-py finds the pooled connection closed before using it and opens another.
    assert store.load("g").state == b"s"
    assert retries == []


def test_a_timeout_is_retried_and_reported(redis_server, redis_url: str) -> None:
    store = RedisStore(redis_url, socket_timeout=0.2, retries=3)
    retries: list[tuple[str, str]] = []
    store.on_retry = lambda op, reason: retries.append((op, reason))
    store.create("g", state=b"s", meta=b"m", view=b"v", ttl=60)
    with redis_server.client() as admin:
        admin.execute_command("CLIENT", "PAUSE", 350, "ALL")  # Redis stops answering for 350 ms
    assert store.load("g").state == b"s"
    assert retries and set(retries) == {("load", "timeout")}


def test_unreachable_redis_fails_with_op_and_kind() -> None:
    store = RedisStore(f"redis://127.0.0.1:{free_port()}/0", connect_timeout=0.2, retries=1)
    retries: list[tuple[str, str]] = []
    store.on_retry = lambda op, reason: retries.append((op, reason))
    for op, call in [
        ("ping", store.ping),
        ("load", lambda: store.load("g")),
        ("history", lambda: store.history("g")),
        ("idempotency", lambda: store.idempotency_record("g", "k")),
        ("create", lambda: store.create("g", state=b"s", meta=b"m", view=b"v", ttl=1)),
    ]:
        with pytest.raises(StoreUnavailable) as caught:
            call()
        assert (caught.value.op, caught.value.kind) == (op, "connection")
    assert retries == []  # only retries that succeeded are reported


def test_out_of_memory_is_its_own_kind(redis_server, redis_url: str) -> None:
    store = RedisStore(redis_url)
    with redis_server.client() as admin:
        admin.config_set("maxmemory-policy", "noeviction")
        admin.config_set("maxmemory", "1")
        try:
            with pytest.raises(StoreUnavailable) as caught:
                store.create("g", state=b"s", meta=b"m", view=b"v", ttl=60)
        finally:
            admin.config_set("maxmemory", "0")
    assert (caught.value.op, caught.value.kind) == ("create", "oom")


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (redis.TimeoutError("slow"), "timeout"),
        (redis.ConnectionError("gone"), "connection"),
        (redis.exceptions.BusyLoadingError("loading"), "connection"),
        (redis.exceptions.ClusterDownError("CLUSTERDOWN"), "connection"),
        (redis.ResponseError("OOM command not allowed"), "oom"),
        (redis.ResponseError("WRONGTYPE"), "other"),
    ],
)
def test_error_kinds(error: Exception, kind: str) -> None:
    assert error_kind(error) == kind


def test_cluster_urls_make_a_cluster_client() -> None:
    # Connecting discovers the cluster, so an unreachable node fails here: with the cluster
    # client's own error, which the store reports as a connection failure.
    with pytest.raises(redis.exceptions.RedisClusterException) as caught:
        connect(f"redis+cluster://127.0.0.1:{free_port()}", socket_connect_timeout=0.2)
    assert error_kind(caught.value) == "connection"
    assert isinstance(connect("redis://127.0.0.1:1/0"), redis.Redis)  # lazy: no connection yet


def close_buffers_under_calls(monkeypatch: pytest.MonkeyPatch, times: int) -> list[int]:
    """The next `times` reads from Redis find their connection closed under them, as they do
    under gevent when another greenlet disconnects the connection mid-call. With redis-py's own
    parser the call then raises `ValueError: I/O operation on closed file` (its buffer closed);
    with hiredis's, an OSError (EBADF: the socket closed). Neither is a RedisError."""
    closed: list[int] = []
    if HIREDIS_AVAILABLE:
        from redis._parsers.hiredis import _HiredisParser

        original = _HiredisParser.read_from_socket

        def read(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            # Not the pool's check before a call (can_read, which does not raise on a timeout):
            # redis-py reconnects a connection that fails it, before the call is made.
            if len(closed) < times and kwargs.get("raise_on_timeout", True):
                closed.append(1)
                self._sock.close()
            return original(self, *args, **kwargs)

        monkeypatch.setattr(_HiredisParser, "read_from_socket", read)
        return closed

    from redis._parsers.socket import SocketBuffer

    original_read = SocketBuffer._read_from_socket

    def read_buffer(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        if len(closed) < times:
            closed.append(1)
            self._buffer.close()
        return original_read(self, *args, **kwargs)

    monkeypatch.setattr(SocketBuffer, "_read_from_socket", read_buffer)
    return closed


def test_a_socket_closed_under_a_call_is_retried_on_a_fresh_connection(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = RedisStore(redis_url)
    retries: list[tuple[str, str]] = []
    store.on_retry = lambda op, reason: retries.append((op, reason))
    store.create("g", state=b"s", meta=b"m", view=b"v", ttl=60)
    close_buffers_under_calls(monkeypatch, 1)
    assert store.load("g").state == b"s"
    assert retries == [("load", "connection")]


def test_a_socket_closed_under_every_try_is_a_store_failure_then_a_503(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from service.api import create_app
    from service.referee.settings import Settings

    store = RedisStore(redis_url, retries=2)
    app = create_app(store=store, settings=Settings()).test_client()
    created = app.post("/v1/games", json={"map": "rust_belt", "players": [{"name": n} for n in "ABC"]})
    assert created.status_code == 201
    game_id = created.get_json()["game_id"]
    closed = close_buffers_under_calls(monkeypatch, 1_000)
    with pytest.raises(StoreUnavailable) as caught:
        store.load(game_id)
    assert (caught.value.op, caught.value.kind) == ("load", "connection")
    assert len(closed) == 3  # the call and its two retries
    response = app.get(f"/v1/games/{game_id}")
    assert response.status_code == 503, response.get_data(as_text=True)
    assert response.headers["Retry-After"] == "1"
    assert response.get_json()["code"] == "STORE_UNAVAILABLE"
