"""The core's tenancy: who a key says the caller is, what each scope allows, the quotas on
creates and writes, whose games a listing holds, and what a deleted game answers."""

from __future__ import annotations

import orjson
import pytest

from service.referee.errors import GameError
from service.referee.games import Games
from service.referee.settings import Settings
from service.referee.tenancy import ANONYMOUS, Tenancy
from service.store import MemoryStore
from service.tenants import MemoryKeys, new_key
from service.tenants.ledger import MemoryLedger

DAY = 1_767_225_600.0  # 2026-01-01T00:00:00Z


def tenancy(**settings: object) -> tuple[Tenancy, dict[str, str]]:
    registry = MemoryKeys()
    keys = {}
    for name, scopes in (("writer", ["games:write", "games:read"]), ("reader", ["games:read"]),
                         ("other", ["games:write", "games:read"])):
        key, record = new_key("Acme" if name != "other" else "Beta", scopes)
        registry.add(record)
        keys[name] = key
    revoked, record = new_key("Acme", ["games:write"])
    registry.add(record)
    registry.revoke(record.key_id)
    keys["revoked"] = revoked
    return Tenancy(Settings(**settings), registry, MemoryLedger()), keys  # type: ignore[arg-type]


def code(call: object) -> str:
    with pytest.raises(GameError) as raised:
        call()  # type: ignore[operator]
    return raised.value.code


def test_a_key_names_its_tenant_and_a_bad_key_is_refused() -> None:
    hosted, keys = tenancy()
    assert hosted.caller(None) is ANONYMOUS and ANONYMOUS.tenant is None
    assert hosted.caller(keys["writer"]).tenant == "Acme"
    assert hosted.caller(keys["other"]).tenant == "Beta"
    wrong_secret = keys["writer"][:-1] + ("x" if keys["writer"][-1] != "x" else "y")
    for bad in (wrong_secret, "aos_", "Bearer x", keys["revoked"], "aos_zzzzzzzzzzzz_" + "a" * 43):
        assert code(lambda bad=bad: hosted.caller(bad)) == "API_KEY_INVALID"


def test_scopes_decide_what_a_key_may_do() -> None:
    hosted, keys = tenancy(tenancy="required")
    reader, writer = hosted.caller(keys["reader"]), hosted.caller(keys["writer"])
    assert code(lambda: hosted.may_create(ANONYMOUS)) == "API_KEY_REQUIRED"
    assert code(lambda: hosted.may_create(reader)) == "API_KEY_SCOPE"
    hosted.may_create(writer)
    hosted.need(reader, "games:read")
    # Open mode: anyone creates, but a key that comes must be able to.
    open_mode, keys = tenancy()
    open_mode.may_create(ANONYMOUS)
    assert code(lambda: open_mode.may_create(open_mode.caller(keys["reader"]))) == "API_KEY_SCOPE"


def test_games_a_day_are_counted_per_tenant_and_refused_past_the_quota() -> None:
    hosted, keys = tenancy(tenant_games_per_day=3)
    acme, beta = hosted.caller(keys["writer"]), hosted.caller(keys["other"])
    hosted.charge_creates(acme, 2, now=DAY + 10)
    for n in range(2):
        hosted.created(acme, f"g{n}", "rust_belt", int((DAY + 10) * 1000))
    with pytest.raises(GameError) as raised:
        hosted.charge_creates(acme, 2, now=DAY + 20)  # 2 + 2 > 3: both refused
    assert raised.value.code == "QUOTA_EXCEEDED"
    assert raised.value.extra == {"quota": "games_per_day", "limit": 3, "retry_after": 86_380}
    hosted.charge_creates(acme, 1, now=DAY + 20)  # one more fits
    hosted.charge_creates(beta, 3, now=DAY + 20)  # another tenant's day is its own
    next_day = hosted.charge_creates(acme, 3, now=DAY + 86_400)  # and so is the next day
    next_day.refund(1)  # one of them was not made after all: its place is free again
    hosted.charge_creates(acme, 1, now=DAY + 86_410)
    assert code(lambda: hosted.charge_creates(acme, 1, now=DAY + 86_420)) == "QUOTA_EXCEEDED"
    usage = hosted.usage(acme, "2026-01-01", "2026-01-02")
    assert usage["days"][0] == {"date": "2026-01-01", "creates": 3, "moves": 0, "stream_minutes": 0,
                                "webhook_deliveries": 0}
    assert usage["days"][1]["creates"] == 3
    assert code(lambda: hosted.usage(acme, "2026-01-02", "2026-01-01")) == "BAD_DATE"
    assert code(lambda: hosted.usage(ANONYMOUS, "2026-01-01", "2026-01-01")) == "API_KEY_REQUIRED"


def test_a_tenants_writes_a_second_are_capped() -> None:
    hosted, _ = tenancy(tenant_writes_per_second=5)
    meta = {"tenant": "Acme"}
    for _ in range(5):
        hosted.write(meta)
    with pytest.raises(GameError) as raised:
        hosted.write(meta)
    assert raised.value.code == "QUOTA_EXCEEDED" and raised.value.extra["quota"] == "writes_per_second"
    hosted.write({"tenant": "Beta"})
    hosted.write({})  # a game of nobody's is not metered


def test_a_private_game_is_seen_by_its_tenant_and_its_seats_only() -> None:
    hosted, keys = tenancy()
    acme, beta = hosted.caller(keys["writer"]), hosted.caller(keys["other"])
    meta = {"tenant": "Acme", "private": True, "tokens": [], "admin": "0" * 64}
    assert hosted.may_see(acme, meta, None)
    assert not hosted.may_see(beta, meta, None) and not hosted.may_see(ANONYMOUS, meta, "junk")
    assert hosted.may_see(beta, {"tenant": "Acme"}, None)  # not private: anyone with its id
    assert code(lambda: hosted.owner_meta(ANONYMOUS, True)) == "API_KEY_REQUIRED"


def test_a_created_game_belongs_to_its_tenant_and_a_deleted_one_answers_gone() -> None:
    hosted, keys = tenancy()
    acme = hosted.caller(keys["writer"])
    games = Games(MemoryStore(), Settings())
    games.tenancy = hosted
    body = {"map": "rust_belt", "players": [{"name": n} for n in ("Ann", "Bob", "Cat")], "seed": "t"}
    made = games.create(body, body, None, owner=hosted.owner_meta(acme, private=True))
    view = orjson.loads(made.body)
    hosted.created(acme, made.game_id, "rust_belt", 1)
    meta = orjson.loads(games.load(made.game_id).meta)
    assert meta["tenant"] == "Acme" and meta["private"] is True
    listed, cursor = hosted.page(acme, games.store, None, None, 10)
    assert [g["game_id"] for g in listed] == [made.game_id] and cursor is None
    assert hosted.page(hosted.caller(keys["other"]), games.store, None, None, 10) == ([], None)

    # Moves on a tenant's game are its usage.
    seat = view["active_seat"]
    stored = games.load(made.game_id)
    games.apply(made.game_id, seat, {"type": "issue_shares", "count": 0}, if_match=None,
                idempotency_key=None, stored=stored)
    assert hosted.ledger.usage("Acme", [hosted_day()])[hosted_day()]["moves"] == 1

    assert games.delete(made.game_id) is True
    assert code(lambda: games.view(made.game_id)) == "GAME_DELETED"
    assert code(lambda: games.view("never-made")) == "GAME_NOT_FOUND"


def hosted_day() -> str:
    import time

    from service.tenants.ledger import day_of

    return day_of(time.time())
