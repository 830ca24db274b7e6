# Hand-written (not generated): live updates, which the generated `AosClient` inherits.
"""Live updates: `events()` follows a game's events stream and resumes by itself after any drop;
`wait()` long-polls the game view.

    for event in api.events(game_id):              # every version from the start, then live
        print(event.version, event.seat, event.move.type, event.game.active_seat)

    view = api.wait(game_id, 7, timeout=120)       # the view once the game is past version 7
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import requests

from .errors import error_for
from .models import GameEvent

if TYPE_CHECKING:
    from .models import GameView

NDJSON = "application/x-ndjson"
RETRY_STATUSES = frozenset({429, 503})
MAX_WAIT = 60  # the longest `Prefer: wait` the service honours
DROPPED = (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError)


class LiveUpdates:
    """`events` and `wait`, on what the class they are mixed into has: the generated client's
    `session`, `base_url`, `timeout`, `user_agent`, `_sleep_before_retry` and `get_game`."""

    base_url: str
    session: requests.Session
    timeout: float
    user_agent: str

    def events(
        self,
        game_id: str,
        after: int | None = None,
        *,
        retries: int = 10,
        heartbeat_timeout: float = 45.0,
    ) -> Iterator[GameEvent]:
        """The game's events after version `after` (from its first move by default), oldest
        first, then each new one as it is committed; the iterator ends after the event that
        finishes the game.

        A dropped connection, a silent one (no byte, not even a heartbeat, for
        `heartbeat_timeout` seconds) or a stream the service closed early is reopened from the
        last event received (`Last-Event-ID`): no event is missed or repeated. Up to `retries`
        failed attempts in a row (connection errors, 429, 503), with backoff, before the last
        error is raised; other errors (404, 400) are raised at once. `GET
        /v1/games/{game_id}/events` (operationId `getGameEvents`), as NDJSON."""
        url = f"{self.base_url}/v1/games/{quote(str(game_id), safe='')}/events"
        position = after
        failures = 0
        while True:
            headers = {"Accept": NDJSON, "User-Agent": self.user_agent}
            if position is not None:
                headers["Last-Event-ID"] = str(position)
            try:
                response = self.session.get(url, headers=headers, stream=True,
                                            timeout=(self.timeout, heartbeat_timeout))
            except DROPPED:
                failures += 1
                if failures > retries:
                    raise
                self._sleep_before_retry(failures - 1, None)  # type: ignore[attr-defined]
                continue
            with response:
                if response.status_code == 204:  # finished, and nothing after `position`
                    return
                if response.status_code in RETRY_STATUSES and failures < retries:
                    failures += 1
                    self._sleep_before_retry(failures - 1, response)  # type: ignore[attr-defined]
                    continue
                if not 200 <= response.status_code < 300:
                    raise error_for(response)
                failures = 0
                try:
                    for line in response.iter_lines(chunk_size=1 << 16):
                        if not line:  # a heartbeat
                            continue
                        event = GameEvent.from_dict(json.loads(line))
                        position = event.version
                        yield event
                        if event.game.status == "finished":
                            return
                except DROPPED:
                    pass  # reopen at once, from the last event

    def wait(self, game_id: str, version: int, timeout: float = 30.0) -> GameView | None:
        """The game view as soon as the game is past `version`, or None if it is still at it
        after `timeout` seconds: a long-poll (`If-None-Match` with `Prefer: wait`), asked again
        every 60 s for longer timeouts."""
        deadline = time.monotonic() + timeout
        while True:
            seconds = min(MAX_WAIT, max(0, round(deadline - time.monotonic())))
            view: GameView | None = self.get_game(  # type: ignore[attr-defined]
                game_id, if_none_match=version,
                prefer=f"wait={seconds}" if seconds else None, timeout=seconds + self.timeout)
            if view is not None or seconds == 0:
                return view
            if not _waited(getattr(self, "last_response", None)):
                # A service that does not hold long-polls answered at once: poll gently.
                time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))


def _waited(response: Any) -> bool:
    return response is not None and "Preference-Applied" in response.headers
