"""Fan-out within one process: who watches which game, woken by one stream of notices.

A notice says only "game G moved, to version V". Whoever it wakes reads the store, which is the
truth: a notice may come late, twice, or never (the connection that carries notices dropped), so
after every gap in the notices `resync` wakes every watcher to read the store again. Watchers of
one game share a `Feed`: the game's newest events, read from the store once per notice for all
of them rather than once per watcher.

Everything here blocks on `threading` primitives, which gevent's monkey-patching makes
cooperative: the same code serves Flask's threaded dev server and gunicorn's gevent workers.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

log = logging.getLogger(__name__)


class GameGone(Exception):
    """No such game (never created, or expired)."""


class VersionAhead(Exception):
    """A watcher asked for the versions after one the game has not reached."""

    def __init__(self, version: int) -> None:
        super().__init__(f"the game is at version {version}")
        self.version = version


@dataclass(frozen=True, slots=True)
class Event:
    """One version of a game, as the stream sends it."""

    version: int
    data: bytes  # the event as JSON, one line
    final: bool = False  # the game finished with it: a stream ends after it


@dataclass(frozen=True, slots=True)
class Batch:
    """Events of consecutive versions, oldest first, and where they leave the reader."""

    events: Sequence[Event]
    version: int  # the version the batch reaches: its last event's, or the game's if it has none
    finished: bool  # whether the game is finished at `version`
    more: bool = False  # cut at the limit: later versions exist
    cursor: object = None  # the source's own, to go on from `version` without starting again


class Source(Protocol):
    """Where events come from (the API's, which reads the store and knows the rules)."""

    def since(self, game_id: str, after: int | None, cursor: object = None, limit: int = 64) -> Batch:
        """The events after version `after` (after=None: only the game's latest), at most
        `limit` of them. `cursor` is a previous batch's, which may save work when that batch
        ended at `after`. Raises GameGone, VersionAhead, or the store's StoreUnavailable."""
        ...


Notices = Callable[["Hub"], Callable[[], None]]  # starts the notices for a hub, returns stop()

_HUBS: weakref.WeakSet[Hub] = weakref.WeakSet()


def stop_watching() -> None:
    """The process is shutting down: every open stream ends and every long-poll answers now,
    so their clients go on with another process instead of holding the shutdown up."""
    for hub in list(_HUBS):
        hub.stop_watching()


class Feed:
    """The newest events of one game in this process: read from the store once per notice for
    every watcher of the game, and kept a while (at most `keep` versions, for `retain` seconds)
    so that watchers who join or come back a few versions behind (a crowd reconnecting after a
    restart) are served from memory: the versions a window lacks are made once, for all."""

    def __init__(self, game_id: str, source: Source, keep: int, retain: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.game_id = game_id
        self._source = source
        self._keep = keep
        self._retain = retain
        self._clock = clock
        self._lock = threading.Lock()
        # Consecutive versions, newest last, each with when it was read.
        self._events: deque[tuple[Event, float]] = deque()
        self._version: int | None = None  # the version read last
        self._finished = False
        self._cursor: object = None
        self.notices = 0  # counted by the hub (under its lock): notices that came
        self._read = -1  # notices already covered by a read of the store

    def read(self, position: int) -> Batch | None:
        """The events after `position`: read from the store first if a notice came since the
        last read, then from the window (filled back to `position` if that is at most `keep`
        versions behind); None when `position` is further behind (the watcher reads alone)."""
        with self._lock:
            if self._read != self.notices or self._version is None:
                self._refresh()
            self._trim()
            assert self._version is not None
            if position > self._version:
                raise VersionAhead(self._version)
            if position == self._version:
                return Batch((), self._version, self._finished)
            oldest = self._events[0][0].version if self._events else self._version + 1
            if position < oldest - 1:
                if self._version - position > self._keep:
                    return None
                # Back to the window's full depth at once: the next watcher to come back from
                # further behind finds its versions there too.
                self._fill(max(0, self._version - self._keep), oldest)
            return Batch([e for e, _ in self._events if e.version > position], self._version,
                         self._finished)

    def _refresh(self) -> None:
        seen = self.notices
        try:
            if self._version is None:
                batch = self._source.since(self.game_id, None)
            else:
                batch = self._source.since(self.game_id, self._version, self._cursor, self._keep)
        except VersionAhead:
            # The store has less than this feed read (a Redis that lost its data): start again.
            self._events.clear()
            self._version, self._cursor = None, None
            batch = self._source.since(self.game_id, None)
        now = self._clock()
        self._events.extend((event, now) for event in batch.events)
        self._version, self._finished, self._cursor = batch.version, batch.finished, batch.cursor
        # A batch cut at the limit leaves more to read: the next read reads on.
        self._read = -1 if batch.more else seen

    def _fill(self, position: int, oldest: int) -> None:
        """The versions after `position` and before the window's oldest, put in front of it."""
        batch = self._source.since(self.game_id, position, None, oldest - 1 - position)
        now = self._clock()
        self._events.extendleft((event, now) for event in reversed(batch.events)
                                if event.version < oldest)

    def _trim(self) -> None:
        too_old = self._clock() - self._retain
        while self._events and (len(self._events) > self._keep or self._events[0][1] < too_old):
            self._events.popleft()


class Watch:
    """One watcher of one game (a stream or a long-poll): woken by the game's notices."""

    def __init__(self, game_id: str, feed: Feed) -> None:
        self.game_id = game_id
        self.feed = feed
        self._woken = threading.Event()

    def wake(self) -> None:
        self._woken.set()

    def clear(self) -> None:
        """Forget past wake-ups: call it before reading the store, so that a notice that comes
        after the read wakes the next `wait`."""
        self._woken.clear()

    def wait(self, timeout: float) -> bool:
        """Whether a notice (or a resync) came within `timeout` seconds."""
        return self._woken.wait(max(0.0, timeout))

    def read(self, position: int) -> Batch | None:
        """The events after `position` from the game's feed (see Feed.read)."""
        return self.feed.read(position)


@dataclass
class _Watched:
    feed: Feed
    watches: set[Watch]
    readers: int = 0  # first reads of streams going on (Hub.read)


class Hub:
    """The watches of one process, and the one subscription that wakes them.

    `notices(hub)` starts what calls `hub.notify(game_id, version)` for every new version of
    any game, and `hub.resync()` after every gap; it runs from the first watch on (in each
    process: after a fork, the child starts its own)."""

    def __init__(self, source: Source, notices: Notices, *, keep: int = 16, retain: float = 30.0) -> None:
        self.source = source
        self._notices = notices
        self._keep = keep
        self._retain = retain
        self._lock = threading.Lock()
        self._games: dict[str, _Watched] = {}
        self._started_in: int | None = None  # the pid whose notices run
        self._stop: Callable[[], None] | None = None
        self.resyncs = 0
        self.stopping = False  # set at shutdown: watchers end
        self.on_resync: Callable[[], None] = lambda: None  # the API counts them in its metrics
        self._start_lock = threading.Lock()
        _HUBS.add(self)

    def _ensure_notices(self) -> None:
        if self._started_in == os.getpid():
            return
        # Not under self._lock: what starts the notices may call back into the hub.
        with self._start_lock:
            if self._started_in == os.getpid():
                return
            self._stop = self._notices(self)
            self._started_in = os.getpid()

    @contextmanager
    def watch(self, game_id: str) -> Iterator[Watch]:
        """Watches a game while the block runs."""
        self._ensure_notices()
        with self._lock:
            watched = self._games.get(game_id)
            watched = self._watched(game_id)
            watch = Watch(game_id, watched.feed)
            watched.watches.add(watch)
        try:
            yield watch
        finally:
            with self._lock:
                watched.watches.discard(watch)
                self._forget(game_id, watched)

    def read(self, game_id: str, position: int, limit: int = 64) -> Batch:
        """The events after `position` (at most `limit`), through the game's feed when it can
        serve them (see Feed.read), else from the source alone: a stream's first read."""
        with self._lock:
            watched = self._watched(game_id)
            watched.readers += 1
        try:
            batch = watched.feed.read(position)
        finally:
            with self._lock:
                watched.readers -= 1
                self._forget(game_id, watched)
        if batch is None or len(batch.events) > limit:
            batch = self.source.since(game_id, position, None, limit)
        return batch

    def _watched(self, game_id: str) -> _Watched:
        watched = self._games.get(game_id)
        if watched is None:
            feed = Feed(game_id, self.source, self._keep, self._retain)
            watched = self._games[game_id] = _Watched(feed, set())
        return watched

    def _forget(self, game_id: str, watched: _Watched) -> None:
        """A game nobody watches or reads any more: its feed goes."""
        if not watched.watches and not watched.readers and self._games.get(game_id) is watched:
            del self._games[game_id]

    def notify(self, game_id: str, version: int) -> None:
        """Game `game_id` reached `version`: wake its watchers."""
        with self._lock:
            watched = self._games.get(game_id)
            if watched is None:
                return
            watched.feed.notices += 1
            watches = list(watched.watches)
        for watch in watches:
            watch.wake()

    def resync(self) -> None:
        """Notices may have been lost (the subscription was down): every watcher reads again."""
        with self._lock:
            self.resyncs += 1
            watches: list[Watch] = []
            for watched in self._games.values():
                watched.feed.notices += 1
                watches.extend(watched.watches)
        self.on_resync()
        for watch in watches:
            watch.wake()

    def stop_watching(self) -> None:
        self.stopping = True
        with self._lock:
            watches = [w for watched in self._games.values() for w in watched.watches]
        for watch in watches:
            watch.wake()

    def watching(self) -> int:
        """How many watches are open in this process."""
        with self._lock:
            return sum(len(w.watches) for w in self._games.values())

    def close(self) -> None:
        """Stop the notices (tests; a process that exits needs nothing)."""
        with self._start_lock:
            stop, self._stop, self._started_in = self._stop, None, None
        if stop is not None:
            stop()
