"""Hints: a seat asks for the best moves of its current decision, and the worker searches them.

The API never searches. `ask` records the hint as pending and queues a search in the store's
"searches" queue (claimed under a lease by one worker at a time, like a webhook delivery); the
worker (service/worker/hints.py) runs the search bot (service/sim/search.py) for the hint's
budget, capped by the host (`AOS_HINT_MAX_MS`), and keeps the answer. `read` answers from what is
kept.

One hint per seat and version: its id is `<version>-<seat>`, and asking again at that version
answers the same hint (searched once, however often it is asked). The answer is kept beside the
game under `hint:<seat>` at its version (GameStore.keep): once the game moves past that version
the hint is `stale`, and what it said is no longer read back.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence

import orjson

from service.engine import game, words
from service.engine.errors import IllegalMove
from service.engine.layout import GivenMove, State
from service.store import Delivery, Stored

from . import tokens
from .errors import GameError
from .games import Games, illegal

QUEUE = "searches"
HINT_ID = re.compile(r"([0-9]{1,12})-([0-5])", re.ASCII)
TOP = 3  # moves an answer holds at most


def kept_name(seat: int) -> str:
    return f"hint:{seat}"


def hint_id_of(version: int, seat: int) -> str:
    return f"{version}-{seat}"


def search_id(game_id: str, hint_id: str) -> str:
    """The search's id in the queue: the game's id and the hint's (one per game, seat, version)."""
    return f"{game_id}/{hint_id}"


def answer(hint_id: str, status: str, version: int, seat: int, budget_ms: int | None,
           moves: list[dict] | None = None) -> bytes:
    """A hint as the API answers it: `moves` ranked best first, each {move, text, value, visits}
    (value: the mean reward the search found for the seat, a smooth share of first place from 0
    to 1; visits: the simulations that went through the move)."""
    return orjson.dumps({"hint_id": hint_id, "status": status, "version": version, "seat": seat,
                         "budget_ms": budget_ms, "moves": moves or []})


def ranked(state: State, seat: int, found: Sequence[tuple[GivenMove, float | None, int]]) -> list[dict]:
    """The answer's moves from (move, value, visits), best first, each with its words."""
    texts = words.with_texts(state, seat, [move for move, _, _ in found])
    return [{"move": move, "text": told["text"], "value": None if value is None else round(value, 4),
             "visits": visits}
            for (move, value, visits), told in zip(found, texts, strict=True)]


class Hints:
    def __init__(self, games: Games) -> None:
        self.games = games
        self.store = games.store
        self.settings = games.settings

    def _enabled(self) -> None:
        if not self.settings.hints:
            raise GameError("HINTS_DISABLED", "this service does not give hints (AOS_HINTS=off)")

    def _load(self, game_id: str, token: str, seat: int) -> tuple[Stored, bytes | None]:
        """The game and the hint kept for `seat` at its version (None: none), with `token`
        checked to be that seat's."""
        token, token_seat = tokens.token_game(token, game_id)
        ttl = self.settings.hint_ttl
        name = kept_name(seat)
        stored, kept, _ = self.games.found(game_id, lambda: self.store.load_kept(game_id, name, ttl))
        self.games.authenticate(stored, token, token_seat)
        if token_seat != seat:
            raise GameError("SEAT_MISMATCH", f"the token is seat {token_seat}'s, not seat {seat}'s")
        return stored, kept

    def ask(self, game_id: str, token: str, seat: int, budget_ms: int | None) -> tuple[bool, bytes]:
        """Asks for a hint of `seat`'s current decision: (whether it is answered already, the
        hint). A new hint is queued for the worker; one asked for before at this version is
        answered as it stands."""
        self._enabled()
        stored, kept = self._load(game_id, token, seat)
        if kept is not None:
            return orjson.loads(kept)["status"] == "done", kept
        state = orjson.loads(stored.state)
        # Refused as a move of the seat would be, with the rules' own codes.
        if game.is_finished(state):
            raise illegal(IllegalMove("GAME_FINISHED", "the game is over: there is nothing to decide"))
        active = game.active_seat(state)
        if active != seat:
            raise illegal(IllegalMove("NOT_YOUR_TURN", f"seat {active} decides now, not seat {seat}",
                                      active_seat=active))
        hint_id = hint_id_of(stored.version, seat)
        budget = min(budget_ms or self.settings.hint_default_ms, self.settings.hint_max_ms)
        moves = game.legal_moves(state, seat)
        name, ttl = kept_name(seat), self.settings.hint_ttl
        if len(moves) == 1:  # nothing to search: the one move, at once
            only = ranked(state, seat, [(moves[0], None, 0)])
            body = answer(hint_id, "done", stored.version, seat, 0, only)
            self.store.keep(game_id, name, stored.version, body, ttl)
            return True, body
        body = answer(hint_id, "pending", stored.version, seat, budget)
        self.store.keep(game_id, name, stored.version, body, ttl)
        job = orjson.dumps({"version": stored.version, "seat": seat, "budget_ms": budget})
        # Queued once per id: asking again while it is queued adds nothing.
        self.store.queue_deliveries([Delivery(search_id(game_id, hint_id), game_id, job, queue=QUEUE)],
                                    time.time())
        return False, body

    def read(self, game_id: str, token: str, hint_id: str) -> tuple[str, bytes]:
        """A hint as it stands: (its status, the hint). `stale` once the game has moved past
        its version; HINT_NOT_FOUND when it was never asked for (or has lapsed)."""
        self._enabled()
        named = HINT_ID.fullmatch(hint_id)
        if named is None:
            raise GameError("HINT_NOT_FOUND", "no hint has that id")
        version, seat = int(named[1]), int(named[2])
        stored, kept = self._load(game_id, token, seat)
        if version < stored.version:
            return "stale", answer(hint_id, "stale", version, seat, None)
        if version > stored.version or kept is None:
            raise GameError("HINT_NOT_FOUND", "no hint has that id (never asked for, or lapsed)")
        return orjson.loads(kept)["status"], kept
