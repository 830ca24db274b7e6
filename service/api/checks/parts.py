"""The parts of a request the routes read, checked as the contract bounds them: the game id of
the path, `Idempotency-Key`, `If-Match` / `If-None-Match`, the JSON body and the move in it, and
the seat a seat token speaks for (`seat_request`, the one way every seat route authenticates)."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from flask import Response
from marshmallow import ValidationError

from service.referee import tokens, whatif
from service.referee.games import Games
from service.store import Stored

from ..plumbing import bodies
from ..responses import ApiError, etag, strong_tags, well_formed_etags
from .shapes import UnknownMoveType, load_move, load_simulate

GAME_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
SEAT = re.compile(r"[0-5]")
VERSION_TAG = re.compile(r"[0-9]{1,12}")
IDEMPOTENCY_KEY = re.compile(r"[\x21-\x7e]{1,255}")
_ENVIRON_KEYS = {"If-Match": "HTTP_IF_MATCH", "If-None-Match": "HTTP_IF_NONE_MATCH"}


def games() -> Games:
    return bodies.this_app().extensions["aos.games"]


def game_id_of(value: str) -> str:
    if not GAME_ID.fullmatch(value):
        raise ApiError(404, "GAME_NOT_FOUND", "no game has that id")
    # For the logs: only an id of the valid form is ever written there. On g itself, not its
    # proxy (bodies.this_request says why).
    bodies.request_globals().game_id = value
    return value


def json_body() -> Any:
    return bodies.json_body()


def invalid(exc: ValidationError) -> ApiError:
    messages = exc.messages if isinstance(exc.messages, dict) else {"_schema": exc.messages}
    code = "UNKNOWN_MOVE_TYPE" if isinstance(exc, UnknownMoveType) else "VALIDATION_ERROR"
    return ApiError(400, code, "the body does not match the contract", errors=messages)


def header(environ_key: str) -> str | None:
    """A request header by its WSGI environ key (`HTTP_IF_MATCH`): what request.headers.get
    gives for it, without werkzeug's header view (a lookup that raises KeyError for an absent
    header, as most of these are)."""
    return bodies.this_request().environ.get(environ_key)


def idempotency_key() -> str | None:
    key = header("HTTP_IDEMPOTENCY_KEY")
    if key is None:
        return None
    if not IDEMPOTENCY_KEY.fullmatch(key):
        raise ApiError(400, "BAD_IDEMPOTENCY_KEY", "Idempotency-Key is 1-255 visible ASCII chars")
    return key


def precondition(name: str) -> str | None:
    """An If-Match / If-None-Match header, bounded as the contract says."""
    value = header(_ENVIRON_KEYS[name])
    if value is not None and len(value) > 1024:
        raise ApiError(400, "BAD_HEADER", f"{name} is at most 1024 characters")
    if value is not None and not well_formed_etags(value):
        # An unquoted `If-Match: 3` would match no tag and be answered "the game is at version
        # 3" by a 412: say what is wrong instead.
        example = f'{name}: "3"'
        raise ApiError(400, "BAD_ETAG", f"{name} takes quoted versions, e.g. {example} (not {value[:40]!r})")
    return value


def if_match() -> str | None:
    """The If-Match header of a write, bounded and checked, with weak tags left out: If-Match
    compares strongly (RFC 9110 13.1.1), so `W/"3"` never matches, even at version 3."""
    return strong_tags(precondition("If-Match"))


def read_move() -> tuple[dict, int | None]:
    try:
        return load_move(json_body())
    except ValidationError as exc:
        raise invalid(exc) from None


def read_simulation() -> whatif.Question:
    """A what-if's body; more moves than one plays are refused before any is read."""
    body = json_body()
    if isinstance(body, dict) and isinstance(body.get("moves"), list):
        whatif.check_count(len(body["moves"]), games().settings)
    try:
        return load_simulate(body)
    except ValidationError as exc:
        raise invalid(exc) from None


def with_etag(response: Response, version: int) -> Response:
    response.headers["ETag"] = etag(version)
    return response


class SeatRequest(NamedTuple):
    """A request made with a seat's token, authenticated: its game, the token's seat, the game
    as loaded, the token and the request's Idempotency-Key (and its move, when it sends one).
    Immutable; a named tuple, made for every seat request in a third of a frozen dataclass's time."""

    game_id: str
    seat: int
    stored: Stored
    token: str
    key: str | None
    move: dict | None = None


def seat_request(game_id: str, *, with_move: bool = False) -> SeatRequest:
    """Authenticate a request's seat token against the game, checking the request's parts in
    the order every seat route answers them: the token's form, the path's game id, the token's
    game, the Idempotency-Key, the move (`with_move`), then the token against the game's own.
    A move that names a seat must name the token's (403 SEAT_MISMATCH)."""
    token = tokens.bearer(header("HTTP_AUTHORIZATION"))
    game_id = game_id_of(game_id)
    token, token_seat = tokens.token_game(token, game_id)
    key = idempotency_key()
    move, body_seat = read_move() if with_move else (None, None)
    referee = games()
    stored = referee.load(game_id)
    seat = referee.authenticate(stored, token, token_seat)
    if body_seat is not None and body_seat != seat:
        raise ApiError(403, "SEAT_MISMATCH", f"the token is seat {seat}'s, not seat {body_seat}'s")
    return SeatRequest(game_id, seat, stored, token, key, move)
