"""The pages' own files (HTML, CSS, JavaScript), `play/` for the page a seat plays from and
`watch/` for the spectator's, and how they are answered: a game's page with the game id written
in and its Content-Security-Policy, the scripts and styles cached a few minutes. Their routes are
in ..routes (play, live)."""

from __future__ import annotations

import html
from functools import cache
from importlib import resources

from flask import Response

__all__ = ["game_page", "static_file"]

STATIC_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}


@cache
def read(page: str, name: str) -> str:
    return resources.files(__name__).joinpath(page, name).read_text(encoding="utf-8")


def game_page(page: str, game_id: str, csp: str, **headers: str) -> Response:
    """`page`'s HTML for `game_id` (escaped: it is written into the page), never cached stale."""
    body = read(page, "page.html").replace("{game_id}", html.escape(game_id))
    sent = {"Content-Security-Policy": csp, "Cache-Control": "no-cache",
            "X-Content-Type-Options": "nosniff", **headers}
    return Response(body, content_type="text/html; charset=utf-8", headers=sent)


def static_file(page: str, name: str) -> Response:
    """One of `page`'s scripts or styles: the same for every game, so caches may keep it a while."""
    content_type = STATIC_TYPES[name[name.rindex("."):]]
    headers = {"Cache-Control": "public, max-age=300", "X-Content-Type-Options": "nosniff"}
    return Response(read(page, name), content_type=content_type, headers=headers)
