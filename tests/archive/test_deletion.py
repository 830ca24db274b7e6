"""A game deleted at its owner's request leaves the archive too, and is never archived again
from changes queued before its deletion; its id answers GAME_DELETED, never restored."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from archive_games import create, drain, play, query, script

from service.archive.copier import ArchiveCopier
from service.referee.errors import GameError
from service.referee.games import Games
from service.referee.restore import describe
from service.referee.settings import Settings
from service.store import RedisStore
from service.store.archive import Archive

TABLES = ("moves", "moves_set_aside", "game_idempotency", "game_secrets")


@pytest.fixture
def store(redis_url: str) -> Iterator[RedisStore]:
    store = RedisStore(redis_url)
    yield store
    store.close()


def rows_of(database_url: str, game_id: str) -> dict[str, int]:
    counts = {t: query(database_url, f"SELECT count(*) FROM {t} WHERE game_id = %s", game_id)[0][0]
              for t in TABLES}
    counts["games"] = query(database_url, "SELECT count(*) FROM games WHERE id = %s", game_id)[0][0]
    return counts


def test_a_deleted_game_leaves_the_archive_and_is_not_archived_again(
    store: RedisStore, database_url: str
) -> None:
    games = Games(store, Settings(database_url=database_url))
    archive = Archive(database_url)
    copier = ArchiveCopier(store, archive, describe, "c1", cache_ttl=600)
    moves = script("rust_belt", 3, "delete-1")
    doomed = create(games, "rust_belt", 3, "delete-1")["game_id"]
    kept = create(games, "rust_belt", 3, "delete-2")["game_id"]
    play(games, doomed, moves, 0, 10)
    play(games, kept, script("rust_belt", 3, "delete-2"), 0, 5)
    drain(copier)
    assert rows_of(database_url, doomed)["moves"] == 10 and rows_of(database_url, doomed)["games"] == 1

    play(games, doomed, moves, 10, 15)  # changes the copier has not taken yet
    assert games.delete(doomed) is True
    drain(copier)  # takes those changes: done with, never written

    assert rows_of(database_url, doomed) == {t: 0 for t in (*TABLES, "games")}
    assert rows_of(database_url, kept)["moves"] == 5
    with pytest.raises(GameError) as raised:
        games.view(doomed)  # not put back from the archive
    assert raised.value.code == "GAME_DELETED"
    assert games.view(kept)[0] == 5
    assert games.delete(doomed) is False
    archive.close()
