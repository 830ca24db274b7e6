"""The tenant ledger: whose games (newest first, in pages that neither skip nor repeat), and the
daily counts quotas and usage are judged on; on memory and on a real Redis alike."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from service.tenants.ledger import Ledger, MemoryLedger, RedisLedger, day_of, seconds_to_midnight


@pytest.fixture(params=["memory", "redis"])
def ledger(request: pytest.FixtureRequest) -> Iterator[Ledger]:
    if request.param == "memory":
        yield MemoryLedger()
        return
    made = RedisLedger(request.getfixturevalue("redis_url"))
    yield made
    made.close()


def test_pages_list_a_tenants_games_newest_first_without_gaps_or_repeats(ledger: Ledger) -> None:
    # 130 games over 40 milliseconds: many share a millisecond, which the cursor must get right.
    made = [(1_000 + n // 3, f"g{n:03d}") for n in range(130)]
    for ms, game_id in made:
        ledger.add_game("Acme", game_id, "rust_belt" if ms % 2 else "iraq", ms)
    ledger.add_game("Beta", "b1", "berlin", 5_000)
    seen: list[str] = []
    before = None
    while True:
        page = ledger.games("Acme", before=before, count=25)
        if not page:
            break
        seen.extend(g.game_id for g in page)
        before = (page[-1].created_ms, page[-1].game_id)
    assert seen == [g for _, g in sorted(made, reverse=True)]
    first = ledger.games("Acme", before=None, count=1)[0]
    assert (first.game_id, first.map, first.created_ms) == ("g129", "rust_belt", 1_043)
    assert [g.game_id for g in ledger.games("Beta", before=None, count=10)] == ["b1"]

    ledger.remove_game("Acme", "g129")
    assert ledger.games("Acme", before=None, count=1)[0].game_id == "g128"
    assert ledger.games("Nobody", before=None, count=10) == []


def test_daily_counts_add_up_per_tenant_and_day(ledger: Ledger) -> None:
    day1, day2 = 1_767_225_600.0, 1_767_225_600.0 + 86_400  # 2026-01-01 and -02, UTC
    assert ledger.count("Acme", "creates", at=day1) == 1
    assert ledger.count("Acme", "creates", at=day1 + 60) == 2
    assert ledger.count("Acme", "moves", 5, at=day2) == 5
    assert ledger.count("Beta", "creates", at=day1) == 1
    usage = ledger.usage("Acme", [day_of(day1), day_of(day2), "2026-01-03"])
    assert usage == {
        "2026-01-01": {"creates": 2, "moves": 0, "stream_minutes": 0, "webhook_deliveries": 0},
        "2026-01-02": {"creates": 0, "moves": 5, "stream_minutes": 0, "webhook_deliveries": 0},
        "2026-01-03": {"creates": 0, "moves": 0, "stream_minutes": 0, "webhook_deliveries": 0},
    }


def test_a_per_second_count_starts_again_each_second(ledger: Ledger) -> None:
    assert [ledger.per_second("Acme", "writes", at=100.2) for _ in range(3)] == [1, 2, 3]
    assert ledger.per_second("Beta", "writes", at=100.5) == 1
    assert ledger.per_second("Acme", "writes", at=101.0) == 1


def test_days_are_utc_and_the_quota_day_ends_at_midnight() -> None:
    assert day_of(1_767_225_599.0) == "2025-12-31" and day_of(1_767_225_600.0) == "2026-01-01"
    assert seconds_to_midnight(1_767_225_600.0 - 30) == 30
    assert seconds_to_midnight(1_767_225_600.0) == 86_400


def test_leases_are_capped_per_tenant_renewed_released_and_expire_by_themselves(ledger: Ledger) -> None:
    now = 1_000_000.0
    assert all(ledger.hold("A", "streams", f"s{n}", 3, until=now + 30, now=now) for n in range(3))
    assert not ledger.hold("A", "streams", "s3", 3, until=now + 30, now=now)  # all three held
    assert ledger.hold("B", "streams", "s3", 3, until=now + 30, now=now)  # B's own are B's
    assert ledger.hold("A", "streams", "s0", 3, until=now + 90, now=now + 10)  # its own: renewed
    ledger.release("A", "streams", "s1")
    assert ledger.hold("A", "streams", "s3", 3, until=now + 40, now=now + 10)
    assert ledger.held("A", "streams", now=now + 10) == ["s0", "s2", "s3"]
    # s2 was never renewed (its holder died): past its time its lease is free again.
    assert ledger.held("A", "streams", now=now + 35) == ["s0", "s3"]
    assert ledger.hold("A", "streams", "s4", 3, until=now + 60, now=now + 35)
    assert not ledger.hold("A", "streams", "s5", 3, until=now + 60, now=now + 35)
    # A lease until released (a webhook) never runs out.
    assert ledger.hold("A", "webhooks", "g/h", 1, until=float("inf"), now=now)
    assert ledger.held("A", "webhooks", now=now + 10**9) == ["g/h"]
    assert not ledger.hold("A", "webhooks", "g/i", 1, until=float("inf"), now=now + 10**9)
