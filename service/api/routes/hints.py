"""Hints over HTTP: `POST /v1/games/{id}/hints` asks, `GET …/hints/{hint_id}` reads (a long-poll
with `Prefer: wait`). The search runs in the worker (service/referee/hints.py): a request here
only records, queues and reads, and a long-poll waits on the game's notices and the store, never
on a search."""

from __future__ import annotations

import time

import orjson
from flask import Blueprint, Response, request
from marshmallow import ValidationError, validate

from service.admission import client_gone
from service.referee import tokens
from service.referee.hints import Hints

from ..checks.parts import game_id_of, games, invalid, json_body
from ..checks.shapes import Strict, StrictInt, seat_field
from ..responses import raw_json
from .live import live, prefer_header, preferred_wait

bp = Blueprint("v1_hints", __name__, url_prefix="/v1")

PRIVATE = {"Cache-Control": "no-store"}  # a seat's hint is its own: no cache may keep it
# How often a long-poll looks at a pending hint (the worker keeps it): soon at first (a short
# search), then every POLL_SECONDS.
FIRST_POLL_SECONDS = 0.05
POLL_SECONDS = 0.25


class HintSchema(Strict):
    seat = seat_field(required=True)
    budget_ms = StrictInt(validate=validate.Range(1, 600_000))


HINT = HintSchema()


def hints() -> Hints:
    return Hints(games())


def hint_url(game_id: str, hint_id: str) -> str:
    return f"/v1/games/{game_id}/hints/{hint_id}"


@bp.post("/games/<game_id>/hints")
def ask_hint(game_id: str) -> Response:
    token = tokens.bearer(request.headers.get("Authorization"))
    game_id = game_id_of(game_id)
    tokens.token_game(token, game_id)  # the token's form and game before the body, as every seat route
    try:
        body = HINT.load(json_body())
    except ValidationError as exc:
        raise invalid(exc) from None
    ready, hint = hints().ask(game_id, token, body["seat"], body.get("budget_ms"))
    hint_id = orjson.loads(hint)["hint_id"]
    return raw_json(hint, 200 if ready else 202, {**PRIVATE, "Location": hint_url(game_id, hint_id)})


@bp.get("/games/<game_id>/hints/<hint_id>")
def get_hint(game_id: str, hint_id: str) -> Response:
    token = tokens.bearer(request.headers.get("Authorization"))
    game_id = game_id_of(game_id)
    status, hint = hints().read(game_id, token, hint_id)
    wait = preferred_wait(prefer_header())
    if status != "pending" or not wait:
        return raw_json(hint, headers=PRIVATE)
    wait = min(wait, live().settings.long_poll_max)
    headers = {**PRIVATE, "Preference-Applied": f"wait={wait}"}
    deadline = time.monotonic() + wait
    # The game's notices wake it when the game moves (the hint goes stale); the worker's answer
    # is looked for every POLL_SECONDS, one read of the store each.
    poll = FIRST_POLL_SECONDS
    with live().hub.watch(game_id) as watch:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or live().hub.stopping:
                return raw_json(hint, headers=headers)
            watch.clear()
            poll = min(poll * 2, POLL_SECONDS)
            if not watch.wait(min(remaining, poll)) and client_gone(request.environ):
                return raw_json(hint, headers=headers)
            status, hint = hints().read(game_id, token, hint_id)
            if status != "pending":
                return raw_json(hint, headers=headers)
