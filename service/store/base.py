"""The store interface: games as opaque bytes under an integer version, and their logs.

The store knows nothing of the rules or of HTTP. A game is a version, the engine's state, the
API's metadata and the rendered view at that version (so a read of the view needs no decoding),
plus an append-only log with one entry per version.

Every change of a game is one compare-and-set (`commit`): it writes the new state and appends
its log entries, and in the same atomic step queues what follows from it: an outbox entry for
the background worker (archive, webhooks), the game's clock deadline, and a notice to whoever
watches the game. So nothing a watcher, a webhook or the archive sees can disagree with the game.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple


class StoreUnavailable(Exception):
    """The store cannot be reached or did not answer in time; nothing is known to have changed.

    `op` names the store operation (`create`, `commit`, `meta`, `load`, `history`, `idempotency`,
    `ping`, `outbox`, `clocks`, `deliveries`, `release`; `archive` for the PostgreSQL archive) and
    `kind` the failure (`connection`, `timeout`, `oom`, `other`): the labels of the
    aos_store_errors_total metric."""

    def __init__(self, message: str, *, op: str = "unknown", kind: str = "other") -> None:
        super().__init__(message)
        self.op = op
        self.kind = kind


def _ignore_retry(op: str, reason: str) -> None:
    return None


class GameExists(Exception):
    """A game with that id is stored already."""


# Stored, IdemRecord and CommitResult are made for every move: named tuples, immutable as frozen
# dataclasses are, made in a third of the time (a frozen dataclass sets each field through
# object.__setattr__).
class Stored(NamedTuple):
    version: int
    state: bytes
    meta: bytes
    view: bytes | None = None


class IdemRecord(NamedTuple):
    """What to remember under an idempotency key, written in the same atomic step as the game."""

    key: str
    value: bytes
    ttl: int


@dataclass(frozen=True, slots=True)
class Ahead:
    """What a commit keeps under a kept name at the version it makes, if `load_kept` read that
    name of the game within the ttl it was given, at any version (someone asks for it, so it is
    worth working out ahead): a mark that the name's value is being worked out for that version,
    for its readers to wait on (await_kept) rather than work it out too. A mark whose value never
    comes (its worker died) lapses in `ttl`; a reader waits for it no longer than its own bound
    (Settings.legal_moves_wait_ms), then works the value out itself."""

    name: str
    value: bytes
    ttl: int


# Idempotency records that live at least this long (seconds) go to the outbox with their change,
# so the archive keeps them: a client's own key (a day). A request's own key, which only covers
# the store's retries of one commit, does not.
IDEM_ARCHIVE_MIN_TTL = 3600


@dataclass(frozen=True, slots=True)
class CreateRecord:
    """The record of a create made with an Idempotency-Key: kept under the key's digest in the
    shard the game is created in (see keys.create_record_key), written with the game."""

    digest: str
    value: bytes
    ttl: int


class Outcome(enum.Enum):
    APPLIED = "applied"
    CONFLICT = "conflict"  # the game is no longer at the expected version
    MISSING = "missing"  # no such game (never created, or expired)
    REPLAYED = "replayed"  # the idempotency key was used already: nothing was written


class CommitResult(NamedTuple):
    outcome: Outcome
    version: int | None = None  # the new version when applied, the current one on conflict
    replay: bytes | None = None  # the stored idempotency record when replayed
    # When applied with `ahead`: whether its name was read lately (then its value is kept).
    ahead_read: bool = False


@dataclass(frozen=True, slots=True)
class OutboxItem:
    """One change of a game, as the commit queued it for the background worker."""

    id: str  # the stream entry's id, "<unix ms>-<seq>": unique and ordered within its shard
    shard: int
    game_id: str
    version: int  # the game's version after the change
    entries: list[bytes]  # the log entries the change appended, one per version
    meta: bytes | None  # the game's metadata when the change wrote it (always on a create)
    state: bytes | None  # the game's state, on a create only
    created: bool
    # The Idempotency-Key record the change was committed with, when it is one worth archiving
    # (it outlives a request: IDEM_ARCHIVE_MIN_TTL), so a rebuilt game answers its retries.
    idem: IdemRecord | None = None

    @property
    def time_ms(self) -> int:
        return int(self.id.split("-", 1)[0])


@dataclass(frozen=True, slots=True)
class ClaimedClock:
    """A clock that ran out, taken by one worker until `lease` (unix time): the clock set holds
    `lease` for it meanwhile, so no other worker takes it unless this one dies."""

    game_id: str
    lease: float


@dataclass(frozen=True, slots=True)
class Delivery:
    """A webhook delivery in its shard's queue (the game's shard). `id` is stable (it is the
    delivery's webhook-id); `job` is what to send, opaque to the store. A claimed delivery has
    `lease`, the unix time its claim runs out: finishing it needs that claim to still hold."""

    id: str
    game_id: str
    job: bytes
    lease: float = 0.0
    # Which of the worker's queues it is in: "webhooks" (deliveries), or "searches" (hints the
    # worker searches: service/referee/hints.py). The queues work alike, each with its own keys.
    queue: str = "webhooks"


class GameStore(ABC):
    """Where games live. Every method raises StoreUnavailable when the backend is unreachable.

    Reads of a game extend its life: a game read within its expiry time is not dropped, though
    the expiry is pushed back only now and then (when less than 90 % of it is left), so that
    reads stay reads almost always."""

    kind: str
    # Called with (op, reason) for each retry of an operation that then succeeded; the API points
    # it at its metrics. The store itself knows nothing of metrics.
    on_retry: Callable[[str, str], None] = staticmethod(_ignore_retry)

    # -- games ------------------------------------------------------------------------------

    @abstractmethod
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
        """Store a new game whose version is the length of `log` (an imported game comes with
        its moves), queue it in the outbox, set its clock `deadline` (unix time) if any, and
        write the idempotency records `idem` (a game put back from the archive). Returns
        None when created, or, if `record.digest` is taken in the game's shard, the value stored
        with it (and writes nothing). Raises GameExists when the id is taken."""

    @abstractmethod
    def create_record(self, shard: int, digest: str) -> bytes | None:
        """The value of a create's record in that shard, or None."""

    @abstractmethod
    def drop_create_record(self, shard: int, digest: str) -> None:
        """Forget a create's record (its game is gone)."""

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
    def meta(self, game_id: str) -> tuple[int, bytes] | None:
        """The game's version and metadata, or None."""

    @abstractmethod
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
        """Atomically, if the game is at `expected_version` (and `idem.key` is unused, and its
        metadata is still `expected_meta` when that is given): append
        `entries` to the log (the version goes up by one per entry), store what is given of
        state, view and meta, remember `idem`, refresh the game's expiry to `ttl` seconds, queue
        the change in the outbox; and when the version moved, set the clock to `deadline` (unix
        time; None: no clock) and notify the game's watchers. All of it or none of it.

        A commit that writes only meta keeps the version, so the version alone cannot tell two
        writers of meta apart: a commit that read meta and writes something derived from it (a
        seat's programmed orders) passes `expected_meta`, the bytes it read, and gets CONFLICT
        when another commit changed them in between.

        With `ahead`, an applied commit also says in `CommitResult.ahead_read` whether its
        name was read lately, and if it was keeps its value under the name at the new version,
        as `keep` does, and lets go the wake-ups of an earlier value (await_kept). In the same
        step: done apart, after every move, it was a round trip of its own, which the name's
        next reader waited out."""

    @abstractmethod
    def history(self, game_id: str, start: int = 0, stop: int | None = None) -> list[bytes] | None:
        """The log entries from index `start` up to (not including) `stop`, or None when there is
        no such game. Entry i made version i + 1."""

    @abstractmethod
    def replace_meta(self, game_id: str, *, expected: bytes, meta: bytes) -> Outcome:
        """Atomically: if the game's metadata is still `expected` (byte for byte), make it
        `meta`, and queue the change in the outbox. APPLIED, CONFLICT (someone changed it first:
        nothing written) or MISSING. The version, state, log and expiry are untouched."""

    @abstractmethod
    def idempotency_record(self, game_id: str, key: str) -> bytes | None:
        """The record stored under an idempotency key of this game, or None."""

    def load_kept(self, game_id: str, name: str, ttl: int) -> tuple[Stored, bytes | None, bool] | None:
        """The game's version, state and metadata; the value `keep` kept under `name` at that
        version (None if not, lapsed or never kept); and whether `name` was read lately (within
        `ttl` seconds, at any version) before this read, which marks it read. None when there
        is no game."""
        read = self.peek_kept(game_id, name)
        if read is None:
            return None
        stored, read_lately = read
        self.mark_read(game_id, name, ttl)
        return stored, self.kept(game_id, name, stored.version), read_lately

    @abstractmethod
    def peek_kept(self, game_id: str, name: str) -> tuple[Stored, bool] | None:
        """In one read, the game and whether `name` was read lately (marked by `mark_read`
        within its `ttl`), without the value and without marking it: for a caller whose values
        are kept only for names read lately (Games.legal_moves: a commit keeps one ahead only
        for a name read lately, and a reader keeps one only for a name read before it), which
        asks for the value (`kept`, or one it has at hand) only then, and marks the read once
        its answer is sent: a first reader's read is the game's alone."""

    @abstractmethod
    def mark_read(self, game_id: str, name: str, ttl: int) -> None:
        """Marks `name` read for `ttl` seconds: what peek_kept and load_kept answer as read
        lately, and what a commit's `ahead` asks for."""

    @abstractmethod
    def kept(self, game_id: str, name: str, version: int) -> bytes | None:
        """The value kept under `name` at `version`, if it is still that version's."""

    @abstractmethod
    def keep(self, game_id: str, name: str, version: int, value: bytes, ttl: int, *,
             wake: bool = False) -> None:
        """Keeps a value derived from the game at `version` for `ttl` seconds, one per name: it
        is read back only while the game is at that version (versions never repeat). With
        `wake`, it is a value its readers wait for (await_kept), and they are woken. A keep that
        comes late may replace a newer version's value; that costs the newer version's readers
        a value of their own, never a wrong one."""

    @abstractmethod
    def await_kept(self, game_id: str, name: str, seconds: float) -> None:
        """Returns soon after a `keep` with `wake` of `name` (one since the last commit
        that kept it `ahead` may already have been), or after `seconds`: a reader waits here,
        idle, for a value being worked out elsewhere, then reads it with `load_kept`."""

    def release(self, game_id: str, version: int, ttl: int) -> bool:
        """The game's every version up to `version` is kept elsewhere (the archive), from where
        it can be put back: if the game is still at `version`, let it expire `ttl` seconds after
        its last read instead of its usual time (never later than that). Its next commit brings
        the usual expiry back. Returns whether the game was still at `version`. A store that
        cannot do this keeps the game for its usual time, which is always safe."""
        return False

    @abstractmethod
    def purge(self, game_id: str, tombstone_ttl: int) -> bool:
        """Deletes the game everywhere in the store, at once: its state, log, idempotency
        records, kept answers, clock and queued webhook deliveries; leaves a tombstone for
        `tombstone_ttl` seconds (see `deleted`), and wakes the game's watchers so that their
        streams end. Whether there was a game to delete (the tombstone is left either way)."""

    @abstractmethod
    def deleted(self, game_id: str) -> bool:
        """Whether the game was purged (within its tombstone's time)."""

    # -- what the worker takes from the commits -----------------------------------------------

    @abstractmethod
    def outbox_read(self, group: str, consumer: str, count: int = 100) -> list[OutboxItem]:
        """Changes no consumer of `group` has taken yet, oldest first within each shard (up to
        `count` per shard); each stays pending for this consumer until acknowledged. A group
        that does not exist yet is created and starts from the oldest change kept."""

    @abstractmethod
    def outbox_claim(self, group: str, consumer: str, min_idle_ms: int, count: int = 100) -> list[OutboxItem]:
        """Takes over changes another consumer of `group` took more than `min_idle_ms` ago and
        never acknowledged (it died, or hangs)."""

    @abstractmethod
    def outbox_ack(self, group: str, items: Sequence[OutboxItem]) -> None:
        """Marks changes as done for `group`."""

    @abstractmethod
    def outbox_backlog(self, group: str) -> int:
        """Changes not yet acknowledged by `group`: not taken yet, or taken and pending."""

    @abstractmethod
    def due_clocks(self, now: float, limit: int = 100) -> list[tuple[str, float]]:
        """Games whose clock deadline is at or before `now`: (game id, deadline), earliest first
        within each shard."""

    @abstractmethod
    def claim_clocks(self, now: float, lease: float, limit: int = 100) -> list[ClaimedClock]:
        """Takes the clocks that ran out by `now` (up to `limit` per shard, earliest first): each
        is set to `lease` in the same atomic step, so another worker takes it only once `lease`
        has passed (this one died). A commit of the game sets its clock anew."""

    @abstractmethod
    def set_clock(self, game_id: str, expected: float, deadline: float | None) -> bool:
        """Sets a game's clock to `deadline` (None: removes it) if it still holds `expected`
        (the lease it was claimed with); whether it did."""

    @abstractmethod
    def clock_backlog(self, now: float) -> tuple[int, int]:
        """(clocks set, clocks that ran out by `now`), over every shard."""

    @abstractmethod
    def queue_deliveries(self, deliveries: Sequence[Delivery], due: float) -> int:
        """Queues webhook deliveries (or searches: each in its `queue`), due at `due` (unix
        time), each in its game's shard; one whose id is queued already is left as it is.
        Returns how many were queued."""

    @abstractmethod
    def claim_deliveries(self, now: float, lease: float, limit: int = 100,
                         queue: str = "webhooks") -> list[Delivery]:
        """Takes up to `limit` deliveries of `queue` due by `now`, earliest first within a shard: each is
        held until `lease` (unix time) in the same atomic step; after that (its worker died) it
        is due again and another worker takes it."""

    @abstractmethod
    def finish_delivery(self, delivery: Delivery, retry_at: float | None = None,
                        job: bytes | None = None) -> bool:
        """Ends a claimed delivery: drops it (`retry_at` None: sent, or given up), or queues it
        again for `retry_at` (with `job` in place of the old one, if given). Does nothing when
        the claim no longer holds (another worker took it over). Whether it did."""

    @abstractmethod
    def delivery_backlog(self, now: float, queue: str = "webhooks") -> tuple[int, int]:
        """(deliveries of `queue` queued or in flight, those due by `now`), over every shard."""

    @abstractmethod
    def ping(self) -> None:
        """Return when the store answers; raise StoreUnavailable when it does not."""
