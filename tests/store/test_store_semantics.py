"""The store contract, run against MemoryStore and against RedisStore on a real redis-server."""

from __future__ import annotations

import threading
import time

import pytest

from service.store import (
    Ahead,
    CreateRecord,
    GameExists,
    GameStore,
    IdemRecord,
    MemoryStore,
    Outcome,
    RedisStore,
)
from service.store.keys import SHARDS, shard_of


def create(store: GameStore, game_id: str = "g1", ttl: int = 3600) -> None:
    assert store.create(game_id, state=b"s0", meta=b"m", view=b"v0", ttl=ttl) is None


def commit(store: GameStore, expected: int, n: int, game_id: str = "g1", **kw: object):
    return store.commit(
        game_id,
        expected_version=expected,
        state=f"s{n}".encode(),
        view=f"v{n}".encode(),
        entries=[f"e{n}".encode()],
        ttl=3600,
        **kw,
    )


def test_create_then_load(store: GameStore) -> None:
    create(store)
    stored = store.load("g1")
    assert (stored.version, stored.state, stored.meta) == (0, b"s0", b"m")
    assert store.load_view("g1") == (0, b"v0")
    assert store.version("g1") == 0
    assert store.history("g1") == []


def test_unknown_game(store: GameStore) -> None:
    assert store.load("nope") is None
    assert store.load_view("nope") is None
    assert store.version("nope") is None
    assert store.history("nope") is None
    assert commit(store, 0, 1, game_id="nope").outcome is Outcome.MISSING


def test_create_twice_is_refused(store: GameStore) -> None:
    create(store)
    with pytest.raises(GameExists):
        create(store)
    assert store.load("g1").state == b"s0"


def test_compare_and_set(store: GameStore) -> None:
    create(store)
    applied = commit(store, 0, 1)
    assert (applied.outcome, applied.version) == (Outcome.APPLIED, 1)
    stale = commit(store, 0, 99)
    assert (stale.outcome, stale.version) == (Outcome.CONFLICT, 1)
    assert commit(store, 1, 2).version == 2
    assert store.load("g1").state == b"s2"
    assert store.load_view("g1") == (2, b"v2")
    assert store.history("g1") == [b"e1", b"e2"]


def test_a_commit_given_the_meta_it_read_conflicts_when_meta_changed(store: GameStore) -> None:
    # A meta-only commit keeps the version, so only the meta itself tells two writers apart.
    create(store)
    first = store.commit("g1", expected_version=0, ttl=3600, meta=b"m-orders", expected_meta=b"m")
    assert (first.outcome, first.version) == (Outcome.APPLIED, 0)
    stale = commit(store, 0, 1, meta=b"m-stale", expected_meta=b"m")
    assert (stale.outcome, stale.version) == (Outcome.CONFLICT, 0)
    stored = store.load("g1")
    assert (stored.version, stored.state, stored.meta) == (0, b"s0", b"m-orders")
    assert store.history("g1") == []
    fresh = commit(store, 0, 1, meta=b"m-fired", expected_meta=b"m-orders")
    assert (fresh.outcome, fresh.version) == (Outcome.APPLIED, 1)
    assert store.load("g1").meta == b"m-fired"
    assert commit(store, 1, 2).outcome is Outcome.APPLIED  # no expected meta: version only


def test_idempotency_record_is_written_with_the_move(store: GameStore) -> None:
    create(store)
    first = commit(store, 0, 1, idem=IdemRecord("k", b"response-1", 600))
    assert first.outcome is Outcome.APPLIED
    assert store.idempotency_record("g1", "k") == b"response-1"
    again = commit(store, 1, 2, idem=IdemRecord("k", b"response-2", 600))
    assert (again.outcome, again.replay) == (Outcome.REPLAYED, b"response-1")
    assert store.version("g1") == 1
    assert store.history("g1") == [b"e1"]


def test_idempotent_create(store: GameStore) -> None:
    record = CreateRecord("digest-c", b"created", 600)
    assert store.create("g2", state=b"s", meta=b"m", view=b"v", ttl=60, record=record) is None
    repeat = store.create("g2", state=b"x", meta=b"x", view=b"x", ttl=60, record=record)
    assert repeat == b"created"
    assert store.load("g2").state == b"s"
    shard = shard_of("g2")
    assert store.create_record(shard, "digest-c") == b"created"
    assert store.create_record((shard + 1) % SHARDS, "digest-c") is None
    store.drop_create_record(shard, "digest-c")
    assert store.create_record(shard, "digest-c") is None


def test_race_of_many_threads_has_one_winner(store: GameStore) -> None:
    create(store)
    threads, results = 16, []
    barrier = threading.Barrier(threads)

    def writer(n: int) -> None:
        barrier.wait()
        results.append(commit(store, 0, n))

    pool = [threading.Thread(target=writer, args=(n,)) for n in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    winners = [r for r in results if r.outcome is Outcome.APPLIED]
    assert len(winners) == 1
    losers = [r for r in results if r is not winners[0]]
    assert all(r.outcome is Outcome.CONFLICT and r.version == 1 for r in losers)
    assert store.version("g1") == 1
    assert len(store.history("g1")) == 1


def test_memory_store_expires_idle_games() -> None:
    now = [1000.0]
    store = MemoryStore(clock=lambda: now[0])
    create(store, ttl=10)
    now[0] += 9
    assert commit(store, 0, 1).outcome is Outcome.APPLIED  # refreshes the expiry to 3600
    now[0] += 3599
    assert store.commit("g1", expected_version=1, ttl=3600, meta=b"m").outcome is Outcome.APPLIED
    now[0] += 3601  # no read in a whole TTL since that write
    assert store.load("g1") is None
    assert store.history("g1") is None


def test_create_with_a_log(store: GameStore) -> None:
    log = [f"e{n}".encode() for n in range(1, 2501)]
    assert store.create("imp", state=b"s", meta=b"m", view=b"v", ttl=60, log=log) is None
    assert store.version("imp") == 2500
    assert store.history("imp") == log
    assert store.load("imp", with_view=True).view == b"v"
    assert commit(store, 2500, 2501, game_id="imp").version == 2501


def test_kept_values_are_read_back_with_the_game_at_their_version_only(store: GameStore) -> None:
    create(store)
    assert store.load_kept("g1", "legal:1", 60) == (store.load("g1"), None, False)
    # A read marks the name read lately: its next read, at any version, knows it.
    assert store.load_kept("g1", "legal:1", 60) == (store.load("g1"), None, True)
    store.keep("g1", "legal:1", 0, b"moves", ttl=60)
    assert store.load_kept("g1", "legal:1", 60) == (store.load("g1"), b"moves", True)
    assert store.load_kept("g1", "legal:2", 60)[1:] == (None, False)
    assert store.load_kept("g2", "legal:1", 60) is None
    # A value kept for another version is never read back, whatever its bytes look like.
    store.keep("g1", "legal:2", 10, b"0\nmoves", ttl=60)
    assert store.load_kept("g1", "legal:2", 60)[1:] == (None, True)
    # A value kept at the version is read back whether its name was read before or not (a
    # hint, kept by the worker that worked it out, is read by a seat that never read one).
    store.keep("g1", "legal:3", 0, b"1\n2\n", ttl=60)
    assert store.load_kept("g1", "legal:3", 60)[1:] == (b"1\n2\n", False)
    # The game moves on: what was kept at version 0 is not read at version 1, and the name is
    # still one read lately.
    assert commit(store, 0, 1).outcome is Outcome.APPLIED
    stored, kept, read_lately = store.load_kept("g1", "legal:1", 60)
    assert (stored.version, stored.state, kept, read_lately) == (1, b"s1", None, True)
    store.keep("g1", "legal:1", 1, b"moves at 1", ttl=60)
    assert store.load_kept("g1", "legal:1", 60)[1:] == (b"moves at 1", True)


def test_a_peek_at_a_kept_name_is_the_game_and_its_mark_of_a_read(store: GameStore) -> None:
    """peek_kept: the game, and whether the name was read lately, without the value and
    without marking it; mark_read marks it (what a commit's `ahead` asks for), load_kept reads
    and marks. A game that is not there is None."""
    create(store)
    store.keep("g1", "legal:1", 0, b"moves", ttl=60)
    assert store.peek_kept("g1", "legal:1") == (store.load("g1"), False)
    assert store.peek_kept("g1", "legal:1") == (store.load("g1"), False)
    store.mark_read("g1", "legal:1", 60)
    assert store.peek_kept("g1", "legal:1") == (store.load("g1"), True)
    assert store.load_kept("g1", "legal:1", 60)[1:] == (b"moves", True)
    assert store.peek_kept("g2", "legal:1") is None
    # The mark is what a commit asks whether to keep ahead: a peek alone leaves it a no, a
    # mark makes it a yes.
    assert store.peek_kept("g1", "legal:2") == (store.load("g1"), False)
    assert commit(store, 0, 1, ahead=Ahead("legal:2", b"pending", 5)).ahead_read is False
    store.mark_read("g1", "legal:2", 60)
    assert commit(store, 1, 2, ahead=Ahead("legal:2", b"pending", 5)).ahead_read is True


def test_a_commit_keeps_its_ahead_value_when_the_name_is_read_lately(store: GameStore) -> None:
    """Whether to work a listing out ahead, asked and marked in the commit's own step
    (Games.list_ahead runs only on a yes): a name never read is not, and nothing is kept for it;
    one read at any version is, with or without an idempotency record, and its value is kept at
    the new version, where a reader finds it (load_kept); a commit that is not applied says no
    and keeps nothing."""
    create(store)
    result = commit(store, 0, 1, ahead=Ahead("legal:1", b"pending", 5))
    assert (result.outcome, result.version, result.ahead_read) == (Outcome.APPLIED, 1, False)
    stored, kept, again = store.load_kept("g1", "legal:1", 60)  # read at version 1
    assert (stored.version, kept, again) == (1, None, False)
    result = commit(store, 1, 2, ahead=Ahead("legal:1", b"pending", 5), idem=IdemRecord("k2", b"r", 60))
    assert (result.outcome, result.version, result.ahead_read) == (Outcome.APPLIED, 2, True)
    stored, kept, _ = store.load_kept("g1", "legal:1", 60)
    assert (stored.version, kept) == (2, b"pending")
    assert store.kept("g1", "legal:1", 2) == b"pending"
    assert commit(store, 2, 3, ahead=Ahead("legal:2", b"pending", 5)).ahead_read is False
    assert store.load_kept("g1", "legal:2", 60)[1] is None
    assert commit(store, 3, 4).ahead_read is False  # nothing asked
    assert store.load_kept("g1", "legal:1", 60)[1] is None  # version 2's value is not version 4's
    conflict = commit(store, 1, 5, ahead=Ahead("legal:1", b"pending", 5))
    assert (conflict.outcome, conflict.ahead_read) == (Outcome.CONFLICT, False)
    assert store.history("g1") == [b"e1", b"e2", b"e3", b"e4"]
    assert store.load_kept("g1", "legal:1", 60)[1] is None


def test_a_late_keep_of_an_earlier_version_is_never_read_as_the_newer_ones(store: GameStore) -> None:
    """A keep that comes after the game moved on (a listing worked out ahead, slower than the
    next move) may replace the newer version's value, but is never read back as that
    version's: its readers find nothing kept and work out their own."""
    create(store)
    store.load_kept("g1", "legal:1", 60)
    assert commit(store, 0, 1, ahead=Ahead("legal:1", b"pending", 5)).ahead_read
    store.keep("g1", "legal:1", 0, b"moves at 0", 60, wake=True)
    stored, kept, _ = store.load_kept("g1", "legal:1", 60)
    assert (stored.version, kept) == (1, None)
    assert store.kept("g1", "legal:1", 1) is None


def test_a_commits_ahead_value_lets_go_the_wake_ups_of_an_earlier_one(redis_url: str) -> None:
    """On Redis, a keep leaves wake-ups for the readers that wait on its name (await_kept); the
    commit that marks the name again at a new version lets them go, so that a reader of the new
    version waits for the new value instead of waking for the old one. (MemoryStore's readers
    look again every few milliseconds and keep no wake-ups.)"""
    store = RedisStore(redis_url)
    try:
        create(store)
        store.load_kept("g1", "legal:1", 60)
        store.keep("g1", "legal:1", 0, b"moves at 0", 60, wake=True)
        started = time.monotonic()
        store.await_kept("g1", "legal:1", 1.0)
        assert time.monotonic() - started < 0.5  # woken by that keep
        assert commit(store, 0, 1, ahead=Ahead("legal:1", b"pending", 5)).ahead_read
        started = time.monotonic()
        store.await_kept("g1", "legal:1", 0.2)
        assert time.monotonic() - started >= 0.15, "woken by the earlier version's keep"
    finally:
        store.close()


def test_memory_store_lets_kept_values_and_request_keys_lapse_and_sweeps_them() -> None:
    now = [0.0]
    store = MemoryStore(clock=lambda: now[0])
    create(store)
    store.keep("g1", "legal:0", 0, b"x", ttl=10)
    assert store._kept.get(("g1", "legal:0")) == (0, b"x")
    for n in range(1, 1100):
        commit(store, n - 1, n, idem=IdemRecord(f"request-{n}", b"r", 5))
        now[0] += 1
    assert store._kept.get(("g1", "legal:0")) is None
    # Each request's own key lapses after 5 s and the sweep drops it: a handful remain, not 1099.
    assert len(store._idem) < 1024


# ---- replace_meta: the compare-and-set of a game's token hashes ---------------------------------


def test_replace_meta_writes_only_over_the_expected_meta(store: GameStore) -> None:
    create(store)
    assert store.replace_meta("g1", expected=b"m", meta=b"m2") is Outcome.APPLIED
    assert store.load("g1").meta == b"m2"
    # A writer that read the old meta loses, and writes nothing.
    assert store.replace_meta("g1", expected=b"m", meta=b"m3") is Outcome.CONFLICT
    assert store.load("g1").meta == b"m2"
    assert store.replace_meta("nope", expected=b"m", meta=b"m3") is Outcome.MISSING
    assert store.load("nope") is None


def test_replace_meta_leaves_the_game_and_its_log_alone(store: GameStore) -> None:
    create(store)
    assert commit(store, 0, 1).outcome is Outcome.APPLIED
    assert store.replace_meta("g1", expected=b"m", meta=b"m2") is Outcome.APPLIED
    stored = store.load("g1", with_view=True)
    assert (stored.version, stored.state, stored.view, stored.meta) == (1, b"s1", b"v1", b"m2")
    assert store.history("g1") == [b"e1"]
    assert commit(store, 1, 2).outcome is Outcome.APPLIED  # moves go on as before


def test_replace_meta_is_queued_for_the_archive(store: GameStore) -> None:
    create(store)
    assert store.replace_meta("g1", expected=b"m", meta=b"m2") is Outcome.APPLIED
    changes = store.outbox_read("archive", "w")
    assert [(c.version, c.entries, c.meta, c.created) for c in changes] == [
        (0, [], b"m", True), (0, [], b"m2", False)]


def test_replace_meta_races_have_one_winner(store: GameStore) -> None:
    create(store)
    outcomes: list[Outcome] = []
    barrier = threading.Barrier(8)

    def write(n: int) -> None:
        barrier.wait()
        outcomes.append(store.replace_meta("g1", expected=b"m", meta=f"m-{n}".encode()))

    threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert sorted(o.value for o in outcomes) == ["applied"] + ["conflict"] * 7
    winner = store.load("g1").meta
    assert winner.startswith(b"m-")
