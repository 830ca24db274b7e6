"""The clock job: when a decision's deadline passes, the seat's default move is made for it.

A worker claims the clocks that ran out (each is held under a lease meanwhile, so other workers
leave it alone unless this one dies), and for each reads the game, works out the deadline of
the decision it is at, and if that has passed applies the default move (service/worker/
defaults.py) through Games.apply with `by="clock"` and If-Match on that version: a firing that
comes late (a move got in first) or twice (another worker took the clock over) finds another
version and changes nothing. The commit of the move sets the next decision's clock.

A game whose deciding seat is a computer's has its clock due at once (service/referee/bots.py):
this job hands it to the search threads (computer.py) instead of making a default move.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import orjson

from service.engine import game
from service.referee import bots, clocks
from service.referee.conditions import etag
from service.referee.errors import GameError
from service.referee.games import Games
from service.store import ClaimedClock

from . import metrics
from .computer import Computer
from .defaults import default_move

log = logging.getLogger(__name__)

RETRY_SECONDS = 60.0  # a clock whose move failed (a bug, contention) is tried again this much later


class ClockJob:
    name = "clocks"

    def __init__(self, games: Games, *, lease_seconds: float = 60.0, per_shard: int = 4,
                 now: Callable[[], float] = time.time, computer: Computer | None = None) -> None:
        self.games = games
        self.computer = computer
        self.store = games.store
        self.lease_seconds = lease_seconds
        self.per_shard = per_shard
        self.now = now

    def run_once(self) -> int:
        now = self.now()
        claimed = self.store.claim_clocks(now, now + self.lease_seconds, self.per_shard)
        for clock in claimed:
            outcome = self.fire(clock)
            metrics.CLOCK_MOVES.labels(outcome=outcome).inc()
        return len(claimed)

    def fire(self, claimed: ClaimedClock) -> str:
        game_id = claimed.game_id
        stored = self.store.load(game_id)
        if stored is None:
            self.store.set_clock(game_id, claimed.lease, None)
            return "cleared"
        meta = orjson.loads(stored.meta)
        clock = clocks.of_meta(meta)
        state = orjson.loads(stored.state)
        turn = bots.deciding(meta, state)
        if turn is not None and self.computer is not None:
            return self.computer.take(claimed, stored, state, *turn)
        last = self.store.history(game_id, stored.version - 1, stored.version) if stored.version else []
        since = clocks.since_ms(clock, orjson.loads(last[0]) if last else None)
        due = clocks.deadline_ms(clock, state, since)
        seat = game.active_seat(state)
        if due is None or seat is None:
            self.store.set_clock(game_id, claimed.lease, None)
            return "cleared"
        if due > self.now() * 1000:
            # Not run out: the clock set was ahead of the game (it cannot be, unless edited by
            # hand). Put back the decision's own deadline, unless a commit has set one since.
            self.store.set_clock(game_id, claimed.lease, clocks.deadline_seconds(due))
            return "early"
        move = default_move(state, seat)
        assert move is not None  # the deciding seat always has a legal move
        try:
            self.games.apply(game_id, seat, move, if_match=etag(stored.version), idempotency_key=None,
                             stored=stored, by="clock")
        except GameError as exc:
            if exc.code == "VERSION_MISMATCH":
                return "moved"  # a move came first; its commit set the clock anew
            if exc.code == "GAME_NOT_FOUND":
                self.store.set_clock(game_id, claimed.lease, None)
                return "cleared"
            log.error("clock move failed", extra={"fields": {
                "event": "clock_failed", "game_id": game_id, "version": stored.version,
                "code": exc.code, "detail": exc.detail}})
            self.store.set_clock(game_id, claimed.lease, self.now() + RETRY_SECONDS)
            return "failed"
        log.info("clock ran out", extra={"fields": {
            "event": "clock_move", "game_id": game_id, "version": stored.version + 1, "seat": seat,
            "move": move["type"]}})
        return "applied"
