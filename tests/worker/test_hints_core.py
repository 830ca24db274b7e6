"""Hints in the core and the worker's job, on both stores: asked for by a seat, searched by the
worker's search thread, read back; stale once the game moves; one search per seat and version."""

from __future__ import annotations

import random
import time

import orjson
import pytest

from service.engine import game
from service.referee.errors import GameError
from service.referee.games import Games
from service.referee.hints import Hints
from service.referee.settings import Settings
from service.worker.hints import HintJob
from service.worker.searches import SearchPool


def new_game(games: Games) -> tuple[str, list[str]]:
    body = {"map": "rust_belt", "players": [{"name": n} for n in ("Ada", "Bob", "Cat", "Dan")],
            "seed": "hints"}
    created = orjson.loads(games.create(body, body, None).body)
    return created["game_id"], [s["token"] for s in created["seats"]]


def to_a_choice(games: Games, game_id: str, tokens: list[str]) -> tuple[int, int]:
    """Random moves until the deciding seat has several moves: (its seat, the version)."""
    rng = random.Random(2)
    while True:
        stored = games.load(game_id)
        state = orjson.loads(stored.state)
        seat = game.active_seat(state)
        moves = game.legal_moves(state, seat)
        if len(moves) >= 3 and state["phase"] == "select_action":
            return seat, stored.version
        games.apply(game_id, seat, rng.choice(moves), if_match=None, idempotency_key=None, stored=stored)


def wait_done(hints: Hints, game_id: str, token: str, hint_id: str) -> dict:
    deadline = time.monotonic() + 20
    while True:
        status, body = hints.read(game_id, token, hint_id)
        if status != "pending":
            return orjson.loads(body)
        assert time.monotonic() < deadline
        time.sleep(0.02)


def test_a_hint_is_searched_by_the_worker_and_goes_stale_when_the_game_moves(store) -> None:
    games = Games(store, Settings(hint_default_ms=300, hint_max_ms=500))
    hints = Hints(games)
    game_id, tokens = new_game(games)
    seat, version = to_a_choice(games, game_id, tokens)
    ready, body = hints.ask(game_id, tokens[seat], seat, 10_000)  # over the cap: capped
    asked = orjson.loads(body)
    assert not ready and asked == {"hint_id": f"{version}-{seat}", "status": "pending", "version": version,
                                   "seat": seat, "budget_ms": 500, "moves": []}
    # Asking again searches nothing more: the same hint, one search queued.
    assert hints.ask(game_id, tokens[seat], seat, None) == (False, body)
    assert store.delivery_backlog(time.time(), queue="searches") == (1, 1)

    pool = SearchPool(1)
    job = HintJob(games, pool)
    assert job.run_once() == 1
    assert job.run_once() == 0  # claimed: the thread is busy with it
    done = wait_done(hints, game_id, tokens[seat], asked["hint_id"])
    pool.pool.shutdown(wait=True)  # the search's thread finishes its claim after keeping the answer
    assert done["status"] == "done" and done["version"] == version and 1 <= len(done["moves"]) <= 3
    state = orjson.loads(games.load(game_id).state)
    legal = game.legal_moves(state, seat)
    for ranked in done["moves"]:
        assert ranked["move"] in legal and ranked["text"]
        assert 0.0 <= ranked["value"] <= 1.0 and ranked["visits"] >= 1
    visits = [m["visits"] for m in done["moves"]]
    assert sum(visits) >= len(done["moves"])
    assert store.delivery_backlog(time.time(), queue="searches") == (0, 0)
    # Asked again at this version: answered at once.
    ready, again = hints.ask(game_id, tokens[seat], seat, None)
    assert ready and orjson.loads(again) == done

    stored = games.load(game_id)
    games.apply(game_id, seat, done["moves"][0]["move"], if_match=None, idempotency_key=None, stored=stored)
    status, stale = hints.read(game_id, tokens[seat], done["hint_id"])
    assert status == "stale" and orjson.loads(stale)["moves"] == []


def test_only_the_seat_to_decide_asks_with_its_own_token_and_the_host_may_turn_hints_off(store) -> None:
    games = Games(store, Settings())
    hints = Hints(games)
    game_id, tokens = new_game(games)
    seat, version = to_a_choice(games, game_id, tokens)
    other = (seat + 1) % 4
    with pytest.raises(GameError) as refused:
        hints.ask(game_id, tokens[other], other, None)
    assert refused.value.code == "NOT_YOUR_TURN" and refused.value.extra["active_seat"] == seat
    with pytest.raises(GameError) as refused:
        hints.ask(game_id, tokens[other], seat, None)
    assert refused.value.code == "SEAT_MISMATCH"
    with pytest.raises(GameError) as refused:
        hints.read(game_id, tokens[seat], f"{version}-{seat}")
    assert refused.value.code == "HINT_NOT_FOUND"  # never asked for
    for bad in ("x", f"{version}-9", f"{version + 1}"):
        with pytest.raises(GameError) as refused:
            hints.read(game_id, tokens[seat], bad)
        assert refused.value.code == "HINT_NOT_FOUND"
    off = Hints(Games(store, Settings(hints=False)))
    with pytest.raises(GameError) as refused:
        off.ask(game_id, tokens[seat], seat, None)
    assert refused.value.code == "HINTS_DISABLED"
    assert store.delivery_backlog(time.time(), queue="searches") == (0, 0)  # nothing queued


def test_a_hint_claimed_by_a_worker_that_died_is_taken_over_after_its_lease(store) -> None:
    games = Games(store, Settings(hint_default_ms=100, hint_max_ms=100))
    hints = Hints(games)
    game_id, tokens = new_game(games)
    seat, _ = to_a_choice(games, game_id, tokens)
    _, body = hints.ask(game_id, tokens[seat], seat, None)
    hint_id = orjson.loads(body)["hint_id"]
    now = time.time()
    dead = store.claim_deliveries(now, now + 0.3, 10, queue="searches")  # claimed, never answered
    assert len(dead) == 1
    pool = SearchPool(1)
    job = HintJob(games, pool)
    assert job.run_once() == 0  # held by the dead worker's lease
    time.sleep(0.35)
    assert job.run_once() == 1
    assert wait_done(hints, game_id, tokens[seat], hint_id)["status"] == "done"
    pool.close()
