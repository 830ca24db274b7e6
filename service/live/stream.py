"""One watcher's stream: the events after a version, then live, framed as SSE or NDJSON."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Generator, Iterator

from service.store import StoreUnavailable

from .hub import Batch, Event, GameGone, Hub, VersionAhead

log = logging.getLogger(__name__)


def follow(
    hub: Hub,
    game_id: str,
    after: int,
    *,
    first: Batch | None = None,
    heartbeat: float = 15.0,
    lifetime: float = 3600.0,
    limit: int = 64,
    retry: float = 1.0,
    clock: Callable[[], float] = time.monotonic,
) -> Generator[Event | None, None, None]:
    """The game's events after version `after`, in order, then each new one as it is
    committed; None whenever `heartbeat` seconds passed with nothing sent. Ends after the event
    that finishes the game, when the game is gone, or after `lifetime` seconds (the client
    resumes from its last event), or when the process stops watching (it shuts down). `first`
    is a batch already read from `after` on.

    A watcher far behind (a resume from long ago) reads on its own, `limit` versions at a time,
    each batch going on from the last one's state; once it has caught up it reads from the
    game's shared feed. While the store is unreachable it keeps the connection open (with its
    heartbeats) and tries again every `retry` seconds."""
    with hub.watch(game_id) as watch:
        position, cursor = after, None if first is None else first.cursor
        pending = first
        ends = clock() + lifetime
        sent = clock()
        while True:
            watch.clear()  # before reading: a notice that comes during the read wakes the wait
            wait = heartbeat
            try:
                while True:
                    batch, pending = pending or watch.read(position), None
                    if batch is None:
                        batch = hub.source.since(game_id, position, cursor, limit)
                        cursor = batch.cursor
                    for event in batch.events:
                        position = event.version
                        yield event
                        sent = clock()
                        if event.final:
                            return
                    if batch.finished and position >= batch.version:
                        return
                    if not batch.more:
                        break
            except StoreUnavailable as exc:
                log.warning("event stream: store unavailable, trying again",
                            extra={"fields": {"event": "stream_store_error", "error": str(exc)}})
                wait = retry
            except (GameGone, VersionAhead):
                return
            now = clock()
            if now >= ends or hub.stopping:
                return
            woken = watch.wait(min(wait, ends - now, sent + heartbeat - now))
            if not woken and clock() - sent >= heartbeat:
                yield None
                sent = clock()


# -- framing ---------------------------------------------------------------------------------

SSE = "text/event-stream"
NDJSON = "application/x-ndjson"


def sse(items: Generator[Event | None, None, None]) -> Iterator[bytes]:
    """Server-Sent Events: `id` = the version, `event: move`; a comment line as heartbeat. It
    starts with a reconnection delay for browsers, which also sends the headers at once."""
    try:
        yield b"retry: 2000\n\n"
        for item in items:
            if item is None:
                yield b": heartbeat\n\n"
            else:
                yield b"id: %d\nevent: move\ndata: %b\n\n" % (item.version, item.data)
    finally:
        items.close()  # the client left: end the watch now, not when the garbage is collected


def ndjson(items: Generator[Event | None, None, None]) -> Iterator[bytes]:
    """One JSON event per line; an empty line as heartbeat (the first one sends the headers)."""
    try:
        yield b"\n"
        for item in items:
            yield b"\n" if item is None else item.data + b"\n"
    finally:
        items.close()


Items = Generator[Event | None, None, None]
FRAMINGS: dict[str, Callable[[Items], Iterator[bytes]]] = {SSE: sse, NDJSON: ndjson}
