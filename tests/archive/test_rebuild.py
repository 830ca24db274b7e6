"""Rebuilding a game from what the archive holds: from a kept state and the moves after it when
those moves still stand, from the seed when an undo or a takeback went back beyond the state;
byte for byte the state the game had."""

from __future__ import annotations

import orjson
from archive_games import create, drain, play, query, script

from service.archive.copier import ArchiveCopier
from service.engine import game
from service.referee import timeline
from service.referee.games import Games, log_entry
from service.referee.restore import describe, rebuild
from service.referee.settings import Settings
from service.store import MemoryStore
from service.store.archive import Archive, ArchivedGame

MOVES = script("rust_belt", 3, "rebuild")


def states() -> list[dict]:
    """The state after each version of MOVES (index 0: the first state)."""
    state = game.new_game("rust_belt", ["P0", "P1", "P2"], "rebuild")
    found = [state]
    for seat, move in MOVES:
        state, _ = game.apply(state, seat, move)
        found.append(state)
    return found


STATES = states()


def entries_for(moves: list[tuple[int, dict]]) -> list[bytes]:
    return [log_entry(i, seat, move, [], state=STATES[0]) for i, (seat, move) in enumerate(moves)]


def archived(entries: list[bytes], state: dict, state_version: int) -> ArchivedGame:
    return ArchivedGame(game_id="g", version=len(entries), entries=entries, meta=b"{}",
                        state=orjson.dumps(state), state_version=state_version, beyond_gap=0,
                        finished=False)


def test_from_a_kept_state_and_the_moves_after_it() -> None:
    entries = entries_for(list(MOVES[:40]))
    for kept in (0, 17, 32, 40):
        rebuilt = rebuild(archived(entries, STATES[kept], kept))
        assert orjson.dumps(rebuilt) == orjson.dumps(STATES[40])


def test_an_undo_beyond_the_kept_state_rebuilds_from_the_seed() -> None:
    entries = entries_for(list(MOVES[:10]))
    entries.append(log_entry(10, MOVES[9][0], {"type": "undo"}, [], state=STATES[0]))  # version 11: back to 9
    rebuilt = rebuild(archived(entries, STATES[10], 10))
    assert orjson.dumps(rebuilt) == orjson.dumps(STATES[9])
    # After the undo, a state kept at 11 stands for the moves in effect then (1..9), and the
    # moves after it are replayed on it.
    seat, move = MOVES[9]
    entries.append(log_entry(11, seat, move, [], state=STATES[0]))
    entries.append(log_entry(12, *MOVES[10], [], state=STATES[0]))
    assert orjson.dumps(rebuild(archived(entries, STATES[9], 11))) == orjson.dumps(STATES[11])


def test_a_takeback_and_record_only_entries() -> None:
    entries = entries_for(list(MOVES[:12]))
    entries.append(log_entry(12, 0, {"type": "takeback_proposed", "to_version": 5}, [], state=STATES[0]))
    entries.append(log_entry(13, 1, {"type": "takeback_accepted"}, [], state=STATES[0]))
    entries.append(log_entry(14, 0, {"type": "takeback", "to_version": 5}, [], state=STATES[0]))
    for kept in (0, 3, 8, 12, 14):
        state = timeline.state_at(STATES[0], timeline.entries_of(entries), kept)
        rebuilt = rebuild(archived(entries, state, kept))
        assert orjson.dumps(rebuilt) == orjson.dumps(STATES[5]), kept


def test_a_kept_state_from_beyond_a_gap_only_tells_the_seed() -> None:
    entries = entries_for(list(MOVES[:20]))
    for marker in (-1, 30):
        assert orjson.dumps(rebuild(archived(entries, STATES[30], marker))) == orjson.dumps(STATES[20])


def test_versions_beyond_a_gap_are_set_aside_and_the_game_goes_on_from_the_gap(database_url: str) -> None:
    lost = MemoryStore()
    games = Games(lost, Settings())
    game_id = create(games, "rust_belt", 3, "rebuild")["game_id"]
    play(games, game_id, MOVES, 0, 10)
    archive = Archive(database_url)
    drain(ArchiveCopier(lost, archive, describe, "c", cache_ttl=60))
    # Version 6 never reached the archive, and Redis, which had it, is gone.
    query(database_url, "DELETE FROM moves WHERE version = 6 RETURNING 1")
    query(database_url, "UPDATE games SET version = 5 RETURNING 1")

    store = MemoryStore()
    games = Games(store, Settings(database_url=database_url))
    assert games.version(game_id) == 5
    assert store.history(game_id) == lost.history(game_id)[:5]
    assert store.load(game_id).state == orjson.dumps(STATES[5])
    assert query(database_url, "SELECT version FROM moves_set_aside ORDER BY 1") == [(7,), (8,), (9,), (10,)]
    assert query(database_url, "SELECT max(version) FROM moves") == [(5,)]
    play(games, game_id, MOVES, 5, 8)
    drain(ArchiveCopier(store, archive, describe, "c", cache_ttl=60))
    assert query(database_url, "SELECT version FROM games") == [(8,)]
    archive.close()
