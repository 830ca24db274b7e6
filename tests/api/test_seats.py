"""The game-admin token: it reissues a seat's token (the old one stops working at once) and reads
which seats are claimed; and the maps' ETag, Cache-Control and 304."""

from __future__ import annotations

import threading

import orjson
import pytest

from service.referee import admin, tokens
from service.store import Outcome


def admin_get(api, gid: str, token: str):  # type: ignore[no-untyped-def]
    return api.client.get(f"/v1/games/{gid}/seats", headers={"Authorization": f"Bearer {token}"})


def reissue(api, gid: str, seat: int, token: str, **headers: str):  # type: ignore[no-untyped-def]
    headers = {k.replace("_", "-"): v for k, v in headers.items()}
    return api.client.post(
        f"/v1/games/{gid}/seats/{seat}/token", headers={"Authorization": f"Bearer {token}", **headers}
    )


def test_creation_shows_an_admin_token_once_and_stores_only_its_hash(api) -> None:
    game = api.create()
    token = game["admin_token"]
    assert token.startswith(f"{game['game_id']}.admin.") and len(token.rsplit(".", 1)[1]) >= 40
    stored = api.app.extensions["aos.games"].store.load(game["game_id"])
    meta = orjson.loads(stored.meta)
    assert meta["admin"] == tokens.digest(token)
    assert token.encode() not in stored.meta and token.encode() not in stored.state
    assert "admin_token" not in api.view(game["game_id"])


def test_seats_start_unclaimed_and_a_used_token_claims_its_seat(api) -> None:
    game = api.create()
    gid, seat = game["game_id"], game["active_seat"]
    listed = admin_get(api, gid, game["admin_token"])
    assert listed.status_code == 200
    assert listed.get_json() == {
        "seats": [{"seat": s["seat"], "name": s["name"], "claimed": False} for s in game["seats"]]
    }
    other = (seat + 1) % 3
    # A dry run with a token claims too; reads without one do not.
    validated = api.client.post(f"/v1/games/{gid}/moves/validate", json={"type": "pass"},
                                headers={"Authorization": f"Bearer {game['seats'][other]['token']}"})
    assert validated.status_code == 200
    api.client.get(f"/v1/games/{gid}/legal-moves", query_string={"seat": seat})
    moved = api.move(gid, game["seats"][seat]["token"], {"type": "issue_shares", "count": 0})
    assert moved.status_code == 200
    claimed = {s["seat"]: s["claimed"] for s in admin_get(api, gid, game["admin_token"]).get_json()["seats"]}
    assert claimed == {seat: True, other: True, (seat + 2) % 3: False}


def test_reissue_gives_a_new_token_and_the_old_one_stops_at_once(api) -> None:
    game = api.create()
    gid, seat = game["game_id"], game["active_seat"]
    old = game["seats"][seat]["token"]
    assert api.client.post(f"/v1/games/{gid}/moves/validate", json={"type": "issue_shares", "count": 0},
                           headers={"Authorization": f"Bearer {old}"}).status_code == 200
    response = reissue(api, gid, seat, game["admin_token"])
    assert response.status_code == 200
    new = response.get_json()
    assert new["seat"] == seat and new["name"] == game["seats"][seat]["name"]
    assert new["token"] != old and new["token"].startswith(f"{gid}.{seat}.")
    before = api.snapshot(gid)
    refused = api.move(gid, old, {"type": "issue_shares", "count": 0})
    assert refused.status_code == 401 and refused.get_json()["code"] == "TOKEN_INVALID"
    assert api.snapshot(gid) == before
    seats = admin_get(api, gid, game["admin_token"]).get_json()["seats"]
    assert seats[seat]["claimed"] is False  # reissued: unclaimed until the new token is used
    moved = api.move(gid, new["token"], {"type": "issue_shares", "count": 0})
    assert moved.status_code == 200 and moved.get_json()["version"] == 1
    assert admin_get(api, gid, game["admin_token"]).get_json()["seats"][seat]["claimed"] is True
    # The other seats' tokens are untouched.
    other = game["seats"][(seat + 1) % 3]["token"]
    check = api.client.post(f"/v1/games/{gid}/moves/validate", json={"type": "pass"},
                            headers={"Authorization": f"Bearer {other}"})
    assert check.status_code == 200


def test_a_repeat_with_the_same_key_answers_the_same_token(api) -> None:
    game = api.create()
    gid = game["game_id"]
    first = reissue(api, gid, 2, game["admin_token"], Idempotency_Key="lost-reply-1").get_json()
    again = reissue(api, gid, 2, game["admin_token"], Idempotency_Key="lost-reply-1").get_json()
    assert first == again
    other = reissue(api, gid, 2, game["admin_token"], Idempotency_Key="lost-reply-2").get_json()
    assert other["token"] != first["token"]
    stored = api.app.extensions["aos.games"].store.load(gid)
    assert orjson.loads(stored.meta)["tokens"][2] == tokens.digest(other["token"])


def test_a_created_game_replayed_by_its_key_shows_the_same_admin_token(api) -> None:
    body = {"map": "rust_belt", "players": [{"name": n} for n in "abc"], "seed": "s"}
    key = {"Idempotency-Key": "create-key-0000001"}
    first = api.client.post("/v1/games", json=body, headers=key).get_json()
    again = api.client.post("/v1/games", json=body, headers=key).get_json()
    assert first["admin_token"] == again["admin_token"]
    assert admin_get(api, first["game_id"], again["admin_token"]).status_code == 200


@pytest.mark.parametrize(
    ("make_token", "status", "code"),
    [
        (lambda g: None, 401, "TOKEN_MISSING"),
        (lambda g: g["seats"][0]["token"], 403, "ADMIN_TOKEN_REQUIRED"),
        (lambda g: g["game_id"] + ".admin.wrong", 401, "TOKEN_INVALID"),
        (lambda g: "other-game.admin.x", 403, "TOKEN_OTHER_GAME"),
        (lambda g: "garbage", 401, "TOKEN_INVALID"),
    ],
)
def test_only_the_admin_token_of_the_game_may(api, make_token, status: int, code: str) -> None:  # type: ignore[no-untyped-def]
    game = api.create()
    gid = game["game_id"]
    token = make_token(game)
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    before = api.app.extensions["aos.games"].store.load(gid).meta
    for response in (
        api.client.get(f"/v1/games/{gid}/seats", headers=headers),
        api.client.post(f"/v1/games/{gid}/seats/1/token", headers=headers),
    ):
        assert response.status_code == status and response.get_json()["code"] == code
    assert api.app.extensions["aos.games"].store.load(gid).meta == before


def test_the_admin_token_cannot_move(api) -> None:
    game = api.create()
    response = api.move(game["game_id"], game["admin_token"], {"type": "issue_shares", "count": 0})
    assert response.status_code == 401 and response.get_json()["code"] == "TOKEN_INVALID"


def test_no_such_seat_or_game(api) -> None:
    game = api.create(players=3)
    assert reissue(api, game["game_id"], 4, game["admin_token"]).get_json()["code"] == "NO_SUCH_SEAT"
    missing = api.client.get("/v1/games/nope/seats", headers={"Authorization": "Bearer nope.admin.x"})
    assert missing.status_code == 404 and missing.get_json()["code"] == "GAME_NOT_FOUND"


def test_a_claim_racing_a_reissue_refuses_the_old_token(api) -> None:
    """The claim of a token's first use is a compare-and-set on the metadata: a reissue that
    lands between the request's read and its claim makes the request fail."""
    game = api.create()
    gid, seat = game["game_id"], game["active_seat"]
    store = api.app.extensions["aos.games"].store
    stale = store.load(gid)  # the request read the game here ...
    assert reissue(api, gid, seat, game["admin_token"]).status_code == 200  # ... then this landed
    with pytest.raises(admin.GameError) as refused:
        admin.note_claimed(store, gid, stale, seat, game["seats"][seat]["token"])
    assert refused.value.code == "TOKEN_INVALID"


def test_reissues_and_claims_on_redis_never_lose_a_write(api_on, redis_store) -> None:  # type: ignore[no-untyped-def]
    api = api_on(redis_store)
    game = api.create(players=4)
    gid = game["game_id"]
    answers: dict[int, str] = {}
    barrier = threading.Barrier(4)

    def run(seat: int) -> None:
        barrier.wait()
        response = reissue(api, gid, seat, game["admin_token"])
        assert response.status_code == 200
        answers[seat] = response.get_json()["token"]

    threads = [threading.Thread(target=run, args=(seat,)) for seat in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    meta = orjson.loads(redis_store.load(gid).meta)
    assert meta["tokens"] == [tokens.digest(answers[seat]) for seat in range(4)]
    assert redis_store.replace_meta(gid, expected=b"{}", meta=b"{}") is Outcome.CONFLICT


# ---- the maps: cacheable --------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/v1/maps", "/v1/maps/rust_belt", "/v1/maps/berlin"])
def test_maps_carry_an_etag_and_cache_control_and_answer_304(api, path: str) -> None:
    first = api.client.get(path)
    assert first.status_code == 200
    tag = first.headers["ETag"]
    assert tag.startswith('"') and tag.endswith('"') and len(tag) == 18
    assert "max-age=" in first.headers["Cache-Control"] and "public" in first.headers["Cache-Control"]
    assert api.client.get(path).headers["ETag"] == tag  # the same body, the same tag
    again = api.client.get(path, headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.get_data() == b"" and again.headers["ETag"] == tag
    assert api.client.get(path, headers={"If-None-Match": f'W/{tag}, "x"'}).status_code == 304
    changed = api.client.get(path, headers={"If-None-Match": '"0000000000000000"'})
    assert changed.status_code == 200 and changed.get_data() == first.get_data()
    assert api.client.get(path, headers={"If-None-Match": "bare"}).status_code == 400


def test_each_map_has_its_own_tag(api) -> None:
    tags = {api.client.get(f"/v1/maps/{m}").headers["ETag"] for m in ("rust_belt", "holland", "iraq")}
    assert len(tags) == 3


def test_reissue_clears_the_orders_and_webhooks_made_with_the_leaked_token(api_on, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from service.store import MemoryStore
    from tests.api.tables import Table

    monkeypatch.setenv("AOS_WEBHOOKS_ALLOW_PRIVATE", "1")  # the hooks' URLs are on this machine
    api = api_on(MemoryStore())
    created = api.create()
    table = Table.__new__(Table)
    table.api, table.id = api, created["game_id"]
    table.tokens = [s["token"] for s in created["seats"]]
    a, b, c = table.view()["turn_order"]
    # The attacker holds b's token: it programs orders and registers webhooks for b.
    table.set_orders(b, [{"type": "issue_shares", "count": 2}])
    for n in range(2):
        hooked = api.client.post(f"/v1/games/{table.id}/webhooks", headers=table.headers(b),
                                 json={"url": f"http://127.0.0.1:9999/leak{n}", "events": ["move"]})
        assert hooked.status_code == 201, hooked.get_json()
    # c's own orders and webhook are not b's: they stay.
    table.set_orders(c, [{"type": "issue_shares", "count": 0}])
    kept = api.client.post(f"/v1/games/{table.id}/webhooks", headers=table.headers(c),
                           json={"url": "http://127.0.0.1:9999/c", "events": ["move"]})
    assert kept.status_code == 201

    answer = reissue(api, table.id, b, created["admin_token"])
    assert answer.status_code == 200
    table.tokens[b] = answer.get_json()["token"]
    meta = table.meta()
    assert [h["seat"] for h in meta.get("webhooks", [])] == [c]
    assert table.orders(b) == [] and table.orders(c) == [{"type": "issue_shares", "count": 0}]
    # The leaked orders no longer play for b: a's move leaves b to decide (c's are c's turn later).
    body = table.moved(a, {"type": "issue_shares", "count": 0})
    assert "followed_by" not in body and body["game"]["active_seat"] == b
    # The seat's holder sets its own up again with the new token.
    assert table.set_orders(b, [{"type": "drop_out"}])
    assert api.client.get(f"/v1/games/{table.id}/webhooks", headers=table.headers(b)).get_json() == []


@pytest.mark.parametrize("on", ["memory", "redis"])
def test_each_seats_first_move_claims_it_in_its_own_commit_without_a_conflict(api_on, on, request) -> None:  # type: ignore[no-untyped-def]
    from prometheus_client import REGISTRY

    from service.store import MemoryStore

    store = MemoryStore() if on == "memory" else request.getfixturevalue("redis_store")
    api = api_on(store)
    game = api.create()
    gid = game["game_id"]

    def conflicts() -> float:
        return REGISTRY.get_sample_value(
            "aos_store_retries_total", {"op": "commit", "reason": "version_conflict"}) or 0.0

    before = conflicts()
    for _ in range(3):  # each seat's first move: issue no shares
        seat = api.view(gid)["active_seat"]
        moved = api.move(gid, game["seats"][seat]["token"], {"type": "issue_shares", "count": 0})
        assert moved.status_code == 200, moved.get_json()
    assert conflicts() == before  # no move was judged twice
    listed = admin_get(api, gid, game["admin_token"]).get_json()["seats"]
    assert all(s["claimed"] for s in listed)
    assert store.version(gid) == 3


def test_a_computer_seat_is_listed_with_its_level_and_has_no_token_to_reissue(api) -> None:
    response = api.client.post("/v1/games", json={"map": "rust_belt", "players": [
        {"name": "Ada"}, {"name": "Bob"}, {"name": "Robo", "bot": {"level": 2}}]})
    assert response.status_code == 201
    game = response.get_json()
    gid = game["game_id"]
    assert game["seats"][2] == {"seat": 2, "name": "Robo", "token": None, "bot": {"level": 2}}
    listed = admin_get(api, gid, game["admin_token"]).get_json()["seats"]
    assert listed[2] == {"seat": 2, "name": "Robo", "claimed": False, "bot": {"level": 2}}
    assert "bot" not in listed[0]
    refused = reissue(api, gid, 2, game["admin_token"])
    assert refused.status_code == 422 and refused.get_json()["code"] == "SEAT_IS_COMPUTER"
    assert reissue(api, gid, 1, game["admin_token"]).status_code == 200  # a person's seat still may
