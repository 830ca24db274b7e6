"""The store interface: games as opaque bytes under an integer version, and their move logs.

The store knows nothing of the rules or of HTTP. A game is a version, the engine's state, the
API's metadata and the rendered view at that version (so a read of the view needs no decoding),
plus an append-only log with one entry per applied move.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass


class StoreUnavailable(Exception):
    """The store cannot be reached or did not answer in time; nothing is known to have changed.

    `op` names the store operation (`create`, `commit`, `meta`, `load`, `history`, `idempotency`,
    `ping`) and `kind` the failure (`connection`, `timeout`, `oom`, `other`): the labels of the
    aos_store_errors_total metric."""

    def __init__(self, message: str, *, op: str = "unknown", kind: str = "other") -> None:
        super().__init__(message)
        self.op = op
        self.kind = kind


def _ignore_retry(op: str, reason: str) -> None:
    return None


class GameExists(Exception):
    """A game with that id is stored already."""


@dataclass(frozen=True, slots=True)
class Stored:
    version: int
    state: bytes
    meta: bytes
    view: bytes | None = None


@dataclass(frozen=True, slots=True)
class IdemRecord:
    """What to remember under an idempotency key, written in the same atomic step as the game."""

    key: str
    value: bytes
    ttl: int


class Outcome(enum.Enum):
    APPLIED = "applied"
    CONFLICT = "conflict"  # the game is no longer at the expected version
    MISSING = "missing"  # no such game (never created, or expired)
    REPLAYED = "replayed"  # the idempotency key was used already: nothing was written


@dataclass(frozen=True, slots=True)
class CommitResult:
    outcome: Outcome
    version: int | None = None  # the new version when applied, the current one on conflict
    replay: bytes | None = None  # the stored idempotency record when replayed


class GameStore(ABC):
    """Where games live. Every method raises StoreUnavailable when the backend is unreachable."""

    kind: str
    # Called with (op, reason) for each retry of an operation that then succeeded; the API points
    # it at its metrics. The store itself knows nothing of metrics.
    on_retry: Callable[[str, str], None] = staticmethod(_ignore_retry)

    @abstractmethod
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
        """Store a new game whose version is the length of `log` (an imported game comes with
        its moves). Returns None when created, or, if `idem.key` was used before, the record
        stored with it (and writes nothing). Raises GameExists when the id is taken."""

    @abstractmethod
    def load(self, game_id: str, *, with_view: bool = False) -> Stored | None:
        """The game's version, state and metadata (and view if asked), or None."""

    @abstractmethod
    def load_view(self, game_id: str) -> tuple[int, bytes] | None:
        """The game's version and its rendered view, or None."""

    @abstractmethod
    def version(self, game_id: str) -> int | None:
        """The game's version, or None."""

    @abstractmethod
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
        """Atomically: if the game is at `expected_version` (and `idem.key` is unused), store the
        new state and view at expected_version + 1, append `log_entry` to the log, remember
        `idem` and refresh the game's expiry to `ttl` seconds. All of it or none of it."""

    @abstractmethod
    def replace_meta(self, game_id: str, *, expected: bytes, meta: bytes) -> Outcome:
        """Atomically: if the game's metadata is still `expected` (byte for byte), make it
        `meta`. APPLIED, CONFLICT (someone changed it first: nothing written) or MISSING. The
        version, state, log and expiry are untouched."""

    @abstractmethod
    def history(self, game_id: str) -> list[bytes] | None:
        """Every log entry in order, or None when there is no such game."""

    @abstractmethod
    def idempotency_record(self, game_id: str, key: str) -> bytes | None:
        """The record stored under an idempotency key of this game, or None."""

    @abstractmethod
    def cached(self, game_id: str, name: str) -> bytes | None:
        """A value derived from the game and kept by `keep` under `name`, or None (lapsed, or
        never kept)."""

    @abstractmethod
    def keep(self, game_id: str, name: str, value: bytes, ttl: int) -> None:
        """Keeps a value derived from the game for `ttl` seconds. Its name must say which
        version it was derived from: nothing clears it when the game moves on."""

    @abstractmethod
    def ping(self) -> None:
        """Return when the store answers; raise StoreUnavailable when it does not."""
