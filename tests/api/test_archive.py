"""Redis as a cache of the archive (DATABASE_URL): a game that left Redis (flushed, expired) is
put back from PostgreSQL on its next read or move, and every answer is the one it would have
been had it never left. Real Redis, real PostgreSQL, every request checked against the contract."""

from __future__ import annotations

import random
import time
from functools import cache

import orjson
import psycopg

from service.archive.copier import ArchiveCopier
from service.engine.playout import play_random_game
from service.referee.restore import describe
from service.store import MemoryStore, RedisStore
from service.store.archive import Archive


@cache
def script(players: int, seed: str) -> tuple[tuple[int, dict], ...]:
    moves: list[tuple[int, dict]] = []
    play_random_game("rust_belt", players, seed, random.Random(seed),
                     on_move=lambda before, seat, move, *_: moves.append((seat, move)))
    return tuple(moves)


def new_game(api, players: int, seed: str) -> dict:
    body = {"map": "rust_belt", "players": [{"name": f"P{i}"} for i in range(players)], "seed": seed}
    response = api.client.post("/v1/games", json=body)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def play(api, game: dict, moves, *, http: int = 0) -> dict:
    """Plays the moves: the first `http` of them over HTTP with the seats' tokens, the rest
    through the app's Games (the same commits, without the contract check's ~0.1 s per move)."""
    view = None
    games = api.app.extensions["aos.games"]
    for n, (seat, move) in enumerate(moves):
        if n < http:
            response = api.move(game["game_id"], game["seats"][seat]["token"], move)
            assert response.status_code == 200, response.get_json()
            view = response.get_json()["game"]
        else:
            stored = games.load(game["game_id"])
            applied = games.apply(game["game_id"], seat, move, if_match=None, idempotency_key=None,
                                  stored=stored)
            view = orjson.loads(applied.body)["game"]
    return view


def copy_all(store, database_url: str) -> Archive:
    archive = Archive(database_url)
    copier = ArchiveCopier(store, archive, describe, "test", cache_ttl=1)
    while copier.run_once():
        pass
    assert copier.backlog() == 0
    return archive


def answers(api, game_id: str) -> dict[str, tuple[int, bytes, str | None]]:
    """Every read of the game, as bytes: view, history, record, board, every seat's legal moves."""
    paths = ["", "/history", "/record", "/board.svg"]
    paths += [f"/legal-moves?seat={seat}" for seat in range(3)]
    found = {}
    for path in paths:
        response = api.client.get(f"/v1/games/{game_id}{path}")
        found[path] = (response.status_code, response.get_data(), response.headers.get("ETag"))
    return found


def archived(database_url: str, game_id: str) -> list[bytes]:
    with psycopg.connect(database_url) as conn:
        rows = conn.execute("SELECT entry FROM moves WHERE game_id = %s ORDER BY version", [game_id])
        return [bytes(entry) for (entry,) in rows]


def test_flushall_mid_game_then_the_game_goes_on_with_the_same_answers(
    api_on, redis_server, redis_url: str, database_url: str
) -> None:
    store = RedisStore(redis_url)
    api = api_on(store, database_url=database_url)
    moves = script(3, "flushed")
    half = len(moves) // 2
    game = new_game(api, 3, "flushed")
    gid = game["game_id"]
    play(api, game, moves[:half])
    copy_all(store, database_url)
    before = answers(api, gid)
    assert before[""][0] == 200 and before[""][2] == f'"{half}"'

    with redis_server.client() as client:
        client.flushall()
    assert store.load(gid) is None
    assert answers(api, gid) == before  # the first read put it back

    # The seats' tokens still work, and the game plays on to its end as if nothing happened.
    final = play(api, game, moves[half:], http=5)
    control_api = api_on(MemoryStore())
    control = new_game(control_api, 3, "flushed")
    expected = play(control_api, control, moves)
    assert {**final, "game_id": None} == {**expected, "game_id": None}
    history = orjson.loads(api.client.get(f"/v1/games/{gid}/history").get_data())
    assert [h["version"] for h in history] == list(range(1, len(moves) + 1))

    copy_all(store, database_url)
    assert archived(database_url, gid) == store.history(gid)  # every version once, as written
    store.close()


def test_a_finished_game_leaves_redis_and_stays_readable(api_on, redis_url: str,
                                                         database_url: str) -> None:
    store = RedisStore(redis_url)
    api = api_on(store, database_url=database_url, cache_ttl=1)
    game = new_game(api, 3, "finished")
    gid = game["game_id"]
    play(api, game, script(3, "finished"))
    before = answers(api, gid)
    assert orjson.loads(before[""][1])["status"] == "finished"
    copy_all(store, database_url)  # archived: the game may now leave Redis after 1 s unread
    time.sleep(1.5)
    assert store.load(gid) is None
    assert answers(api, gid) == before
    assert store.load(gid) is not None
    rows_before = archived(database_url, gid)
    copy_all(store, database_url)  # the put-back is queued like a create: a no-op for the archive
    assert archived(database_url, gid) == rows_before
    store.close()


def test_a_game_the_archive_never_had_is_not_found(api_on, redis_server, redis_url: str,
                                                   database_url: str) -> None:
    store = RedisStore(redis_url)
    api = api_on(store, database_url=database_url)
    game = new_game(api, 3, "unarchived")
    with redis_server.client() as client:
        client.flushall()
    response = api.client.get(f"/v1/games/{game['game_id']}")
    assert response.status_code == 404 and response.get_json()["code"] == "GAME_NOT_FOUND"
    response = api.client.get("/v1/games/never-created/history")
    assert response.status_code == 404
    store.close()


def test_with_postgresql_down_games_in_redis_play_on_and_others_are_503(api_on, redis_url: str) -> None:
    store = RedisStore(redis_url)
    api = api_on(store, database_url="postgresql://aos@127.0.0.1:1/down")
    moves = script(3, "pg-down")
    game = new_game(api, 3, "pg-down")
    started = time.monotonic()
    play(api, game, moves[:20], http=20)  # nothing on the move path touches PostgreSQL
    assert time.monotonic() - started < 10
    assert api.view(game["game_id"])["version"] == 20
    # A game not in Redis may be in the archive: unknown until PostgreSQL answers again.
    response = api.client.get("/v1/games/not-in-redis")
    assert response.status_code == 503 and response.get_json()["code"] == "STORE_UNAVAILABLE"
    assert response.headers["Retry-After"] == "1"
    store.close()


def test_a_move_retried_with_its_idempotency_key_after_a_redis_loss_gets_its_first_answer(
    api_on, redis_server, redis_url: str, database_url: str
) -> None:
    store = RedisStore(redis_url)
    api = api_on(store, database_url=database_url)
    moves = script(3, "idem-kept")
    game = new_game(api, 3, "idem-kept")
    gid = game["game_id"]
    answered = []
    for n, (seat, move) in enumerate(moves[:4]):
        response = api.move(gid, game["seats"][seat]["token"], move, Idempotency_Key=f"key-{n}")
        assert response.status_code == 200, response.get_json()
        answered.append(response.get_data())
    copy_all(store, database_url)
    with psycopg.connect(database_url) as conn:
        (kept,) = conn.execute("SELECT count(*) FROM game_idempotency WHERE game_id = %s", [gid]).fetchone()
    assert kept == 4  # the clients' keys; a request's own short-lived keys are not archived

    with redis_server.client() as client:
        client.flushall()
    # Each retry, first the last (whose seat is no longer to move), is its first answer again.
    for n in (3, 0, 2, 1):
        seat, move = moves[n]
        retried = api.move(gid, game["seats"][seat]["token"], move, Idempotency_Key=f"key-{n}")
        assert retried.status_code == 200, retried.get_json()
        assert retried.get_data() == answered[n]
    # The key with another move is still refused as reused, and the game is where it was.
    seat, move = moves[4]
    reused = api.move(gid, game["seats"][seat]["token"], move, Idempotency_Key="key-0")
    assert reused.status_code == 422 and reused.get_json()["code"] == "IDEMPOTENCY_KEY_REUSED"
    assert store.version(gid) == 4
    store.close()
