"""Computer seats in the core, on both stores: a commit that leaves a computer seat to decide sets
the game's clock due at once (the worker's cue), one that leaves a person to decide does not, and
a view made again from the log (the archive's restore) says the same; the clock job plays the
seat through the search pool, once."""

from __future__ import annotations

import time

import orjson

from service.engine import game
from service.referee import bots
from service.referee.games import Games, render_at
from service.referee.settings import Settings
from service.worker import computer as computer_module
from service.worker.clocks import ClockJob
from service.worker.computer import Computer
from service.worker.searches import SearchPool


def create(games: Games, players: list[dict]) -> dict:
    body = {"map": "rust_belt", "players": players, "seed": "core"}
    return orjson.loads(games.create(body, body, None).body)


def due(store, game_id: str) -> bool:  # type: ignore[no-untyped-def]
    return game_id in {g for g, _ in store.due_clocks(time.time() + 0.001, 1000)}


def test_the_clock_is_due_at_once_exactly_when_a_computer_seat_decides(store) -> None:
    games = Games(store, Settings())
    people = create(games, [{"name": n} for n in ("Ada", "Bob", "Cat")])
    assert not due(store, people["game_id"])  # no clock, no computer: nothing for the worker

    first = people["active_seat"]
    players = [{"name": n} for n in ("Ada", "Bob", "Cat")]
    players[first] = {"name": "Robo", "bot": {"level": 1}}
    computer = create(games, players)
    assert computer["active_seat"] == first and due(store, computer["game_id"])

    # A person decides first; their move hands the decision to the computer's seat.
    players = [{"name": n} for n in ("Ada", "Bob", "Cat")]
    state = orjson.loads(games.load(people["game_id"]).state)
    after, _ = game.apply(state, first, game.legal_moves(state, first)[0])
    second = game.active_seat(after)
    players[second] = {"name": "Robo", "bot": {"level": 1}}
    mixed = create(games, players)
    game_id = mixed["game_id"]
    assert not due(store, game_id)
    stored = games.load(game_id)
    state = orjson.loads(stored.state)
    games.apply(game_id, first, game.legal_moves(state, first)[0], if_match=None, idempotency_key=None,
                stored=stored)
    assert due(store, game_id)
    # Made again from the log, as a restore from the archive does: due at the commit's time.
    stored = games.load(game_id)
    entries = [orjson.loads(e) for e in store.history(game_id, 0, stored.version) or []]
    _, deadline = render_at(orjson.loads(stored.state), game_id, stored.version, stored.meta, entries)
    assert deadline is not None and abs(deadline - time.time()) < 5
    assert bots.deciding(orjson.loads(stored.meta), orjson.loads(stored.state)) == (second, 1)

    # The clock job plays it (and the other game's computer seats: they are due too), by the
    # bot, once.
    play_due_seats(games, game_id, until_version=2)
    history = [orjson.loads(e) for e in store.history(game_id, 0, None) or []]
    assert [(e["seat"], e.get("by")) for e in history[:2]] == [(first, None), (second, "bot")]
    assert all(e.get("by") == "bot" for e in history[1:])  # and any computer seat after it


def test_a_computer_move_the_rules_refuse_gives_way_to_the_default_move(store, monkeypatch) -> None:
    games = Games(store, Settings())
    first = create(games, [{"name": n} for n in ("Ada", "Bob", "Cat")])["active_seat"]
    players = [{"name": n} for n in ("Ada", "Bob", "Cat")]
    players[first] = {"name": "Robo", "bot": {"level": 3}}
    game_id = create(games, players)["game_id"]
    # A search that proposes what the rules refuse (it never should: a bug).
    monkeypatch.setattr(computer_module, "bot_move",
                        lambda *_: {"type": "select_action", "action": "engineer"})
    play_due_seats(games, game_id, until_version=1)
    entry = orjson.loads((store.history(game_id, 0, 1) or [])[0])
    assert entry["seat"] == first and entry["by"] == "bot"
    assert entry["move"] == {"type": "issue_shares", "count": 0}  # the clock's default move


def play_due_seats(games: Games, game_id: str, until_version: int) -> None:
    """Runs the clock job, with a computer of its own, until the game reaches `until_version`
    (within 20 s)."""
    pool = SearchPool(1, processes=False)
    job = ClockJob(games, computer=Computer(games, pool, max_ms=500, lease_seconds=5))
    deadline = time.monotonic() + 20
    while games.load(game_id).version < until_version:
        assert time.monotonic() < deadline
        job.run_once()
        time.sleep(0.05)
    pool.pool.shutdown(wait=True)
