"""Where a process learns that games moved: one reader of Redis's sharded pub/sub per process, or
the memory store's listeners.

Every commit that makes a new version SPUBLISHes "<game id> <version>" on its shard's `events`
channel (service/store/keys.py). One reader per process SSUBSCRIBEs to all the shards' channels
(on a Redis Cluster through the cluster client, which holds one connection to each master that
serves some of them) and hands each notice to the hub. Pub/sub delivers at most once and
nothing while the reader is away, so after every (re)subscription the hub re-reads every watched
game from the store: the log is the truth, a notice is only a wake-up.
"""

from __future__ import annotations

import logging
import select
import threading
import time
from collections.abc import Callable

import redis
from redis.backoff import NoBackoff
from redis.cluster import ClusterPubSub
from redis.exceptions import RedisClusterException
from redis.retry import Retry

from service.store import GameStore, MemoryStore, RedisStore
from service.store.keys import SHARDS, shard_keys
from service.store.redis_store import connect

from .hub import Hub

log = logging.getLogger(__name__)

FAILURES = (redis.RedisError, RedisClusterException, OSError, ValueError)


class RedisNotices:
    """The reader: a daemon thread (a greenlet under gevent) that stays subscribed to every
    shard's events channel, and comes back after any failure (a Redis restart, a failover)."""

    def __init__(
        self,
        url: str,
        prefix: str,
        on_notice: Callable[[str, int], None],
        on_subscribed: Callable[[], None],
        *,
        socket_timeout: float = 2.0,
        ping_every: float = 5.0,
        min_backoff: float = 0.05,
        max_backoff: float = 2.0,
    ) -> None:
        self._url = url
        self.channels = [shard_keys(n, prefix).events for n in range(SHARDS)]
        self._on_notice = on_notice
        self._on_subscribed = on_subscribed
        self._socket_timeout = socket_timeout
        self._ping_every = ping_every
        self._min_backoff = min_backoff
        self._max_backoff = max_backoff
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        self.subscriptions = 0  # how many times every channel was (re)subscribed
        self.notices = 0

    def start(self) -> Callable[[], None]:
        self._thread = threading.Thread(target=self._run, name="aos-live-notices", daemon=True)
        self._thread.start()
        return self.stop

    def stop(self) -> None:
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(5)

    def _run(self) -> None:
        backoff = self._min_backoff
        while not self._stopped.is_set():
            try:
                self._session()
            except FAILURES as exc:
                log.warning("event notices: subscription lost, subscribing again",
                            extra={"fields": {"event": "notices_lost", "error": str(exc)}})
            except Exception:  # never let the reader die: without it no watcher wakes
                log.exception("event notices: unexpected failure")
            if self._stopped.wait(backoff):
                return
            backoff = min(self._max_backoff, backoff * 2)

    def _client(self) -> redis.Redis:
        return connect(
            self._url,
            socket_timeout=self._socket_timeout,
            socket_connect_timeout=self._socket_timeout,
            retry=Retry(NoBackoff(), 0),  # a failure ends the session: the next one resyncs
            health_check_interval=0,  # the reader pings by itself, see _session
        )

    def _session(self) -> None:
        """One subscription: subscribe to every channel, tell the hub, then pass notices on
        until something fails (raises) or the reader is stopped (returns)."""
        client = self._client()
        pubsub = client.pubsub()
        try:
            pubsub.ssubscribe(*self.channels)
            readers = _readers(pubsub)
            self._await_subscribed(readers)
            self.subscriptions += 1
            log.info("event notices: subscribed", extra={"fields": {
                "event": "notices_subscribed", "channels": len(self.channels),
                "connections": len(readers), "subscriptions": self.subscriptions}})
            self._on_subscribed()
            self._pass_notices(readers)
        finally:
            try:
                pubsub.close()
            finally:
                client.close()

    def _await_subscribed(self, readers: list[redis.client.PubSub]) -> None:
        waiting = {c.encode() for c in self.channels}
        deadline = time.monotonic() + 5 * self._socket_timeout
        while waiting:
            if time.monotonic() > deadline:
                raise redis.TimeoutError(f"{len(waiting)} channels not confirmed")
            for message in _drain(readers, self._socket_timeout):
                if message["type"] == "ssubscribe":
                    waiting.discard(_bytes(message["channel"]))
                else:
                    self._handle(message)

    def _pass_notices(self, readers: list[redis.client.PubSub]) -> None:
        heard = {id(r): time.monotonic() for r in readers}
        pinged = time.monotonic()
        while not self._stopped.is_set():
            now = time.monotonic()
            if now - pinged >= self._ping_every:
                # A connection can die without a word (a host gone, a partition): each one must
                # answer a PING within three rounds, or the session starts again.
                silent = [r for r in readers if now - heard[id(r)] > 3 * self._ping_every]
                if silent:
                    raise redis.ConnectionError(f"{len(silent)} pub/sub connections went silent")
                for reader in readers:
                    reader.ping("aos-live")
                pinged = now
            for reader, message in _drain_from(readers, min(1.0, self._ping_every)):
                heard[id(reader)] = time.monotonic()
                self._handle(message)

    def _handle(self, message: dict) -> None:
        kind = message["type"]
        if kind == "smessage":
            game_id, _, version = _bytes(message["data"]).partition(b" ")
            if version.isdigit():
                self.notices += 1
                self._on_notice(game_id.decode(), int(version))
        elif kind == "sunsubscribe":
            # The server dropped a channel (its slot moved to another node): start again, on
            # the cluster's new map.
            raise redis.ConnectionError("a shard channel was unsubscribed by the server")


def _readers(pubsub: redis.client.PubSub) -> list[redis.client.PubSub]:
    """The connections of a subscription: one, or on a cluster one per master it uses."""
    if isinstance(pubsub, ClusterPubSub):
        return list(pubsub.node_pubsub_mapping.values())
    return [pubsub]


def _drain(readers: list[redis.client.PubSub], timeout: float) -> list[dict]:
    return [message for _, message in _drain_from(readers, timeout)]


def _drain_from(readers: list[redis.client.PubSub], timeout: float) -> list[tuple[redis.client.PubSub, dict]]:
    """What the connections have to say: waits up to `timeout` for any of them, then takes
    every message already received (pongs included)."""
    got = []
    for reader in readers:  # first what the parsers hold already: select cannot see it
        while (message := reader.get_message(timeout=0.0)) is not None:
            got.append((reader, message))
    if got:
        return got
    sockets = [reader.connection._sock for reader in readers]  # type: ignore[attr-defined]  # noqa: SLF001 - redis-py has no public handle
    if any(sock is None for sock in sockets):
        raise redis.ConnectionError("a pub/sub connection is closed")
    ready, _, _ = select.select(sockets, [], [], timeout)
    for reader in readers:
        if reader.connection._sock in ready:  # type: ignore[attr-defined]  # noqa: SLF001
            while (message := reader.get_message(timeout=0.0)) is not None:
                got.append((reader, message))
    return got


def _bytes(value: bytes | str) -> bytes:
    return value.encode() if isinstance(value, str) else value


def notices_for(store: GameStore) -> Callable[[Hub], Callable[[], None]]:
    """What starts the notices of a hub over `store`."""
    if isinstance(store, MemoryStore):
        return lambda hub: store.add_listener(hub.notify)
    if isinstance(store, RedisStore):
        return lambda hub: RedisNotices(store.url, store.prefix, hub.notify, hub.resync).start()
    return _polling


def _polling(hub: Hub, every: float = 1.0) -> Callable[[], None]:
    """A store with no notices: every watcher reads again each `every` seconds."""
    stopped = threading.Event()

    def run() -> None:
        while not stopped.wait(every):
            hub.resync()

    threading.Thread(target=run, name="aos-live-poll", daemon=True).start()
    return stopped.set
