"""The worker's loop and its outbox consumers: each change handled at least once, by one consumer
of a group at a time, and taken over when its consumer dies."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from service.jobs.runner import OutboxConsumer, Runner
from service.store import GameStore, MemoryStore, OutboxItem


class Recorder(OutboxConsumer):
    name = "recorder"
    group = "recorder"

    def __init__(
        self, store: GameStore, consumer: str, seen: list, fail: set[str] | None = None, **kw: object
    ) -> None:
        super().__init__(store, consumer, **kw)
        self.seen = seen
        self.fail = fail if fail is not None else set()

    def handle(self, items: Sequence[OutboxItem]) -> Sequence[OutboxItem]:
        done = []
        for item in items:
            self.seen.append((self.consumer, item.game_id))
            if item.game_id in self.fail:
                self.fail.discard(item.game_id)  # fails once, then works
            else:
                done.append(item)
        return done


def make_games(store: GameStore, n: int) -> None:
    for i in range(n):
        store.create(f"g{i}", state=b"s", meta=b"m", view=b"v", ttl=60)


def test_two_consumers_of_a_group_share_the_changes_without_doubling(store: GameStore) -> None:
    make_games(store, 40)
    seen: list = []
    a, b = Recorder(store, "a", seen, batch=1), Recorder(store, "b", seen, batch=1)
    while a.run_once() + b.run_once():
        pass
    assert sorted(g for _, g in seen) == sorted(f"g{i}" for i in range(40))
    assert {c for c, _ in seen} == {"a", "b"}
    assert a.backlog() == 0


def test_a_change_not_done_is_taken_again_and_one_a_dead_consumer_took_is_claimed(store: GameStore) -> None:
    make_games(store, 3)
    seen: list = []
    flaky = Recorder(store, "flaky", seen, fail={"g1"}, claim_idle_ms=0)
    assert flaky.run_once() == 3
    assert flaky.backlog() == 1  # g1 failed: still pending
    assert flaky.run_once() == 1  # claimed again (idle 0 ms) and done
    assert [g for _, g in seen].count("g1") == 2 and flaky.backlog() == 0
    store.create("g9", state=b"s", meta=b"m", view=b"v", ttl=60)
    dead = store.outbox_read("recorder", "dead")  # taken, never acknowledged
    assert [i.game_id for i in dead] == ["g9"]
    heir = Recorder(store, "heir", seen, claim_idle_ms=0)
    assert heir.run_once() == 1 and seen[-1] == ("heir", "g9") and heir.backlog() == 0


def test_the_runner_keeps_going_after_a_job_fails_and_stops_when_told() -> None:
    store = MemoryStore()
    seen: list = []

    class Broken:
        name = "broken"
        calls = 0

        def run_once(self) -> int:
            Broken.calls += 1
            raise RuntimeError("a bug")

    runner = Runner([Broken(), Recorder(store, "r", seen)], idle_sleep=0.01, error_sleep=0.01)
    stop = threading.Event()
    thread = threading.Thread(target=runner.run, args=(stop,))
    thread.start()
    make_games(store, 2)
    stop.wait(0.2)
    stop.set()
    thread.join(5)
    assert not thread.is_alive()
    assert Broken.calls > 1
    assert sorted(g for _, g in seen) == ["g0", "g1"]
