"""What a host keeps per tenant besides its keys: which games are whose (newest first, for the
listing), the daily counts of what it used (creates, moves, stream-minutes, webhook
deliveries) that the quotas are judged on and `GET /v1/usage` shows, and the leases of what it
holds at a time (open streams, registered webhooks) that those quotas count.

In Redis when the service has one (every instance shares the counts), else in this process's
memory. A tenant's keys share one hash tag, so each write is one Cluster slot."""

from __future__ import annotations

import datetime as dt
import hashlib
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from service.store import StoreUnavailable
from service.store.redis_store import FAILURES, connect

USAGE_KINDS = ("creates", "moves", "stream_minutes", "webhook_deliveries")
USAGE_DAYS_KEPT = 400  # a year of daily counts, and some


def day_of(at: float) -> str:
    return dt.datetime.fromtimestamp(at, dt.UTC).strftime("%Y-%m-%d")


def seconds_to_midnight(at: float) -> int:
    day = dt.datetime.fromtimestamp(at, dt.UTC).date()
    midnight = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(), dt.UTC)
    return max(1, int(midnight.timestamp() - at + 0.999))


@dataclass(frozen=True, slots=True)
class Listed:
    game_id: str
    map: str
    created_ms: int


def _tag(tenant: str) -> str:
    return hashlib.sha256(tenant.encode("utf-8")).hexdigest()[:16]


class Ledger(ABC):
    # -- whose games --------------------------------------------------------------------------

    @abstractmethod
    def add_game(self, tenant: str, game_id: str, map_id: str, created_ms: int) -> None: ...

    @abstractmethod
    def remove_game(self, tenant: str, game_id: str) -> None: ...

    @abstractmethod
    def games(self, tenant: str, *, before: tuple[int, str] | None, count: int) -> list[Listed]:
        """The tenant's games, newest first, strictly after the cursor `before` (created_ms,
        game id) in that order; at most `count`."""

    # -- what it used -------------------------------------------------------------------------

    @abstractmethod
    def count(self, tenant: str, kind: str, amount: int = 1, *, at: float | None = None) -> int:
        """Adds to the tenant's count of `kind` for the day of `at`; returns the day's count."""

    @abstractmethod
    def usage(self, tenant: str, days: list[str]) -> dict[str, dict[str, int]]:
        """Day -> kind -> count, for the days asked (kinds never counted are 0)."""

    @abstractmethod
    def per_second(self, tenant: str, kind: str, *, at: float | None = None) -> int:
        """Adds one to the tenant's count of `kind` in the current second; returns it."""

    # -- what it holds ------------------------------------------------------------------------

    @abstractmethod
    def hold(self, tenant: str, kind: str, member: str, limit: int, *, until: float,
             now: float | None = None) -> bool:
        """Takes one of the tenant's `limit` leases of `kind` for `member`, to `until` (a Unix
        time; inf: until released). Leases whose time is past are dropped first, so a holder
        that died without releasing frees its lease by itself. Renews `member`'s own lease.
        False, taking nothing, when all `limit` are held."""

    @abstractmethod
    def release(self, tenant: str, kind: str, member: str) -> None: ...

    @abstractmethod
    def held(self, tenant: str, kind: str, *, now: float | None = None) -> list[str]:
        """The members holding a lease of `kind` now."""

    def close(self) -> None:
        return None


class MemoryLedger(Ledger):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._games: dict[str, dict[str, Listed]] = {}
        self._counts: dict[tuple[str, str, str], int] = {}
        self._seconds: dict[tuple[str, str], tuple[int, int]] = {}
        self._leases: dict[tuple[str, str], dict[str, float]] = {}

    def add_game(self, tenant: str, game_id: str, map_id: str, created_ms: int) -> None:
        with self._lock:
            self._games.setdefault(tenant, {})[game_id] = Listed(game_id, map_id, created_ms)

    def remove_game(self, tenant: str, game_id: str) -> None:
        with self._lock:
            self._games.get(tenant, {}).pop(game_id, None)

    def games(self, tenant: str, *, before: tuple[int, str] | None, count: int) -> list[Listed]:
        with self._lock:
            listed = sorted(self._games.get(tenant, {}).values(),
                            key=lambda g: (g.created_ms, g.game_id), reverse=True)
        if before is not None:
            listed = [g for g in listed if (g.created_ms, g.game_id) < before]
        return listed[:count]

    def count(self, tenant: str, kind: str, amount: int = 1, *, at: float | None = None) -> int:
        key = (tenant, day_of(time.time() if at is None else at), kind)
        with self._lock:
            self._counts[key] = self._counts.get(key, 0) + amount
            return self._counts[key]

    def usage(self, tenant: str, days: list[str]) -> dict[str, dict[str, int]]:
        with self._lock:
            return {day: {kind: self._counts.get((tenant, day, kind), 0) for kind in USAGE_KINDS}
                    for day in days}

    def per_second(self, tenant: str, kind: str, *, at: float | None = None) -> int:
        second = int(time.time() if at is None else at)
        with self._lock:
            then, n = self._seconds.get((tenant, kind), (second, 0))
            n = n + 1 if then == second else 1
            self._seconds[(tenant, kind)] = (second, n)
            return n

    def hold(self, tenant: str, kind: str, member: str, limit: int, *, until: float,
             now: float | None = None) -> bool:
        now = time.time() if now is None else now
        with self._lock:
            leases = self._leases.setdefault((tenant, kind), {})
            for gone in [m for m, end in leases.items() if end < now]:
                del leases[gone]
            if member not in leases and len(leases) >= limit:
                return False
            leases[member] = until
            return True

    def release(self, tenant: str, kind: str, member: str) -> None:
        with self._lock:
            self._leases.get((tenant, kind), {}).pop(member, None)

    def held(self, tenant: str, kind: str, *, now: float | None = None) -> list[str]:
        now = time.time() if now is None else now
        with self._lock:
            return sorted(m for m, end in self._leases.get((tenant, kind), {}).items() if end >= now)


# KEYS[1]: the tenant's leases of a kind (member -> end); ARGV: now, until, member, limit.
_HOLD = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])
if not redis.call('ZSCORE', KEYS[1], ARGV[3]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
return 1
"""


class RedisLedger(Ledger):
    PREFIX = "aos:v1:tenant"

    def __init__(self, url: str, *, timeout: float = 1.0) -> None:
        self._client = connect(url, socket_timeout=timeout, socket_connect_timeout=timeout)
        self._hold = self._client.register_script(_HOLD)

    def _key(self, tenant: str, name: str) -> str:
        return f"{self.PREFIX}:{{{_tag(tenant)}}}:{name}"

    def _run(self, op: str, call: Any) -> Any:
        try:
            return call()
        except FAILURES as exc:
            raise StoreUnavailable(f"tenant ledger {op}: {exc}", op="tenants", kind="connection") from exc

    def add_game(self, tenant: str, game_id: str, map_id: str, created_ms: int) -> None:
        # Members sort by id within one millisecond; the map rides along in a hash.
        def write() -> None:
            pipe = self._client.pipeline(transaction=False)
            pipe.zadd(self._key(tenant, "games"), {game_id: created_ms})
            pipe.hset(self._key(tenant, "maps"), game_id, map_id)
            pipe.execute()

        self._run("add_game", write)

    def remove_game(self, tenant: str, game_id: str) -> None:
        def write() -> None:
            pipe = self._client.pipeline(transaction=False)
            pipe.zrem(self._key(tenant, "games"), game_id)
            pipe.hdel(self._key(tenant, "maps"), game_id)
            pipe.execute()

        self._run("remove_game", write)

    def games(self, tenant: str, *, before: tuple[int, str] | None, count: int) -> list[Listed]:
        def read() -> list[Listed]:
            top = "+inf" if before is None else before[0]
            # Games of the cursor's own millisecond that sort after it come first: read a few more.
            rows = self._client.zrevrangebyscore(self._key(tenant, "games"), top, "-inf",
                                                 start=0, num=count + 64, withscores=True)
            found = []
            for member, score in rows:
                game_id = member.decode() if isinstance(member, bytes) else member
                if before is not None and (int(score), game_id) >= before:
                    continue
                found.append((int(score), game_id))
            found.sort(reverse=True)
            found = found[:count]
            maps = self._client.hmget(self._key(tenant, "maps"), [g for _, g in found]) if found else []
            return [Listed(g, (m.decode() if isinstance(m, bytes) else m) or "", ms)
                    for (ms, g), m in zip(found, maps, strict=True)]

        return self._run("games", read)

    def count(self, tenant: str, kind: str, amount: int = 1, *, at: float | None = None) -> int:
        key = self._key(tenant, f"usage:{day_of(time.time() if at is None else at)}")

        def write() -> int:
            pipe = self._client.pipeline(transaction=False)
            pipe.hincrby(key, kind, amount)
            pipe.expire(key, USAGE_DAYS_KEPT * 86400)
            return int(pipe.execute()[0])

        return self._run("count", write)

    def usage(self, tenant: str, days: list[str]) -> dict[str, dict[str, int]]:
        def read() -> dict[str, dict[str, int]]:
            pipe = self._client.pipeline(transaction=False)
            for day in days:
                pipe.hmget(self._key(tenant, f"usage:{day}"), list(USAGE_KINDS))
            return {day: {kind: int(v or 0) for kind, v in zip(USAGE_KINDS, values, strict=True)}
                    for day, values in zip(days, pipe.execute(), strict=True)}

        return self._run("usage", read)

    def per_second(self, tenant: str, kind: str, *, at: float | None = None) -> int:
        key = self._key(tenant, f"{kind}:{int(time.time() if at is None else at)}")

        def write() -> int:
            pipe = self._client.pipeline(transaction=False)
            pipe.incr(key)
            pipe.expire(key, 2)
            return int(pipe.execute()[0])

        return self._run("per_second", write)

    def hold(self, tenant: str, kind: str, member: str, limit: int, *, until: float,
             now: float | None = None) -> bool:
        now = time.time() if now is None else now
        end = "+inf" if until == float("inf") else repr(until)
        key = self._key(tenant, f"held:{kind}")
        return bool(self._run("hold", lambda: self._hold(keys=[key], args=[repr(now), end, member, limit])))

    def release(self, tenant: str, kind: str, member: str) -> None:
        self._run("release", lambda: self._client.zrem(self._key(tenant, f"held:{kind}"), member))

    def held(self, tenant: str, kind: str, *, now: float | None = None) -> list[str]:
        now = time.time() if now is None else now
        key = self._key(tenant, f"held:{kind}")
        rows = self._run("held", lambda: self._client.zrangebyscore(key, now, "+inf"))
        return sorted(m.decode() if isinstance(m, bytes) else m for m in rows)

    def close(self) -> None:
        self._client.close()


def ledger_from_env(env: Mapping[str, str]) -> Ledger:
    if env.get("REDIS_URL"):
        return RedisLedger(env["REDIS_URL"], timeout=float(env.get("AOS_REDIS_TIMEOUT", "1.0")))
    return MemoryLedger()
