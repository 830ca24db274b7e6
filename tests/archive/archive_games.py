"""Whole games for the archive's tests: scripts of the engine's random player, played through
the API's Games (the same commits the HTTP routes make), and what the archive holds of them."""

from __future__ import annotations

import random
from functools import cache

import orjson
import psycopg

from service.engine.playout import play_random_game
from service.jobs.runner import OutboxConsumer
from service.referee.games import Games


@cache
def script(map_id: str, players: int, seed: str) -> tuple[tuple[int, dict], ...]:
    """Every (seat, move) of a whole random game from this seed."""
    moves: list[tuple[int, dict]] = []
    play_random_game(map_id, players, seed, random.Random(seed),
                     on_move=lambda before, seat, move, *_: moves.append((seat, move)))
    return tuple(moves)


def create(games: Games, map_id: str, players: int, seed: str) -> dict:
    body = {"map": map_id, "players": [{"name": f"P{i}"} for i in range(players)], "seed": seed}
    return orjson.loads(games.create(body, body, None).body)


def play(games: Games, game_id: str, moves, start: int = 0, stop: int | None = None) -> int:
    """Plays moves[start:stop] of a script; returns the version reached."""
    version = start
    for seat, move in list(moves)[start:stop]:
        stored = games.load(game_id)
        version = games.apply(game_id, seat, move, if_match=None, idempotency_key=None,
                              stored=stored).version
    return version


def drain(copier: OutboxConsumer, rounds: int = 1000) -> int:
    """Runs the copier until it finds nothing to do; returns the changes it took."""
    taken = 0
    for _ in range(rounds):
        done = copier.run_once()
        if done == 0:
            return taken
        taken += done
    raise AssertionError("the copier never ran out of work")


def archived_entries(database_url: str, game_id: str) -> list[tuple[int, bytes]]:
    with psycopg.connect(database_url) as conn:
        rows = conn.execute("SELECT version, entry FROM moves WHERE game_id = %s ORDER BY version",
                            [game_id]).fetchall()
    return [(v, bytes(e)) for v, e in rows]


def query(database_url: str, sql: str, *params: object) -> list[tuple]:
    with psycopg.connect(database_url) as conn:
        return conn.execute(sql, list(params)).fetchall()
