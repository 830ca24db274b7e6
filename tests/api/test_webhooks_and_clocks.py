"""Webhook registrations and the clock option through the API (memory store; every request and
answer checked against openapi.yaml)."""

from __future__ import annotations

import random
import time

import pytest

from service.referee.clocks import parse_ms, rfc3339
from service.store import MemoryStore


def test_rfc3339_writes_each_time_as_strftime_does_whatever_came_before() -> None:
    # rfc3339 keeps the text of the last second it wrote: times in one second, the next, an
    # earlier one, and far apart all read as the plain formula gives them, and back exactly.
    rng = random.Random(3339)
    times = [0, 999, 1000, 1_700_000_000_123, 1_700_000_000_999, 1_700_000_001_000, 1_700_000_000_001,
             253_402_300_799_999]
    times += [rng.randrange(0, 4_000_000_000_000) for _ in range(200)]
    times += [times[-1] + rng.randrange(0, 1500) for _ in range(50)]
    for ms in times:
        plain = f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(ms // 1000))}.{ms % 1000:03d}Z"
        assert rfc3339(ms) == plain
        assert parse_ms(rfc3339(ms)) == ms


def hooks_url(game: dict) -> str:
    return f"/v1/games/{game['game_id']}/webhooks"


def auth(game: dict, seat: int) -> dict:
    return {"Authorization": f"Bearer {game['seats'][seat]['token']}"}


def test_a_url_to_loopback_or_a_private_address_is_refused_without_the_setting(api) -> None:
    game = api.create()
    for url in (
        "http://127.0.0.1:8080/hook",
        "http://localhost/x",
        "https://10.1.2.3/x",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/x",
        "http://[::ffff:127.0.0.1]/x",
        "http://0.0.0.0/x",
        "http://224.0.0.1/x",
    ):
        response = api.client.post(
            hooks_url(game), json={"url": url, "events": ["move"]}, headers=auth(game, 0)
        )
        assert response.status_code == 422, url
        assert response.get_json()["code"] == "WEBHOOK_URL_REFUSED"
    for url in ("ftp://example.com/x", "http://user:pw@example.com/x", "http:///nohost", "http://a b/"):
        response = api.client.post(
            hooks_url(game), json={"url": url, "events": ["move"]}, headers=auth(game, 0)
        )
        assert response.status_code == 422, url
    assert api.client.get(hooks_url(game), headers=auth(game, 0)).get_json() == []


@pytest.fixture
def private_api(api_on, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AOS_WEBHOOKS_ALLOW_PRIVATE", "1")
    return api_on(MemoryStore())


def test_a_seat_registers_lists_and_deletes_its_webhooks_and_the_game_does_not_move(private_api) -> None:
    api = private_api
    game = api.create()
    before = api.snapshot(game["game_id"])
    response = api.client.post(
        hooks_url(game),
        json={"url": "http://127.0.0.1:9999/a", "events": ["move", "turn"]},
        headers=auth(game, 1),
    )
    assert response.status_code == 201
    hook = response.get_json()
    assert hook["seat"] == 1 and hook["events"] == ["turn", "move"] and hook["secret"].startswith("whsec_")
    assert response.headers["Location"] == f"{hooks_url(game)}/{hook['id']}"
    assert api.snapshot(game["game_id"]) == before  # no new version, nothing in the history
    listed = api.client.get(hooks_url(game), headers=auth(game, 1)).get_json()
    assert listed == [{k: v for k, v in hook.items() if k != "secret"}]  # the secret is shown once
    assert api.client.get(hooks_url(game), headers=auth(game, 0)).get_json() == []  # per seat
    # Another seat cannot delete it; its own seat can.
    assert api.client.delete(f"{hooks_url(game)}/{hook['id']}", headers=auth(game, 0)).status_code == 404
    assert api.client.get(hooks_url(game)).status_code == 401
    response = api.client.delete(f"{hooks_url(game)}/{hook['id']}", headers=auth(game, 1))
    assert response.status_code == 200 and response.get_json() == []
    assert api.client.delete(f"{hooks_url(game)}/{hook['id']}", headers=auth(game, 1)).status_code == 404


def test_a_retry_with_the_idempotency_key_shows_the_same_registration_and_a_seat_has_at_most_five(
    private_api,
) -> None:
    api = private_api
    game = api.create()
    body = {"url": "http://127.0.0.1:9999/a", "events": ["move"]}
    headers = {**auth(game, 0), "Idempotency-Key": "hook-key-1"}
    first = api.client.post(hooks_url(game), json=body, headers=headers)
    again = api.client.post(hooks_url(game), json=body, headers=headers)
    assert first.status_code == again.status_code == 201 and first.get_json() == again.get_json()
    other = api.client.post(hooks_url(game), json={**body, "url": "http://127.0.0.1:9999/b"}, headers=headers)
    assert other.status_code == 422 and other.get_json()["code"] == "IDEMPOTENCY_KEY_REUSED"
    for n in range(4):
        assert api.client.post(hooks_url(game), json=body, headers=auth(game, 0)).status_code == 201, n
    response = api.client.post(hooks_url(game), json=body, headers=auth(game, 0))
    assert response.status_code == 422 and response.get_json()["code"] == "TOO_MANY_WEBHOOKS"
    bad = api.client.post(
        hooks_url(game), json={"url": "http://127.0.0.1/", "events": ["nope"]}, headers=auth(game, 0)
    )
    assert bad.status_code == 400


@pytest.mark.parametrize(
    "clock",
    [
        {"turn_seconds": 0},
        {"turn_seconds": 2592001},
        {"turn_seconds": "60"},
        {"turn_seconds": 60, "extra": 1},
        {},
        60,
    ],
)
def test_a_bad_clock_is_refused(api, clock) -> None:
    response = api.client.post(
        "/v1/games", json={"map": "rust_belt", "players": [{"name": "a"}] * 3, "options": {"clock": clock}}
    )
    assert response.status_code == 400


def test_the_deadline_is_the_commit_time_plus_the_turn_and_a_past_version_shows_its_own(api) -> None:
    game = api.create(options={"clock": {"turn_seconds": 90}})
    assert game["clock"] == {"turn_seconds": 90}
    created = parse_ms(game["deadline"]) - 90_000
    token = game["seats"][game["active_seat"]]["token"]
    response = api.move(
        game["game_id"], token, {"type": "issue_shares", "count": 0}, Idempotency_Key="clock-move-1"
    )
    moved = response.get_json()["game"]
    [entry] = api.client.get(f"/v1/games/{game['game_id']}/history").get_json()
    assert moved["deadline"] == rfc3339(parse_ms(entry["at"]) + 90_000)
    assert parse_ms(entry["at"]) >= created
    api.play(game, 2)
    # A retry of the move answers the view of version 1 again: made from the log, deadline and all.
    replay = api.move(
        game["game_id"], token, {"type": "issue_shares", "count": 0}, Idempotency_Key="clock-move-1"
    )
    assert replay.get_json()["game"] == moved
    untimed = api.create(seed="other")
    assert untimed["clock"] is None and untimed["deadline"] is None


def test_the_record_carries_the_clock_and_replays_into_a_game_with_it(api) -> None:
    game = api.create(options={"clock": {"turn_seconds": 3600}})
    api.play(game, 5)
    record = api.client.get(f"/v1/games/{game['game_id']}/record").get_json()
    assert record["options"]["clock"] == {"turn_seconds": 3600}
    record["seed"] = "test-seed"  # known to the test: the seed the game was created with
    response = api.client.post("/v1/games", json={"record": record})
    assert response.status_code == 201, response.get_json()
    replayed = response.get_json()
    assert replayed["version"] == 5 and replayed["clock"] == {"turn_seconds": 3600}
    assert replayed["deadline"] is not None
