"""Hosting for many customers, over HTTP on a real Redis: tenant keys and scopes, private games,
a tenant's listing, deletion (410 after), bulk creates (all or none, clocks started later),
quotas and usage; and tenant B learns nothing of tenant A's private games."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator

import pytest
from flask import Flask
from prometheus_client import REGISTRY

from service.referee.tenancy import Tenancy
from service.store import RedisStore
from service.tenants import RedisKeys, new_key
from service.tenants.ledger import RedisLedger
from tests.api.conftest import NAMES, make_app

PLAYERS = [{"name": n} for n in NAMES[:3]]


class Host:
    """One instance, with keys for tenants Acme and Beta."""

    def __init__(self, app: Flask, registry: RedisKeys) -> None:
        self.app = app
        self.client = app.test_client()
        self.registry = registry
        self.keys: dict[str, str] = {}
        self.ids: dict[str, str] = {}
        for name, tenant, scopes in (("acme", "Acme", ["games:write", "games:read"]),
                                     ("acme_reader", "Acme", ["games:read"]),
                                     ("beta", "Beta", ["games:write", "games:read"])):
            key, record = new_key(tenant, scopes)
            registry.add(record)
            self.keys[name], self.ids[name] = key, record.key_id

    def as_(self, who: str | None) -> dict[str, str]:
        return {} if who is None else {"X-API-Key": self.keys[who]}

    def create(self, who: str | None, status: int = 201, **extra: object) -> dict:
        body = {"map": "rust_belt", "players": PLAYERS, "seed": "tenant", **extra}
        response = self.client.post("/v1/games", json=body, headers=self.as_(who))
        assert response.status_code == status, response.get_json()
        return response.get_json()


@pytest.fixture
def host_on(openapi, violations, redis_url: str) -> Iterator:
    made: list[tuple[RedisStore, RedisKeys, RedisLedger]] = []

    def build(**settings: object) -> Host:
        store = RedisStore(redis_url)
        app = make_app(openapi, violations, store, **settings)
        hosted: Tenancy = app.extensions["aos.tenancy"]
        hosted.registry, hosted.ledger = RedisKeys(redis_url), RedisLedger(redis_url)
        made.append((store, hosted.registry, hosted.ledger))  # type: ignore[arg-type]
        return Host(app, hosted.registry)  # type: ignore[arg-type]

    yield build
    for store, registry, ledger in made:
        store.close()
        registry.close()
        ledger.close()


def test_with_tenancy_required_creating_needs_a_key_with_games_write(host_on) -> None:
    host = host_on(tenancy="required")
    assert host.create(None, 401)["code"] == "API_KEY_REQUIRED"
    assert host.create("acme_reader", 403)["code"] == "API_KEY_SCOPE"
    made = host.create("acme")
    assert made["game_id"] and len(made["seats"]) == 3
    wrong = host.client.post("/v1/games", json={"map": "rust_belt", "players": PLAYERS},
                             headers={"X-API-Key": host.keys["acme"][:-2] + "zz"})
    assert wrong.status_code == 401 and wrong.get_json()["code"] == "API_KEY_INVALID"
    # Revoked on one instance: refused at once on another sharing the store.
    other = host_on(tenancy="required")
    host.registry.revoke(host.ids["acme"])
    refused = other.client.post("/v1/games", json={"map": "rust_belt", "players": PLAYERS},
                                headers=host.as_("acme"))
    assert refused.status_code == 401 and refused.get_json()["code"] == "API_KEY_INVALID"


def test_open_mode_is_as_before_and_a_private_game_needs_tenancy(host_on) -> None:
    host = host_on()
    assert host.create(None)["game_id"]
    owned = host.create("acme")
    listed = host.client.get("/v1/games", headers=host.as_("acme")).get_json()
    assert [g["game_id"] for g in listed["games"]] == [owned["game_id"]]
    assert host.create("acme", 400, private=True)["code"] == "PRIVATE_NEEDS_TENANCY"


def test_a_private_game_is_404_to_everyone_but_its_tenant_and_its_seats(host_on) -> None:
    host = host_on(tenancy="required")
    game = host.create("acme", private=True)
    public = host.create("acme")
    game_id, token = game["game_id"], game["seats"][0]["token"]
    for path in ("", "/legal-moves?seat=0", "/history", "/board.svg", "/seats"):
        for who in (None, "beta"):
            response = host.client.get(f"/v1/games/{game_id}{path}", headers=host.as_(who))
            assert response.status_code == 404, (path, who)
            assert response.get_json()["code"] == "GAME_NOT_FOUND"
    assert host.client.get(f"/v1/games/{game_id}", headers=host.as_("acme")).status_code == 200
    as_seat = {"Authorization": f"Bearer {token}"}
    assert host.client.get(f"/v1/games/{game_id}", headers=as_seat).status_code == 200
    assert host.client.get(f"/v1/games/{public['game_id']}", headers=host.as_("beta")).status_code == 200
    assert host.client.get(f"/v1/games/{public['game_id']}").status_code == 200


def test_the_listing_holds_only_the_callers_games_newest_first_in_pages(host_on) -> None:
    host = host_on(tenancy="required")
    acme = [host.create("acme")["game_id"] for _ in range(7)]
    iraq = host.create("acme", map="iraq", players=PLAYERS)["game_id"]
    beta = host.create("beta")["game_id"]
    seen, cursor = [], None
    while True:
        query = {"limit": 3, **({"cursor": cursor} if cursor else {})}
        page = host.client.get("/v1/games", query_string=query, headers=host.as_("acme_reader")).get_json()
        seen += [g["game_id"] for g in page["games"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [iraq, *reversed(acme)]
    only_iraq = host.client.get("/v1/games?map=iraq", headers=host.as_("acme")).get_json()["games"]
    summary = [(g["game_id"], g["map"], g["status"], g["version"]) for g in only_iraq]
    assert summary == [(iraq, "iraq", "active", 0)]
    assert host.client.get("/v1/games?status=finished", headers=host.as_("acme")).get_json()["games"] == []
    betas = host.client.get("/v1/games", headers=host.as_("beta")).get_json()["games"]
    assert [g["game_id"] for g in betas] == [beta]
    assert host.client.get("/v1/games").get_json()["code"] == "API_KEY_REQUIRED"
    bad = host.client.get("/v1/games?cursor=nonsense", headers=host.as_("acme"))
    assert bad.status_code == 400 and bad.get_json()["code"] == "BAD_CURSOR"


def test_a_deleted_game_answers_410_everywhere_and_leaves_the_listing(host_on) -> None:
    host = host_on(tenancy="required")
    game = host.create("acme")
    game_id, token = game["game_id"], game["seats"][game["active_seat"]]["token"]
    other = host.client.delete(f"/v1/games/{game_id}", headers=host.as_("beta"))
    assert other.status_code == 404  # another tenant's game is none of its business
    reader = host.client.delete(f"/v1/games/{game_id}", headers=host.as_("acme_reader"))
    assert reader.status_code == 403 and reader.get_json()["code"] == "API_KEY_SCOPE"
    assert host.client.delete(f"/v1/games/{game_id}").status_code == 401

    assert host.client.delete(f"/v1/games/{game_id}", headers=host.as_("acme")).status_code == 204
    for method, path in (("get", ""), ("get", "/legal-moves?seat=0"), ("get", "/history"), ("delete", "")):
        response = getattr(host.client, method)(f"/v1/games/{game_id}{path}", headers=host.as_("acme"))
        assert response.status_code == 410 and response.get_json()["code"] == "GAME_DELETED", (method, path)
    moved = host.client.post(f"/v1/games/{game_id}/moves", json={"type": "issue_shares", "count": 0},
                             headers={"Authorization": f"Bearer {token}"})
    assert moved.status_code == 410
    assert host.client.get("/v1/games", headers=host.as_("acme")).get_json()["games"] == []


def test_in_open_mode_the_creator_deletes_with_the_admin_token(host_on) -> None:
    host = host_on()
    game = host.create(None)
    seat_token = game["seats"][0]["token"]
    refused = host.client.delete(f"/v1/games/{game['game_id']}",
                                 headers={"Authorization": f"Bearer {seat_token}"})
    assert refused.status_code == 403 and refused.get_json()["code"] == "ADMIN_TOKEN_REQUIRED"
    done = host.client.delete(f"/v1/games/{game['game_id']}",
                              headers={"Authorization": f"Bearer {game['admin_token']}"})
    assert done.status_code == 204
    assert host.client.get(f"/v1/games/{game['game_id']}").status_code == 410


def test_a_bulk_create_makes_all_the_games_with_clocks_from_start_at(host_on) -> None:
    host = host_on(tenancy="required")
    start = dt.datetime.now(dt.UTC).replace(microsecond=0) + dt.timedelta(days=2)
    clock = {"clock": {"turn_seconds": 3600}}
    body = {"games": [{"map": "rust_belt", "players": PLAYERS, "options": clock} for _ in range(3)],
            "start_at": start.isoformat().replace("+00:00", "Z")}
    response = host.client.post("/v1/games/bulk", json=body, headers=host.as_("acme"))
    assert response.status_code == 201, response.get_json()
    made = response.get_json()["games"]
    assert len(made) == 3 and len({g["game_id"] for g in made}) == 3
    assert all(len(g["seats"]) == 3 and g["admin_token"] for g in made)
    deadline = dt.datetime.fromisoformat(made[0]["deadline"].replace("Z", "+00:00"))
    assert deadline == start + dt.timedelta(hours=1)
    listed = host.client.get("/v1/games", headers=host.as_("acme")).get_json()["games"]
    assert {g["game_id"] for g in listed} == {g["game_id"] for g in made}


def test_a_bulk_create_is_all_or_none(host_on) -> None:
    host = host_on(tenancy="required", tenant_games_per_day=4)
    games = [{"map": "rust_belt", "players": PLAYERS} for _ in range(3)]
    acme = host.as_("acme")
    mars = {"map": "mars", "players": PLAYERS}
    bad = host.client.post("/v1/games/bulk", json={"games": [*games[:2], mars]}, headers=acme)
    assert bad.status_code == 400 and bad.get_json()["index"] == 2
    bogus = {"map": "rust_belt", "players": PLAYERS, "options": {"bogus": 1}}
    refused = host.client.post("/v1/games/bulk", json={"games": [*games[:2], bogus]}, headers=acme)
    assert refused.status_code == 422 and refused.get_json()["index"] == 2
    assert host.client.get("/v1/games", headers=host.as_("acme")).get_json()["games"] == []
    # Five would pass the quota of four: none is made, and the answer says when to come back.
    over = host.client.post("/v1/games/bulk", json={"games": games + games[:2]}, headers=host.as_("acme"))
    assert over.status_code == 429 and over.get_json()["code"] == "QUOTA_EXCEEDED"
    assert 0 < int(over.headers["Retry-After"]) <= 86_400 and over.get_json()["quota"] == "games_per_day"
    assert over.headers["RateLimit-Policy"].startswith('"games_per_day";q=4')
    assert over.headers["RateLimit"] == f'"games_per_day";r=0;t={over.headers["Retry-After"]}'
    assert host.client.get("/v1/games", headers=host.as_("acme")).get_json()["games"] == []
    assert host.client.post("/v1/games/bulk", json={"games": games}, headers=acme).status_code == 201


def _usage_metric(tenant: str, kind: str) -> float:
    return REGISTRY.get_sample_value("aos_tenant_usage_total", {"tenant": tenant, "kind": kind}) or 0.0


def test_usage_counts_what_the_tenant_did_as_the_metrics_saw_it(host_on) -> None:
    host = host_on(tenancy="required")
    before = {kind: _usage_metric("Acme", kind) for kind in ("creates", "moves")}
    game = host.create("acme")
    host.create("acme")
    host.create("beta")
    seat = game["active_seat"]
    for _ in range(3):
        view = host.client.get(f"/v1/games/{game['game_id']}").get_json()
        seat = view["active_seat"]
        moved = host.client.post(f"/v1/games/{game['game_id']}/moves",
                                 json={"type": "issue_shares", "count": 0},
                                 headers={"Authorization": f"Bearer {game['seats'][seat]['token']}"})
        assert moved.status_code == 200, moved.get_json()
    today = dt.datetime.now(dt.UTC).date().isoformat()
    usage = host.client.get(f"/v1/usage?from={today}&to={today}", headers=host.as_("acme_reader")).get_json()
    counts = usage["days"][0]
    assert usage["tenant"] == "Acme" and counts["date"] == today
    assert (counts["creates"], counts["moves"]) == (2, 3)
    assert counts["creates"] == _usage_metric("Acme", "creates") - before["creates"]
    assert counts["moves"] == _usage_metric("Acme", "moves") - before["moves"]
    bad_dates = host.client.get("/v1/usage?from=2026-13-01&to=2026-13-02", headers=host.as_("acme"))
    assert bad_dates.status_code == 400
    assert host.client.get("/v1/usage").status_code == 401


def test_a_thousand_cross_tenant_requests_learn_nothing(host_on) -> None:
    host = host_on(tenancy="required")
    secret_names = [{"name": n} for n in ("Zelda-private", "Yusuf-private", "Xenia-private")]
    private = [host.create("acme", private=True, players=secret_names) for _ in range(3)]
    rng = random.Random(26)
    seen_statuses: set[int] = set()
    for n in range(1000):
        game = rng.choice(private)
        game_id = game["game_id"]
        headers = rng.choice([host.as_("beta"), {}, {"X-API-Key": "aos_" + "x" * 12 + "_" + "y" * 43},
                              {"Authorization": f"Bearer {game_id}.0.{'z' * 43}"}])
        method, path, body = rng.choice([
            ("get", "", None), ("get", "/legal-moves?seat=1", None), ("get", "/history", None),
            ("get", "/record", None), ("get", "/board.svg", None), ("get", "/seats", None),
            ("post", "/moves", {"type": "issue_shares", "count": 0}), ("delete", "", None),
            ("post", "/moves/validate", {"type": "issue_shares", "count": 0, "seat": 0}),
            ("get", "/webhooks", None),
        ])
        call = getattr(host.client, method)
        response = call(f"/v1/games/{game_id}{path}", headers=headers,
                        **({"json": body} if body is not None else {}))
        seen_statuses.add(response.status_code)
        text = response.get_data(as_text=True)
        response.close()
        assert response.status_code in (401, 404, 405), (n, method, path, headers, response.status_code)
        assert "private" not in text and "Zelda" not in text, (n, method, path)
    assert 404 in seen_statuses
    # Beta's listing and usage hold none of it; Acme's games are all still there.
    assert host.client.get("/v1/games", headers=host.as_("beta")).get_json()["games"] == []
    mine = host.client.get("/v1/games", headers=host.as_("acme")).get_json()["games"]
    assert {g["game_id"] for g in mine} == {g["game_id"] for g in private}


def test_a_tenants_streams_are_capped_counted_in_minutes_and_end_with_its_key(host_on, monkeypatch) -> None:
    from service.api.plumbing import tenancy as api_tenancy

    host = host_on(tenancy="required", tenant_open_streams=1, events_heartbeat=0.05)
    game = host.create("acme")
    path = f"/v1/games/{game['game_id']}/events"
    first = host.client.get(path, headers=host.as_("acme"), buffered=False)
    assert first.status_code == 200
    second = host.client.get(path, buffered=False)  # anyone's stream of Acme's game is Acme's
    assert second.status_code == 429 and second.get_json()["quota"] == "open_streams"
    assert second.headers["Retry-After"] == "5"
    first.close()
    today = dt.datetime.now(dt.UTC).date().isoformat()
    usage = host.client.get(f"/v1/usage?from={today}&to={today}", headers=host.as_("acme")).get_json()
    assert usage["days"][0]["stream_minutes"] == 1  # a minute begun is a minute counted

    # A stream opened with a key ends when the key is revoked.
    monkeypatch.setattr(api_tenancy, "KEY_CHECK_SECONDS", 0.0)
    third = host.client.get(path, headers=host.as_("acme"), buffered=False)
    assert third.status_code == 200
    chunks = iter(third.response)
    next(chunks)  # the first event
    host.registry.revoke(host.ids["acme"])
    rest = list(chunks)  # ends by itself: the heartbeats stop at the next check
    assert len(rest) < 10
    third.close()


def _today_usage(host: Host, who: str) -> dict:
    today = dt.datetime.now(dt.UTC).date().isoformat()
    usage = host.client.get(f"/v1/usage?from={today}&to={today}", headers=host.as_(who))
    assert usage.status_code == 200, usage.get_json()
    return usage.get_json()["days"][0]


def test_a_retry_with_the_same_idempotency_key_is_counted_once(host_on) -> None:
    host = host_on(tenancy="required")
    before = {kind: _usage_metric("Acme", kind) for kind in ("creates", "moves")}
    body = {"map": "rust_belt", "players": PLAYERS, "seed": "retry"}
    once = {**host.as_("acme"), "Idempotency-Key": "create-9b1c6f0e-4d2a-4b7e-a1c3-000000000001"}
    sent = [host.client.post("/v1/games", json=body, headers=once) for _ in range(3)]
    assert [r.status_code for r in sent] == [201, 201, 201]
    assert len({r.get_json()["game_id"] for r in sent}) == 1
    game = sent[0].get_json()
    bulk = {"games": [{"map": "rust_belt", "players": PLAYERS} for _ in range(4)]}
    once = {**host.as_("acme"), "Idempotency-Key": "bulk-9b1c6f0e-4d2a-4b7e-a1c3-000000000002"}
    made = [host.client.post("/v1/games/bulk", json=bulk, headers=once) for _ in range(2)]
    assert [r.status_code for r in made] == [201, 201]
    assert made[0].get_json() == made[1].get_json()
    seat = game["active_seat"]
    move = {"type": "issue_shares", "count": 0}
    for _ in range(3):
        moved = host.client.post(f"/v1/games/{game['game_id']}/moves", json=move,
                                 headers={"Authorization": f"Bearer {game['seats'][seat]['token']}",
                                          "Idempotency-Key": "m-1"})
        assert moved.status_code == 200, moved.get_json()
    counts = _today_usage(host, "acme")
    assert (counts["creates"], counts["moves"]) == (1 + 4, 1)
    assert counts["creates"] == _usage_metric("Acme", "creates") - before["creates"]
    assert counts["moves"] == _usage_metric("Acme", "moves") - before["moves"]
    listed = host.client.get("/v1/games", headers=host.as_("acme")).get_json()["games"]
    assert len(listed) == 5


def test_a_tenants_webhooks_are_capped_and_freed_when_deleted_or_gone(host_on, monkeypatch) -> None:
    monkeypatch.setenv("AOS_WEBHOOKS_ALLOW_PRIVATE", "1")
    host = host_on(tenancy="required", tenant_webhooks=3)
    games = [host.create("acme") for _ in range(3)]

    def register(game: dict, seat: int = 0) -> object:
        return host.client.post(f"/v1/games/{game['game_id']}/webhooks",
                                json={"url": "http://127.0.0.1:8999/hook", "events": ["move"]},
                                headers={"Authorization": f"Bearer {game['seats'][seat]['token']}"})

    made = [register(games[0], 0), register(games[0], 1), register(games[1], 0)]
    assert [r.status_code for r in made] == [201, 201, 201], made[0].get_json()["detail"]
    spent = register(games[2], 2)
    assert spent.status_code == 429 and spent.get_json()["code"] == "QUOTA_EXCEEDED"
    assert (spent.get_json()["quota"], spent.get_json()["limit"]) == ("webhooks", 3)
    assert spent.headers["Retry-After"] == "60"
    assert spent.headers["RateLimit-Policy"].startswith('"webhooks";q=3, ')
    assert spent.headers["RateLimit"] == '"webhooks";r=0;t=60'
    as_seat_2 = {"Authorization": f"Bearer {games[2]['seats'][2]['token']}"}
    assert host.client.get(f"/v1/games/{games[2]['game_id']}/webhooks", headers=as_seat_2).get_json() == []
    # Another tenant's webhooks are its own.
    beta = host.create("beta")
    assert register(beta).status_code == 201
    # Deleting one frees its place.
    hook = made[1].get_json()["id"]
    gone = host.client.delete(f"/v1/games/{games[0]['game_id']}/webhooks/{hook}",
                              headers={"Authorization": f"Bearer {games[0]['seats'][1]['token']}"})
    assert gone.status_code == 200
    assert register(games[2], 2).status_code == 201
    assert register(games[2], 1).status_code == 429
    # So does deleting a game with its webhooks, and a game that went by itself (it expired).
    assert host.client.delete(f"/v1/games/{games[1]['game_id']}", headers=host.as_("acme")).status_code == 204
    assert register(games[2], 1).status_code == 201
    assert register(games[2], 0).status_code == 429
    host.app.extensions["aos.games"].store.purge(games[0]["game_id"], 1)  # as an expiry would
    assert register(games[2], 0).status_code == 201


def test_a_key_made_with_its_own_webhooks_quota_holds_for_its_games(host_on, monkeypatch) -> None:
    monkeypatch.setenv("AOS_WEBHOOKS_ALLOW_PRIVATE", "1")
    host = host_on(tenancy="required", tenant_webhooks=100)
    key, record = new_key("Gamma", ["games:write", "games:read"], {"webhooks": 1})
    host.registry.add(record)
    made = host.client.post("/v1/games", json={"map": "rust_belt", "players": PLAYERS},
                            headers={"X-API-Key": key}).get_json()
    sent = [host.client.post(f"/v1/games/{made['game_id']}/webhooks",
                             json={"url": f"http://127.0.0.1:8999/{seat}", "events": ["move"]},
                             headers={"Authorization": f"Bearer {made['seats'][seat]['token']}"})
            for seat in (0, 1)]
    assert [r.status_code for r in sent] == [201, 429]
    assert sent[1].get_json()["limit"] == 1


def test_the_listing_reads_the_archive_when_redis_lost_the_games(host_on, database_url: str,
                                                                 redis_url: str) -> None:
    import redis

    from service.archive.copier import ArchiveCopier
    from service.referee.restore import describe
    from service.store.archive import Archive

    host = host_on(tenancy="required", database_url=database_url)
    made = [host.create("acme")["game_id"] for _ in range(3)]
    host.create("beta")
    hosted: Tenancy = host.app.extensions["aos.tenancy"]
    records = [hosted.registry.get(key_id) for key_id in host.ids.values()]
    archive = Archive(database_url)
    copier = ArchiveCopier(host.app.extensions["aos.games"].store, archive, describe, "c", cache_ttl=600)
    while copier.run_once():
        pass
    with redis.Redis.from_url(redis_url) as client:
        client.flushall()
    for record in records:  # the keys were in that Redis too
        hosted.registry.add(record)
    acme = host.as_("acme")
    first = host.client.get("/v1/games?limit=2", headers=acme).get_json()
    rest = host.client.get(f"/v1/games?limit=2&cursor={first['next_cursor']}", headers=acme).get_json()
    assert [g["game_id"] for g in first["games"] + rest["games"]] == made[::-1]
    assert rest["next_cursor"] is None
    assert {(g["status"], g["version"], g["map"]) for g in first["games"]} == {("active", 0, "rust_belt")}
    assert [g["name"] for g in first["games"][0]["players"]] == [p["name"] for p in PLAYERS]
    betas = host.client.get("/v1/games", headers=host.as_("beta")).get_json()["games"]
    assert len(betas) == 1 and betas[0]["game_id"] not in made
    archive.close()


def test_a_tenants_open_streams_are_counted_across_instances_and_a_dead_ones_free_themselves(host_on) -> None:
    import time

    from service.api.plumbing import tenancy as api_tenancy

    one = host_on(tenancy="required", tenant_open_streams=2, events_heartbeat=0.05)
    other = host_on(tenancy="required", tenant_open_streams=2, events_heartbeat=0.05)
    game = one.create("acme")
    path = f"/v1/games/{game['game_id']}/events"
    first = one.client.get(path, buffered=False)
    second = other.client.get(path, buffered=False)
    assert (first.status_code, second.status_code) == (200, 200)
    # Two are open, one on each instance: a third is refused on either.
    for host in (one, other):
        third = host.client.get(path, buffered=False)
        assert third.status_code == 429 and third.get_json()["quota"] == "open_streams"
        assert third.headers["RateLimit-Policy"].startswith('"open_streams";q=2')
    first.close()
    again = other.client.get(path, buffered=False)
    assert again.status_code == 200
    second.close()
    again.close()
    # A process that died with a stream open never gives its lease back: it runs out by itself.
    ledger = one.app.extensions["aos.tenancy"].ledger
    assert ledger.held("Acme", api_tenancy.STREAMS) == []
    for n in range(2):
        assert ledger.hold("Acme", api_tenancy.STREAMS, f"dead{n}", 2, until=time.time() + 1.0)
    assert one.client.get(path, buffered=False).status_code == 429
    time.sleep(1.1)
    late = one.client.get(path, buffered=False)
    assert late.status_code == 200
    late.close()


def test_a_long_stream_renews_its_lease(host_on, monkeypatch) -> None:
    import time

    from service.api.plumbing import tenancy as api_tenancy

    monkeypatch.setattr(api_tenancy, "STREAM_LEASE_SECONDS", 0.6)
    host = host_on(tenancy="required", tenant_open_streams=1, events_heartbeat=0.05)
    game = host.create("acme")
    path = f"/v1/games/{game['game_id']}/events"
    stream = host.client.get(path, buffered=False)
    chunks = iter(stream.response)
    ends = time.monotonic() + 1.5  # past two lease lengths, reading heartbeats all the while
    while time.monotonic() < ends:
        next(chunks)
    assert host.client.get(path, buffered=False).status_code == 429  # still held
    stream.close()


def test_a_bulk_refused_midway_is_made_whole_by_its_retry_and_a_retry_never_takes_back_games(host_on) -> None:
    host = host_on(tenancy="required")
    games = [{"map": "rust_belt", "players": PLAYERS} for _ in range(2)]
    bogus = {"map": "rust_belt", "players": PLAYERS, "options": {"bogus": 1}}
    once = {**host.as_("acme"), "Idempotency-Key": "bulk-9b1c6f0e-4d2a-4b7e-a1c3-00000000000a"}
    for _ in range(2):  # refused at game 2 each time: the first two were taken back, keys and all
        refused = host.client.post("/v1/games/bulk", json={"games": [*games, bogus]}, headers=once)
        assert refused.status_code == 422 and refused.get_json()["index"] == 2, refused.get_json()
    fixed = host.client.post("/v1/games/bulk", json={"games": games}, headers=once)
    assert fixed.status_code == 201, fixed.get_json()
    made = [g["game_id"] for g in fixed.get_json()["games"]]
    # The same key again with a game changed: refused at that game, and the games the key made stay.
    changed = host.client.post("/v1/games/bulk", json={"games": [games[0], bogus]}, headers=once)
    assert changed.status_code == 422 and changed.get_json()["code"] == "IDEMPOTENCY_KEY_REUSED"
    assert all(host.client.get(f"/v1/games/{g}").status_code == 200 for g in made)
    listed = host.client.get("/v1/games", headers=host.as_("acme")).get_json()["games"]
    assert sorted(g["game_id"] for g in listed) == sorted(made)
    assert _today_usage(host, "acme")["creates"] == 2


def test_a_create_retried_after_its_game_was_deleted_makes_a_new_game(host_on) -> None:
    host = host_on(tenancy="required")
    once = {**host.as_("acme"), "Idempotency-Key": "one-9b1c6f0e-4d2a-4b7e-a1c3-00000000000b"}
    body = {"map": "rust_belt", "players": PLAYERS}
    first = host.client.post("/v1/games", json=body, headers=once).get_json()["game_id"]
    assert host.client.delete(f"/v1/games/{first}", headers=host.as_("acme")).status_code == 204
    again = host.client.post("/v1/games", json=body, headers=once)
    assert again.status_code == 201 and again.get_json()["game_id"] != first
    assert _today_usage(host, "acme")["creates"] == 2


def test_a_keys_own_quotas_hold_for_the_games_it_made_whoever_moves_or_watches(host_on) -> None:
    host = host_on(tenancy="required", tenant_writes_per_second=1000, tenant_open_streams=1000,
                   events_heartbeat=0.05)
    key, record = new_key("Delta", ["games:write", "games:read"], {"writes_per_second": 1, "open_streams": 1})
    host.registry.add(record)
    game = host.client.post("/v1/games", json={"map": "rust_belt", "players": PLAYERS},
                            headers={"X-API-Key": key}).get_json()
    statuses = []
    for _ in range(3):  # within a second or two: two of them share a second
        seat = host.client.get(f"/v1/games/{game['game_id']}").get_json()["active_seat"]
        moved = host.client.post(f"/v1/games/{game['game_id']}/moves",
                                 json={"type": "issue_shares", "count": 0},
                                 headers={"Authorization": f"Bearer {game['seats'][seat]['token']}"})
        statuses.append(moved.status_code)
        if moved.status_code == 429:
            assert (moved.get_json()["quota"], moved.get_json()["limit"]) == ("writes_per_second", 1)
    assert 429 in statuses and 200 in statuses
    path = f"/v1/games/{game['game_id']}/events"
    first = host.client.get(path, buffered=False)  # a spectator's, without a key
    assert first.status_code == 200
    second = host.client.get(path, headers={"X-API-Key": key}, buffered=False)
    assert second.status_code == 429 and second.get_json()["limit"] == 1
    first.close()


def test_a_retry_is_answered_even_when_the_days_games_are_spent(host_on) -> None:
    host = host_on(tenancy="required", tenant_games_per_day=3)
    body = {"map": "rust_belt", "players": PLAYERS}
    once = {**host.as_("acme"), "Idempotency-Key": "one-9b1c6f0e-4d2a-4b7e-a1c3-00000000000c"}
    made = host.client.post("/v1/games", json=body, headers=once)
    bulk = {"games": [body, body]}
    twice = {**host.as_("acme"), "Idempotency-Key": "two-9b1c6f0e-4d2a-4b7e-a1c3-00000000000c"}
    both = host.client.post("/v1/games/bulk", json=bulk, headers=twice)
    assert (made.status_code, both.status_code) == (201, 201)
    # Three made: the quota is spent for new games, not for the answers already given.
    assert host.client.post("/v1/games", json=body, headers=host.as_("acme")).status_code == 429
    again = host.client.post("/v1/games", json=body, headers=once)
    assert again.status_code == 201 and again.get_json()["game_id"] == made.get_json()["game_id"]
    bulk_again = host.client.post("/v1/games/bulk", json=bulk, headers=twice)
    assert bulk_again.status_code == 201 and bulk_again.get_json() == both.get_json()
    assert _today_usage(host, "acme")["creates"] == 3


def test_concurrent_creates_on_two_instances_never_pass_the_days_quota(host_on) -> None:
    from concurrent.futures import ThreadPoolExecutor

    one, other = host_on(tenancy="required", tenant_games_per_day=5), host_on(tenancy="required",
                                                                              tenant_games_per_day=5)
    other.keys = one.keys  # the same keys, in the same store
    body = {"map": "rust_belt", "players": PLAYERS}

    def create(n: int) -> int:
        host = (one, other)[n % 2]
        client = host.app.test_client()
        return client.post("/v1/games", json=body, headers=one.as_("acme")).status_code

    with ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(create, range(16)))
    # Each is counted before it is made: the first five counted are made, the rest refused.
    assert sorted(statuses) == [201] * 5 + [429] * 11, statuses
    listed = one.client.get("/v1/games", headers=one.as_("acme")).get_json()["games"]
    assert len(listed) == 5 == _today_usage(one, "acme")["creates"]
    assert one.create("acme", 429)["quota"] == "games_per_day"


def test_guessing_keys_from_one_address_is_refused_before_any_key_is_read(host_on, monkeypatch) -> None:
    monkeypatch.setenv("AOS_MAX_AUTH_FAILURES_PER_MINUTE", "5")
    host = host_on(tenancy="required")
    reads: list[str] = []
    real_get = host.registry.get
    host.registry.get = lambda key_id: reads.append(key_id) or real_get(key_id)  # type: ignore[method-assign]
    guesses = [f"aos_{host.ids['acme']}_{'G' * 42}{n}" for n in range(8)]
    statuses = [host.client.get("/v1/games", headers={"X-API-Key": guess}).status_code for guess in guesses]
    assert statuses == [401] * 5 + [429] * 3
    assert len(reads) == 5  # the refused ones read no key
    refused = host.client.get("/v1/games", headers=host.as_("acme"))  # even the right key, this minute
    assert refused.status_code == 429 and refused.get_json()["code"] == "TOO_MANY_AUTH_FAILURES"
    assert host.client.get("/v1/maps").status_code == 200  # requests without a key go on
