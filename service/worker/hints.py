"""The hint job: takes the searches the API queued (service/referee/hints.py) and runs each in a
search thread of this worker, for the hint's budget and never more than the host's cap.

A search is claimed under a lease (the cap and a margin): a worker killed mid-search lets it run
out, and another takes the hint over. A hint whose game has moved on by the time it is taken is
dropped unsearched: its answer would be stale before it was given.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable

import orjson

from service.engine import game
from service.referee import hints
from service.referee.games import Games
from service.store import Delivery

from . import metrics
from .searches import SearchPool, hint_moves

log = logging.getLogger(__name__)

RETRY_SECONDS = 2.0  # a search that failed (the store away) is taken again this much later
LEASE_MARGIN_SECONDS = 10.0  # beyond the cap: the candidates' and the answer's own time


class HintJob:
    name = "hints"

    def __init__(self, games: Games, pool: SearchPool, now: Callable[[], float] = time.time) -> None:
        self.games = games
        self.store = games.store
        self.settings = games.settings
        self.pool = pool
        self.now = now

    def run_once(self) -> int:
        free = self.pool.free()
        if free <= 0:
            return 0
        now = self.now()
        lease = now + self.settings.hint_max_ms / 1000 + LEASE_MARGIN_SECONDS
        claimed = self.store.claim_deliveries(now, lease, free, queue=hints.QUEUE)
        for job in claimed:
            self.pool.submit(functools.partial(self.answer, job))
        return len(claimed)

    def answer(self, claimed: Delivery) -> None:
        started = time.perf_counter()
        outcome = "failed"
        try:
            outcome = self._answer(claimed)
            self.store.finish_delivery(claimed)
        except Exception:
            log.exception("hint failed",
                          extra={"fields": {"event": "hint_failed", "game_id": claimed.game_id}})
            try:
                self.store.finish_delivery(claimed, retry_at=self.now() + RETRY_SECONDS)
            except Exception:  # the store is away: the lease runs out and the hint is taken again
                log.warning("could not put the hint back", extra={"fields": {"game_id": claimed.game_id}})
        finally:
            metrics.HINTS.labels(outcome=outcome).inc()
            if outcome == "done":
                metrics.SEARCH_SECONDS.labels(kind="hint").observe(time.perf_counter() - started)

    def _answer(self, claimed: Delivery) -> str:
        job = orjson.loads(claimed.job)
        game_id, version, seat = claimed.game_id, job["version"], job["seat"]
        stored = self.store.load(game_id)
        if stored is None or stored.version != version:
            return "stale"
        state = orjson.loads(stored.state)
        if game.active_seat(state) != seat:
            return "stale"
        budget = min(job["budget_ms"], self.settings.hint_max_ms)
        started = time.perf_counter()
        found = self.pool.compute(hint_moves, state, seat, version, budget, hints.TOP)
        hint_id = hints.hint_id_of(version, seat)
        body = hints.answer(hint_id, "done", version, seat, budget, hints.ranked(state, seat, found))
        self.store.keep(game_id, hints.kept_name(seat), version, body, self.settings.hint_ttl)
        log.info("hint searched", extra={"fields": {
            "event": "hint", "game_id": game_id, "version": version, "seat": seat,
            "visits": sum(visits for _, _, visits in found),
            "ms": round((time.perf_counter() - started) * 1000)}})
        return "done"
