"""RedisStore: games in Redis, written by Lua scripts so that every write is all or nothing.

Per game: a hash `...:state` (version, state, meta, view, ttl), a list `...:log` (one entry per
version) and short-lived strings `...:idem:<key>`; per shard: the outbox stream, the clock set
and the event channel (keys.py). A game's keys and its shard's share one hash tag, so every
script touches one Cluster slot and the same code runs on one Redis or a Redis Cluster. Log
entries are JSON objects (no raw newlines), so the outbox carries a change's entries joined by
newlines.

REDIS_URL forms: `redis://[:password@]host:port/db` (or `rediss://` for TLS) for one Redis;
`redis+cluster://[:password@]host1:port1,host2:port2,...` (or `rediss+cluster://`) for a Redis
Cluster, naming one or more seed nodes: the client asks them in turn for the cluster's layout (so
it starts while any one of them is up), then discovers the others and follows the slots as they
move.

A pipeline on a Cluster client refuses Lua scripts, so the jobs that run a script on every shard
(claim_clocks, claim_deliveries, queue_deliveries) pipeline them on one Redis only and call them
shard by shard on a Cluster: each call's keys share one shard's hash tag, so one slot.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias, TypeVar

import redis
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.commands.core import Script
from redis.exceptions import (
    ClusterDownError,
    NoScriptError,
    OutOfMemoryError,
    RedisClusterException,
    SlotNotCoveredError,
    TryAgainError,
)
from redis.retry import Retry

from .base import (
    IDEM_ARCHIVE_MIN_TTL,
    Ahead,
    ClaimedClock,
    CommitResult,
    CreateRecord,
    Delivery,
    GameExists,
    GameStore,
    IdemRecord,
    OutboxItem,
    Outcome,
    Stored,
    StoreUnavailable,
)
from .keys import (
    PREFIX,
    READ,
    READY,
    SHARDS,
    GameKeys,
    create_record_key,
    game_keys,
    idem_key,
    kept_key,
    kept_key_of,
    shard_keys,
    shard_of,
    tombstone_key,
)

T = TypeVar("T")
# redis.Redis | RedisCluster at run time. For the type checker it is Any: redis-py's hints give
# every command the type Awaitable | Any (its sync and async clients share them) and RedisCluster
# few of Redis's signatures, so they check nothing here; the store's tests on both do.
Client: TypeAlias = Any

# Changes kept in each shard's outbox, at most (about: trimmed in whole blocks). The worker takes
# them within seconds; this bounds the stream when no worker runs.
OUTBOX_MAXLEN = 100_000

CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}

# Worth another try on a fresh connection: the server went away, was too slow, is loading its
# data after a restart (BusyLoadingError is a ConnectionError), or its cluster is failing over.
RETRYABLE = (redis.ConnectionError, redis.TimeoutError, ClusterDownError, TryAgainError, SlotNotCoveredError)
# redis-py's cluster client raises these, which are not RedisErrors (e.g. no node reachable).
FAILURES = (redis.RedisError, RedisClusterException)
# What a socket that another greenlet (gevent) or thread closed under a call raises from inside
# redis-py: `ValueError: I/O operation on closed file`, or an OSError (EBADF) that redis-py does
# not wrap. The client has dropped that connection, so a retry takes a fresh one.
CLOSED_SOCKET = (ValueError, OSError)

# Lua scripts. Each touches the keys of one game and of its shard, all under one hash tag.

# KEYS: state, log, outbox, clocks, create record or the state again (none), idempotency records...
# ARGV: state, meta, view, ttl, game id, deadline or '', outbox maxlen, record value or '',
#       record ttl or 0, idempotency record count m, m value and ttl pairs, log entries...
_CREATE = """
local record = KEYS[5] ~= KEYS[1]
if record then
  local prior = redis.call('GET', KEYS[5])
  if prior then return {'replayed', prior} end
end
if redis.call('EXISTS', KEYS[1]) == 1 then return {'exists'} end
local kept = tonumber(ARGV[10])
local first = 11 + 2 * kept
local moves = #ARGV - first + 1
redis.call('HSET', KEYS[1], 'version', moves, 'state', ARGV[1], 'meta', ARGV[2], 'view', ARGV[3],
           'ttl', ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('DEL', KEYS[2])
for i = first, #ARGV, 1000 do
  redis.call('RPUSH', KEYS[2], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
if moves > 0 then redis.call('EXPIRE', KEYS[2], ARGV[4]) end
if record then redis.call('SET', KEYS[5], ARGV[8], 'EX', ARGV[9]) end
for i = 1, kept do
  redis.call('SET', KEYS[5 + i], ARGV[9 + 2 * i], 'EX', ARGV[10 + 2 * i])
end
if ARGV[6] ~= '' then redis.call('ZADD', KEYS[4], ARGV[6], ARGV[5]) end
redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[7], '*', 'g', ARGV[5], 'v', moves, 'c', '1',
           's', ARGV[1], 'm', ARGV[2], 'e', table.concat(ARGV, '\\n', first, #ARGV))
return {'created'}
"""

# The compare-and-set of every change. KEYS: state, log, outbox, clocks, events channel[, idem]
#       [, the read mark, the kept key and the ready list of `ahead`'s name]
# ARGV: expected version, ttl, game id, entry count, state or '', view or '', meta or '',
#       deadline or '', outbox maxlen, idem value or '', idem ttl or 0, expected meta or '',
#       idem key's name when the outbox carries the record (the archive keeps it) or '',
#       ahead's kept value (its version line and value) or '', ahead's ttl or 0, log entries...
# Returns {'applied', version, 1 if ahead's name was read lately (its read mark is there: then
# its value is kept, and the wake-ups of an earlier value go) or 0}.
_COMMIT = """
local ahead = ARGV[14] ~= ''
local nkeys = #KEYS - (ahead and 3 or 0)
local idem = nkeys >= 6 and KEYS[6] or nil
local checked = ARGV[12] ~= ''
local found = checked and redis.call('HMGET', KEYS[1], 'version', 'meta')
  or {redis.call('HGET', KEYS[1], 'version')}
local current = found[1]
if not current then return {'missing'} end
if idem then
  local prior = redis.call('GET', idem)
  if prior then return {'replayed', current, prior} end
end
if current ~= ARGV[1] then return {'conflict', current} end
if checked and found[2] ~= ARGV[12] then return {'conflict', current} end
local first = 16
local n = tonumber(ARGV[4])
local version = tonumber(current) + n
local set = {'version', version, 'ttl', ARGV[2]}
if ARGV[5] ~= '' then set[#set + 1] = 'state'; set[#set + 1] = ARGV[5] end
if ARGV[6] ~= '' then set[#set + 1] = 'view'; set[#set + 1] = ARGV[6] end
if ARGV[7] ~= '' then set[#set + 1] = 'meta'; set[#set + 1] = ARGV[7] end
redis.call('HSET', KEYS[1], unpack(set))
for i = first, first + n - 1, 1000 do
  redis.call('RPUSH', KEYS[2], unpack(ARGV, i, math.min(i + 999, first + n - 1)))
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[2])
if idem then redis.call('SET', idem, ARGV[10], 'EX', ARGV[11]) end
if n > 0 or ARGV[7] ~= '' then
  local fields = {'g', ARGV[3], 'v', version}
  if n > 0 then
    table.insert(fields, 'e')
    table.insert(fields, n == 1 and ARGV[first] or table.concat(ARGV, '\\n', first, first + n - 1))
  end
  if ARGV[7] ~= '' then
    table.insert(fields, 'm')
    table.insert(fields, ARGV[7])
  end
  if ARGV[13] ~= '' then
    for _, v in ipairs({'ik', ARGV[13], 'iv', ARGV[10], 'it', ARGV[11]}) do table.insert(fields, v) end
  end
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[9], '*', unpack(fields))
end
if n > 0 then
  if ARGV[8] == '' then
    redis.call('ZREM', KEYS[4], ARGV[3])
  else
    redis.call('ZADD', KEYS[4], ARGV[8], ARGV[3])
  end
  redis.call('SPUBLISH', KEYS[5], ARGV[3] .. ' ' .. version)
end
local read = ahead and redis.call('EXISTS', KEYS[nkeys + 1]) or 0
if read == 1 then
  redis.call('SET', KEYS[nkeys + 2], ARGV[14], 'EX', ARGV[15])
  redis.call('DEL', KEYS[nkeys + 3])
end
return {'applied', version, read}
"""

# A read of a game's hash that pushes its expiry back when less than 90 % of it is left, so a
# game that is read is not dropped. KEYS: state, log. ARGV: the fields (version first).
_TOUCH = """
if values[1] then
  local ttl = tonumber(redis.call('HGET', KEYS[1], 'ttl') or '0')
  if ttl > 0 and redis.call('TTL', KEYS[1]) < ttl * 0.9 then
    redis.call('EXPIRE', KEYS[1], ttl)
    redis.call('EXPIRE', KEYS[2], ttl)
  end
end
"""
# _TOUCH alone, for a read that found the game's expiry due to be pushed back (_read).
_PUSH_BACK = "local values = {redis.call('HGET', KEYS[1], 'version')}" + _TOUCH

# The compare-and-set of a game's metadata alone (its token hashes, which seats are claimed),
# queued in the outbox like every change, so the archive keeps the metadata current.
# KEYS: state, outbox. ARGV: expected meta, new meta, game id, outbox maxlen
_REPLACE_META = """
local current = redis.call('HGET', KEYS[1], 'meta')
if not current then return 'missing' end
if current ~= ARGV[1] then return 'conflict' end
redis.call('HSET', KEYS[1], 'meta', ARGV[2])
local version = redis.call('HGET', KEYS[1], 'version')
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*', 'g', ARGV[3], 'v', version, 'm', ARGV[2])
return 'applied'
"""

# A game whose versions are archived gets the short expiry, if it is still at the archived
# version, and never a longer one than it has. KEYS: state, log. ARGV: version, ttl
_RELEASE = """
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then return 0 end
local ttl = tonumber(ARGV[2])
local current = tonumber(redis.call('HGET', KEYS[1], 'ttl') or '0')
if current > 0 and current < ttl then ttl = current end
redis.call('HSET', KEYS[1], 'ttl', ttl)
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('EXPIRE', KEYS[2], ttl)
return 1
"""

# A game deleted at its owner's request: everything of it in its slot goes at once, a tombstone
# stays, and its watchers are woken (their streams then find no game and end). The hash of
# queued webhook deliveries holds "<game id>\n<job>" per delivery id.
# KEYS: state, log, clocks, tombstone, events, deliveries, delivery jobs. ARGV: game id, ttl
_PURGE = """
local existed = redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[1])
local prefix = ARGV[1] .. '\\n'
local jobs = redis.call('HGETALL', KEYS[7])
for i = 1, #jobs, 2 do
  if string.sub(jobs[i + 1], 1, #prefix) == prefix then
    redis.call('HDEL', KEYS[7], jobs[i])
    redis.call('ZREM', KEYS[6], jobs[i])
  end
end
redis.call('SET', KEYS[4], '1', 'EX', ARGV[2])
redis.call('SPUBLISH', KEYS[5], ARGV[1] .. ' 0')
return existed
"""

# A range of the log, or nil when the game does not exist: one atomic read. KEYS: state, log
# ARGV: start, stop (inclusive, -1 for the end)
_HISTORY = """
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
return redis.call('LRANGE', KEYS[2], ARGV[1], ARGV[2])
"""


# The worker's queues. A claim moves a member's score to the claim's end (its lease) in the same
# step that reads it, so two workers never hold one member at once; a worker that dies lets its
# lease run out and the member is due again. Finishing compares the score with the lease it was
# claimed with (a fencing token): a worker whose claim was taken over changes nothing.

# KEYS: a sorted set. ARGV: now, lease, limit. Returns the members claimed.
_CLAIM_CLOCKS = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, member in ipairs(due) do redis.call('ZADD', KEYS[1], 'XX', ARGV[2], member) end
return due
"""

# KEYS: a sorted set. ARGV: member, expected score, new score or '' (remove).
_SET_CLOCK = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then return 0 end
if ARGV[3] == '' then redis.call('ZREM', KEYS[1], ARGV[1])
else redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1]) end
return 1
"""

# KEYS: deliveries (sorted set), delivery jobs (hash). ARGV: due, then id, job pairs.
_QUEUE_DELIVERIES = """
local added = 0
for i = 2, #ARGV, 2 do
  if redis.call('HSETNX', KEYS[2], ARGV[i], ARGV[i + 1]) == 1 then
    redis.call('ZADD', KEYS[1], ARGV[1], ARGV[i])
    added = added + 1
  end
end
return added
"""

# KEYS: deliveries, delivery jobs. ARGV: now, lease, limit. Returns id, job pairs.
_CLAIM_DELIVERIES = """
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for _, id in ipairs(ids) do
  local job = redis.call('HGET', KEYS[2], id)
  if job then
    redis.call('ZADD', KEYS[1], 'XX', ARGV[2], id)
    table.insert(out, id)
    table.insert(out, job)
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return out
"""

# KEYS: deliveries, delivery jobs. ARGV: id, lease, retry time or '' (drop), job or ''.
_FINISH_DELIVERY = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then return 0 end
if ARGV[3] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  if ARGV[4] ~= '' then redis.call('HSET', KEYS[2], ARGV[1], ARGV[4]) end
end
return 1
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


# The commit script's first reply, to its outcome, without Outcome's lookup by value.
_OUTCOMES = {outcome.value.encode(): outcome for outcome in Outcome}


def _evalsha(client: Client, script: Script, keys: list[str], args: list[object]) -> Any:
    """`script` run by its SHA with `keys` and `args`, loaded first if Redis does not have it
    (restarted, or its scripts flushed), as redis-py's Script does, without the checks its
    __call__ makes for a pipeline (an import, and an isinstance that goes through typing's
    Protocol check in Python: some 100 k instructions of a commit)."""
    try:
        return _replies(client, ("EVALSHA", script.sha, len(keys), *keys, *args))[0]
    except NoScriptError:
        script.sha = client.script_load(script.script)
        return _replies(client, ("EVALSHA", script.sha, len(keys), *keys, *args))[0]


def _replies(client: Client, *commands: tuple) -> list[Any]:
    """The replies of `commands`, as Redis sends them (a SET … GET's is the old value), sent in
    one round trip on one connection of a Redis client's pool; a RedisCluster's through its
    own calls. redis-py's pipeline object, its command stack and its packing in Python cost a
    read of two commands some 50 k instructions, a third of it; its execute_command wraps
    even one command's send and reply in retry closures (the store retries in _run). The
    connection is handled as a pipeline handles it: dropped after any error, since a reply may
    be left unread on it, and given back to its pool."""
    if not isinstance(client, redis.Redis):
        if len(commands) == 1:
            return [client.execute_command(*commands[0])]
        pipe = client.pipeline(transaction=False)
        for command in commands:
            # SET's callback answers True or False unless told that GET was asked (its `get`).
            asks_old = command[0] == "SET" and "GET" in command[3:]
            pipe.execute_command(*command, **({"get": True} if asks_old else {}))
        return pipe.execute()
    pool = client.connection_pool
    connection = pool.get_connection()
    try:
        packed = [part for command in commands for part in connection.pack_command(*command)]
        # One buffer: each item of a list is a send of its own.
        connection.send_packed_command(packed if len(packed) == 1 else [b"".join(packed)])
        return [connection.read_response() for _ in commands]
    except BaseException:
        connection.disconnect()
        raise
    finally:
        pool.release(connection)


def _at_version(raw: bytes | None, version: int) -> bytes | None:
    """The value of a kept key (its version, a newline, the value) if it is `version`'s."""
    head = b"%d\n" % version
    if raw is None or len(raw) <= len(head) or not raw.startswith(head):
        return None
    return raw[len(head):]


def _closed_socket(exc: Exception) -> bool:
    """An error of a socket closed under a call (CLOSED_SOCKET), not of the store's own code."""
    if isinstance(exc, ValueError):
        return "closed file" in str(exc)
    return isinstance(exc, OSError)


def _drop_idle_connections(client: Client | None) -> None:
    """Closes the connections waiting in the client's pools. A connection whose socket was
    closed under a call can go back to its pool still marked connected, and then fails every
    call that takes it (the pool's own check raises the ValueError too); those in use by other
    calls are left to them."""
    if client is None:
        return
    if isinstance(client, RedisCluster):
        pools = [node.redis_connection.connection_pool for node in client.get_nodes()
                 if node.redis_connection is not None]
    else:
        pools = [client.connection_pool]
    for pool in pools:
        with contextlib.suppress(*CLOSED_SOCKET):  # closing what is already closed
            pool.disconnect(inuse_connections=False)


def cluster_seeds(url: str) -> tuple[str, list[tuple[str, int]]]:
    """A `redis+cluster://` URL's first seed as a URL redis-py reads (the scheme, credentials,
    path and options kept), and every seed node as (host, port) in the order named."""
    scheme, _, rest = url.partition("://")
    netloc, slash, tail = rest.partition("/")
    credentials, at, hosts = netloc.rpartition("@")
    seeds = []
    for part in hosts.split(","):
        part = part.strip()
        if not part:
            continue
        if part.startswith("["):  # an IPv6 address: [::1]:7000
            host, _, port = part[1:].partition("]")
            port = port.lstrip(":")
        else:
            host, _, port = part.rpartition(":") if ":" in part else (part, "", "")
        seeds.append((host or "localhost", int(port) if port else 6379))
    if not seeds:
        raise ValueError(f"REDIS_URL names no node: {url!r}")
    first = hosts.split(",")[0].strip()
    return f"{CLUSTER_SCHEMES[scheme]}://{credentials}{at}{first}{slash}{tail}", seeds


def connect(url: str, **options: object) -> Client:
    """A client for REDIS_URL: a Redis, or a RedisCluster for the `+cluster` schemes, which
    discovers the cluster from whichever of the named seed nodes answers first."""
    scheme = url.partition("://")[0]
    if scheme in CLUSTER_SCHEMES:
        first, seeds = cluster_seeds(url)
        others = [ClusterNode(host, port) for host, port in seeds[1:]]
        # redis-py adds the URL's node to the startup nodes after the others.
        return RedisCluster.from_url(first, startup_nodes=others, **options)
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
        outbox_maxlen: int = OUTBOX_MAXLEN,
    ) -> None:
        self._url = url
        self._prefix = prefix
        self._retries = retries
        self._outbox_maxlen = outbox_maxlen
        self._backoff = ExponentialBackoff(cap=0.2, base=0.02)
        self._options = {
            "socket_timeout": socket_timeout,
            "socket_connect_timeout": connect_timeout,
            # redis-py retries nothing itself: _run does, the same way for Redis and Cluster,
            # and counts what it retried.
            "retry": Retry(NoBackoff(), 0),
            "health_check_interval": 30,
            # hiredis's reader keeps a buffer of this size per connection, and under gevent a
            # worker's pool holds a connection per request it ran at once (thousands of
            # streams opening): redis-py's 64 KiB default was 2-3 KiB per open stream.
            "socket_read_size": 16 << 10,
        }
        self._lock = threading.Lock()
        self._client: Client | None = None
        self._pid = 0
        self._groups: set[str] = set()  # consumer groups known to exist on every shard

    @property
    def url(self) -> str:
        return self._url

    @property
    def prefix(self) -> str:
        return self._prefix

    def _redis(self) -> Client:
        # Created on first use and again after a fork, so each gunicorn worker has its own pool.
        if self._client is None or self._pid != os.getpid():
            with self._lock:
                if self._client is None or self._pid != os.getpid():
                    client = connect(self._url, **self._options)
                    self._create = client.register_script(_CREATE)
                    self._commit = client.register_script(_COMMIT)
                    self._push_back = client.register_script(_PUSH_BACK)
                    self._history = client.register_script(_HISTORY)
                    self._replace_meta = client.register_script(_REPLACE_META)
                    self._claim_clocks = client.register_script(_CLAIM_CLOCKS)
                    self._set_clock = client.register_script(_SET_CLOCK)
                    self._queue_deliveries = client.register_script(_QUEUE_DELIVERIES)
                    self._claim_deliveries = client.register_script(_CLAIM_DELIVERIES)
                    self._finish_delivery = client.register_script(_FINISH_DELIVERY)
                    self._release = client.register_script(_RELEASE)
                    self._purge = client.register_script(_PURGE)
                    self._client, self._pid = client, os.getpid()
                    self._groups = set()
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
            except CLOSED_SOCKET as exc:
                if not _closed_socket(exc):
                    raise
                _drop_idle_connections(self._client)
                if len(retried) >= self._retries:
                    raise StoreUnavailable(f"{op}: {exc}", op=op, kind="connection") from exc
                retried.append("connection")
                time.sleep(self._backoff.compute(len(retried)))
            else:
                for reason in retried:
                    self.on_retry(op, reason)
                return result

    # -- games ------------------------------------------------------------------------------

    def create(
        self,
        game_id: str,
        *,
        state: bytes,
        meta: bytes,
        view: bytes,
        ttl: int,
        log: Sequence[bytes] = (),
        record: CreateRecord | None = None,
        deadline: float | None = None,
        idem: Sequence[IdemRecord] = (),
    ) -> bytes | None:
        keys = game_keys(game_id, self._prefix)
        shard = shard_keys(shard_of(game_id), self._prefix)
        script_keys = [keys.state, keys.log, shard.outbox, shard.clocks]
        if record is not None:
            script_keys.append(create_record_key(shard_of(game_id), record.digest, self._prefix))
        else:
            script_keys.append(keys.state)  # no create record
        script_keys += [idem_key(game_id, kept.key, self._prefix) for kept in idem]
        args: list[object] = [state, meta, view, ttl, game_id, _deadline_arg(deadline), self._outbox_maxlen]
        args += [record.value, record.ttl] if record is not None else [b"", 0]
        args.append(len(idem))
        for kept in idem:
            args += [kept.value, max(1, kept.ttl)]
        args += log
        reply = self._run("create", lambda c: self._create(keys=script_keys, args=args, client=c))
        if reply[0] == b"replayed":
            return reply[1]
        if reply[0] == b"exists":
            raise GameExists(game_id)
        return None

    def create_record(self, shard: int, digest: str) -> bytes | None:
        name = create_record_key(shard, digest, self._prefix)
        return self._run("idempotency", lambda client: client.get(name))

    def drop_create_record(self, shard: int, digest: str) -> None:
        name = create_record_key(shard, digest, self._prefix)
        self._run("idempotency", lambda client: client.delete(name))

    def _read(self, game_id: str, fields: list[str]) -> list[bytes | None]:
        """The fields of a game's hash (None for each when it is gone), and its expiry pushed
        back when less than 90 % of it is left, so a game that is read is not dropped.

        A plain HMGET and TTL, not a script: Redis's Lua hashes every byte of what a script
        reads, some 15 µs of Redis's time for a mid-game state, and a read needs no atomicity
        with the push back, which checks again (_PUSH_BACK) in the rare read that needs it."""
        keys = game_keys(game_id, self._prefix)

        values, left = self._run("load", lambda c: _replies(c, ("HMGET", keys.state, *fields, "ttl"),
                                                           ("TTL", keys.state)))
        self._push_back_if_due(keys, values, left)
        return values

    def _push_back_if_due(self, keys: GameKeys, values: list[bytes | None], left: int) -> None:
        """`values` read with the hash's ttl field last (popped here) and `left` its TTL: the
        game's expiry pushed back when a read finds less than 90 % of it left."""
        ttl = values.pop()
        if values[0] is not None and ttl is not None and left < int(ttl) * 0.9 and int(ttl) > 0:
            self._run("load", lambda c: self._push_back(keys=[keys.state, keys.log], client=c))

    def load(self, game_id: str, *, with_view: bool = False) -> Stored | None:
        fields = ["version", "state", "meta", "view"] if with_view else ["version", "state", "meta"]
        values = self._read(game_id, fields)
        present = [value for value in values if value is not None]
        if len(present) < len(values):
            return None
        return Stored(int(present[0]), present[1], present[2], present[3] if with_view else None)

    def load_view(self, game_id: str) -> tuple[int, bytes] | None:
        version, view = self._read(game_id, ["version", "view"])
        if version is None or view is None:
            return None
        return int(version), view

    def version(self, game_id: str) -> int | None:
        [version] = self._read(game_id, ["version"])
        return None if version is None else int(version)

    def meta(self, game_id: str) -> tuple[int, bytes] | None:
        version, meta = self._read(game_id, ["version", "meta"])
        if version is None or meta is None:
            return None
        return int(version), meta

    def commit(
        self,
        game_id: str,
        *,
        expected_version: int,
        ttl: int,
        entries: Sequence[bytes] = (),
        state: bytes | None = None,
        view: bytes | None = None,
        meta: bytes | None = None,
        deadline: float | None = None,
        idem: IdemRecord | None = None,
        expected_meta: bytes | None = None,
        ahead: Ahead | None = None,
    ) -> CommitResult:
        # The script is called by its SHA (_evalsha says why).
        keys = game_keys(game_id, self._prefix)
        shard = shard_keys(shard_of(game_id), self._prefix)
        script_keys = [keys.state, keys.log, shard.outbox, shard.clocks, shard.events]
        if idem is not None:
            script_keys.append(idem_key(game_id, idem.key, self._prefix))
        args: list[object] = [
            expected_version, ttl, game_id, len(entries), state or b"", view or b"", meta or b"",
            _deadline_arg(deadline), self._outbox_maxlen,
        ]
        args += [idem.value, idem.ttl] if idem is not None else [b"", 0]
        args.append(expected_meta or b"")
        args.append(idem.key if idem is not None and idem.ttl >= IDEM_ARCHIVE_MIN_TTL else b"")
        if ahead is None:
            args += [b"", 0]
        else:
            # Ahead's keys come last (the script counts them off KEYS).
            script_keys += [kept_key(game_id, READ + ahead.name, self._prefix),
                            kept_key(game_id, ahead.name, self._prefix),
                            kept_key(game_id, READY + ahead.name, self._prefix)]
            args += [b"%d\n" % (expected_version + len(entries)) + ahead.value, ahead.ttl]
        args += entries
        reply = self._run("commit", lambda c: _evalsha(c, self._commit, script_keys, args))
        outcome = _OUTCOMES[reply[0]]
        if outcome is Outcome.APPLIED:
            return CommitResult(outcome, int(reply[1]), None, reply[2] == 1)
        if outcome is Outcome.MISSING:
            return CommitResult(outcome)
        if outcome is Outcome.REPLAYED:
            return CommitResult(outcome, int(reply[1]), reply[2])
        return CommitResult(outcome, int(reply[1]))

    def replace_meta(self, game_id: str, *, expected: bytes, meta: bytes) -> Outcome:
        keys = [game_keys(game_id, self._prefix).state, shard_keys(shard_of(game_id), self._prefix).outbox]
        args = [expected, meta, game_id, self._outbox_maxlen]
        reply = self._run("meta", lambda client: self._replace_meta(keys=keys, args=args, client=client))
        return Outcome(reply.decode())

    def release(self, game_id: str, version: int, ttl: int) -> bool:
        keys = game_keys(game_id, self._prefix)
        return bool(self._run(
            "release", lambda c: self._release(keys=[keys.state, keys.log], args=[version, ttl], client=c)
        ))

    def purge(self, game_id: str, tombstone_ttl: int) -> bool:
        keys = game_keys(game_id, self._prefix)
        shard = shard_keys(shard_of(game_id), self._prefix)
        keyset = [keys.state, keys.log, shard.clocks, tombstone_key(game_id, self._prefix), shard.events,
                  shard.deliveries, shard.delivery_jobs]
        existed = self._run("purge", lambda c: self._purge(keys=keyset, args=[game_id, tombstone_ttl],
                                                            client=c))

        def drop_records(client: Client) -> None:
            # Idempotency records and kept answers carry views, names among them: they go too.
            # They live under the game's own prefix, in its slot; a scan finds them all.
            for pattern in (f"{keys.base}:idem:*", f"{keys.base}:kept:*"):
                names = list(client.scan_iter(match=pattern, count=500))
                for start in range(0, len(names), 500):
                    client.delete(*names[start:start + 500])

        self._run("purge", drop_records)
        return bool(existed)

    def deleted(self, game_id: str) -> bool:
        return bool(self._run("load", lambda c: c.exists(tombstone_key(game_id, self._prefix))))

    def history(self, game_id: str, start: int = 0, stop: int | None = None) -> list[bytes] | None:
        keys = game_keys(game_id, self._prefix)
        args = [start, -1 if stop is None else stop - 1]
        if stop is not None and stop <= start:
            args = [1, 0]  # an empty range, but still None for a missing game
        return self._run(
            "history", lambda c: self._history(keys=[keys.state, keys.log], args=args, client=c)
        )

    def idempotency_record(self, game_id: str, key: str) -> bytes | None:
        name = idem_key(game_id, key, self._prefix)
        return self._run("idempotency", lambda client: client.get(name))

    def peek_kept(self, game_id: str, name: str) -> tuple[Stored, bool] | None:
        read = self._read_kept(game_id, name)
        return None if read is None else read[:2]

    def load_kept(self, game_id: str, name: str, ttl: int) -> tuple[Stored, bytes | None, bool] | None:
        read = self._read_kept(game_id, name, ttl, with_value=True)
        return None if read is None else (read[0], read[2], read[1])

    def mark_read(self, game_id: str, name: str, ttl: int) -> None:
        mark = kept_key_of(game_keys(game_id, self._prefix), READ + name)
        self._run("keep", lambda c: _replies(c, ("SET", mark, "1", "EX", ttl)))

    def _read_kept(self, game_id: str, name: str, ttl: int | None = None, *,
                   with_value: bool = False) -> tuple[Stored, bool, bytes | None] | None:
        """The game, whether `name` was read lately (its mark there), and with `with_value` the
        value kept at the game's version, in one round trip of plain commands; with `ttl`, the
        read marks `name` read (a SET … GET of the mark answers whether it was there before).
        Not a script: in a server, an EVALSHA of the smallest script took some 25 µs more of a
        read than plain commands that do as much (benchmarks/http, a cold listing's read). The
        commands travel together but are not one atomic step; a value kept for a newer version
        that lands between them is told apart by its version line."""
        keys = game_keys(game_id, self._prefix)
        mark = kept_key_of(keys, READ + name)
        commands = [("HMGET", keys.state, "version", "state", "meta", "ttl"), ("TTL", keys.state),
                    ("GET", mark) if ttl is None else ("SET", mark, "1", "EX", ttl, "GET")]
        if with_value:
            commands.append(("GET", kept_key_of(keys, name)))
        values, left, before, *raw = self._run("load", lambda c: _replies(c, *commands))
        self._push_back_if_due(keys, values, left)
        version, state, meta = values
        if version is None or state is None or meta is None:
            if ttl is not None and before is None:  # no game: no mark left behind for a name of none
                self._run("load", lambda c: c.delete(mark))
            return None
        value = _at_version(raw[0], int(version)) if raw else None
        return Stored(int(version), state, meta), before is not None, value

    def kept(self, game_id: str, name: str, version: int) -> bytes | None:
        # A newer version's value may have replaced the one a reader expects: it is the one
        # asked for only under its version line.
        return _at_version(self._run("load", lambda c: c.get(kept_key(game_id, name, self._prefix))),
                           version)

    def keep(self, game_id: str, name: str, version: int, value: bytes, ttl: int, *,
             wake: bool = False) -> None:
        key = kept_key(game_id, name, self._prefix)
        kept = b"%d\n" % version + value
        if not wake:
            self._run("keep", lambda client: client.set(key, kept, ex=ttl))
            return
        ready = kept_key(game_id, READY + name, self._prefix)

        def keep_and_wake(client: Client) -> None:
            # Not a script, whose version check would spare a newer version's value a late
            # keep: Redis's Lua hashes every byte of a script's arguments, some 70 µs of its
            # time for a build turn's 40 KB listing, where a SET takes about 1 µs.
            pipe = client.pipeline(transaction=False)
            pipe.set(key, kept, ex=ttl)
            pipe.rpush(ready, 1, 1, 1, 1)  # a few waiting readers wake at once
            pipe.expire(ready, 5)
            pipe.execute()

        self._run("keep", keep_and_wake)

    def await_kept(self, game_id: str, name: str, seconds: float) -> None:
        ready = kept_key(game_id, READY + name, self._prefix)
        # BLPOP takes its timeout in seconds, to the millisecond; 0 would block for ever.
        self._run("load", lambda c: c.blpop([ready], timeout=max(0.001, round(seconds, 3))))

    # -- the outbox and the clocks ------------------------------------------------------------

    def _outboxes(self) -> list[str]:
        return [shard_keys(n, self._prefix).outbox for n in range(SHARDS)]

    def _ensure_group(self, client: Client, group: str) -> None:
        if group in self._groups:
            return
        pipe = client.pipeline(transaction=False)
        for stream in self._outboxes():
            pipe.xgroup_create(stream, group, id="0", mkstream=True)
        for reply in pipe.execute(raise_on_error=False):
            if isinstance(reply, Exception) and "BUSYGROUP" not in str(reply):
                raise reply
        self._groups.add(group)

    def _in_group(self, group: str, call: Callable[[Client], T]) -> T:
        """`call` on the outbox as `group`, which is made first if need be. Redis may have lost
        the streams and their groups since (FLUSHALL, a restart without persistence): then the
        group is made again, and the consumer starts from what the streams hold now."""

        def run(client: Client) -> T:
            self._ensure_group(client, group)
            try:
                return call(client)
            except redis.ResponseError as exc:
                if "NOGROUP" not in str(exc) and "no such key" not in str(exc):
                    raise
                self._groups.discard(group)
                self._ensure_group(client, group)
                return call(client)

        return self._run("outbox", run)

    def outbox_read(self, group: str, consumer: str, count: int = 100) -> list[OutboxItem]:
        def read(client: Client) -> list[OutboxItem]:
            pipe = client.pipeline(transaction=False)
            for stream in self._outboxes():
                pipe.xreadgroup(group, consumer, {stream: ">"}, count=count)
            items: list[OutboxItem] = []
            for shard, reply in enumerate(pipe.execute()):
                for _stream, messages in reply or []:
                    items.extend(_outbox_item(shard, mid, fields) for mid, fields in messages)
            return items

        return self._in_group(group, read)

    def outbox_claim(self, group: str, consumer: str, min_idle_ms: int, count: int = 100) -> list[OutboxItem]:
        def claim(client: Client) -> list[OutboxItem]:
            pipe = client.pipeline(transaction=False)
            for stream in self._outboxes():
                pipe.xautoclaim(stream, group, consumer, min_idle_ms, start_id="0-0", count=count)
            items: list[OutboxItem] = []
            for shard, reply in enumerate(pipe.execute()):
                items.extend(_outbox_item(shard, mid, fields) for mid, fields in reply[1] if fields)
            return items

        return self._in_group(group, claim)

    def outbox_ack(self, group: str, items: Sequence[OutboxItem]) -> None:
        by_shard: dict[int, list[str]] = {}
        for item in items:
            by_shard.setdefault(item.shard, []).append(item.id)
        if not by_shard:
            return

        def ack(client: Client) -> None:
            pipe = client.pipeline(transaction=False)
            for shard, ids in by_shard.items():
                pipe.xack(shard_keys(shard, self._prefix).outbox, group, *ids)
            pipe.execute()

        self._run("outbox", ack)

    def outbox_backlog(self, group: str) -> int:
        def backlog(client: Client) -> int:
            pipe = client.pipeline(transaction=False)
            for stream in self._outboxes():
                pipe.xinfo_groups(stream)
            total = 0
            for groups in pipe.execute():
                for info in groups:
                    if _text(info["name"]) == group:
                        total += int(info.get("pending") or 0) + int(info.get("lag") or 0)
            return total

        return self._in_group(group, backlog)

    def due_clocks(self, now: float, limit: int = 100) -> list[tuple[str, float]]:
        def due(client: Client) -> list[tuple[str, float]]:
            pipe = client.pipeline(transaction=False)
            for n in range(SHARDS):
                pipe.zrangebyscore(shard_keys(n, self._prefix).clocks, "-inf", now,
                                   start=0, num=limit, withscores=True)
            return [(_text(member), float(score)) for reply in pipe.execute() for member, score in reply]

        return self._run("clocks", due)

    def claim_clocks(self, now: float, lease: float, limit: int = 100) -> list[ClaimedClock]:
        def claim(client: Client) -> list[ClaimedClock]:
            args = [repr(now), repr(lease), limit]
            calls = [(self._claim_clocks, [shard_keys(n, self._prefix).clocks], args) for n in range(SHARDS)]
            replies = _each_shard(client, calls, empty=[])
            return [ClaimedClock(_text(member), lease) for reply in replies for member in reply]

        return self._run("clocks", claim)

    def set_clock(self, game_id: str, expected: float, deadline: float | None) -> bool:
        key = shard_keys(shard_of(game_id), self._prefix).clocks
        args = [game_id, repr(float(expected)), _deadline_arg(deadline)]
        return bool(self._run("clocks", lambda c: self._set_clock(keys=[key], args=args, client=c)))

    def clock_backlog(self, now: float) -> tuple[int, int]:
        def backlog(client: Client) -> tuple[int, int]:
            pipe = client.pipeline(transaction=False)
            for n in range(SHARDS):
                key = shard_keys(n, self._prefix).clocks
                pipe.zcard(key)
                pipe.zcount(key, "-inf", now)
            replies = pipe.execute()
            return sum(replies[0::2]), sum(replies[1::2])

        return self._run("clocks", backlog)

    # -- webhook deliveries ---------------------------------------------------------------------

    def queue_deliveries(self, deliveries: Sequence[Delivery], due: float) -> int:
        by_shard: dict[tuple[int, str], list[object]] = {}
        for delivery in deliveries:
            # The hash holds the game's id before the job, so a claim knows the delivery's game.
            stored = delivery.game_id.encode() + b"\n" + delivery.job
            place = (shard_of(delivery.game_id), delivery.queue)
            by_shard.setdefault(place, []).extend([delivery.id, stored])
        if not by_shard:
            return 0

        def queue(client: Client) -> int:
            calls = []
            for (shard, name), pairs in by_shard.items():
                keyset = list(shard_keys(shard, self._prefix).queue(name))
                calls.append((self._queue_deliveries, keyset, [repr(due), *pairs]))
            # Idempotent per delivery id: a retry after a lost reply queues nothing twice.
            return sum(_each_shard(client, calls))

        return self._run("deliveries", queue)

    def claim_deliveries(self, now: float, lease: float, limit: int = 100,
                         queue: str = "webhooks") -> list[Delivery]:
        def claim(client: Client) -> list[Delivery]:
            calls = []
            for n in range(SHARDS):
                calls.append((self._claim_deliveries, list(shard_keys(n, self._prefix).queue(queue)),
                              [repr(now), repr(lease), limit]))
            claimed = []
            for reply in _each_shard(client, calls, empty=[]):
                for i in range(0, len(reply), 2):
                    game_id, job = reply[i + 1].split(b"\n", 1)
                    claimed.append(Delivery(_text(reply[i]), game_id.decode(), job, lease, queue))
            return claimed

        claimed = self._run("deliveries", claim)
        # Each shard gave up to `limit`: hand back what is over, due again at once.
        for surplus in claimed[limit:]:
            self.finish_delivery(surplus, retry_at=now)
        return claimed[:limit]

    def finish_delivery(self, delivery: Delivery, retry_at: float | None = None,
                        job: bytes | None = None) -> bool:
        keyset = list(shard_keys(shard_of(delivery.game_id), self._prefix).queue(delivery.queue))
        stored = delivery.game_id.encode() + b"\n" + job if job is not None else b""
        args = [delivery.id, repr(float(delivery.lease)), _deadline_arg(retry_at), stored]
        return bool(self._run("deliveries", lambda c: self._finish_delivery(
            keys=keyset, args=args, client=c)))

    def delivery_backlog(self, now: float, queue: str = "webhooks") -> tuple[int, int]:
        def backlog(client: Client) -> tuple[int, int]:
            pipe = client.pipeline(transaction=False)
            for n in range(SHARDS):
                key = shard_keys(n, self._prefix).queue(queue)[0]
                pipe.zcard(key)
                pipe.zcount(key, "-inf", now)
            replies = pipe.execute()
            return sum(replies[0::2]), sum(replies[1::2])

        return self._run("deliveries", backlog)

    def ping(self) -> None:
        self._run("ping", lambda client: client.ping())

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def _each_shard(client: Client, calls: Sequence[tuple[Any, list[str], list[object]]], *,
                empty: Any = None) -> list[Any]:
    """The replies of scripts, each on one shard's keys: pipelined on one Redis, one call after
    another on a Cluster (whose pipelines refuse scripts; each call goes to its slot's node).

    With `empty` (a claim: what it held is held until its lease ends, so a failure must not
    lose it), a shard whose node fails on a Cluster answers `empty`, and the others' claims
    stand; only if every shard fails is the failure raised."""
    if isinstance(client, RedisCluster):
        replies: list[Any] = []
        failed: Exception | None = None
        for script, keys, args in calls:
            try:
                replies.append(script(keys=keys, args=args, client=client))
            except (*RETRYABLE, *FAILURES, *CLOSED_SOCKET) as exc:
                if empty is None or (isinstance(exc, CLOSED_SOCKET) and not _closed_socket(exc)):
                    raise
                failed = exc
                replies.append(empty)
        if failed is not None and len(replies) == sum(1 for r in replies if r is empty):
            raise failed
        return replies
    pipe = client.pipeline(transaction=False)
    for script, keys, args in calls:
        script(keys=keys, args=args, client=pipe)
    return pipe.execute()


def _deadline_arg(deadline: float | None) -> str:
    return "" if deadline is None else repr(float(deadline))


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _outbox_item(shard: int, message_id: bytes | str, fields: dict) -> OutboxItem:
    def field(name: str) -> Any:  # bytes, or str from a client that decodes
        return fields.get(name.encode(), fields.get(name))

    entries = field("e")
    idem_name = field("ik")
    idem = None if idem_name is None else IdemRecord(_text(idem_name), field("iv"), int(field("it")))
    return OutboxItem(
        id=_text(message_id),
        shard=shard,
        game_id=_text(field("g")),
        version=int(field("v")),
        entries=entries.split(b"\n") if entries else [],
        meta=field("m"),
        state=field("s"),
        created=field("c") is not None,
        idem=idem,
    )
