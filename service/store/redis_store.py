"""RedisStore: games in Redis, written by Lua scripts so that every write is all or nothing.

Per game: a hash `...:state` (version, state, meta, view), a list `...:log` (one entry per
applied move) and short-lived strings `...:idem:<key>`; all share the hash tag `{game:<id>}`, so
every script touches one Cluster slot and the same code runs on one Redis or a Redis Cluster.

REDIS_URL forms: `redis://[:password@]host:port/db` (or `rediss://` for TLS) for one Redis;
`redis+cluster://[:password@]host:port` (or `rediss+cluster://`) for a Redis Cluster, naming any
one node: the client discovers the others and follows the slots as they move.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

import redis
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.cluster import RedisCluster
from redis.exceptions import (
    ClusterDownError,
    OutOfMemoryError,
    RedisClusterException,
    SlotNotCoveredError,
    TryAgainError,
)
from redis.retry import Retry

from .base import CommitResult, GameExists, GameStore, IdemRecord, Outcome, Stored, StoreUnavailable
from .keys import PREFIX, game_keys, idem_key, kept_key

T = TypeVar("T")
Client = redis.Redis | RedisCluster

CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}

# Worth another try on a fresh connection: the server went away, was too slow, is loading its
# data after a restart (BusyLoadingError is a ConnectionError), or its cluster is failing over.
RETRYABLE = (redis.ConnectionError, redis.TimeoutError, ClusterDownError, TryAgainError, SlotNotCoveredError)
# redis-py's cluster client raises these, which are not RedisErrors (e.g. no node reachable).
FAILURES = (redis.RedisError, RedisClusterException)

# KEYS: state, log[, idem]
# ARGV: state, meta, view, ttl, idem value or '', idem ttl or 0, log entries...
_CREATE = """
if KEYS[3] then
  local prior = redis.call('GET', KEYS[3])
  if prior then return {'replayed', prior} end
end
if redis.call('EXISTS', KEYS[1]) == 1 then return {'exists'} end
local moves = #ARGV - 6
redis.call('HSET', KEYS[1], 'version', moves, 'state', ARGV[1], 'meta', ARGV[2], 'view', ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('DEL', KEYS[2])
for i = 7, #ARGV, 1000 do
  redis.call('RPUSH', KEYS[2], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
if moves > 0 then redis.call('EXPIRE', KEYS[2], ARGV[4]) end
if KEYS[3] then redis.call('SET', KEYS[3], ARGV[5], 'EX', ARGV[6]) end
return {'created'}
"""

# The compare-and-set of a move. KEYS: state, log[, idem]
# ARGV: expected version, state, view, log entry, ttl[, idem value, idem ttl]
_COMMIT = """
local current = redis.call('HGET', KEYS[1], 'version')
if not current then return {'missing'} end
if KEYS[3] then
  local prior = redis.call('GET', KEYS[3])
  if prior then return {'replayed', current, prior} end
end
if current ~= ARGV[1] then return {'conflict', current} end
local version = tonumber(current) + 1
redis.call('HSET', KEYS[1], 'version', version, 'state', ARGV[2], 'view', ARGV[3])
redis.call('RPUSH', KEYS[2], ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[5])
redis.call('EXPIRE', KEYS[2], ARGV[5])
if KEYS[3] then redis.call('SET', KEYS[3], ARGV[6], 'EX', ARGV[7]) end
return {'applied', version}
"""

# The compare-and-set of a game's metadata (its token hashes). KEYS: state
# ARGV: expected meta, new meta
_REPLACE_META = """
local current = redis.call('HGET', KEYS[1], 'meta')
if not current then return 'missing' end
if current ~= ARGV[1] then return 'conflict' end
redis.call('HSET', KEYS[1], 'meta', ARGV[2])
return 'applied'
"""

# The log, or nil when the game does not exist: one atomic read. KEYS: state, log
_HISTORY = """
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
return redis.call('LRANGE', KEYS[2], 0, -1)
"""


def error_kind(exc: Exception) -> str:
    """The `kind` label of a failed Redis call."""
    if isinstance(exc, RedisClusterException) and isinstance(exc.__cause__, redis.RedisError):
        return error_kind(exc.__cause__)
    if isinstance(exc, redis.TimeoutError):
        return "timeout"
    if isinstance(exc, redis.ConnectionError | ClusterDownError | TryAgainError | SlotNotCoveredError):
        return "connection"
    if isinstance(exc, OutOfMemoryError) or str(exc).startswith("OOM"):
        return "oom"
    return "other"


def connect(url: str, **options: object) -> Client:
    """A client for REDIS_URL: a Redis, or a RedisCluster for the `+cluster` schemes."""
    scheme, sep, rest = url.partition("://")
    if scheme in CLUSTER_SCHEMES:
        return RedisCluster.from_url(CLUSTER_SCHEMES[scheme] + sep + rest, **options)
    return redis.Redis.from_url(url, **options)


class RedisStore(GameStore):
    kind = "redis"

    def __init__(
        self,
        url: str,
        *,
        prefix: str = PREFIX,
        socket_timeout: float = 1.0,
        connect_timeout: float = 1.0,
        retries: int = 2,
    ) -> None:
        self._url = url
        self._prefix = prefix
        self._retries = retries
        self._backoff = ExponentialBackoff(cap=0.2, base=0.02)
        self._options = {
            "socket_timeout": socket_timeout,
            "socket_connect_timeout": connect_timeout,
            # redis-py retries nothing itself: _run does, the same way for Redis and Cluster,
            # and counts what it retried.
            "retry": Retry(NoBackoff(), 0),
            "health_check_interval": 30,
        }
        self._lock = threading.Lock()
        self._client: Client | None = None
        self._pid = 0

    def _redis(self) -> Client:
        # Created on first use and again after a fork, so each gunicorn worker has its own pool.
        if self._client is None or self._pid != os.getpid():
            with self._lock:
                if self._client is None or self._pid != os.getpid():
                    client = connect(self._url, **self._options)
                    self._create = client.register_script(_CREATE)
                    self._commit = client.register_script(_COMMIT)
                    self._history = client.register_script(_HISTORY)
                    self._replace_meta = client.register_script(_REPLACE_META)
                    self._client, self._pid = client, os.getpid()
        return self._client

    def _run(self, op: str, call: Callable[[Client], T]) -> T:
        """`call` with a client, retried on a fresh connection after a connection failure or a
        timeout. A commit retried after a lost reply finds the version moved on (CONFLICT) or
        its idempotency key used (REPLAYED): the store never writes one commit twice. The API
        gives every commit a key (the client's, or one of the request's own), so a retried
        commit that had landed is REPLAYED and never judged again."""
        retried: list[str] = []
        while True:
            try:
                result = call(self._redis())
            except RETRYABLE as exc:
                if len(retried) >= self._retries:
                    raise StoreUnavailable(f"{op}: {exc}", op=op, kind=error_kind(exc)) from exc
                retried.append(error_kind(exc))
                time.sleep(self._backoff.compute(len(retried)))
            except FAILURES as exc:
                raise StoreUnavailable(f"{op}: {exc}", op=op, kind=error_kind(exc)) from exc
            else:
                for reason in retried:
                    self.on_retry(op, reason)
                return result

    def _keys(self, game_id: str, idem: IdemRecord | None) -> list[str]:
        keys = list(game_keys(game_id, self._prefix))
        if idem is not None:
            keys.append(idem_key(game_id, idem.key, self._prefix))
        return keys

    def create(
        self,
        game_id: str,
        *,
        state: bytes,
        meta: bytes,
        view: bytes,
        ttl: int,
        idem: IdemRecord | None = None,
        log: Sequence[bytes] = (),
    ) -> bytes | None:
        args: list[object] = [state, meta, view, ttl]
        args += [idem.value, idem.ttl] if idem is not None else [b"", 0]
        args += log
        keys = self._keys(game_id, idem)
        reply = self._run("create", lambda client: self._create(keys=keys, args=args, client=client))
        if reply[0] == b"replayed":
            return reply[1]
        if reply[0] == b"exists":
            raise GameExists(game_id)
        return None

    def load(self, game_id: str, *, with_view: bool = False) -> Stored | None:
        state_key, _ = game_keys(game_id, self._prefix)
        fields = ["version", "state", "meta", "view"] if with_view else ["version", "state", "meta"]
        values = self._run("load", lambda client: client.hmget(state_key, fields))
        if any(value is None for value in values):
            return None
        return Stored(int(values[0]), values[1], values[2], values[3] if with_view else None)

    def load_view(self, game_id: str) -> tuple[int, bytes] | None:
        state_key, _ = game_keys(game_id, self._prefix)
        version, view = self._run("load", lambda client: client.hmget(state_key, ["version", "view"]))
        if version is None or view is None:
            return None
        return int(version), view

    def version(self, game_id: str) -> int | None:
        state_key, _ = game_keys(game_id, self._prefix)
        version = self._run("load", lambda client: client.hget(state_key, "version"))
        return None if version is None else int(version)

    def commit(
        self,
        game_id: str,
        *,
        expected_version: int,
        state: bytes,
        view: bytes,
        log_entry: bytes,
        ttl: int,
        idem: IdemRecord | None = None,
    ) -> CommitResult:
        args: list[object] = [expected_version, state, view, log_entry, ttl]
        if idem is not None:
            args += [idem.value, idem.ttl]
        keys = self._keys(game_id, idem)
        reply = self._run("commit", lambda client: self._commit(keys=keys, args=args, client=client))
        outcome = Outcome(reply[0].decode())
        if outcome is Outcome.MISSING:
            return CommitResult(outcome)
        if outcome is Outcome.REPLAYED:
            return CommitResult(outcome, int(reply[1]), reply[2])
        return CommitResult(outcome, int(reply[1]))

    def replace_meta(self, game_id: str, *, expected: bytes, meta: bytes) -> Outcome:
        state_key, _ = game_keys(game_id, self._prefix)
        reply = self._run(
            "meta",
            lambda client: self._replace_meta(keys=[state_key], args=[expected, meta], client=client),
        )
        return Outcome(reply.decode())

    def history(self, game_id: str) -> list[bytes] | None:
        keys = game_keys(game_id, self._prefix)
        return self._run("history", lambda client: self._history(keys=keys, client=client))

    def idempotency_record(self, game_id: str, key: str) -> bytes | None:
        name = idem_key(game_id, key, self._prefix)
        return self._run("idempotency", lambda client: client.get(name))

    def cached(self, game_id: str, name: str) -> bytes | None:
        key = kept_key(game_id, name, self._prefix)
        return self._run("load", lambda client: client.get(key))

    def keep(self, game_id: str, name: str, value: bytes, ttl: int) -> None:
        key = kept_key(game_id, name, self._prefix)
        self._run("keep", lambda client: client.set(key, value, ex=ttl))

    def ping(self) -> None:
        self._run("ping", lambda client: client.ping())

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
