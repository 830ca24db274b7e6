"""The HTTP resources of asynchronous play (openapi.yaml): undo, takeback with consent, and a
seat's programmed orders. Each needs the seat's token; the writes obey If-Match and
Idempotency-Key like moves."""

from __future__ import annotations

from flask import Blueprint, Response, request
from marshmallow import ValidationError, validate

from service.referee import correspondence, timeline
from service.referee.games import Applied

from ..checks import orders as order_checks
from ..checks.parts import (
    SEAT,
    games,
    if_match,
    invalid,
    json_body,
    seat_request,
    with_etag,
)
from ..checks.shapes import Strict, StrictInt
from ..responses import ApiError, etag, json_response, raw_json

bp = Blueprint("v1_async", __name__, url_prefix="/v1")

# Orders are a seat's secret: no cache, shared or private, may keep them.
PRIVATE = {"Cache-Control": "no-store"}


class TakebackSchema(Strict):
    to_version = StrictInt(required=True, validate=validate.Range(0, 1 << 40))


class EmptySchema(Strict):
    pass


TAKEBACK = TakebackSchema()
EMPTY = EmptySchema()


def body_of(schema: Strict, *, optional: bool = False) -> dict:
    if optional and not request.get_data():
        return {}
    try:
        return schema.load(json_body())
    except ValidationError as exc:
        raise invalid(exc) from None


def moved(applied: Applied) -> Response:
    return with_etag(raw_json(applied.body), applied.version)


# -- undo and takeback ---------------------------------------------------------------------------


@bp.post("/games/<game_id>/undo")
def undo(game_id: str) -> Response:
    asked = seat_request(game_id)
    body_of(EMPTY, optional=True)
    return moved(correspondence.undo(games(), asked.game_id, asked.seat, if_match=if_match(),
                                 idempotency_key=asked.key, stored=asked.stored))


@bp.post("/games/<game_id>/takeback")
def propose_takeback(game_id: str) -> Response:
    asked = seat_request(game_id)
    to_version = body_of(TAKEBACK)["to_version"]
    return moved(correspondence.propose_takeback(games(), asked.game_id, asked.seat, to_version,
                                             if_match=if_match(),
                                             idempotency_key=asked.key, stored=asked.stored))


@bp.post("/games/<game_id>/takeback/accept")
def accept_takeback(game_id: str) -> Response:
    asked = seat_request(game_id)
    body_of(EMPTY, optional=True)
    return moved(correspondence.answer_takeback(games(), asked.game_id, asked.seat, True,
                                            if_match=if_match(),
                                            idempotency_key=asked.key, stored=asked.stored))


@bp.post("/games/<game_id>/takeback/decline")
def decline_takeback(game_id: str) -> Response:
    asked = seat_request(game_id)
    body_of(EMPTY, optional=True)
    return moved(correspondence.answer_takeback(games(), asked.game_id, asked.seat, False,
                                            if_match=if_match(),
                                            idempotency_key=asked.key, stored=asked.stored))


# -- leaving the game ---------------------------------------------------------------------------


@bp.post("/games/<game_id>/resign")
def resign(game_id: str) -> Response:
    """The token's seat leaves the game, as if eliminated: a move of the game (timeline.RESIGN),
    made through the same compare-and-set as `POST …/moves`."""
    asked = seat_request(game_id)
    body_of(EMPTY, optional=True)
    applied = games().apply(asked.game_id, asked.seat, {"type": timeline.RESIGN},
                            if_match=if_match(),
                            idempotency_key=asked.key, stored=asked.stored, token=asked.token)
    return moved(applied)


# -- orders --------------------------------------------------------------------------------------


def own_seat(path_seat: str, seat: int) -> None:
    if not SEAT.fullmatch(path_seat):
        raise ApiError(400, "BAD_SEAT", "seat is an integer from 0 to 5")
    if int(path_seat) != seat:
        raise ApiError(403, "SEAT_MISMATCH", f"the token is seat {seat}'s, not seat {path_seat}'s")


@bp.get("/games/<game_id>/seats/<seat>/orders")
def get_orders(game_id: str, seat: str) -> Response:
    asked = seat_request(game_id)
    own_seat(seat, asked.seat)
    body = {"seat": asked.seat, "orders": correspondence.read_orders(asked.stored, asked.seat)}
    return json_response(body, headers=PRIVATE)


@bp.put("/games/<game_id>/seats/<seat>/orders")
def put_orders(game_id: str, seat: str) -> Response:
    asked = seat_request(game_id)
    own_seat(seat, asked.seat)
    try:
        standing = order_checks.load_orders(json_body())
    except ValidationError as exc:
        raise invalid(exc) from None
    applied = correspondence.set_orders(games(), asked.game_id, asked.seat, standing,
                                    if_match=if_match(), idempotency_key=asked.key,
                                    stored=asked.stored)
    return raw_json(applied.body, headers={**PRIVATE, "ETag": etag(applied.version)})


@bp.delete("/games/<game_id>/seats/<seat>/orders")
def delete_orders(game_id: str, seat: str) -> Response:
    asked = seat_request(game_id)
    own_seat(seat, asked.seat)
    correspondence.clear_orders(games(), asked.game_id, asked.seat, stored=asked.stored)
    return json_response({"seat": asked.seat, "orders": []}, headers=PRIVATE)

