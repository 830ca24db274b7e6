"""Where tenant keys are kept: PostgreSQL when DATABASE_URL is set, else Redis, else (one
process, tests) memory. Every instance reads the same place on every request and nothing is
cached, so a revocation takes effect at once everywhere."""

from __future__ import annotations

import json
import os
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from service.store import StoreUnavailable
from service.store.redis_store import FAILURES, connect

from .keys import TenantKey

# One hash tag for every key record, so that a create (record + index) is one Cluster slot.
REDIS_PREFIX = "aos:v1:{tenants}"


def _record(data: Mapping[str, Any]) -> TenantKey:
    return TenantKey(
        key_id=data["key_id"],
        tenant=data["tenant"],
        scopes=tuple(data["scopes"]),
        digest=data["digest"],
        created_at=float(data["created_at"]),
        revoked_at=None if data.get("revoked_at") is None else float(data["revoked_at"]),
        quotas={k: int(v) for k, v in (data.get("quotas") or {}).items()},
    )


def _data(record: TenantKey) -> dict[str, Any]:
    return {**record.public(), "digest": record.digest}


class KeyRegistry(ABC):
    """The keys of every tenant, by key id."""

    @abstractmethod
    def add(self, record: TenantKey) -> None: ...

    @abstractmethod
    def get(self, key_id: str) -> TenantKey | None: ...

    @abstractmethod
    def all(self) -> list[TenantKey]: ...

    @abstractmethod
    def revoke(self, key_id: str, at: float | None = None) -> TenantKey | None:
        """Marks the key revoked (kept, for the audit trail); None if there is no such key."""

    def close(self) -> None:
        return None


class MemoryKeys(KeyRegistry):
    def __init__(self) -> None:
        self._keys: dict[str, TenantKey] = {}
        self._lock = threading.Lock()

    def add(self, record: TenantKey) -> None:
        with self._lock:
            if record.key_id in self._keys:
                raise ValueError(f"key id {record.key_id} exists")
            self._keys[record.key_id] = record

    def get(self, key_id: str) -> TenantKey | None:
        return self._keys.get(key_id)

    def all(self) -> list[TenantKey]:
        return sorted(self._keys.values(), key=lambda k: k.created_at)

    def revoke(self, key_id: str, at: float | None = None) -> TenantKey | None:
        with self._lock:
            record = self._keys.get(key_id)
            if record is None:
                return None
            if record.active:
                record = self._keys[key_id] = record.revoked(time.time() if at is None else at)
            return record


class RedisKeys(KeyRegistry):
    def __init__(self, url: str, *, timeout: float = 1.0) -> None:
        self._client = connect(url, socket_timeout=timeout, socket_connect_timeout=timeout)
        self._index = f"{REDIS_PREFIX}:keys"

    def _key(self, key_id: str) -> str:
        return f"{REDIS_PREFIX}:key:{key_id}"

    def _run(self, op: str, call: Any) -> Any:
        try:
            return call()
        except FAILURES as exc:
            raise StoreUnavailable(f"tenant keys {op}: {exc}", op="tenants", kind="connection") from exc

    def add(self, record: TenantKey) -> None:
        def write() -> None:
            if not self._client.set(self._key(record.key_id), json.dumps(_data(record)), nx=True):
                raise ValueError(f"key id {record.key_id} exists")
            self._client.sadd(self._index, record.key_id)

        self._run("add", write)

    def get(self, key_id: str) -> TenantKey | None:
        raw = self._run("get", lambda: self._client.get(self._key(key_id)))
        return None if raw is None else _record(json.loads(raw))

    def all(self) -> list[TenantKey]:
        ids = sorted(i.decode() if isinstance(i, bytes) else i
                     for i in self._run("list", lambda: self._client.smembers(self._index)))
        found = [self.get(key_id) for key_id in ids]
        return sorted((r for r in found if r is not None), key=lambda k: k.created_at)

    def revoke(self, key_id: str, at: float | None = None) -> TenantKey | None:
        record = self.get(key_id)
        if record is None:
            return None
        if record.active:
            record = record.revoked(time.time() if at is None else at)
            self._run("revoke", lambda: self._client.set(self._key(key_id), json.dumps(_data(record))))
        return record

    def close(self) -> None:
        self._client.close()


class PostgresKeys(KeyRegistry):
    """Keys in the archive's database (table tenant_keys, made by `python -m service.archive
    migrate`). Connections come from a small pool, made again after a fork."""

    def __init__(self, dsn: str) -> None:
        self._dsn = dsn
        self._pool: Any = None
        self._pid = 0
        self._lock = threading.Lock()

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        import psycopg  # only where a database is configured
        from psycopg_pool import ConnectionPool, PoolTimeout

        with self._lock:
            if self._pool is None or self._pid != os.getpid():
                self._pool = ConnectionPool(self._dsn, min_size=0, max_size=2, timeout=5.0, open=True,
                                            kwargs={"connect_timeout": 3}, name="aos-tenants")
                self._pid = os.getpid()
        try:
            with self._pool.connection() as conn:
                yield conn
        except (psycopg.OperationalError, PoolTimeout) as exc:
            raise StoreUnavailable(f"tenant keys: {exc}", op="tenants", kind="connection") from exc
        except psycopg.errors.UndefinedTable as exc:
            raise StoreUnavailable(f"tenant keys: {exc} (run `python -m service.archive migrate`)",
                                   op="tenants", kind="other") from exc

    def add(self, record: TenantKey) -> None:
        with self._transaction() as conn:
            inserted = conn.execute(
                """INSERT INTO tenant_keys (key_id, tenant, scopes, digest, quotas, created_at)
                   VALUES (%s, %s, %s, %s, %s::jsonb, to_timestamp(%s))
                   ON CONFLICT (key_id) DO NOTHING""",
                [record.key_id, record.tenant, list(record.scopes), record.digest,
                 json.dumps(record.quotas), record.created_at],
            ).rowcount
        if not inserted:
            raise ValueError(f"key id {record.key_id} exists")

    _COLUMNS = """key_id, tenant, scopes, digest, quotas, extract(epoch from created_at),
                  extract(epoch from revoked_at)"""

    @staticmethod
    def _from_row(row: tuple) -> TenantKey:
        key_id, tenant, scopes, digest, quotas, created, revoked = row
        return _record({"key_id": key_id, "tenant": tenant, "scopes": scopes, "digest": digest,
                        "quotas": quotas, "created_at": created, "revoked_at": revoked})

    def get(self, key_id: str) -> TenantKey | None:
        with self._transaction() as conn:
            row = conn.execute(f"SELECT {self._COLUMNS} FROM tenant_keys WHERE key_id = %s",
                               [key_id]).fetchone()
        return None if row is None else self._from_row(row)

    def all(self) -> list[TenantKey]:
        with self._transaction() as conn:
            rows = conn.execute(f"SELECT {self._COLUMNS} FROM tenant_keys ORDER BY created_at").fetchall()
        return [self._from_row(row) for row in rows]

    def revoke(self, key_id: str, at: float | None = None) -> TenantKey | None:
        with self._transaction() as conn:
            conn.execute(
                """UPDATE tenant_keys SET revoked_at = to_timestamp(%s)
                   WHERE key_id = %s AND revoked_at IS NULL""",
                [time.time() if at is None else at, key_id],
            )
        return self.get(key_id)

    def close(self) -> None:
        if self._pool is not None and self._pid == os.getpid():
            self._pool.close()
        self._pool = None


def registry_from_env(env: Mapping[str, str] | None = None) -> KeyRegistry:
    """PostgreSQL on DATABASE_URL, else Redis on REDIS_URL, else this process's memory."""
    env = os.environ if env is None else env
    if env.get("DATABASE_URL"):
        return PostgresKeys(env["DATABASE_URL"])
    if env.get("REDIS_URL"):
        return RedisKeys(env["REDIS_URL"], timeout=float(env.get("AOS_REDIS_TIMEOUT", "1.0")))
    return MemoryKeys()
