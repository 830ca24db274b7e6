"""The archive copier on a real PostgreSQL: every version of every game lands in the archive
exactly once, as the API wrote it; repeats are no-ops; a game leaves Redis early only once it is
archived."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import orjson
import pytest
from archive_games import archived_entries, create, drain, play, query, script

from service.archive import metrics
from service.archive.copier import SNAPSHOT_EVERY, ArchiveCopier
from service.referee.games import Games
from service.referee.restore import describe
from service.referee.settings import Settings
from service.store import GameStore, MemoryStore, RedisStore, StoreUnavailable
from service.store.archive import Archive, Batch, Move
from service.store.keys import game_keys

CACHE_TTL = 600


@pytest.fixture(params=["memory", "redis"])
def store(request: pytest.FixtureRequest) -> Iterator[GameStore]:
    if request.param == "memory":
        yield MemoryStore()
        return
    store = RedisStore(request.getfixturevalue("redis_url"))
    yield store
    store.close()


@pytest.fixture
def archive(database_url: str) -> Iterator[Archive]:
    archive = Archive(database_url)
    yield archive
    archive.close()


def copier_for(store: GameStore, archive: Archive, name: str = "c1", **kw) -> ArchiveCopier:
    return ArchiveCopier(store, archive, describe, name, cache_ttl=CACHE_TTL, **kw)


def test_every_version_of_whole_games_lands_in_the_archive_once_as_written(
    store: GameStore, archive: Archive, database_url: str
) -> None:
    games = Games(store, Settings())
    copier = copier_for(store, archive)
    played = {}
    for map_id, seed in (("rust_belt", "whole-1"), ("madagascar", "whole-2"), ("holland", "whole-3")):
        moves = script(map_id, 3, seed)
        game_id = create(games, map_id, 3, seed)["game_id"]
        # The copier runs now and then while the games go on, as a worker would.
        play(games, game_id, moves, 0, len(moves) // 2)
        drain(copier)
        play(games, game_id, moves, len(moves) // 2)
        played[game_id] = (seed, len(moves))
    drain(copier)

    assert copier.backlog() == 0
    total = query(database_url, "SELECT count(*), count(DISTINCT (game_id, version)) FROM moves")[0]
    assert total == (sum(n for _, n in played.values()),) * 2
    for game_id, (seed, length) in played.items():
        log = store.history(game_id)
        assert archived_entries(database_url, game_id) == list(enumerate(log, start=1))
        record = games.record(game_id)[1]
        row = query(database_url, """SELECT map, players, options, rules_version, seed_commitment,
                                            seed, finished_at IS NOT NULL, version
                                     FROM games WHERE id = %s""", game_id)
        assert row == [(record["map"], record["players"], record["options"], record["rules_version"],
                        record["seed_commitment"], seed, True, length)]
        stored = store.load(game_id)
        secrets = query(database_url, "SELECT meta, state, state_version FROM game_secrets "
                        "WHERE game_id = %s", game_id)
        # The finishing move's state is kept: a rebuild of a finished game replays nothing.
        assert secrets == [(stored.meta, stored.state, length)]
        last = orjson.loads(log[-1])
        finished = query(database_url, "SELECT finished_at = %s::timestamptz FROM games WHERE id = %s",
                         last["at"], game_id)
        assert finished == [(True,)] and last["events"][-1]["type"] == "game_finished"


def test_an_active_game_keeps_a_state_every_few_versions(store: GameStore, archive: Archive,
                                                         database_url: str) -> None:
    games = Games(store, Settings())
    moves = script("rust_belt", 4, "snapshots")
    game_id = create(games, "rust_belt", 4, "snapshots")["game_id"]
    copier = copier_for(store, archive)
    play(games, game_id, moves, 0, SNAPSHOT_EVERY - 1)
    drain(copier)
    assert query(database_url, "SELECT state_version FROM game_secrets") == [(0,)]  # the create's
    play(games, game_id, moves, SNAPSHOT_EVERY - 1, SNAPSHOT_EVERY + 3)
    drain(copier)
    [(state, version)] = query(database_url, "SELECT state, state_version FROM game_secrets")
    assert version == SNAPSHOT_EVERY + 3
    assert state == store.load(game_id).state
    seed = query(database_url, "SELECT seed, finished_at FROM games")
    assert seed == [(None, None)]  # secret while the game is active


def test_meta_only_changes_update_the_archived_meta_and_never_go_back(
    store: GameStore, archive: Archive, database_url: str
) -> None:
    games = Games(store, Settings())
    game_id = create(games, "rust_belt", 3, "meta")["game_id"]
    meta = orjson.loads(store.load(game_id).meta)
    for n in (1, 2):  # e.g. a seat's programmed orders, written without a move
        store.commit(game_id, expected_version=0, ttl=60, meta=orjson.dumps({**meta, "orders": n}))
    items = store.outbox_read("archive", "x")
    assert [i.entries for i in items] == [[], [], []] and items[0].created
    copier = copier_for(store, archive)
    copier.handle(items[::-1])  # out of order, as after a takeover: the newest still wins
    copier.handle(items[:2])
    [(archived,)] = query(database_url, "SELECT meta FROM game_secrets")
    assert orjson.loads(archived)["orders"] == 2 and archived == store.load(game_id).meta


def test_a_batch_written_again_changes_nothing(store: GameStore, archive: Archive,
                                               database_url: str) -> None:
    games = Games(store, Settings())
    game_id = create(games, "rust_belt", 3, "again")["game_id"]
    play(games, game_id, script("rust_belt", 3, "again"), 0, 40)
    items = store.outbox_read("archive", "slow")  # taken, never acknowledged: as if it died
    copier = copier_for(store, archive)
    copier.handle(items)
    tables = ("games", "moves", "game_secrets")
    before = {t: query(database_url, f"SELECT * FROM {t} ORDER BY 1") for t in tables}
    repeats = metrics.MOVES.labels(result="repeat")._value.get()
    copier.handle(items)
    assert {t: query(database_url, f"SELECT * FROM {t} ORDER BY 1") for t in tables} == before
    assert metrics.MOVES.labels(result="repeat")._value.get() - repeats == 40


def test_another_entry_for_an_archived_version_is_counted_and_never_written(
    archive: Archive, database_url: str
) -> None:
    first = Move("g1", 1, 0, "bid", '{"type": "bid"}', "[]", "2026-01-01T00:00:00Z", None, b"first")
    batch = Batch()
    batch.add_move(first)
    assert archive.write(batch).inserted == 1
    batch = Batch()
    batch.add_move(Move(**{**{f: getattr(first, f) for f in first.__slots__}, "entry": b"second"}))
    written = archive.write(batch)
    assert (written.inserted, written.repeated, written.conflicts) == (0, 0, 1)
    assert archived_entries(database_url, "g1") == [(1, b"first")]


def test_a_change_postgresql_refuses_holds_back_only_itself(store: GameStore, archive: Archive,
                                                             database_url: str) -> None:
    games = Games(store, Settings())
    good = create(games, "rust_belt", 3, "good")["game_id"]
    bad = create(games, "rust_belt", 3, "bad")["game_id"]
    play(games, good, script("rust_belt", 3, "good"), 0, 5)
    entry = b'{"index":0,"seat":0,"move":{"type":"pass"},"events":[],"version":1,"at":"the day before"}'
    store.commit(bad, expected_version=0, entries=[entry], ttl=60)
    refused = metrics.BAD_CHANGES._value.get()
    drain(copier_for(store, archive))
    assert archived_entries(database_url, good) == list(enumerate(store.history(good), start=1))
    assert archived_entries(database_url, bad) == []
    assert query(database_url, "SELECT id FROM games ORDER BY id") == sorted([(good,), (bad,)])
    assert metrics.BAD_CHANGES._value.get() - refused == 1
    assert store.outbox_backlog("archive") == 1  # still pending: taken again later, not lost


def test_a_game_whose_create_never_reached_the_archive_is_copied_whole_from_the_store(
    store: GameStore, archive: Archive, database_url: str
) -> None:
    games = Games(store, Settings())
    game_id = create(games, "rust_belt", 3, "adopted")["game_id"]
    play(games, game_id, script("rust_belt", 3, "adopted"), 0, 5)
    # The create and the first moves never reach the copier (trimmed from a full outbox).
    store.outbox_ack("archive", store.outbox_read("archive", "lost"))
    play(games, game_id, script("rust_belt", 3, "adopted"), 5, 9)
    drain(copier_for(store, archive))
    assert archived_entries(database_url, game_id) == list(enumerate(store.history(game_id), start=1))
    assert query(database_url, "SELECT version FROM games") == [(9,)]
    assert query(database_url, "SELECT meta FROM game_secrets") == [(store.load(game_id).meta,)]


def test_versions_that_never_reached_the_copier_are_filled_in_from_the_store(
    store: GameStore, archive: Archive, database_url: str
) -> None:
    games = Games(store, Settings())
    moves = script("rust_belt", 3, "gap")
    game_id = create(games, "rust_belt", 3, "gap")["game_id"]
    copier = copier_for(store, archive)
    play(games, game_id, moves, 0, 3)
    drain(copier)
    play(games, game_id, moves, 3, 8)
    # Versions 4-8 are trimmed from the outbox before any copier took them.
    store.outbox_ack("archive", store.outbox_read("archive", "lost"))
    play(games, game_id, moves, 8, 10)
    drain(copier)
    assert archived_entries(database_url, game_id) == list(enumerate(store.history(game_id), start=1))
    assert query(database_url, "SELECT version FROM games") == [(10,)]


def test_when_the_archive_fails_the_copier_holds_its_batch_and_takes_nothing_new(
    store: GameStore, archive: Archive, database_url: str
) -> None:
    games = Games(store, Settings())
    game_id = create(games, "rust_belt", 3, "outage")["game_id"]
    moves = script("rust_belt", 3, "outage")
    play(games, game_id, moves, 0, 10)
    down = Archive("postgresql://aos@127.0.0.1:1/none", timeout=0.5, connect_timeout=1)
    copier = copier_for(store, down, batch=100)
    with pytest.raises(StoreUnavailable):
        copier.run_once()
    held = len(copier._held)
    assert held == 11 and copier.backlog() == 11
    play(games, game_id, moves, 10, 20)  # moves go on committing meanwhile
    with pytest.raises(StoreUnavailable):
        copier.run_once()
    assert len(copier._held) == held  # the same batch, nothing new taken
    copier.archive = archive  # PostgreSQL is back
    drain(copier)
    assert copier.backlog() == 0
    assert archived_entries(database_url, game_id) == list(enumerate(store.history(game_id), start=1))


def test_a_game_leaves_redis_early_only_once_every_version_is_archived(
    redis_url: str, archive: Archive
) -> None:
    store = RedisStore(redis_url)
    games = Games(store, Settings())
    game_id = create(games, "rust_belt", 3, "release")["game_id"]
    moves = script("rust_belt", 3, "release")
    play(games, game_id, moves, 0, 3)
    client = store._redis()
    keys = game_keys(game_id)

    def ttls() -> tuple[int, int]:
        return client.ttl(keys.state), client.ttl(keys.log)

    assert min(ttls()) > CACHE_TTL  # the usual 30 days
    copier = copier_for(store, archive)
    drain(copier)
    assert all(0 < t <= CACHE_TTL for t in ttls())
    assert int(client.hget(keys.state, "ttl")) == CACHE_TTL  # reads keep it at the short expiry
    play(games, game_id, moves, 3, 4)
    assert min(ttls()) > CACHE_TTL  # a version the archive does not have yet: kept long again
    drain(copier)
    assert all(0 < t <= CACHE_TTL for t in ttls())
    store.close()


def test_the_worker_gets_the_copier_as_a_job_when_there_is_an_archive(database_url: str) -> None:
    from service.archive import jobs

    store = MemoryStore()
    assert jobs(store, Settings()) == []
    [job] = jobs(store, Settings(database_url=database_url, cache_ttl=77), consumer="w1")
    assert (job.name, job.group, job.consumer, job.cache_ttl) == ("archive", "archive", "w1", 77)
    games = Games(store, Settings())
    create(games, "rust_belt", 3, "job")
    assert job.run_once() == 1 and job.backlog() == 0
    job.archive.close()


def test_idempotency_records_are_archived_with_their_change_and_dropped_beyond_a_gap(
    store: GameStore, archive: Archive
) -> None:
    games = Games(store, Settings())
    copier = copier_for(store, archive)
    game_id = create(games, "rust_belt", 3, "idem")["game_id"]
    moves = script("rust_belt", 3, "idem")
    for n, (seat, move) in enumerate(moves[:3]):  # with the clients' keys
        games.apply(game_id, seat, move, if_match=None, idempotency_key=f"key-{n}",
                    stored=games.load(game_id))
    play(games, game_id, moves, 3, 4)  # a request's own key only: not archived
    drain(copier)
    game = archive.load(game_id)
    assert game is not None and game.version == 4
    keys = [key for key, _, _ in game.idem]
    assert len(keys) == 3 and all(k.startswith("move:") and "request" not in k for k in keys)
    assert {value for _, value, _ in game.idem} == {
        store.idempotency_record(game_id, key) for key in keys}
    day = Settings().idempotency_ttl
    assert all(day - 120 < left <= day for _, _, left in game.idem)
    # Versions set aside take their answers with them.
    archive.set_aside(game_id, 2)
    kept = sorted(key for key, _, _ in archive.load(game_id).idem)
    assert kept == sorted("move:" + hashlib.sha256(f"key-{n}".encode()).hexdigest() for n in (0, 1))
