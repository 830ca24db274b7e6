"""A tenant's games over HTTP: list them, delete one, create many at once, and read what was
used. Every route here needs a tenant's key (`X-API-Key`), except a delete with the game's own
admin token (its creator's, in open mode).

    GET    /v1/games?status=&map=&cursor=&limit=   -> {"games": [...], "next_cursor"}
    DELETE /v1/games/{game_id}                     -> 204; then the game answers 410
    POST   /v1/games/bulk {"games": [...], "start_at"?} -> 201 {"games": [Created, ...]}
    GET    /v1/usage?from=YYYY-MM-DD&to=YYYY-MM-DD -> {"tenant", "days": [{date, creates, ...}]}
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import orjson
from flask import Blueprint, Response, g, request
from marshmallow import ValidationError

from service.engine.game import MAP_IDS
from service.referee import admin
from service.referee.errors import GameError, not_found
from service.referee.games import Created
from service.referee.listing import MAX_LIST, Filters
from service.referee.tenancy import Caller

from ..checks.parts import game_id_of, games, idempotency_key, invalid, json_body
from ..checks.shapes import load_create
from ..plumbing.tenancy import caller, tenancy
from ..responses import ApiError, json_response

bp = Blueprint("v1_tenants", __name__, url_prefix="/v1")

MAX_BULK = 100
STATUSES = ("active", "finished")
LIMIT = re.compile(r"[0-9]{1,3}")


# -- creating -------------------------------------------------------------------------------------


def create_one(body: dict, raw: object, key: str | None, who: Caller, *,
               clock_start_ms: int | None = None, record: bool = True) -> Created:
    """A game of the caller's (or of nobody's, in open mode without a key); `record`: listed
    and counted at once (a bulk create does that once all its games are made)."""
    hosted = tenancy()
    private = bool(body.pop("private", False))
    if private and not hosted.required:
        raise ApiError(400, "PRIVATE_NEEDS_TENANCY",
                       "only a service run with AOS_TENANCY=required keeps games private")
    owner = hosted.owner_meta(who, private)
    created = games().create(body, raw, key, owner=owner, clock_start_ms=clock_start_ms)
    if record:
        _record(who, created)
    return created


def _record(who: Caller, created: Created) -> None:
    if created.replayed:
        return  # a retry of a create that was counted when it made the game
    tenancy().created(who, created.game_id, orjson.loads(created.body)["map"], created.created_ms)


@bp.post("/games/bulk")
def create_games() -> Response:
    hosted, who = tenancy(), caller()
    hosted.may_create(who)
    raw = json_body()
    shape_ok = isinstance(raw, dict) and not set(raw) - {"games", "start_at"}
    if not shape_ok or not isinstance(raw.get("games"), list):
        raise ApiError(400, "VALIDATION_ERROR", "the body is {\"games\": [CreateGame, ...], \"start_at\"?}",
                       errors={"_schema": ["games is a list; start_at an RFC 3339 time"]})
    if not 1 <= len(raw["games"]) <= MAX_BULK:
        raise ApiError(400, "BULK_TOO_LARGE", f"a bulk create makes 1 to {MAX_BULK} games",
                       max_games=MAX_BULK)
    if "start_at" in raw and raw["start_at"] is None:
        raise ApiError(400, "BAD_START_AT", "start_at is an RFC 3339 time (leave it out: clocks start now)")
    start_ms = _start_at(raw.get("start_at"))
    bodies = []
    for index, one in enumerate(raw["games"]):
        try:
            bodies.append(load_create(one))
        except ValidationError as exc:
            problem = invalid(exc)
            raise ApiError(400, problem.code, f"game {index}: {problem.detail}", index=index,
                           **problem.extra) from None
    # A retry of the whole request (its Idempotency-Key) makes each game's answer again; only
    # the games it would make anew count against the quota.
    key = idempotency_key()
    fresh = 0 if who.key is None else sum(
        1 for index, one in enumerate(raw["games"])
        if not games().is_retry(one, None if key is None else f"{key}:{index}"))
    charge = hosted.charge_creates(who, fresh)
    made: list[Created] = []
    try:
        for index, (body, one) in enumerate(zip(bodies, raw["games"], strict=True)):
            try:
                one_key = None if key is None else f"{key}:{index}"
                made.append(create_one(body, one, one_key, who, clock_start_ms=start_ms, record=False))
            except GameError as exc:
                exc.extra.setdefault("index", index)
                raise
    except BaseException:
        # All or none: the games made before the refusal go, leaving no trace (those a retry
        # was answered with again were an earlier request's, and stay).
        for index, created in enumerate(made):
            games().undo_create(created, None if key is None else f"{key}:{index}")
        charge.refund()
        raise
    charge.refund(charge.count - sum(1 for c in made if not c.replayed))
    for created in made:
        _record(who, created)
    return json_response({"games": [orjson.loads(c.body) for c in made]}, 201)


def _start_at(value: Any) -> int | None:
    if value is None:
        return None
    refused = ApiError(400, "BAD_START_AT", "start_at is an RFC 3339 time, e.g. 2027-01-01T18:00:00Z")
    if not isinstance(value, str) or len(value) > 40:
        raise refused
    try:
        at = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise refused from None
    if at.tzinfo is None:
        raise ApiError(400, "BAD_START_AT", "start_at names its offset (Z or +hh:mm)")
    return int(at.timestamp() * 1000)


# -- listing --------------------------------------------------------------------------------------


@bp.get("/games")
def list_games() -> Response:
    hosted, who = tenancy(), caller()
    args = request.args
    status, map_id = args.get("status"), args.get("map")
    if status is not None and status not in STATUSES:
        raise ApiError(400, "BAD_QUERY", "status is active or finished")
    if map_id is not None and map_id not in MAP_IDS:
        raise ApiError(400, "BAD_QUERY", f"map is one of {', '.join(MAP_IDS)}")
    limit_text = args.get("limit", "50")
    if not LIMIT.fullmatch(limit_text) or not 1 <= int(limit_text) <= MAX_LIST:
        raise ApiError(400, "BAD_QUERY", f"limit is 1 to {MAX_LIST}")
    listed, cursor = hosted.page(who, games().store, games().archive, args.get("cursor"), int(limit_text),
                                 Filters(status=status, map_id=map_id))
    return json_response({"games": listed, "next_cursor": cursor})


# -- deleting -------------------------------------------------------------------------------------


@bp.delete("/games/<game_id>")
def delete_game(game_id: str) -> Response:
    game_id = game_id_of(game_id)
    hosted, who = tenancy(), caller()
    found = games().store.meta(game_id)
    if found is None:
        games().load(game_id)  # put back from the archive if it is there; else 404 or 410
        found = games().store.meta(game_id)
        if found is None:
            raise not_found(game_id)
    meta = orjson.loads(found[1])
    if who.key is not None:
        hosted.need(who, "games:write")
        if not hosted.owns(who, meta):
            raise not_found(game_id)  # another tenant's game is none of this caller's business
    else:
        header = request.headers.get("Authorization")
        if header is None and meta.get("tenant") is not None:
            hosted.need(who, "games:write")
        admin.verify_admin(admin.admin_bearer(header, game_id), meta)
    games().delete(game_id)
    if meta.get("tenant") is not None:
        hosted.ledger.remove_game(meta["tenant"], game_id)
        for hook in meta.get("webhooks") or []:  # gone with the game: no longer the tenant's
            hosted.release_webhook(meta, game_id, hook["id"])
    g.game_id = game_id
    return Response(status=204)


# -- usage ----------------------------------------------------------------------------------------


@bp.get("/usage")
def usage() -> Response:
    today = dt.datetime.now(dt.UTC).date().isoformat()
    start, end = request.args.get("from", today), request.args.get("to", today)
    if len(start) > 10 or len(end) > 10:
        raise ApiError(400, "BAD_DATE", "from and to are dates, YYYY-MM-DD")
    return json_response(tenancy().usage(caller(), start, end))
