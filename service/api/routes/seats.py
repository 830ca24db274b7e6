"""The seats of a game, for its creator (with the game-admin token): which are claimed, and
reissuing a seat's token when a player lost it or it leaked (the old one stops working at once,
and the seat's programmed orders and webhooks, which whoever held the old token may have set up,
are cleared in the same write).

    GET  /v1/games/{game_id}/seats                -> {"seats": [{seat, name, claimed}]}
    POST /v1/games/{game_id}/seats/{seat}/token   -> {seat, name, token}   (the new token, shown once)
"""

from __future__ import annotations

import base64
import hashlib
import hmac

import orjson
from flask import Blueprint, Response, request

from service.referee import admin, bots, orders, tokens
from service.store import Outcome

from ..checks.parts import SEAT, game_id_of, games, idempotency_key
from ..responses import ApiError, json_response

bp = Blueprint("v1_seats", __name__, url_prefix="/v1")

REISSUE_ATTEMPTS = 8


def _names(state: bytes) -> list[str]:
    return [p["name"] for p in orjson.loads(state)["players"]]


def reissued_secret(admin_token: str, idempotency_key: str | None, seat: int) -> str:
    """A new seat secret: random, or under an idempotency key derived from the admin token and the
    key, so that a repeat of the request answers the same token and changes nothing more."""
    if idempotency_key is None:
        return tokens.new_secret()
    mac = hmac.new(admin_token.encode(), f"reissue:{seat}:{idempotency_key}".encode(), hashlib.sha256)
    return base64.urlsafe_b64encode(mac.digest()).rstrip(b"=").decode()


@bp.get("/games/<game_id>/seats")
def list_seats(game_id: str) -> Response:
    game_id = game_id_of(game_id)
    token = admin.admin_bearer(request.headers.get("Authorization"), game_id)
    stored = games().load(game_id)
    meta = orjson.loads(stored.meta)
    admin.verify_admin(token, meta)
    claimed = admin.claimed(meta)
    names = _names(stored.state)
    computer = bots.of_meta(meta)
    seats = [{"seat": i, "name": name, "claimed": i in claimed,
              **({"bot": {"level": computer[i]}} if i in computer else {})} for i, name in enumerate(names)]
    return json_response({"seats": seats})


@bp.post("/games/<game_id>/seats/<seat>/token")
def reissue_token(game_id: str, seat: str) -> Response:
    game_id = game_id_of(game_id)
    if not SEAT.fullmatch(seat):
        raise ApiError(400, "BAD_SEAT", "seat is an integer from 0 to 5")
    number = int(seat)
    token = admin.admin_bearer(request.headers.get("Authorization"), game_id)
    key = idempotency_key()
    stored = games().load(game_id)
    admin.verify_admin(token, orjson.loads(stored.meta))
    names = _names(stored.state)
    if number >= len(names):
        raise ApiError(400, "NO_SUCH_SEAT", f"this game has no seat {number}")
    if bots.level_of(orjson.loads(stored.meta), number) is not None:
        # A token would let a person move for the seat while the worker plays it too.
        raise ApiError(422, "SEAT_IS_COMPUTER", f"seat {number} is played by the computer: it has no token")
    new_token = tokens.make_token(game_id, number, reissued_secret(token, key, number))
    new_hash = tokens.digest(new_token)
    answer = {"seat": number, "name": names[number], "token": new_token}
    raw = stored.meta
    for _ in range(REISSUE_ATTEMPTS):
        meta = orjson.loads(raw)
        if meta["tokens"][number] == new_hash:
            return json_response(answer)  # a repeat (same key), or a retried write that landed
        hashes = list(meta["tokens"])
        hashes[number] = new_hash
        new = {**meta, "tokens": hashes, "claimed": sorted(admin.claimed(meta) - {number})}
        # What the old token set up goes with it: a leaked token's orders would go on playing
        # for the seat, and its webhooks go on telling the seat's news to whoever holds it.
        new = orders.with_book(new, {s: o for s, o in orders.book_of(new).items() if s != str(number)})
        hooks = [h for h in new.get("webhooks") or [] if h["seat"] != number]
        new = {k: v for k, v in new.items() if k != "webhooks"} | ({"webhooks": hooks} if hooks else {})
        outcome = games().store.replace_meta(game_id, expected=raw, meta=orjson.dumps(new))
        if outcome is Outcome.APPLIED:
            return json_response(answer)
        if outcome is Outcome.MISSING:
            break
        raw = games().load(game_id).meta  # a claim or another reissue got in first
    else:
        raise ApiError(429, "CONTENTION", "the seats changed too often meanwhile; retry",
                       headers={"Retry-After": "1"})
    raise ApiError(404, "GAME_NOT_FOUND", f"no game {game_id!r} (never created, or expired)")
