"""The game core's what-if (Games.simulate, referee/whatif.py) on the real stores: the moves a
simulation plays from an earlier version lead to the view the real moves made, the stored game
is left byte for byte as it was, and each refusal is its code."""

from __future__ import annotations

import random

import orjson
import pytest

from service.engine import game
from service.referee.errors import GameError
from service.referee.games import Games
from service.referee.settings import Settings
from service.referee.whatif import Question
from service.store import GameStore

INFORMATIONAL = ("text", "cost", "income")


def played_game(games: Games, moves: int) -> tuple[str, list[dict]]:
    """A game on a fixed seed and the `moves` legal moves (chosen at random) applied to it."""
    body = {"map": "rust_belt", "players": [{"name": n} for n in ("Ann", "Bob", "Cat")], "seed": "whatif"}
    game_id = games.create(body, body, None).game_id
    rng, made = random.Random(5), []
    for _ in range(moves):
        stored = games.load(game_id)
        state = orjson.loads(stored.state)
        seat = game.view(state)["active_seat"]
        move = {k: v for k, v in rng.choice(game.legal_moves(state, seat)).items() if k not in INFORMATIONAL}
        games.apply(game_id, seat, move, if_match=None, idempotency_key=None, stored=stored)
        made.append({"seat": seat, "move": move})
    return game_id, made


def stored_bytes(games: Games, game_id: str) -> tuple:
    stored = games.load(game_id, with_view=True)
    return stored.version, stored.state, stored.view, games.store.history(game_id, 0, stored.version)


def test_from_an_earlier_version_the_real_moves_lead_to_the_real_view(store: GameStore) -> None:
    games = Games(store, Settings())
    game_id, made = played_game(games, 12)
    before = stored_bytes(games, game_id)
    version, body = games.simulate(game_id, Question(made[4:], from_version=4))
    answer = orjson.loads(body)
    assert version == 12 and answer["from_version"] == 4 and answer["stops_at"] is None
    assert answer["game"] == orjson.loads(before[2])  # the real view at version 12
    history = [orjson.loads(e) for e in before[3]]
    assert [s["events"] for s in answer["steps"]] == [h["events"] for h in history[4:]]
    assert stored_bytes(games, game_id) == before  # nothing written
    _, body = games.simulate(game_id, Question([], from_version=0))
    assert orjson.loads(body)["game"]["version"] == 0


def test_refusals_are_the_cores_codes(store: GameStore) -> None:
    games = Games(store, Settings(simulate_max_moves=5, simulate_cpu_ms=0))
    game_id, made = played_game(games, 6)
    before = stored_bytes(games, game_id)
    cases = [
        (Question(made[:6], from_version=0), "SIMULATE_MOVES_CAP", {"max_moves": 5}),
        (Question(made[:1], from_version=0), "SIMULATE_CPU_CAP", {"cpu_ms": 0}),
        (Question([], from_version=7), "BAD_FROM_VERSION", {"version": 6}),
        (Question([], from_version=-1), "BAD_FROM_VERSION", {"version": 6}),
        (Question([made[1]], from_version=0), "NOT_YOUR_TURN", {"index": 0}),
    ]
    for question, code, fields in cases:
        with pytest.raises(GameError) as refused:
            games.simulate(game_id, question)
        assert refused.value.code == code
        assert fields.items() <= refused.value.extra.items(), refused.value.extra
    # The same questions within bounds are answered.
    roomy = Games(store, Settings())
    answer = orjson.loads(roomy.simulate(game_id, Question(made[:5], from_version=0))[1])
    assert answer["game"]["version"] == 5
    assert orjson.loads(roomy.simulate(game_id, Question([], from_version=6))[1])["steps"] == []
    assert stored_bytes(games, game_id) == before
