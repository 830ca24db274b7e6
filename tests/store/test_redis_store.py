"""RedisStore specifics on a real redis-server: key layout, TTLs, outages."""

from __future__ import annotations

import socket
import time

import pytest
from redis.crc import key_slot

from service.store import IdemRecord, Outcome, RedisStore, StoreUnavailable
from service.store.keys import game_keys, idem_key, kept_key, shard_of


def test_a_games_keys_and_its_shards_share_one_hash_tag(redis_server, redis_url: str) -> None:
    store = RedisStore(redis_url)
    store.create("abc", state=b"s", meta=b"m", view=b"v", ttl=60, deadline=1e9)
    store.commit(
        "abc",
        expected_version=0,
        state=b"s1",
        view=b"v1",
        entries=[b"e"],
        ttl=60,
        idem=IdemRecord("k1", b"r", 30),
        deadline=2e9,
    )
    with redis_server.client() as client:
        keys = sorted(k.decode() for k in client.keys("*"))
    tag = f"aos:v2:{{s{shard_of('abc'):02d}}}"
    assert keys == [
        f"{tag}:clocks",
        f"{tag}:g:abc:idem:k1",
        f"{tag}:g:abc:log",
        f"{tag}:g:abc:state",
        f"{tag}:outbox",
    ]
    assert len({key_slot(k.encode()) for k in keys} | {key_slot(f"{tag}:events".encode())}) == 1


def test_commit_refreshes_ttls(redis_server, redis_url: str) -> None:
    store = RedisStore(redis_url)
    store.create("t", state=b"s", meta=b"m", view=b"v", ttl=50)
    with redis_server.client() as client:
        assert 45 <= client.ttl(game_keys("t").state) <= 50
        store.commit(
            "t",
            expected_version=0,
            state=b"s1",
            view=b"v1",
            entries=[b"e"],
            ttl=500,
            idem=IdemRecord("k", b"r", 20),
        )
        assert 495 <= client.ttl(game_keys("t").state) <= 500
        assert 495 <= client.ttl(game_keys("t").log) <= 500
        assert 15 <= client.ttl(idem_key("t", "k")) <= 20


def test_idle_game_expires(redis_url: str) -> None:
    store = RedisStore(redis_url)
    store.create("short", state=b"s", meta=b"m", view=b"v", ttl=1)
    assert store.version("short") == 0
    time.sleep(1.3)
    assert store.load("short") is None
    assert (
        store.commit(
            "short", expected_version=0, state=b"x", view=b"x", entries=[b"x"], ttl=1
        ).outcome
        is Outcome.MISSING
    )


def test_unreachable_redis_is_store_unavailable() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # free, so nothing listens there
    store = RedisStore(f"redis://127.0.0.1:{port}/0", connect_timeout=0.2, retries=0)
    for call in (
        store.ping,
        lambda: store.load("g"),
        lambda: store.load_view("g"),
        lambda: store.history("g"),
        lambda: store.create("g", state=b"s", meta=b"m", view=b"v", ttl=1),
        lambda: store.commit("g", expected_version=0, state=b"s", view=b"v", entries=[b"e"], ttl=1),
    ):
        with pytest.raises(StoreUnavailable):
            call()


def test_kill_and_restart_keeps_every_committed_move(durable_redis) -> None:
    store = RedisStore(durable_redis.url, connect_timeout=0.2, socket_timeout=0.5, retries=1)
    store.create("k", state=b"s0", meta=b"m", view=b"v0", ttl=600)
    for n in range(1, 6):
        assert (
            store.commit(
                "k",
                expected_version=n - 1,
                state=f"s{n}".encode(),
                view=f"v{n}".encode(),
                entries=[f"e{n}".encode()],
                ttl=600,
            ).outcome
            is Outcome.APPLIED
        )
    durable_redis.kill()
    with pytest.raises(StoreUnavailable):
        store.commit("k", expected_version=5, state=b"s6", view=b"v6", entries=[b"e6"], ttl=600)
    with pytest.raises(StoreUnavailable):
        store.ping()
    durable_redis.start()
    # The script cache is gone after a restart; EVALSHA falls back to EVAL.
    stored = store.load("k")
    assert (stored.version, stored.state) == (5, b"s5")
    assert store.history("k") == [f"e{n}".encode() for n in range(1, 6)]
    assert (
        store.commit(
            "k", expected_version=5, state=b"s6", view=b"v6", entries=[b"e6"], ttl=600
        ).outcome
        is Outcome.APPLIED
    )


def test_kept_values_share_the_games_hash_tag_and_expire(redis_server, redis_url: str) -> None:
    store = RedisStore(redis_url)
    store.create("abc", state=b"s", meta=b"m", view=b"v", ttl=60)
    store.keep("abc", "legal:1", 0, b"moves", ttl=30)
    with redis_server.client() as client:
        assert client.ttl(kept_key("abc", "legal:1")) in range(25, 31)
        keys = client.keys("*")
    assert len({key_slot(k) for k in keys}) == 1


def test_a_kept_value_replaced_while_it_is_read_is_not_taken_for_the_version_read(
        redis_server, redis_url: str) -> None:
    # Games.legal_moves reads the game (peek_kept), then the kept value with a plain GET (kept):
    # a newer version's value may land in between, and must not be answered as the older
    # version's.
    store = RedisStore(redis_url)
    store.create("abc", state=b"s", meta=b"m", view=b"v", ttl=60)
    store.keep("abc", "legal:1", 0, b"moves at 0", ttl=30)
    stored, read_lately = store.peek_kept("abc", "legal:1")
    assert (stored.version, read_lately) == (0, False)
    assert store.kept("abc", "legal:1", 0) == b"moves at 0"
    store.keep("abc", "legal:1", 1, b"moves at 1", ttl=30)
    assert store.kept("abc", "legal:1", 0) is None
    assert store.kept("abc", "legal:1", 1) == b"moves at 1"


def test_a_read_of_a_kept_name_is_plain_commands_in_one_round_trip(redis_server, redis_url: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # No script: a read answers with Redis's scripts flushed, marks and all, in one round trip
    # (with its value, for load_kept); a peek reads the mark and writes nothing (mark_read marks
    # it, once the answer is sent); a read of a game that is not there leaves no mark.
    from service.store import redis_store

    store = RedisStore(redis_url)
    store.create("abc", state=b"s", meta=b"m", view=b"v", ttl=60)
    store.keep("abc", "legal:1", 0, b"moves", ttl=30)
    sent = []
    replies = redis_store._replies

    def counted(client, *commands):  # type: ignore[no-untyped-def]
        sent.append([command[0] for command in commands])
        return replies(client, *commands)

    monkeypatch.setattr(redis_store, "_replies", counted)
    with redis_server.client() as client:
        client.script_flush()
    stored, kept, read_lately = store.load_kept("abc", "legal:1", 30)
    assert (stored.version, stored.state, kept, read_lately) == (0, b"s", b"moves", False)
    peeks = [store.peek_kept("abc", "legal:1"), store.peek_kept("abc", "legal:2")]
    store.mark_read("abc", "legal:2", 20)
    peeks.append(store.peek_kept("abc", "legal:2"))
    assert sent == [["HMGET", "TTL", "SET", "GET"], ["HMGET", "TTL", "GET"],
                    ["HMGET", "TTL", "GET"], ["SET"], ["HMGET", "TTL", "GET"]]
    game = store.load("abc")
    assert peeks == [(game, True), (game, False), (game, True)]
    with redis_server.client() as client:
        assert client.ttl(kept_key("abc", "read:legal:1")) in range(25, 31)
        assert client.ttl(kept_key("abc", "read:legal:2")) in range(15, 21)
        assert store.peek_kept("gone", "legal:1") is None
        assert store.load_kept("gone", "legal:1", 30) is None
        assert not client.exists(kept_key("gone", "read:legal:1"))


def test_a_commit_between_the_read_of_a_game_and_its_kept_value_is_not_taken_for_them(
        redis_server, redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # load_kept's commands travel in one round trip, not one atomic step: a commit and its
    # value landing between the game's read and the value's makes the value another version's,
    # and it is not taken for the version read.
    from service.store import redis_store

    store, other = RedisStore(redis_url), RedisStore(redis_url)
    store.create("abc", state=b"s", meta=b"m", view=b"v", ttl=60)
    assert store.load_kept("abc", "legal:1", 30)[1:] == (None, False)  # read once at 0
    replies = redis_store._replies

    def commit_in_between(client, *commands):  # type: ignore[no-untyped-def]
        if commands[0][0] != "HMGET":  # the other store's commit itself
            return replies(client, *commands)
        read = replies(client, *commands[:1])
        other.commit("abc", expected_version=0, state=b"s1", view=b"v1", entries=[b"e"], ttl=60)
        other.keep("abc", "legal:1", 1, b"moves at 1", ttl=30)
        return read + replies(client, *commands[1:])

    monkeypatch.setattr(redis_store, "_replies", commit_in_between)
    stored, kept, read_lately = store.load_kept("abc", "legal:1", 30)
    # The game as read (version 0), without version 1's value; read before, at version 0.
    assert (stored.version, stored.state, kept, read_lately) == (0, b"s", None, True)


def test_a_commit_after_redis_forgot_its_scripts(redis_server, redis_url: str) -> None:
    # The commit goes by SHA (redis_store._evalsha); a Redis restarted (or its scripts flushed)
    # answers NOSCRIPT, and the commit loads its script and lands, once.
    store = RedisStore(redis_url)
    store.create("abc", state=b"s", meta=b"m", view=b"v", ttl=60)
    store.load("abc")  # the client and its scripts made
    with redis_server.client() as client:
        client.script_flush()
    result = store.commit("abc", expected_version=0, state=b"s1", view=b"v1", entries=[b"e"], ttl=60)
    assert (result.outcome, result.version) == (Outcome.APPLIED, 1)
    assert store.history("abc") == [b"e"]
    with redis_server.client() as client:
        client.script_flush()
    assert store.commit("abc", expected_version=0, entries=[b"f"], ttl=60).outcome is Outcome.CONFLICT


def test_a_read_that_failed_leaves_no_reply_behind(redis_server, redis_url: str) -> None:
    # A read's two commands share one round trip on one connection (redis_store._replies): when the
    # first fails, the second's reply is never read, and the reads after must not get it.
    store = RedisStore(redis_url)
    store.create("abc", state=b"s", meta=b"m", view=b"v", ttl=60)
    with redis_server.client() as client:
        client.set(game_keys("other").state, b"not a hash")
    with pytest.raises(StoreUnavailable):
        store.load("other")
    assert store.version("abc") == 0
    assert store.load("abc").state == b"s"
    assert store.meta("abc") == (0, b"m")
