"""RedisStore: games in Redis, written by Lua scripts so that every write is all or nothing.

Per game: a hash `...:state` (version, state, meta, view), a list `...:log` (one entry per
applied move) and short-lived strings `...:idem:<key>`; all share the hash tag `{game:<id>}`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

from .base import CommitResult, GameExists, GameStore, IdemRecord, Outcome, Stored, StoreUnavailable
from .keys import PREFIX, game_keys, idem_key

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
        self._options = {
            "socket_timeout": socket_timeout,
            "socket_connect_timeout": connect_timeout,
            # A lost connection is retried on a fresh one; a commit replayed after a lost reply
            # finds the version moved on (CONFLICT) or its idempotency key used (REPLAYED).
            "retry": Retry(ExponentialBackoff(cap=0.2, base=0.02), retries),
            "retry_on_error": [redis.ConnectionError, redis.TimeoutError],
            "health_check_interval": 30,
        }
        self._lock = threading.Lock()
        self._client: redis.Redis | None = None
        self._pid = 0

    def _redis(self) -> redis.Redis:
        # Created on first use and again after a fork, so each gunicorn worker has its own pool.
        if self._client is None or self._pid != os.getpid():
            with self._lock:
                if self._client is None or self._pid != os.getpid():
                    client = redis.Redis.from_url(self._url, **self._options)
                    self._create = client.register_script(_CREATE)
                    self._commit = client.register_script(_COMMIT)
                    self._client, self._pid = client, os.getpid()
        return self._client

    @contextmanager
    def _guard(self) -> Iterator[redis.Redis]:
        try:
            yield self._redis()
        except redis.RedisError as exc:
            raise StoreUnavailable(str(exc)) from exc

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
        with self._guard() as client:
            reply = self._create(keys=self._keys(game_id, idem), args=args, client=client)
        if reply[0] == b"replayed":
            return reply[1]
        if reply[0] == b"exists":
            raise GameExists(game_id)
        return None

    def load(self, game_id: str, *, with_view: bool = False) -> Stored | None:
        state_key, _ = game_keys(game_id, self._prefix)
        fields = ["version", "state", "meta", "view"] if with_view else ["version", "state", "meta"]
        with self._guard() as client:
            values = client.hmget(state_key, fields)
        if any(value is None for value in values):
            return None
        return Stored(int(values[0]), values[1], values[2], values[3] if with_view else None)

    def load_view(self, game_id: str) -> tuple[int, bytes] | None:
        state_key, _ = game_keys(game_id, self._prefix)
        with self._guard() as client:
            version, view = client.hmget(state_key, ["version", "view"])
        if version is None or view is None:
            return None
        return int(version), view

    def version(self, game_id: str) -> int | None:
        state_key, _ = game_keys(game_id, self._prefix)
        with self._guard() as client:
            version = client.hget(state_key, "version")
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
        with self._guard() as client:
            reply = self._commit(keys=self._keys(game_id, idem), args=args, client=client)
        outcome = Outcome(reply[0].decode())
        if outcome is Outcome.MISSING:
            return CommitResult(outcome)
        if outcome is Outcome.REPLAYED:
            return CommitResult(outcome, int(reply[1]), reply[2])
        return CommitResult(outcome, int(reply[1]))

    def history(self, game_id: str) -> list[bytes] | None:
        state_key, log_key = game_keys(game_id, self._prefix)
        with self._guard() as client:
            pipe = client.pipeline(transaction=True)
            pipe.exists(state_key)
            pipe.lrange(log_key, 0, -1)
            exists, entries = pipe.execute()
        return entries if exists else None

    def idempotency_record(self, game_id: str, key: str) -> bytes | None:
        with self._guard() as client:
            return client.get(idem_key(game_id, key, self._prefix))

    def ping(self) -> None:
        with self._guard() as client:
            client.ping()

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
