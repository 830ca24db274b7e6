"""Games and their moves over HTTP: the maps, creating a game, its view, legal moves, moves and
their dry runs, history, record and board; health, readiness and the contract itself."""

from __future__ import annotations

import hashlib
import re
from functools import cache

import orjson
from flask import Blueprint, Response, current_app, g, request
from marshmallow import ValidationError

from service.engine.errors import SetupError
from service.referee import admin
from service.referee.games import map_info, map_json, maps_json
from service.render import board_svg

from ..checks.parts import (
    SEAT,
    VERSION_TAG,
    game_id_of,
    games,
    idempotency_key,
    if_match,
    invalid,
    json_body,
    precondition,
    read_move,
    read_simulation,
    seat_request,
    with_etag,
)
from ..checks.shapes import load_create
from ..plumbing import bodies, limits
from ..plumbing.tenancy import caller, tenancy
from ..responses import ApiError, etag, etag_matches, json_response, raw_json
from . import live
from .tenants import create_one

bp = Blueprint("v1", __name__, url_prefix="/v1")

# -- maps ----------------------------------------------------------------------------------------


# The maps never change within a release: caches may keep them a day, and revalidate by content.
MAPS_CACHE_CONTROL = "public, max-age=86400"


@cache
def content_tag(data: bytes) -> str:
    return '"' + hashlib.sha256(data).hexdigest()[:16] + '"'


def unchanging_json(data: bytes) -> Response:
    """A body that changes only with a release: ETag from its content, 304 to a matching
    If-None-Match."""
    headers = {"ETag": content_tag(data), "Cache-Control": MAPS_CACHE_CONTROL}
    wanted = precondition("If-None-Match")
    if wanted is not None:
        tags = {tag.strip().removeprefix("W/") for tag in wanted.split(",")}
        if "*" in tags or headers["ETag"] in tags:
            return Response(status=304, headers=headers)
    return raw_json(data, headers=headers)


@bp.get("/maps")
def list_maps() -> Response:
    return unchanging_json(maps_json())


@bp.get("/maps/<map>")
def get_map(**path: str) -> Response:
    # The parameter is named `map` in the contract, and openapi-core matches names.
    map_id = path["map"]
    try:
        data = map_json(map_id)
    except SetupError:
        raise ApiError(404, "MAP_NOT_FOUND", f"no map {map_id!r}") from None
    return unchanging_json(data)


# -- games ---------------------------------------------------------------------------------------


@bp.post("/games")
def create_game() -> Response:
    key = idempotency_key()
    raw = json_body()
    try:
        body = load_create(raw)
    except ValidationError as exc:
        raise invalid(exc) from None
    bound = games().settings.max_record_moves
    if "record" in body and len(body["record"]["moves"]) > bound:
        raise ApiError(400, "RECORD_TOO_LONG", f"this service replays records of at most {bound} moves",
                       max_moves=bound)
    who = caller()
    tenancy().may_create(who)
    fresh = 0 if who.key is None or games().is_retry(raw, key) else 1
    charge = tenancy().charge_creates(who, fresh)
    try:
        created = create_one(body, raw, key, who)
    except BaseException:
        charge.refund()
        raise
    if created.replayed:
        charge.refund()  # a retry of the same key got in first: its game was counted then
    g.game_id = created.game_id
    version = orjson.loads(created.body)["version"]
    headers = {"Location": f"/v1/games/{created.game_id}", "ETag": etag(version)}
    return raw_json(created.body, 201, headers)


@bp.get("/games/<game_id>")
def get_game(game_id: str) -> Response:
    game_id = game_id_of(game_id)
    if_none_match = precondition("If-None-Match")
    prefer = live.prefer_header()
    waited: dict[str, str] = {}
    if if_none_match is not None:
        # A 304 while the game is at that version; with `Prefer: wait=<s>`, a long-poll.
        unchanged, waited = live.not_modified(game_id, if_none_match, prefer)
        if unchanged is not None:
            return unchanged
    version, view = games().view(game_id)
    return with_etag(raw_json(view, headers=waited), version)


_SEAT_QUERY = re.compile(rb"seat=([0-5])")


@bp.get("/games/<game_id>/legal-moves")
def get_legal_moves(game_id: str) -> Response:
    game_id = game_id_of(game_id)
    # The query every client sends, `seat=N`, read as it is; any other is parsed and judged.
    quick = _SEAT_QUERY.fullmatch(bodies.this_request().query_string)  # not its proxy's
    if quick is not None:
        seat = quick[1].decode()
    else:
        unknown = [name for name in request.args if name != "seat"]
        if unknown:
            raise ApiError(400, "BAD_QUERY", f"legal-moves takes only seat, not {unknown[0][:40]!r}")
        seat = request.args.get("seat")
        if seat is None or not SEAT.fullmatch(seat) or len(request.args.getlist("seat")) > 1:
            raise ApiError(400, "BAD_SEAT", "seat is a required integer from 0 to 5, given once")
    version, body = games().legal_moves(game_id, int(seat))
    return with_etag(raw_json(body), version)


@bp.post("/games/<game_id>/moves")
def apply_move(game_id: str) -> Response:
    asked = seat_request(game_id, with_move=True)
    assert asked.move is not None
    applied = games().apply(
        asked.game_id,
        asked.seat,
        asked.move,
        if_match=if_match(),
        idempotency_key=asked.key,
        stored=asked.stored,
        token=asked.token,  # the seat's first move claims it, in the same commit
    )
    return with_etag(raw_json(applied.body), applied.version)


@bp.post("/games/<game_id>/moves/validate")
def validate_move(game_id: str) -> Response:
    """A dry run: with a seat token, the token's seat (authenticated as a move would be); without
    one, the seat the body names."""
    if request.headers.get("Authorization") is not None:
        asked = seat_request(game_id, with_move=True)
        game_id, seat, stored, move = asked.game_id, asked.seat, asked.stored, asked.move
        admin.note_claimed(games().store, game_id, stored, seat, asked.token)
    else:
        idempotency_key()  # checked like on every POST, then unused: a dry run changes nothing
        game_id = game_id_of(game_id)
        move, body_seat = read_move()
        stored = games().load(game_id)
        if body_seat is None:
            raise ApiError(400, "SEAT_REQUIRED", "send a seat token or a seat field")
        seat = body_seat
    assert move is not None
    verdict = games().validate(orjson.loads(stored.state), seat, move)
    return with_etag(json_response(verdict), stored.version)


@bp.post("/games/<game_id>/simulate")
def simulate(game_id: str) -> Response:
    """What-if: moves played on a copy of the game (referee/whatif.py); nothing is written.
    No token is needed (the answer holds only what anyone may see); one that is sent is
    authenticated, so that only a real seat's token has a rate-limit bucket of its own."""
    if request.headers.get("Authorization") is not None:
        game_id = seat_request(game_id).game_id
    else:
        idempotency_key()  # checked like on every POST, then unused: nothing is written
        game_id = game_id_of(game_id)
    version, body = games().simulate(game_id, read_simulation())
    return with_etag(raw_json(body), version)


@bp.get("/games/<game_id>/history")
def get_history(game_id: str) -> Response:
    game_id = game_id_of(game_id)
    limits.spend_reads(limits.log_read_cost(games().version(game_id)))  # before the log is read
    version, body = games().history(game_id)
    return with_etag(raw_json(body), version)


@bp.get("/games/<game_id>/record")
def get_record(game_id: str) -> Response:
    game_id = game_id_of(game_id)
    limits.spend_reads(limits.log_read_cost(games().version(game_id)))
    version, record = games().record(game_id)
    return with_etag(json_response(record), version)


@bp.get("/games/<game_id>/board.svg")
def get_board(game_id: str) -> Response:
    game_id = game_id_of(game_id)
    unknown = sorted(set(request.args) - {"coords", "v"})
    if unknown:
        raise ApiError(400, "BAD_QUERY", f"board.svg takes only coords and v, not {unknown[0][:40]!r}")
    coords = request.args.get("coords", "0")
    if coords not in ("0", "1"):
        raise ApiError(400, "BAD_QUERY", "coords is 0 or 1")
    if not VERSION_TAG.fullmatch(request.args.get("v", "0")):
        raise ApiError(400, "BAD_QUERY", "v is a version: digits")
    if_none_match = precondition("If-None-Match")
    if if_none_match is not None:
        # The picture changes only with the version: a page that has it is told so in a few bytes.
        version = games().version(game_id)
        if etag_matches(if_none_match, version):
            return Response(status=304, headers={"ETag": etag(version)})
    version, data = games().view(game_id)
    view = orjson.loads(data)
    # The log only grows: its entry `version - 1` is the move that made this view.
    last = None
    if version > 0:
        entry = games().store.history(game_id, version - 1, version) or []
        last = orjson.loads(entry[0]) if entry else None
    svg = board_svg(view, map_info(view["map"]), last=last, coords=coords == "1")
    return with_etag(Response(svg, content_type="image/svg+xml; charset=utf-8"), version)


# -- the service ---------------------------------------------------------------------------------


@bp.get("/health")
def health() -> Response:
    return json_response({"status": "ok"})


@bp.get("/ready")
def ready() -> Response:
    store = games().store
    store.ping()
    return json_response({"status": "ready", "store": store.kind})


@bp.get("/openapi.yaml")
def openapi() -> Response:
    return Response(current_app.extensions["aos.contract"], content_type="application/yaml")
