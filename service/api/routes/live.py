"""Live updates over HTTP: a game's events stream (SSE or NDJSON), the long-poll of the game
view, and the spectator page. The fan-out itself is service/live; this module speaks HTTP."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from flask import Blueprint, Flask, Response, current_app, request
from prometheus_client import Counter, Gauge

from service.admission import client_gone
from service.live import FRAMINGS, NDJSON, SSE, GameGone, Hub, VersionAhead, follow, notices_for
from service.live.stream import Items
from service.referee.errors import not_found
from service.referee.live_source import GameEvents
from service.referee.settings import Settings
from service.store import GameStore

from ..checks.parts import game_id_of, games
from ..pages import game_page, static_file
from ..plumbing import limits, tenancy
from ..responses import ApiError, etag, etag_matches

bp = Blueprint("live", __name__, url_prefix="/v1")

VERSION = re.compile(r"[0-9]{1,15}")
BATCH = 64  # versions read and sent at a time when a stream catches up
# The spectator page loads only what the service serves: its script and style, the board.
WATCH_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
             "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")

STREAMS_OPEN = Gauge("aos_event_streams_open", "Event streams open now.", multiprocess_mode="livesum")
STREAMS_CEILING = Gauge("aos_event_streams_ceiling", "Event streams the workers may hold at once "
                        "(0: no cap of their own); past it a stream is answered 503 AT_CAPACITY.",
                        multiprocess_mode="livesum")
RETRY_AFTER_FULL = "2"  # seconds: a refused stream's client tries again (on this or another pod)
EVENTS_SENT = Counter("aos_events_sent_total", "Events sent on event streams.")
RESYNCS = Counter(
    "aos_live_resyncs_total",
    "Times a process's notice reader (re)subscribed, so that every watcher read the store again.",
)


@dataclass
class Live:
    hub: Hub
    settings: Settings
    streams: int = 0  # open in this process now (gevent: one thread, so a plain count)


def install(app: Flask, store: GameStore, settings: Settings) -> None:
    """One hub per app (so per gunicorn worker), over the app's store."""
    notices = notices_for(store)

    def start(hub: Hub):  # type: ignore[no-untyped-def]
        hub.on_resync = RESYNCS.inc
        return notices(hub)

    app.extensions["aos.live"] = Live(Hub(GameEvents(store), start), settings)
    STREAMS_CEILING.set(settings.streams_per_worker)
    app.register_blueprint(bp)


def live() -> Live:
    return current_app.extensions["aos.live"]


# -- the events stream ---------------------------------------------------------------------------


def resume_point() -> int:
    """The version to start after: Last-Event-ID (an EventSource's reconnect) over ?after= (the
    URL it first opened); 0, the game's start, when neither is given."""
    unknown = sorted(set(request.args) - {"after"})
    if unknown:  # a mistyped ?after would replay the game from its start
        raise ApiError(400, "BAD_QUERY", f"unknown query parameter {unknown[0][:40]!r}: only after")
    header = request.headers.get("Last-Event-ID", "").strip()
    if header:
        if not VERSION.fullmatch(header):
            raise ApiError(400, "BAD_HEADER", "Last-Event-ID is a version: the id of the last event seen")
        return int(header)
    after = request.args.get("after")
    if after is not None:
        if not VERSION.fullmatch(after):
            raise ApiError(400, "BAD_QUERY", "after is a version: an integer from 0")
        return int(after)
    return 0


def framing() -> str:
    """SSE unless the client prefers NDJSON."""
    return request.accept_mimetypes.best_match([SSE, NDJSON], default=SSE) or SSE


@bp.get("/games/<game_id>/events")
def game_events(game_id: str) -> Response:

    game_id = game_id_of(game_id)
    after = resume_point()
    kind = framing()
    state = live()
    cap = state.settings.streams_per_worker
    if cap and state.streams >= cap:
        # At once, before any read: a full process must not hold the client in its backlog.
        raise ApiError(503, "AT_CAPACITY", f"this process holds as many event streams as it may "
                       f"({cap}); try again after Retry-After seconds",
                       headers={"Retry-After": RETRY_AFTER_FULL})
    # Replaying a game's versions to a stream costs by the version (each event carries the view
    # made again at its version): charged to the client's address before any is read.
    limits.spend_reads(games().version(game_id) - after)
    try:
        first = state.hub.read(game_id, after, BATCH)
    except GameGone:
        raise not_found(game_id) from None
    except VersionAhead as exc:
        raise ApiError(400, "VERSION_AHEAD", f"the game is at version {exc.version}",
                       version=exc.version) from None
    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}  # nginx: pass each event on
    if first.finished and not first.events:
        # Nothing will come: 204 also tells an EventSource not to reconnect.
        return Response(status=204, headers=headers)
    settings = state.settings
    items = follow(state.hub, game_id, after, first=first, heartbeat=settings.events_heartbeat,
                   lifetime=settings.events_lifetime, limit=BATCH)
    # A tenant's open streams and minutes: metered around the whole body, whose close() is the
    # one call that comes whenever the stream ends, even before its first event.
    body = tenancy.metered(FRAMINGS[kind](counted(items, state)), games(), game_id)
    return Response(body, content_type=kind, headers=headers, direct_passthrough=True)


def counted(items: Items, state: Live) -> Items:
    # Counted from the response's start, as the gauge is: a generator's body runs at its first
    # item, which the server asks for at once, so a refusal sees every stream already answered.
    STREAMS_OPEN.inc()
    state.streams += 1
    try:
        for item in items:
            if item is not None:
                EVENTS_SENT.inc()
            yield item
    finally:
        state.streams -= 1
        STREAMS_OPEN.dec()
        items.close()


# -- the long-poll of the game view ----------------------------------------------------------------


MAX_PREFER = 256
GONE_CHECK_SECONDS = 0.5  # how often a long-poll looks whether its client is still there


def prefer_header() -> str | None:
    """The request's Prefer header, bounded as the contract says."""
    value = request.headers.get("Prefer")
    if value is not None and len(value) > MAX_PREFER:
        raise ApiError(400, "BAD_HEADER", f"Prefer is at most {MAX_PREFER} characters")
    return value


def preferred_wait(prefer: str | None) -> int | None:
    """The `wait` preference of a Prefer header (RFC 7240) in seconds, or None."""
    for preference in (prefer or "").split(","):
        name, _, value = preference.split(";", 1)[0].partition("=")
        if name.strip().lower() == "wait":
            value = value.strip().strip('"')
            if VERSION.fullmatch(value):
                return int(value)
    return None


def not_modified(game_id: str, if_none_match: str, prefer: str | None) -> tuple[Response | None, dict]:
    """The conditional GET of a game: `(304 response, {})` while the game is at a version
    `If-None-Match` names, else `(None, headers for the 200)`. With `Prefer: wait=<s>` the 304
    waits up to that long (at most the configured maximum) and the 200 comes as soon as the
    game moves; `Preference-Applied` says how long the service waited at most."""
    version = games().version(game_id)
    if not etag_matches(if_none_match, version):
        return None, {}
    wait = preferred_wait(prefer)
    if wait is not None:
        wait = min(wait, live().settings.long_poll_max)
    if not wait or if_none_match.strip() == "*":  # "*" matches every version: nothing to wait for
        return Response(status=304, headers={"ETag": etag(version)}), {}
    applied = {"Preference-Applied": f"wait={wait}"}
    deadline = time.monotonic() + wait
    with live().hub.watch(game_id) as watch:
        while True:
            watch.clear()
            version = games().version(game_id)
            if not etag_matches(if_none_match, version):
                return None, applied
            remaining = deadline - time.monotonic()
            if remaining <= 0 or live().hub.stopping:
                return Response(status=304, headers={"ETag": etag(version), **applied}), {}
            # In slices: a client that hung up frees its slot within one, not at the deadline.
            if not watch.wait(min(remaining, GONE_CHECK_SECONDS)) and client_gone(request.environ):
                return Response(status=304, headers={"ETag": etag(version), **applied}), {}


# -- the spectator page ----------------------------------------------------------------------------


@bp.get("/games/<game_id>/watch")
def watch_page(game_id: str) -> Response:
    game_id = game_id_of(game_id)
    if games().store.version(game_id) is None:
        raise not_found(game_id)
    return game_page("watch", game_id, WATCH_CSP)


@bp.get("/watch.js")
def watch_script() -> Response:
    return static_file("watch", "watch.js")


@bp.get("/watch.css")
def watch_style() -> Response:
    return static_file("watch", "watch.css")
