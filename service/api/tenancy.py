"""Who a request comes from, as the HTTP adapter reads it: the tenant's key in `X-API-Key`
(checked on every request that carries one, so a revoked key stops at once), and, with
`AOS_TENANCY=required`, a private game hidden (404) from anyone without its tenant's key, one of
its seat tokens or its admin token."""

from __future__ import annotations

import os
import re

import orjson
from flask import Flask, current_app, g, request

from service.referee.errors import GameError, not_found
from service.referee.games import Games
from service.referee.tenancy import ANONYMOUS, Caller, Tenancy
from service.tenants import registry_from_env
from service.tenants.ledger import ledger_from_env

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
    try:
        who = caller()
    except GameError:
        who = ANONYMOUS  # a wrong key opens nothing: the game is as hidden as without one
    if not hosted.may_see(who, meta, token):
        raise not_found(game_id)
