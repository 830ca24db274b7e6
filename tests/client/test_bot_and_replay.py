"""The client beyond one call per operation: replaying a record, typed events, and the bot playing
one seat of a game someone else created, with a policy given by import path."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import aos_client
import pytest
from aos_client import (
    AosClient,
    CreatedGame,
    CreateGameRequest,
    Event,
    GameView,
    IllegalMove,
    ImportGame,
    Move,
    NewGame,
    NewGamePlayer,
    RecordNotFinished,
    SharesIssuedEvent,
    TrackBuiltEvent,
)
from aos_client.bot import GreedyPolicy, Policy, RandomPolicy, main, play_game, play_seat, policy_class
from client_test_servers import free_port


class FirstMovePolicy(Policy):
    """A policy of a bot author's own (loaded by import path in a test below)."""

    name = "first"

    def choose(self, view: GameView, seat: int, moves: Sequence[Move]) -> Move:
        return moves[-1] if moves[-1].type == "drop_out" else moves[0]  # type: ignore[attr-defined]


def create(api: AosClient, players: int = 3, seed: str = "bot-tests") -> CreatedGame:
    names = [NewGamePlayer(name=n) for n in ("Ann", "Bob", "Cat", "Dan")[:players]]
    return api.create_game(NewGame(map="rust_belt", players=names, seed=seed))


def test_replay_of_a_finished_game_makes_the_same_game(live_url: str) -> None:
    api = AosClient(live_url)
    result = play_game(api, "rust_belt", [RandomPolicy(random.Random(i)) for i in range(3)], seed="replay-me")
    record = api.get_record(result.game_id)
    assert record.seed == "replay-me" and len(record.moves) == result.view.version
    copy = api.replay(record)
    assert copy.game_id != result.game_id and copy.version == result.view.version
    assert copy.scores is not None and [s.to_dict() for s in copy.scores] == [
        s.to_dict() for s in result.view.scores or []
    ]

    def untimed(history):  # a replay's versions are committed now, not when they were played
        return [{k: v for k, v in h.to_dict().items() if k != "at"} for h in history]

    assert untimed(api.get_history(copy.game_id)) == untimed(api.get_history(result.game_id))
    # A record whose move was changed is refused at that move, with its index.
    tampered = record.to_dict()
    tampered["moves"][1]["move"] = {"type": "bid", "amount": 1}
    with pytest.raises(IllegalMove) as refused:
        api.replay(tampered)
    assert refused.value.get("index") == 1


def test_an_unfinished_games_record_says_only_finished_games_replay(live_url: str) -> None:
    api = AosClient(live_url)
    game = create(api)
    record = api.get_record(game.game_id)
    assert record.seed is None
    with pytest.raises(RecordNotFinished, match="only a finished game's record replays"):
        api.replay(record)
    with pytest.raises(RecordNotFinished):
        api.replay(record.to_dict())


def test_events_are_typed(live_url: str) -> None:
    api = AosClient(live_url)
    game = create(api)
    seat = game.active_seat
    result = api.apply_move(game.game_id, {"type": "issue_shares", "count": 2}, token=game.seats[seat].token)
    issued = result.events[0]
    assert isinstance(issued, SharesIssuedEvent) and isinstance(issued, Event)
    assert (issued.seat, issued.count, issued.cash) == (seat, 2, 10)  # $5 a share
    built = Event.from_dict({"type": "track_built", "seat": 1, "hex": {"q": 1, "r": 2}, "cost": 3,
                             "tile": "7", "kind": "new", "tracks": [[0, 3]], "later": True})
    assert isinstance(built, TrackBuiltEvent) and built.hex.q == 1 and built.cost == 3
    assert built.extra == {"later": True} and built.to_dict()["later"] is True
    history = api.get_history(game.game_id)
    assert isinstance(history[0].events[0], SharesIssuedEvent)


def test_policies_by_name_or_import_path() -> None:
    assert policy_class("greedy") is GreedyPolicy
    assert policy_class("aos_client.bot:RandomPolicy") is RandomPolicy
    assert policy_class("test_bot_and_replay:FirstMovePolicy") is FirstMovePolicy
    for bad in ("nope", "no_such_module:X", "aos_client.bot:NoSuch", "aos_client.bot:random"):
        with pytest.raises(ValueError):
            policy_class(bad)


def test_the_bot_plays_one_seat_of_an_existing_game(live_url: str, capsys: pytest.CaptureFixture) -> None:
    api = AosClient(live_url)
    game = create(api, seed="one-seat-each")
    others = [s for s in game.seats if s.seat != 0]
    finished: list[int] = []

    def other(seat: int, token: str) -> None:
        policy = GreedyPolicy(random.Random(seat))
        result = play_seat(AosClient(live_url), game.game_id, token, policy)
        finished.append(result.view.version)

    threads = [threading.Thread(target=other, args=(s.seat, s.token)) for s in others]
    for t in threads:
        t.start()
    # Seat 0 from the command line, with a policy of one's own by import path.
    code = main(["--url", live_url, "--game", game.game_id, "--token", game.seats[0].token,
                 "--policy", "test_bot_and_replay:FirstMovePolicy"])
    for t in threads:
        t.join(120)
    assert code == 0
    out = capsys.readouterr().out
    assert re.search(rf"game {game.game_id}: seat 0 made \d+ moves in [\d.]+s; points (out|-?\d+), rank \d",
                     out), out
    final = api.get_game(game.game_id)
    assert final.status == "finished" and finished == [final.version] * 2
    # A line as each round begins (the seat's cash and income then), and one at the end.
    began = rf"^game {game.game_id} round (\d+)/{final.last_round}: seat 0 \(Ann\) "
    rounds = [int(r) for r in re.findall(began, out, re.M)]
    assert rounds == list(range(1, final.round + 1)), out
    assert re.search(rf"^game {game.game_id} finished: seat 0 \(Ann\) .*; \d+ moves made$", out, re.M), out
    history = api.get_history(game.game_id)
    assert {h.seat for h in history} == {0, 1, 2}


def own_lines(err: str) -> list[str]:
    """What the bot wrote to stderr, without the in-process service's JSON log lines."""
    return [line for line in err.splitlines() if not line.startswith('{"ts"')]


def test_the_bot_refuses_a_bad_token_or_policy(live_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    api = AosClient(live_url)
    game, other = create(api), create(api, seed="another")
    capsys.readouterr()
    # A token of another game, a made-up one, another seat's: one line at once, nothing played.
    for token, seat, code in ((other.seats[1].token, [], "TOKEN_OTHER_GAME"),
                              (f"{game.game_id}.1.wrong", [], "TOKEN_INVALID"),
                              (game.seats[0].token, ["--seat", "1"], "SEAT_MISMATCH")):
        assert main(["--url", live_url, "--game", game.game_id, "--token", token, *seat]) == 1
        out, err = capsys.readouterr()
        said = own_lines(err)
        assert out == "" and len(said) == 1, err
        assert said[0].startswith("aos_client.bot: the token is not a seat token of game"), said
        assert code in said[0] and "--token" in said[0], said  # why, and what to do
    assert api.get_game(game.game_id).version == 0
    with pytest.raises(SystemExit):
        main(["--url", live_url, "--game", game.game_id])  # --token missing
    with pytest.raises(SystemExit):
        main(["--url", live_url, "--policy", "no.such:Thing", "--games", "1"])


def test_the_bot_says_in_one_line_what_to_do_when_it_cannot_start(live_url: str) -> None:
    closed = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    bot = [sys.executable, "-m", "aos_client.bot"]
    env = {**os.environ, "PYTHONPATH": str(Path(aos_client.__file__).parents[1])}
    for argv in (["--url", closed, "--game", "g", "--token", "g.0.x"], ["--url", closed, "--games", "1"],
                 ["--url", live_url, "--game", "no-such-game", "--token", "no-such-game.0.x"]):
        done = subprocess.run(bot + argv, capture_output=True, text=True, timeout=60, env=env)
        assert done.returncode == 1 and done.stdout == "", done
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
        if "no-such-game" in argv:
            assert "no game 'no-such-game'" in done.stderr and "--game" in done.stderr, done.stderr
        else:
            assert f"cannot reach the service at {closed}" in done.stderr and "--url" in done.stderr, done


def test_the_bots_help_names_every_option_in_whole_sentences(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    for option in ("--url", "--policy", "--map", "--players", "--games", "--seats", "--rotate", "--seed",
                   "--game", "--token", "--seat"):
        # The option, its metavar if it takes a value, and words saying what it does.
        assert re.search(rf"^  {option}( [A-Z]+)?  +\w", text, re.M), option
    description = text.split("\n\n")[1]
    assert description.rstrip().endswith("."), description  # not cut mid-sentence
    assert "events stream" in text and "python -m aos_client.bot --game GAME_ID --token SEAT_TOKEN" in text


def test_a_create_body_is_told_apart_by_its_fields() -> None:
    new = CreateGameRequest.from_dict({"map": "rust_belt", "players": [{"name": "a"}]})
    record = {"format": "aos-record/1", "rules_version": "r", "map": "rust_belt", "players": [{"name": "a"}],
              "options": {}, "seed_commitment": "0" * 64, "seed": "s", "moves": []}
    imported = CreateGameRequest.from_dict({"record": record})
    assert isinstance(new, NewGame) and isinstance(imported, ImportGame)


def test_two_seats_resign_through_the_client_and_the_record_replays(live_url: str) -> None:
    from aos_client import PlayerEliminatedEvent, PlayerResignedEvent, ResignEntry

    api = AosClient(live_url)
    game = create(api, seed="client-resign")
    tokens = {s.seat: s.token for s in game.seats}
    first = api.resign(game.game_id, token=tokens[0], if_match=0)
    assert [type(e) for e in first.events] == [PlayerResignedEvent, PlayerEliminatedEvent]
    assert first.version == 1 and first.game.players[0].eliminated is True
    last = api.resign(game.game_id, token=tokens[1])
    assert last.game.status == "finished"
    assert [(s.seat, s.points is None, s.rank) for s in last.game.scores] == [
        (0, True, 2), (1, True, 2), (2, False, 1)]
    record = api.get_record(game.game_id)
    assert [m.move for m in record.moves] == [ResignEntry(), ResignEntry()]
    copy = api.replay(record)
    assert copy.status == "finished" and copy.version == 2
    with pytest.raises(IllegalMove) as again:
        api.resign(game.game_id, token=tokens[2])
    assert again.value.code == "GAME_FINISHED"
