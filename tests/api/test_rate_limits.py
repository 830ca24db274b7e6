"""Rate limits: creates and imports per client address, writes per seat token, reads of whole
histories per client address by the versions they read, shared by every instance through Redis,
refused with 429 problem+json, Retry-After and the IETF draft's fields."""

from __future__ import annotations

import re

import pytest

from service.api.plumbing.limits import storage_uri
from service.referee.settings import Settings
from service.store import MemoryStore, RedisStore
from tests.api.conftest import NAMES
from tests.api.test_hostile import assert_problem
from tests.conftest import free_port

NEW_GAME = {"map": "rust_belt", "players": [{"name": n} for n in NAMES[:3]], "seed": "limits"}
# draft-ietf-httpapi-ratelimit-headers: a List of Items, a String naming each policy.
POLICY_ITEM = re.compile(r'^"([a-z]+-\d+s)";q=(\d+);w=(\d+)$')
STATE_ITEM = re.compile(r'^"([a-z]+-\d+s)";r=(\d+);t=(\d+)$')


def items(field: str, pattern: re.Pattern) -> dict[str, tuple[int, int]]:
    parsed = {}
    for member in field.split(", "):
        match = pattern.fullmatch(member)
        assert match, member
        parsed[match[1]] = (int(match[2]), int(match[3]))
    return parsed


def create(api, address: str = "198.51.100.7", body: dict | None = None):
    return api.client.post("/v1/games", json=body or NEW_GAME, headers={"X-Forwarded-For": address})


def record_of(api, game_id: str) -> dict:
    response = api.client.get(f"/v1/games/{game_id}/record")
    return {**response.get_json(), "seed": "limits"}


def test_creates_are_limited_per_address_with_429_and_the_draft_fields(api_on) -> None:
    api = api_on(MemoryStore(), rate_limit_create="3/minute;10/hour")
    for remaining in (2, 1, 0):
        response = create(api)
        assert response.status_code == 201
        policies = items(response.headers["RateLimit-Policy"], POLICY_ITEM)
        assert policies == {"create-60s": (3, 60), "create-3600s": (10, 3600)}
        state = items(response.headers["RateLimit"], STATE_ITEM)
        assert state["create-60s"][0] == remaining and 0 < state["create-60s"][1] <= 60
    refused = create(api)
    body = assert_problem(refused, 429, "RATE_LIMITED")
    assert body["policy"] == "create-60s"
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert items(refused.headers["RateLimit"], STATE_ITEM)["create-60s"][0] == 0
    assert "RateLimit-Policy" in refused.headers
    # Another address has its own allowance.
    assert create(api, "203.0.113.5").status_code == 201


def test_imports_have_their_own_allowance(api_on) -> None:
    api = api_on(MemoryStore(), rate_limit_create="1/minute", rate_limit_import="2/minute")
    game = create(api).get_json()
    assert_problem(create(api), 429, "RATE_LIMITED")  # creates are spent...
    imported = create(api, body={"record": record_of(api, game["game_id"])})
    assert imported.status_code == 201, imported.get_json()  # ...imports are not
    assert set(items(imported.headers["RateLimit-Policy"], POLICY_ITEM)) == {"import-60s"}
    assert create(api, body={"record": record_of(api, game["game_id"])}).status_code == 201
    refused = create(api, body={"record": record_of(api, game["game_id"])})
    assert assert_problem(refused, 429, "RATE_LIMITED")["policy"] == "import-60s"


def test_writes_are_limited_per_seat_token_moves_and_validations_alike(api_on) -> None:
    api = api_on(MemoryStore(), rate_limit_writes="3/minute")
    game = create(api).get_json()
    gid, seat = game["game_id"], game["active_seat"]
    mine = game["seats"][seat]["token"]
    move = {"type": "issue_shares", "count": 0}
    headers = {"Authorization": f"Bearer {mine}"}
    assert api.client.post(f"/v1/games/{gid}/moves/validate", json=move, headers=headers).status_code == 200
    assert api.client.post(f"/v1/games/{gid}/moves/validate", json=move, headers=headers).status_code == 200
    applied = api.move(gid, mine, move)
    assert applied.status_code == 200
    assert items(applied.headers["RateLimit"], STATE_ITEM)["writes-60s"][0] == 0
    before = api.snapshot(gid)
    refused = api.move(gid, mine, {"type": "bid", "amount": 1})
    assert assert_problem(refused, 429, "RATE_LIMITED")["policy"] == "writes-60s"
    assert api.snapshot(gid) == before  # refused before anything was looked at
    # The next seat's token has its own allowance, and is not charged for the first's.
    nxt = api.view(gid)["active_seat"]
    assert api.move(gid, game["seats"][nxt]["token"], move).status_code == 200
    # Reads are never limited.
    for _ in range(5):
        assert api.client.get(f"/v1/games/{gid}").status_code == 200


def test_a_forged_token_spends_its_own_allowance_not_the_seats(api_on) -> None:
    api = api_on(MemoryStore(), rate_limit_writes="2/minute")
    game = create(api).get_json()
    gid, seat = game["game_id"], game["active_seat"]
    token = game["seats"][seat]["token"]
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    for _ in range(2):
        assert api.move(gid, forged, {"type": "issue_shares", "count": 0}).status_code == 401
    assert_problem(api.move(gid, forged, {"type": "issue_shares", "count": 0}), 429, "RATE_LIMITED")
    assert api.move(gid, token, {"type": "issue_shares", "count": 0}).status_code == 200


def test_a_validation_without_a_token_counts_against_its_address(api_on) -> None:
    api = api_on(MemoryStore(), rate_limit_writes="1/minute")
    game = create(api).get_json()
    path = f"/v1/games/{game['game_id']}/moves/validate"
    move = {"type": "issue_shares", "count": 0, "seat": game["active_seat"]}
    assert api.client.post(path, json=move, headers={"X-Forwarded-For": "192.0.2.1"}).status_code == 200
    assert_problem(api.client.post(path, json=move, headers={"X-Forwarded-For": "192.0.2.1"}), 429)
    assert api.client.post(path, json=move, headers={"X-Forwarded-For": "192.0.2.2"}).status_code == 200


def test_a_client_cannot_choose_its_address_unless_it_is_a_trusted_proxy(api_on) -> None:
    # The peer is 203.0.113.9, not in FORWARDED_ALLOW_IPS: its X-Forwarded-For is ignored.
    api = api_on(MemoryStore(), rate_limit_create="1/minute", trusted_proxies="127.0.0.1,10.0.0.0/8")

    def from_peer(peer: str, forwarded: str):
        return api.client.post("/v1/games", json=NEW_GAME, headers={"X-Forwarded-For": forwarded},
                               environ_base={"REMOTE_ADDR": peer})
    assert from_peer("203.0.113.9", "192.0.2.1").status_code == 201
    assert_problem(from_peer("203.0.113.9", "192.0.2.2"), 429)  # same peer, whatever it claims
    # A trusted proxy's X-Forwarded-For names the client: the last entry, the one it appended.
    assert from_peer("10.1.2.3", "1.1.1.1, 192.0.2.3").status_code == 201
    assert_problem(from_peer("10.9.9.9", "8.8.8.8, 192.0.2.3"), 429)


def test_exempt_addresses_and_the_switch(api_on) -> None:
    api = api_on(MemoryStore(), rate_limit_create="1/minute", rate_limit_exempt="192.0.2.0/24")
    for _ in range(3):
        assert create(api, "192.0.2.40").status_code == 201
    off = api_on(MemoryStore(), rate_limit_create="1/minute", rate_limits=False)
    for _ in range(3):
        response = create(off)
        assert response.status_code == 201 and "RateLimit" not in response.headers


def test_limits_are_shared_by_two_instances_on_one_redis(api_on, redis_url: str) -> None:
    settings = {"rate_limit_create": "3/minute", "rate_limit_writes": "4/minute"}
    settings["rate_limit_storage"] = redis_url
    one = api_on(RedisStore(redis_url), **settings)
    two = api_on(RedisStore(redis_url), **settings)
    assert create(one).status_code == 201
    assert create(two).status_code == 201
    game = create(one).get_json()
    assert_problem(create(two), 429, "RATE_LIMITED")
    assert_problem(create(one), 429, "RATE_LIMITED")
    # A seat's writes, alternating between the instances, spend one allowance.
    gid, seat = game["game_id"], game["active_seat"]
    token = game["seats"][seat]["token"]
    move = {"type": "issue_shares", "count": 0}
    for api in (one, two, one):
        assert api.client.post(f"/v1/games/{gid}/moves/validate", json=move,
                               headers={"Authorization": f"Bearer {token}"}).status_code == 200
    assert two.move(gid, token, move).status_code == 200
    assert_problem(one.move(gid, token, move), 429, "RATE_LIMITED")


def test_when_the_limits_redis_is_down_requests_still_succeed_and_limits_hold_per_process(api_on) -> None:
    dead = f"redis://127.0.0.1:{free_port()}/0"
    api = api_on(MemoryStore(), rate_limit_create="2/minute", rate_limit_storage=dead, redis_timeout=0.2)
    assert create(api).status_code == 201
    assert create(api).status_code == 201
    assert_problem(create(api), 429, "RATE_LIMITED")


def test_settings_come_from_the_environment() -> None:
    env = {
        "AOS_RATE_LIMIT_CREATE": "5/minute",
        "AOS_RATE_LIMIT_IMPORT": "1/hour",
        "AOS_RATE_LIMIT_WRITES": "9/second",
        "AOS_RATE_LIMIT_HISTORY": "500/minute",
        "AOS_RATE_LIMIT_EXEMPT": "10.0.0.0/8",
        "AOS_RATE_LIMITS": "off",
        "REDIS_URL": "redis://r:6379/0",
        "FORWARDED_ALLOW_IPS": "*",
    }
    settings = Settings.from_env(env)
    assert (settings.rate_limit_create, settings.rate_limit_import, settings.rate_limit_writes) == (
        "5/minute", "1/hour", "9/second")
    assert settings.rate_limit_history == "500/minute"
    assert Settings.from_env({}).rate_limit_history == "10000/minute;100000/hour"
    assert settings.rate_limits is False and settings.rate_limit_exempt == "10.0.0.0/8"
    assert settings.rate_limit_storage == "redis://r:6379/0" and settings.trusted_proxies == "*"
    assert Settings.from_env({}).rate_limits is True and Settings.from_env({}).rate_limit_storage is None


@pytest.mark.parametrize(
    "url, uri, options",
    [
        (None, "memory://", {}),
        ("redis://h:6379/0", "redis://h:6379/0", {}),
        ("rediss://:pw@h:6380/1", "rediss://:pw@h:6380/1", {}),
        ("redis+cluster://h:7000", "redis+cluster://h:7000", {}),
        ("rediss+cluster://:pw@h:7000", "redis+cluster://:pw@h:7000", {"ssl": True}),
    ],
)
def test_the_counters_live_in_the_games_redis(url, uri, options) -> None:
    assert storage_uri(url) == (uri, options)


def test_tokens_not_of_the_games_form_count_against_their_address(api_on) -> None:
    api = api_on(MemoryStore(), rate_limit_writes="2/minute")
    game = api.create()
    gid = game["game_id"]
    # Made-up strings, each different: one bucket, the address's, not one each.
    statuses = [api.move(gid, f"junk-{n}", {"type": "issue_shares", "count": 0}).status_code
                for n in range(4)]
    assert statuses[:2] == [401, 401] and statuses[2:] == [429, 429]


def test_an_address_whose_tokens_keep_being_refused_is_refused_before_any_game_is_read(
    api_on, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("AOS_MAX_AUTH_FAILURES_PER_MINUTE", "5")
    store = MemoryStore()
    api = api_on(store, rate_limits=False)
    game = api.create()
    gid, seat = game["game_id"], game["active_seat"]
    loads: list[str] = []
    real_load = store.load
    store.load = lambda game_id, **kw: loads.append(game_id) or real_load(game_id, **kw)  # type: ignore[method-assign]
    forged = [f"{gid}.{seat}.{'x' * 40}{n}" for n in range(8)]
    statuses = [api.move(gid, token, {"type": "issue_shares", "count": 0}).status_code for token in forged]
    assert statuses == [401] * 5 + [429] * 3
    assert len(loads) == 5  # the refused ones read no game
    refused = api.move(gid, forged[0], {"type": "issue_shares", "count": 0})
    assert refused.get_json()["code"] == "TOO_MANY_AUTH_FAILURES" and refused.headers["Retry-After"]
    # Another address, and reads without a token, are not held back.
    other = api.client.post(f"/v1/games/{gid}/moves", json={"type": "issue_shares", "count": 0},
                            headers={"Authorization": f"Bearer {game['seats'][seat]['token']}"},
                            environ_base={"REMOTE_ADDR": "192.0.2.7"})
    assert other.status_code == 200, other.get_json()
    assert api.client.get(f"/v1/games/{gid}").status_code == 200


def read(api, path: str, address: str, **headers: str):  # type: ignore[no-untyped-def]
    return api.client.get(path, headers={"X-Forwarded-For": address, **headers})


def replay(api, gid: str, after: int, address: str):  # type: ignore[no-untyped-def]
    response = read(api, f"/v1/games/{gid}/events?after={after}", address, Accept="application/x-ndjson")
    response.close()
    return response


def test_reads_of_whole_histories_are_limited_by_the_versions_they_replay(api_on) -> None:
    api = api_on(MemoryStore(), rate_limit_history="100/minute;1000/hour")
    game = api.create(seed="budget")
    version = api.play(game, 40)["version"]
    assert version == 40
    gid, a, b = game["game_id"], "198.51.100.7", "203.0.113.5"
    # A stream replaying from the start costs 40, a history or a record read 4 (a tenth): 88.
    assert replay(api, gid, 0, a).status_code == 200
    assert read(api, f"/v1/games/{gid}/history", a).status_code == 200
    assert read(api, f"/v1/games/{gid}/record", a).status_code == 200
    assert replay(api, gid, 0, a).status_code == 200
    refused = replay(api, gid, 0, a)
    body = assert_problem(refused, 429, "RATE_LIMITED")
    assert body["policy"] == "history-60s" and "has 12 left and this read needs 40" in body["detail"]
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert items(refused.headers["RateLimit-Policy"], POLICY_ITEM) == {
        "history-60s": (100, 60), "history-3600s": (1000, 3600)}
    assert items(refused.headers["RateLimit"], STATE_ITEM)["history-60s"][0] == 12
    # What is left is spent on reads that cost less: a stream resumed near the end (5), then a
    # history (4: the pages read it at each load); the next history is one too many.
    assert replay(api, gid, 35, a).status_code == 200
    assert read(api, f"/v1/games/{gid}/history", a).status_code == 200
    assert_problem(read(api, f"/v1/games/{gid}/history", a), 429, "RATE_LIMITED")
    # The game and the other reads are not limited, and another address has its own budget.
    assert read(api, f"/v1/games/{gid}", a).status_code == 200
    assert read(api, f"/v1/games/{gid}/history", b).status_code == 200


def test_a_game_longer_than_the_budget_is_replayed_once_a_window(api_on) -> None:
    api = api_on(MemoryStore(), rate_limit_history="30/minute")
    game = api.create(seed="budget")
    api.play(game, 40)
    assert replay(api, game["game_id"], 0, "198.51.100.7").status_code == 200
    assert replay(api, game["game_id"], 0, "198.51.100.7").status_code == 429


def test_the_history_budget_is_off_with_the_rate_limits_and_for_exempt_addresses(api_on) -> None:
    for settings in ({"rate_limits": False}, {"rate_limit_exempt": "198.51.100.0/24"}):
        api = api_on(MemoryStore(), rate_limit_history="2/minute", **settings)
        game = api.create(seed="budget")
        api.play(game, 20)
        for _ in range(3):
            assert read(api, f"/v1/games/{game['game_id']}/history", "198.51.100.7").status_code == 200


def test_the_history_budget_is_shared_by_two_instances_on_one_redis(api_on, redis_url: str) -> None:
    settings = {"rate_limit_history": "5/minute", "rate_limit_storage": redis_url}
    one = api_on(RedisStore(redis_url), **settings)
    two = api_on(RedisStore(redis_url), **settings)
    game = one.create(seed="shared-budget")
    one.play(game, 20)
    path = f"/v1/games/{game['game_id']}/history"
    assert read(one, path, "198.51.100.9").status_code == 200  # 2 (a tenth of 20)
    assert read(two, path, "198.51.100.9").status_code == 200  # 4
    assert_problem(read(one, path, "198.51.100.9"), 429, "RATE_LIMITED")
    assert_problem(read(two, path, "198.51.100.9"), 429, "RATE_LIMITED")
