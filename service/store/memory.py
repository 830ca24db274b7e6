"""MemoryStore: the embedded store for one process (local runs, tests). Same semantics as
RedisStore, including expiry, behind one lock."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .base import CommitResult, GameExists, GameStore, IdemRecord, Outcome, Stored


@dataclass
class _Game:
    version: int
    state: bytes
    meta: bytes
    view: bytes
    expires: float
    log: list[bytes] = field(default_factory=list)


class _Expiring:
    """Values that lapse after their own TTL, like Redis keys with EX: a lapsed value reads as
    absent, and every so many writes the lapsed ones are swept out, so that values written once
    and never read again (a request's own commit key) do not pile up."""

    SWEEP_EVERY = 1024

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._values: dict[tuple[str, str], tuple[bytes, float]] = {}
        self._writes = 0

    def get(self, key: tuple[str, str]) -> bytes | None:
        entry = self._values.get(key)
        if entry is None:
            return None
        if entry[1] <= self._clock():
            del self._values[key]
            return None
        return entry[0]

    def set(self, key: tuple[str, str], value: bytes, ttl: int) -> None:
        now = self._clock()
        self._values[key] = (value, now + ttl)
        self._writes += 1
        if self._writes % self.SWEEP_EVERY == 0:
            self._values = {k: v for k, v in self._values.items() if v[1] > now}

    def __len__(self) -> int:
        return len(self._values)


class MemoryStore(GameStore):
    kind = "memory"

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._games: dict[str, _Game] = {}
        self._idem = _Expiring(clock)
        self._kept = _Expiring(clock)

    def _live(self, game_id: str) -> _Game | None:
        game = self._games.get(game_id)
        if game is not None and game.expires <= self._clock():
            del self._games[game_id]
            return None
        return game

    def _idem_value(self, game_id: str, key: str) -> bytes | None:
        return self._idem.get((game_id, key))

    def _remember(self, game_id: str, idem: IdemRecord | None) -> None:
        if idem is not None:
            self._idem.set((game_id, idem.key), idem.value, idem.ttl)

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
        with self._lock:
            if idem is not None:
                prior = self._idem_value(game_id, idem.key)
                if prior is not None:
                    return prior
            if self._live(game_id) is not None:
                raise GameExists(game_id)
            expires = self._clock() + ttl
            self._games[game_id] = _Game(len(log), state, meta, view, expires, list(log))
            self._remember(game_id, idem)
            return None

    def load(self, game_id: str, *, with_view: bool = False) -> Stored | None:
        with self._lock:
            game = self._live(game_id)
            if game is None:
                return None
            return Stored(game.version, game.state, game.meta, game.view if with_view else None)

    def load_view(self, game_id: str) -> tuple[int, bytes] | None:
        with self._lock:
            game = self._live(game_id)
            return None if game is None else (game.version, game.view)

    def version(self, game_id: str) -> int | None:
        with self._lock:
            game = self._live(game_id)
            return None if game is None else game.version

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
        with self._lock:
            game = self._live(game_id)
            if game is None:
                return CommitResult(Outcome.MISSING)
            if idem is not None:
                prior = self._idem_value(game_id, idem.key)
                if prior is not None:
                    return CommitResult(Outcome.REPLAYED, game.version, prior)
            if game.version != expected_version:
                return CommitResult(Outcome.CONFLICT, game.version)
            game.version += 1
            game.state, game.view = state, view
            game.log.append(log_entry)
            game.expires = self._clock() + ttl
            self._remember(game_id, idem)
            return CommitResult(Outcome.APPLIED, game.version)

    def replace_meta(self, game_id: str, *, expected: bytes, meta: bytes) -> Outcome:
        with self._lock:
            game = self._live(game_id)
            if game is None:
                return Outcome.MISSING
            if game.meta != expected:
                return Outcome.CONFLICT
            game.meta = meta
            return Outcome.APPLIED

    def history(self, game_id: str) -> list[bytes] | None:
        with self._lock:
            game = self._live(game_id)
            return None if game is None else list(game.log)

    def idempotency_record(self, game_id: str, key: str) -> bytes | None:
        with self._lock:
            return self._idem_value(game_id, key)

    def cached(self, game_id: str, name: str) -> bytes | None:
        with self._lock:
            return self._kept.get((game_id, name))

    def keep(self, game_id: str, name: str, value: bytes, ttl: int) -> None:
        with self._lock:
            self._kept.set((game_id, name), value, ttl)

    def ping(self) -> None:
        return None
