"""Whole games over HTTP: bots play every seat through the generated client against gunicorn (several
workers) on a real Redis, on every map the engine plays and at every player count some map allows;
the final view, the history and the record must agree, and replaying the record gives the same
scores. Every map at every count it allows is played in process, move by move, with the invariants
checked (tests/engine/test_random_play.py); here it is the HTTP path that a whole game must pass."""

from __future__ import annotations

import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from aos_client import AosClient, GameView, Move, NotFound
from aos_client.bot import GreedyPolicy, Policy, RandomPolicy, play_game

from service.engine.variants.registry import VARIANTS

READ_ONLY = ("cost", "income", "text")  # extras that legal-moves lists and POST …/moves ignores


def core(move: dict) -> dict:
    return {k: v for k, v in move.items() if k not in READ_ONLY and k != "seat"}


def policies_for(players: int, seed: int) -> list[Policy]:
    """Greedy and random seats in turn: greedy seats keep a game going to its last round, random
    ones wander into every kind of move."""
    rng = random.Random(seed)
    return [
        (GreedyPolicy if seat % 2 == 0 else RandomPolicy)(random.Random(rng.random()))
        for seat in range(players)
    ]


def play_and_check(url: str, map_id: str, players: int) -> str:
    with AosClient(url, timeout=30) as api:
        sent: list[tuple[int, dict]] = []

        def on_move(view: GameView, seat: int, move: Move) -> None:
            assert view.active_seat == seat
            sent.append((seat, move.to_dict()))

        seed = f"e2e-{map_id}-{players}"
        result = play_game(api, map_id, policies_for(players, players), seed=seed, on_move=on_move)
        final = result.view
        game_id = result.game_id

        # The final view: finished, with a score per seat, and what a fresh GET says.
        assert final.status == "finished" and final.phase == "finished" and final.active_seat is None
        assert final.scores is not None and sorted(s.seat for s in final.scores) == list(range(players))
        for s in final.scores:
            assert (s.points is None) == final.players[s.seat].eliminated
        assert api.get_game(game_id).to_dict() == final.to_dict()
        assert api.last_response.headers["ETag"] == f'"{final.version}"'

        # The history: every move we sent, in order, one version each.
        history = api.get_history(game_id)
        assert final.version == len(history) == len(sent) == result.moves
        for i, entry in enumerate(history):
            assert entry.index == i and entry.version == i + 1
            assert (entry.seat, core(entry.move.to_dict())) == (sent[i][0], core(sent[i][1]))
        assert any(e.type == "game_finished" for e in history[-1].events)

        # The record: the same moves, the seed revealed now the game is over.
        record = api.get_record(game_id)
        assert record.map == map_id and record.seed == seed and len(record.players) == players
        assert [(m.seat, core(m.move.to_dict())) for m in record.moves] == [(s, core(m)) for s, m in sent]
        assert record.seed_commitment == final.seed_commitment

        # Replaying the record makes a new game that ends the same way.
        replayed = api.create_game({"record": record.to_dict()})
        assert replayed.game_id != game_id
        assert replayed.status == "finished" and replayed.version == final.version
        assert [s.to_dict() for s in replayed.scores] == [s.to_dict() for s in final.scores]
        assert replayed.board.to_dict() == final.board.to_dict()
        assert [p.to_dict() for p in replayed.players] == [p.to_dict() for p in final.players]
        return f"{map_id}/{players}: {result.moves} moves, round {final.round}, {result.seconds:.1f}s"


def test_the_service_runs_several_workers_on_redis(gunicorn: tuple[str, int]):
    service_url, master = gunicorn
    children = Path(f"/proc/{master}/task/{master}/children")
    if children.exists():  # Linux
        assert len(children.read_text().split()) >= 2, "gunicorn should run two workers or more"
    api = AosClient(service_url)
    assert api.get_ready().store == "redis"
    playable = {m.id for m in api.list_maps() if m.playable is not False}
    assert playable == set(VARIANTS), "GET /v1/maps and the engine's variants disagree"
    with pytest.raises(NotFound):
        api.get_game("missing")


# Each map once and each player count at least once (Rust Belt, the standard map, at both ends).
# All 18 map and count pairs over HTTP cost the suite some 65 CPU-s (the bots' and the service's)
# for what the pairs below already pass through the service; the rules of each pair are played in
# process.
GAMES = {"rust_belt": (3, 6), "berlin": (4,), "holland": (4,), "iraq": (5,), "madagascar": (3,)}


def test_the_games_played_cover_every_map_and_player_count(service_url: str):
    api = AosClient(service_url)
    allowed = {m.id: range(m.players.min, m.players.max + 1) for m in api.list_maps()
               if m.playable is not False}
    assert set(GAMES) == set(allowed)
    assert all(n in allowed[map_id] for map_id, counts in GAMES.items() for n in counts)
    assert {n for counts in GAMES.values() for n in counts} == {n for r in allowed.values() for n in r}


@pytest.mark.parametrize("map_id", sorted(GAMES))
def test_bots_play_whole_games(service_url: str, map_id: str):
    counts = GAMES[map_id]
    # A map's games at once: several in flight, spread over the workers.
    with ThreadPoolExecutor(max_workers=len(counts)) as pool:
        results = list(pool.map(lambda n: play_and_check(service_url, map_id, n), counts))
    print("\n".join(results))


def test_the_bot_command_line(service_url: str):
    client_dir = Path(__file__).resolve().parents[2] / "client"
    args = [
        sys.executable,
        "-m",
        "aos_client.bot",
        "--url",
        service_url,
        "--map",
        "rust_belt",
        "--players",
        "3",
        "--games",
        "2",
        "--policy",
        "random",
        "--seed",
        "7",
    ]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=client_dir.parent)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("game 1/2 ") and lines[1].startswith("game 2/2 ")
    assert "final scores" in done.stdout and "random: 6 seat-games" in done.stdout
