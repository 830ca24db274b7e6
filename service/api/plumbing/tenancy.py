"""Who a request comes from, as the HTTP adapter reads it: the tenant's key in `X-API-Key`
(checked on every request that carries one, so a revoked key stops at once), and, with
`AOS_TENANCY=required`, a private game hidden (404) from anyone without its tenant's key, one of
its seat tokens or its admin token."""

from __future__ import annotations

import math
import os
import re
import secrets
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

import orjson
from flask import Flask, current_app, g, request

from service.observability import metrics
from service.referee.errors import GameError, not_found
from service.referee.games import Games
from service.referee.tenancy import ANONYMOUS, Caller, Tenancy, quota_spent
from service.store import StoreUnavailable
from service.tenants import registry_from_env
from service.tenants.ledger import ledger_from_env

T = TypeVar("T")

API_KEY_HEADER = "X-API-Key"
GAME_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_KEY_LENGTH = 128  # a key is 60 characters; anything much longer is not one


def tenancy() -> Tenancy:
    return current_app.extensions["aos.tenancy"]


def caller() -> Caller:
    """The request's caller, read once per request, where a route needs to know: a key that
    came is checked then (a wrong, unknown or revoked one is refused), never cached beyond the
    request, so a revocation holds at once."""
    if "caller" not in g:
        key = request.headers.get(API_KEY_HEADER)
        if key is not None and len(key) > MAX_KEY_LENGTH:
            key = "not a key"  # refused below like any other wrong key, without a store read
        g.caller = ANONYMOUS if key is None else tenancy().caller(key.strip())
    return g.caller


def install(app: Flask, games: Games) -> None:
    """Tenancy for the app: keys where the service keeps them (PostgreSQL, else Redis, else
    memory), the ledger beside the games, and the private games' guard."""
    hosted = Tenancy(games.settings, registry_from_env(), ledger_from_env(os.environ))
    app.extensions["aos.tenancy"] = hosted
    games.tenancy = hosted

    @app.before_request
    def _who_asks() -> None:
        game_id = (request.view_args or {}).get("game_id")
        if game_id and GAME_ID.fullmatch(game_id) and hosted.required and request.method != "OPTIONS":
            _guard_private(games, hosted, game_id)


def _guard_private(games: Games, hosted: Tenancy, game_id: str) -> None:
    found = games.store.meta(game_id)
    if found is None:
        return  # the route says what it is: 404, 410, or put back from the archive
    meta = orjson.loads(found[1])
    if not meta.get("private"):
        return
    bearer = request.headers.get("Authorization", "")
    token = bearer.partition(" ")[2].strip() if bearer.lower().startswith("bearer ") else None
    who = caller_or_anonymous()  # a wrong key opens nothing: the game is as hidden as without one
    if not hosted.may_see(who, meta, token):
        raise not_found(game_id)


# -- event streams: a tenant's quota of open streams, its stream-minutes, and its key's life ------

KEY_CHECK_SECONDS = 15.0  # how often a stream opened with a key looks whether it was revoked
# A stream holds a lease on one of its tenant's open streams, in the ledger that every instance
# shares (Redis), for this long, and renews it a third of the way through: a process that dies
# with streams open leaves their leases to run out within a minute, freeing the tenant's places.
STREAM_LEASE_SECONDS = 60.0
STREAMS = "streams"


def metered(items: Iterator[T], games: Games, game_id: str,
            clock: Callable[[], float] = time.monotonic) -> Iterator[T]:
    """A game's event stream as its tenant pays for it: refused past the tenant's open streams,
    counted across every instance (before anything is sent), its minutes counted when it ends,
    and ended when the key it was opened with is revoked. A game of nobody's streams as it is."""
    hosted = tenancy()
    found = games.store.meta(game_id)
    meta = {} if found is None else orjson.loads(found[1])
    tenant = meta.get("tenant")
    who = caller_or_anonymous()
    if tenant is None and who.key is None:
        return items
    lease = None
    if tenant is not None:
        limit = hosted.quotas_of(meta).open_streams
        lease = secrets.token_hex(12)
        try:
            held = hosted.ledger.hold(tenant, STREAMS, lease, limit, until=time.time() + STREAM_LEASE_SECONDS)
        except BaseException:
            _close(items)
            raise
        if not held:
            _close(items)
            raise quota_spent("open_streams", limit, 5)
    return _Metered(items, hosted, tenant, lease, who, clock)


def _close(items: Iterator[T]) -> None:
    close = getattr(items, "close", None)
    if close is not None:
        close()


class _Metered(Iterator[T]):
    """The stream, passed through; its lease renewed while it runs, given back and its minutes
    counted when it is closed, even before its first item (a generator's `finally` would not
    run then)."""

    def __init__(self, items: Iterator[T], hosted: Tenancy, tenant: str | None, lease: str | None,
                 who: Caller, clock: Callable[[], float]) -> None:
        self._items, self._hosted = items, hosted
        self._tenant, self._lease, self._who, self._clock = tenant, lease, who, clock
        self._began = self._checked = self._renewed = clock()
        self._done = False

    def __next__(self) -> T:
        if self._done:
            raise StopIteration
        now = self._clock()
        if self._who.key is not None and now - self._checked >= KEY_CHECK_SECONDS:
            self._checked = now
            current = self._hosted.registry.get(self._who.key.key_id)
            if current is None or not current.active:
                self.close()  # the key that opened it was revoked: the stream ends
                raise StopIteration
        if self._lease is not None and now - self._renewed >= STREAM_LEASE_SECONDS / 3:
            self._renew(now)
        try:
            return next(self._items)
        except StopIteration:
            self.close()
            raise

    def _renew(self, now: float) -> None:
        assert self._tenant is not None and self._lease is not None
        try:
            # Its own lease is renewed whatever the count: the stream was let in.
            self._hosted.ledger.hold(self._tenant, STREAMS, self._lease, 1 << 30,
                                     until=time.time() + STREAM_LEASE_SECONDS)
            self._renewed = now
        except StoreUnavailable:
            pass  # tried again with the next item; the stream goes on meanwhile

    def close(self) -> None:
        if self._done:
            return
        self._done = True
        _close(self._items)
        if self._tenant is None:
            return
        minutes = math.ceil((self._clock() - self._began) / 60)
        try:
            if self._lease is not None:
                self._hosted.ledger.release(self._tenant, STREAMS, self._lease)
            self._hosted.ledger.count(self._tenant, "stream_minutes", minutes)
            metrics.TENANT_USAGE.labels(tenant=self._tenant, kind="stream_minutes").inc(minutes)
        except StoreUnavailable:
            pass  # a stream's end must not fail for its metering: its lease runs out by itself


def caller_or_anonymous() -> Caller:
    try:
        return caller()
    except GameError:
        return ANONYMOUS
