"""The play page: one HTML page from which a seat plays (GET /v1/games/{id}/play), with its
script and style served beside it. The page is the same for everyone; the seat is the token's,
which the page reads from the URL fragment or has pasted in, and sends only in the
Authorization header of its requests (never in a URL)."""

from __future__ import annotations

from flask import Blueprint, Response

from service.referee.errors import not_found

from ..checks.parts import game_id_of, games
from ..pages import game_page, static_file

bp = Blueprint("play", __name__, url_prefix="/v1")

# The page loads and connects to nothing but the service: its script, its style, the board.
PLAY_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
            "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


@bp.get("/games/<game_id>/play")
def play_page(game_id: str) -> Response:
    game_id = game_id_of(game_id)
    if games().store.version(game_id) is None:
        raise not_found(game_id)
    # no-referrer: the page's requests never tell where it was loaded from (a fragment with a
    # token is never sent anyway, but a pasted URL might carry one in its query by mistake).
    return game_page("play", game_id, PLAY_CSP, **{"Referrer-Policy": "no-referrer"})


@bp.get("/play.js")
def play_script() -> Response:
    return static_file("play", "play.js")


@bp.get("/play.css")
def play_style() -> Response:
    return static_file("play", "play.css")
