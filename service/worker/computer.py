"""The computer seats' moves: the clock job hands over each game whose deciding seat is a
computer's (service/referee/bots.py), and a search thread of this worker plays it.

The seat stays claimed in the clock set meanwhile, under a lease of its own (the search's cap and
a margin), so a worker killed mid-search leaves the seat to another once that lease runs out.
The move goes through Games.apply with If-Match on the version searched and `by="bot"`: a second
worker that takes the seat over makes the same move (levels.choose is seeded by the position),
and whichever commits second finds the version moved and changes nothing. The commit of the move
sets the next decision's clock, due at once again if the next seat is a computer's too.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from service.engine.errors import CODES as RULE_CODES
from service.engine.layout import State
from service.referee import bots
from service.referee.conditions import etag
from service.referee.errors import GameError
from service.referee.games import Games
from service.store import ClaimedClock, Stored

from . import metrics
from .defaults import default_move
from .searches import SearchPool, bot_move

log = logging.getLogger(__name__)

DEFER_SECONDS = 0.2  # every search thread busy: the seat is due again this much later
RETRY_SECONDS = 5.0  # a search or commit that failed (a bug, the store away) is tried again then


class Computer:
    """Plays computer seats as the clock job hands them over."""

    def __init__(self, games: Games, pool: SearchPool, *, max_ms: int, lease_seconds: float,
                 now: Callable[[], float] = time.time) -> None:
        self.games = games
        self.store = games.store
        self.pool = pool
        self.max_ms = max_ms
        self.lease_seconds = lease_seconds
        self.now = now

    def take(self, claimed: ClaimedClock, stored: Stored, state: State, seat: int, level: int) -> str:
        """Starts the seat's search in a thread, or puts the seat back a moment when every
        thread is busy. Returns the clock job's outcome for the metric."""
        game_id = claimed.game_id
        if self.pool.free() <= 0:
            self.store.set_clock(game_id, claimed.lease, self.now() + DEFER_SECONDS)
            return "bot_deferred"
        lease = self.now() + self.lease_seconds
        if not self.store.set_clock(game_id, claimed.lease, lease):
            return "moved"  # a commit set the clock anew since the claim
        self.pool.submit(lambda: self.play(game_id, stored, state, seat, level, lease))
        return "bot_searching"

    def play(self, game_id: str, stored: Stored, state: State, seat: int, level: int, lease: float) -> None:
        started = time.perf_counter()
        outcome = "failed"
        try:
            move = self.pool.compute(bot_move, state, seat, level, stored.version, self.max_ms)
            self.games.apply(game_id, seat, move, if_match=etag(stored.version), idempotency_key=None,
                             stored=stored, by=bots.BY)
            outcome = "bot_applied"
            log.info("computer seat moved", extra={"fields": {
                "event": "bot_move", "game_id": game_id, "version": stored.version + 1, "seat": seat,
                "level": level, "move": move["type"],
                "ms": round((time.perf_counter() - started) * 1000)}})
        except GameError as exc:
            if exc.code == "VERSION_MISMATCH":
                outcome = "moved"  # another worker's search of the same seat came first
            elif exc.code in ("GAME_NOT_FOUND", "GAME_DELETED"):
                self.store.set_clock(game_id, lease, None)
                outcome = "cleared"
            elif exc.code in RULE_CODES:
                # The rules refused the search's move (a bug): the clock's default move instead,
                # so that a game never waits on a seat nobody else can play.
                outcome = self._by_default(game_id, stored, state, seat, lease, exc.code)
            else:
                self._failed(game_id, stored.version, lease, exc.code)
        except Exception:
            log.exception("computer seat failed",
                          extra={"fields": {"event": "bot_failed", "game_id": game_id}})
            self._failed(game_id, stored.version, lease, "error")
        finally:
            metrics.CLOCK_MOVES.labels(outcome=outcome).inc()
            metrics.SEARCH_SECONDS.labels(kind="bot").observe(time.perf_counter() - started)

    def _by_default(self, game_id: str, stored: Stored, state: State, seat: int, lease: float,
                    refused: str) -> str:
        log.error("computer seat's move refused; default move made", extra={"fields": {
            "event": "bot_refused", "game_id": game_id, "version": stored.version, "code": refused}})
        move = default_move(state, seat)
        if move is None:
            self._failed(game_id, stored.version, lease, refused)
            return "failed"
        try:
            self.games.apply(game_id, seat, move, if_match=etag(stored.version), idempotency_key=None,
                             stored=stored, by=bots.BY)
        except GameError as exc:
            if exc.code == "VERSION_MISMATCH":
                return "moved"
            self._failed(game_id, stored.version, lease, exc.code)
            return "failed"
        return "bot_applied"

    def _failed(self, game_id: str, version: int, lease: float, code: str) -> None:
        log.error("computer seat failed", extra={"fields": {
            "event": "bot_failed", "game_id": game_id, "version": version, "code": code}})
        try:
            self.store.set_clock(game_id, lease, self.now() + RETRY_SECONDS)
        except Exception:  # the store is away: the lease runs out and the seat is taken again
            log.warning("could not put the computer seat back", extra={"fields": {"game_id": game_id}})
