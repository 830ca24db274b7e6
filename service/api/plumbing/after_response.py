"""Work a request leaves for after its response: the referee's `Games.defer` (listing the next
seat's moves once a move is committed, Games.list_ahead). It runs when the server closes the
response, after the last byte is written, so it never delays the answer; the request's access
log line and its duration are written before it. A failure of it is logged, never answered:
the work only saves a later request some time."""

from __future__ import annotations

import logging
from collections.abc import Callable

from flask import Flask, Response, g, has_request_context

from service.referee.games import Games

log = logging.getLogger(__name__)
Task = Callable[[], None]


def defer(task: Task) -> bool:
    """Runs `task` after the current request's response is sent; outside a request, not at all
    (nothing here waits on it). Returns whether it will run."""
    if not has_request_context():
        return False
    g.setdefault("after_response", []).append(task)
    return True


def _schedule(response: Response) -> Response:
    tasks: list[Task] | None = g.pop("after_response", None)
    if tasks:
        response.call_on_close(lambda: _run(tasks))
    return response


def _run(tasks: list[Task]) -> None:
    for task in tasks:
        try:
            task()
        except Exception:  # noqa: BLE001  # an optimisation's failure must not break the server
            log.warning("work after the response failed", exc_info=True)


def install(app: Flask, games: Games) -> None:
    games.defer = defer
    app.after_request(_schedule)
