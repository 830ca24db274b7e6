"""The HTTP resources of openapi.yaml: request parsing and response shaping around Games."""

from __future__ import annotations

import hashlib
from functools import cache

import orjson
from flask import Blueprint, Response, current_app, g, request
from marshmallow import ValidationError

from service.engine.errors import SetupError
from service.referee import admin, tokens
from service.referee.games import map_info, map_json, maps_json
from service.render import board_svg

from . import events
from .problems import ApiError
from .request_parts import (
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
    with_etag,
)
from .responses import etag, etag_matches, json_response, raw_json
from .schemas import load_create
from .tenancy import caller, tenancy
from .tenant_routes import create_one

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
    tenancy().charge_creates(who, 1)
    created = create_one(body, raw, key, who)
    g.game_id = created.game_id
    version = orjson.loads(created.body)["version"]
    headers = {"Location": f"/v1/games/{created.game_id}", "ETag": etag(version)}
    return raw_json(created.body, 201, headers)


@bp.get("/games/<game_id>")
def get_game(game_id: str) -> Response:
    game_id = game_id_of(game_id)
    if_none_match = precondition("If-None-Match")
    prefer = events.prefer_header()
    waited: dict[str, str] = {}
    if if_none_match is not None:
        # A 304 while the game is at that version; with `Prefer: wait=<s>`, a long-poll.
        unchanged, waited = events.not_modified(game_id, if_none_match, prefer)
        if unchanged is not None:
            return unchanged
    version, view = games().view(game_id)
    return with_etag(raw_json(view, headers=waited), version)


@bp.get("/games/<game_id>/legal-moves")
def get_legal_moves(game_id: str) -> Response:
    game_id = game_id_of(game_id)
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
    token = tokens.bearer(request.headers.get("Authorization"))
    game_id = game_id_of(game_id)
    token, token_seat = tokens.token_game(token, game_id)
    key = idempotency_key()
    move, body_seat = read_move()
    stored = games().load(game_id)
    seat = games().authenticate(stored, token, token_seat)
    if body_seat is not None and body_seat != seat:
        raise ApiError(403, "SEAT_MISMATCH", f"the token is seat {seat}'s, not seat {body_seat}'s")
    applied = games().apply(
        game_id,
        seat,
        move,
        if_match=if_match(),
        idempotency_key=key,
        stored=stored,
        token=token,  # the seat's first move claims it, in the same commit
    )
    return with_etag(raw_json(applied.body), applied.version)


@bp.post("/games/<game_id>/moves/validate")
def validate_move(game_id: str) -> Response:
    idempotency_key()  # checked like on every POST, then unused: a dry run changes nothing
    header = request.headers.get("Authorization")
    game_id = game_id_of(game_id)
    token = None
    if header is not None:
        token, token_seat = tokens.token_game(tokens.bearer(header), game_id)
    move, body_seat = read_move()
    stored = games().load(game_id)
    if token is not None:
        seat = games().authenticate(stored, token, token_seat)
        if body_seat is not None and body_seat != seat:
            raise ApiError(403, "SEAT_MISMATCH", f"the token is seat {seat}'s, not seat {body_seat}'s")
        admin.note_claimed(games().store, game_id, stored, seat, token)
    elif body_seat is not None:
        seat = body_seat
    else:
        raise ApiError(400, "SEAT_REQUIRED", "send a seat token or a seat field")
    verdict = games().validate(orjson.loads(stored.state), seat, move)
    return with_etag(json_response(verdict), stored.version)


@bp.get("/games/<game_id>/history")
def get_history(game_id: str) -> Response:
    version, body = games().history(game_id_of(game_id))
    return with_etag(raw_json(body), version)


@bp.get("/games/<game_id>/record")
def get_record(game_id: str) -> Response:
    version, record = games().record(game_id_of(game_id))
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
