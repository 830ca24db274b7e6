"""The resources of the contract, end to end on the real engine (MemoryStore)."""

from __future__ import annotations

import hashlib
import random
import re
import time
from datetime import datetime

import orjson
import pytest
import redis
from werkzeug.test import TestResponse

from service.referee import legal


def test_maps(api) -> None:
    maps = api.client.get("/v1/maps").get_json()
    assert [m["id"] for m in maps] == ["rust_belt", "madagascar", "holland", "iraq", "berlin"]
    rust_belt = api.client.get("/v1/maps/rust_belt").get_json()
    assert rust_belt["id"] == "rust_belt" and len(rust_belt["hexes"]) > 100
    missing = api.client.get("/v1/maps/atlantis")
    assert missing.status_code == 404
    assert missing.content_type == "application/problem+json"
    assert missing.get_json()["code"] == "MAP_NOT_FOUND"


def test_health_and_ready(api) -> None:
    assert api.client.get("/v1/health").get_json() == {"status": "ok"}
    assert api.client.get("/v1/ready").get_json() == {"status": "ready", "store": "memory"}


def test_create_shows_tokens_once(api) -> None:
    response = api.client.post(
        "/v1/games", json={"map": "rust_belt", "players": [{"name": n} for n in "abc"]}
    )
    assert response.status_code == 201
    game = response.get_json()
    assert response.headers["Location"] == f"/v1/games/{game['game_id']}"
    assert response.headers["ETag"] == '"0"'
    assert game["version"] == 0 and game["status"] == "active"
    assert [s["name"] for s in game["seats"]] == ["a", "b", "c"]
    assert len({s["token"] for s in game["seats"]}) == 3
    assert game["reproducible"] is False  # the server picked the seed
    view = api.view(game["game_id"])
    assert "seats" not in view
    assert all(s["token"] not in api.client.get(f"/v1/games/{game['game_id']}").text for s in game["seats"])


def test_bad_player_count_is_422(api) -> None:
    response = api.client.post("/v1/games", json={"map": "rust_belt", "players": [{"name": "a"}]})
    assert response.status_code == 422
    assert response.get_json()["code"] == "PLAYER_COUNT"


def test_unknown_option_is_422(api) -> None:
    body = {"map": "rust_belt", "players": [{"name": n} for n in "abc"], "options": {"x": 1}}
    response = api.client.post("/v1/games", json=body)
    assert response.status_code == 422
    assert response.get_json()["code"] == "BAD_OPTION"


def test_same_seed_same_game(api) -> None:
    first, second = api.create(seed="s-1"), api.create(seed="s-1")
    strip = lambda v: {k: x for k, x in v.items() if k not in ("game_id", "seats", "admin_token")}  # noqa: E731
    assert strip(first) == strip(second)
    assert first["reproducible"] is True


def test_view_etag_and_304(api) -> None:
    game = api.create()
    url = f"/v1/games/{game['game_id']}"
    response = api.client.get(url)
    assert response.headers["ETag"] == '"0"'
    assert api.client.get(url, headers={"If-None-Match": '"0"'}).status_code == 304
    assert api.client.get(url, headers={"If-None-Match": 'W/"0", "7"'}).status_code == 304
    api.play(game, 1)
    changed = api.client.get(url, headers={"If-None-Match": '"0"'})
    assert changed.status_code == 200 and changed.headers["ETag"] == '"1"'


def test_unknown_game_is_404(api) -> None:
    for path in ("", "/legal-moves?seat=0", "/history", "/record", "/board.svg"):
        response = api.client.get(f"/v1/games/nosuchgame{path}")
        assert response.status_code == 404, path
        assert response.get_json()["code"] == "GAME_NOT_FOUND"


def test_legal_moves_only_for_the_deciding_seat(api) -> None:
    game = api.create()
    view = api.view(game["game_id"])
    active = view["active_seat"]
    body = api.client.get(f"/v1/games/{game['game_id']}/legal-moves?seat={active}").get_json()
    assert body["version"] == 0 and body["seat"] == active and body["phase"] == view["phase"]
    assert body["moves"]
    other = (active + 1) % 3
    assert api.legal(game["game_id"], other) == []
    assert api.client.get(f"/v1/games/{game['game_id']}/legal-moves?seat=4").status_code == 400
    assert api.client.get(f"/v1/games/{game['game_id']}/legal-moves").status_code == 400


def test_apply_a_move(api) -> None:
    game = api.create()
    gid, seat = game["game_id"], game["active_seat"]
    move = api.legal(gid, seat)[0]
    response = api.move(gid, game["seats"][seat]["token"], move)
    assert response.status_code == 200
    body = response.get_json()
    assert body["version"] == 1 and body["game"]["version"] == 1
    assert response.headers["ETag"] == '"1"'
    assert body["events"] and all("type" in e for e in body["events"])
    assert api.view(gid) == body["game"]
    history = api.client.get(f"/v1/games/{gid}/history").get_json()
    at = history[0].pop("at")
    # The move as posted, without the listing's read-only words; the entry has its own.
    text = move.pop("text")
    assert text == f"{game['seats'][seat]['name']} issues no shares"
    assert body["events"][0]["text"] == text
    assert history == [{"index": 0, "seat": seat, "move": move, "events": body["events"], "version": 1,
                        "text": text}]
    assert abs(datetime.fromisoformat(at).timestamp() - time.time()) < 60 and at.endswith("Z")


def test_every_listed_move_posts_back_unchanged(api) -> None:
    """Bots post listed moves as they are, read-only extras included."""
    game = api.create(seed="extras")
    view = api.play(game, 60, random.Random(3))
    assert view["version"] > 0


def test_validate_is_a_dry_run(api) -> None:
    game = api.create()
    gid, seat = game["game_id"], game["active_seat"]
    before = api.snapshot(gid)
    move = api.legal(gid, seat)[0]
    verdict = api.client.post(f"/v1/games/{gid}/moves/validate", json={**move, "seat": seat})
    assert verdict.status_code == 200
    assert verdict.get_json()["legal"] is True
    assert verdict.get_json()["effects"]
    assert all(e["text"] for e in verdict.get_json()["effects"])
    other = (seat + 1) % 3
    wrong = api.client.post(
        f"/v1/games/{gid}/moves/validate",
        json=move,
        headers={"Authorization": f"Bearer {game['seats'][other]['token']}"},
    ).get_json()
    assert wrong["legal"] is False and wrong["code"] == "NOT_YOUR_TURN"
    no_seat = api.client.post(f"/v1/games/{gid}/moves/validate", json=move)
    assert no_seat.status_code == 400 and no_seat.get_json()["code"] == "SEAT_REQUIRED"
    assert api.snapshot(gid) == before


def test_record_keeps_the_seed_until_the_end_and_replays(api) -> None:
    game = api.create(seed="to-the-end")
    gid = game["game_id"]
    record = api.client.get(f"/v1/games/{gid}/record").get_json()
    assert "seed" not in record
    assert (
        record["seed_commitment"] == hashlib.sha256(b"to-the-end").hexdigest()
        or len(record["seed_commitment"]) == 64
    )
    final = api.play(game, 5000, random.Random(11))
    assert final["status"] == "finished" and final["phase"] == "finished"
    assert final["scores"]
    record = api.client.get(f"/v1/games/{gid}/record").get_json()
    assert record["seed"] == "to-the-end"
    assert len(record["moves"]) == final["version"]

    imported = api.client.post("/v1/games", json={"record": record})
    assert imported.status_code == 201, imported.get_json()
    copy = imported.get_json()
    assert copy["game_id"] != gid and copy["version"] == final["version"]
    strip = lambda v: {k: x for k, x in v.items() if k not in ("game_id", "seats", "admin_token")}  # noqa: E731
    assert strip(copy) == strip(final)
    def untimed(history: list[dict]) -> list[dict]:
        return [{k: v for k, v in entry.items() if k != "at"} for entry in history]

    assert untimed(api.client.get(f"/v1/games/{copy['game_id']}/history").get_json()) == untimed(
        api.client.get(f"/v1/games/{gid}/history").get_json()
    )


def test_a_record_with_an_illegal_move_is_refused(api) -> None:
    game = api.create(seed="tampered")
    final = api.play(game, 5000, random.Random(5))
    record = api.client.get(f"/v1/games/{game['game_id']}/record").get_json()
    assert final["status"] == "finished"
    record["moves"][1] = {"seat": record["moves"][1]["seat"], "move": {"type": "pass"}}
    response = api.client.post("/v1/games", json={"record": record})
    assert response.status_code == 422
    assert response.get_json()["index"] == 1

    record = api.client.get(f"/v1/games/{game['game_id']}/record").get_json()
    record["seed"] = "another seed"
    response = api.client.post("/v1/games", json={"record": record})
    assert response.status_code == 422
    assert response.get_json()["code"] == "SEED_COMMITMENT_MISMATCH"


def test_board_svg(api) -> None:
    game = api.create(seed="board")
    api.play(game, 80, random.Random(2))
    response = api.client.get(f"/v1/games/{game['game_id']}/board.svg")
    assert response.status_code == 200
    assert response.content_type.startswith("image/svg+xml")
    svg = response.get_data(as_text=True)
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert svg.count("<polygon") >= 189  # every Rust Belt hex
    assert "Ada" in svg


def test_player_names_are_escaped_in_the_svg(api) -> None:
    body = {"map": "rust_belt", "players": [{"name": "<script>"}, {"name": "b&"}, {"name": "c"}]}
    game = api.client.post("/v1/games", json=body).get_json()
    svg = api.client.get(f"/v1/games/{game['game_id']}/board.svg").get_data(as_text=True)
    assert "<script>" not in svg and "&lt;script&gt;" in svg


@pytest.mark.parametrize("map_id", ["rust_belt", "madagascar", "holland", "iraq", "berlin"])
def test_every_map_plays_within_the_contract(api, map_id: str) -> None:
    body = {"map": map_id, "players": [{"name": n} for n in "abc"], "seed": f"map-{map_id}"}
    response = api.client.post("/v1/games", json=body)
    assert response.status_code == 201, response.get_json()
    game = response.get_json()
    view = api.play(game, 40, random.Random(map_id))
    assert view["version"] > 0
    svg = api.client.get(f"/v1/games/{game['game_id']}/board.svg")
    assert svg.status_code == 200
    hexes = api.client.get(f"/v1/maps/{map_id}").get_json()["hexes"]
    assert len({h["place"] for h in hexes}) == len(hexes)
    # Every entry and event in words, naming its seat's player, never a coordinate.
    for entry in api.client.get(f"/v1/games/{game['game_id']}/history").get_json():
        assert "abc"[entry["seat"]] in entry["text"].split()[0]
        for e in entry["events"]:
            assert e["text"] and "(" not in e["text"] and not re.search(r"\d+, *\d+\)", e["text"])
    if view["active_seat"] is not None:
        seat = view["active_seat"]
        assert all(m["text"].startswith("abc"[seat]) for m in api.legal(game["game_id"], seat))


def test_legal_moves_answer_for_the_version_they_were_asked_at(api) -> None:
    game = api.create()
    game_id, seat = game["game_id"], game["active_seat"]
    url = f"/v1/games/{game_id}/legal-moves?seat={seat}"
    first = api.client.get(url)
    again = api.client.get(url)
    assert first.get_data() == again.get_data()  # the second is the kept answer
    assert first.get_json()["version"] == 0 and first.get_json()["moves"][0]["type"] == "issue_shares"
    token = game["seats"][seat]["token"]
    assert api.move(game_id, token, {"type": "issue_shares", "count": 0}).status_code == 200
    after = api.client.get(url).get_json()
    assert after["version"] == 1 and after["moves"] == []  # not the kept answer of version 0


@pytest.mark.parametrize("on", ["memory", "redis"])
def test_legal_moves_are_kept_once_a_seats_listings_are_read_lately(on: str, api_on,
                                                                    redis_url: str) -> None:
    """A client asks once per version: the first reader of a seat nobody read lately has its
    answer worked out, not kept (a write would cost more than working it out again); the second
    reader's is kept, and the third's is read back. At the next version the seat is one read
    lately: its first reader's answer is kept. (The moves up to the build turn are the
    engine's, not read over HTTP: a seat whose listings are read has them worked out ahead,
    test_the_deciding_seats_legal_moves_are_listed_ahead_...)"""
    from service.engine import game as engine
    from service.store import MemoryStore, RedisStore

    store = MemoryStore() if on == "memory" else RedisStore(redis_url)
    api = api_on(store)
    game = api.create(players=3, seed="kept-listing")
    game_id = game["game_id"]
    view = api.view(game_id)
    rng = random.Random(3)
    while view["phase"] != "build":
        seat = view["active_seat"]
        move = rng.choice(engine.legal_moves(orjson.loads(store.load(game_id).state), seat))
        view = api.move(game_id, game["seats"][seat]["token"], move).get_json()["game"]
    seat, version = view["active_seat"], view["version"]
    url = f"/v1/games/{game_id}/legal-moves?seat={seat}"
    name = f"legal:{seat}"
    first = api.client.get(url).get_data()
    kept = store.load_kept(game_id, name, 60)[1]  # (a read of its own: the second)
    assert kept is None
    second = api.client.get(url).get_data()
    stored, kept, _ = store.load_kept(game_id, name, 60)
    assert second == first and legal.kept_answer(kept, stored.state) == first
    assert api.client.get(url).get_data() == first
    assert orjson.loads(first)["version"] == version and orjson.loads(first)["phase"] == "build"
    end = {"type": "end_build"}
    after = api.move(game_id, game["seats"][seat]["token"], end).get_json()["game"]
    assert after["version"] == version + 1
    assert store.load_kept(game_id, name, 60)[1:] == (None, True)  # nothing kept at version + 1
    listed = api.client.get(url).get_data()  # no longer the deciding seat's: its own, kept
    assert orjson.loads(listed)["version"] == version + 1
    stored, kept, _ = store.load_kept(game_id, name, 60)
    assert legal.kept_answer(kept, stored.state) == listed


@pytest.mark.parametrize("on", ["memory", "redis"])
def test_a_read_of_legal_moves_is_marked_once_its_answer_is_sent(on: str, api_on,
                                                                 redis_url: str) -> None:
    """GET legal-moves marks its seat read lately (what makes the next commit list that seat's
    moves ahead) once its answer is sent, not in the read it answers from: the answer does not
    wait for the write; asked outside a request, at once. A seat of a game that is not there is
    never marked."""
    from service.store import MemoryStore, RedisStore

    store = MemoryStore() if on == "memory" else RedisStore(redis_url)
    api = api_on(store)
    game_id = api.create(players=3, seed="marked-once-sent")["game_id"]
    response = api.client.get(f"/v1/games/{game_id}/legal-moves?seat=1", buffered=False)
    assert response.status_code == 200 and response.get_json()["seat"] == 1
    assert store.peek_kept(game_id, "legal:1")[1] is False
    response.close()  # as a server closes it once sent
    assert store.peek_kept(game_id, "legal:1")[1] is True
    assert store.peek_kept(game_id, "legal:2")[1] is False
    # Asked outside any request (nothing is sent after it), the read is marked at once.
    games = api.app.extensions["aos.games"]
    assert games.legal_moves(game_id, 2)[0] == 0
    assert store.peek_kept(game_id, "legal:2")[1] is True
    missing = api.client.get("/v1/games/g-not-there-at-all/legal-moves?seat=1")
    assert missing.status_code == 404 and missing.get_json()["code"] == "GAME_NOT_FOUND"
    assert store.peek_kept("g-not-there-at-all", "legal:1") is None
    # A seat the game has not is refused, and its read is not marked.
    no_seat = api.client.get(f"/v1/games/{game_id}/legal-moves?seat=4")
    assert no_seat.status_code in (400, 404) and no_seat.get_json()["code"] == "NO_SUCH_SEAT"
    assert store.peek_kept(game_id, "legal:4")[1] is False
    if on == "redis":
        from service.store.keys import kept_key

        with redis.Redis.from_url(redis_url) as client:
            assert not client.exists(kept_key("g-not-there-at-all", "read:legal:1"))
            assert client.exists(kept_key(game_id, "read:legal:1"))
            assert not client.exists(kept_key(game_id, "read:legal:4"))


@pytest.mark.parametrize("on", ["memory", "redis"])
def test_the_deciding_seats_legal_moves_are_listed_ahead_when_they_are_read(on: str, api_on,
                                                                           redis_url: str) -> None:
    """Once a seat's listings are read, each version at which it decides has them worked out
    after the commit that made it (Games.list_ahead), before anyone asks; an undo and a takeback
    make new versions, listed afresh from their own states. A seat nobody reads is not listed."""
    from service.store import MemoryStore, RedisStore
    from tests.api.tables import Table

    store = MemoryStore() if on == "memory" else RedisStore(redis_url)
    table = Table(api_on(store), players=3, seed="listed-ahead")
    order = table.state()["queue"]  # the shares phase: each seat once, in turn order
    first, second, third = order[0], order[1], order[2]

    def kept(seat: int) -> bytes | None:
        stored = store.load(table.id)
        raw = store.load_kept(table.id, legal.name(seat), 60)[1]
        return legal.kept_answer(raw, stored.state)

    def fresh(seat: int) -> bytes:
        stored = store.load(table.id)
        return legal.body(orjson.loads(stored.state), seat, stored.version)

    def done(response: TestResponse) -> None:
        """The response closed, as a server closes it once sent: the work after it runs."""
        assert response.status_code == 200, response.get_json()
        response.close()

    # The second seat's client reads its listing (empty: not its turn); the third's never.
    assert table.api.client.get(f"/v1/games/{table.id}/legal-moves?seat={second}").get_json()["moves"] == []
    done(table.move(first, {"type": "issue_shares", "count": 1}))
    assert table.active() == second
    listed = kept(second)
    assert listed is not None and listed == fresh(second)
    assert orjson.loads(listed)["version"] == 1 and len(orjson.loads(listed)["moves"]) > 1
    answer = table.api.client.get(f"/v1/games/{table.id}/legal-moves?seat={second}")
    assert answer.get_data() == listed and answer.headers["ETag"] == '"1"'

    # The first seat takes its move back: version 2 is version 0's state, the first seat's to
    # decide. The second seat's listing of version 1 is never served again.
    table.api.client.get(f"/v1/games/{table.id}/legal-moves?seat={first}")
    done(table.undo(first))
    assert table.version() == 2 and table.active() == first
    assert kept(first) == fresh(first) and orjson.loads(kept(first))["version"] == 2
    again = table.api.client.get(f"/v1/games/{table.id}/legal-moves?seat={second}").get_json()
    assert again["version"] == 2 and again["moves"] == []

    # A takeback: the first seat moves again, then the game goes back to version 2 by consent.
    done(table.move(first, {"type": "issue_shares", "count": 2}))  # version 3: the second decides
    assert orjson.loads(kept(second))["version"] == 3
    done(table.propose(second, 2))
    for seat in (first, third):
        if table.view()["takeback"] is not None:
            done(table.accept(seat))
    view = table.view()
    assert view["takeback"] is None and view["active_seat"] == first
    assert kept(first) == fresh(first) and orjson.loads(kept(first))["version"] == view["version"]
    body = table.api.client.get(f"/v1/games/{table.id}/legal-moves?seat={first}").get_data()
    assert body == fresh(first)
    # The third seat's listings are never read: never worked out ahead either.
    assert store.load_kept(table.id, legal.name(third), 60)[1] is None


@pytest.mark.parametrize("on", ["memory", "redis"])
def test_every_answer_listed_ahead_is_that_of_the_game_as_it_is(on: str, api_on, redis_url: str) -> None:
    """Random play over HTTP with undos, each response closed as a server closes it (so every
    listing ahead runs): each turn's legal-moves answer is, byte for byte, the listing worked
    out afresh from the stored state at its version."""
    from service.engine import game as engine
    from service.store import MemoryStore, RedisStore
    from tests.api.tables import Table

    store = MemoryStore() if on == "memory" else RedisStore(redis_url)
    table = Table(api_on(store), players=3, seed="ahead-random")
    rng = random.Random(27)
    turns = listed = undone = 0
    for step in range(160):  # the game may end before: players go bankrupt
        stored = store.load(table.id)
        state = orjson.loads(stored.state)
        seat = engine.active_seat(state)
        if seat is None:
            break
        answer = table.api.client.get(f"/v1/games/{table.id}/legal-moves?seat={seat}")
        answer.close()
        listed += legal.kept_answer(store.load_kept(table.id, legal.name(seat), 60)[1],
                                    stored.state) is not None
        assert answer.get_data() == legal.body(state, seat, stored.version), step
        turns += 1
        move = {k: v for k, v in rng.choice(answer.get_json()["moves"]).items() if k != "text"}
        response = table.move(seat, move)
        assert response.status_code == 200, response.get_json()
        response.close()
        if rng.random() < 0.15:
            response = table.undo(seat)
            undone += response.status_code == 200
            response.close()
    # Every answer but each seat's first (nobody read its listings yet) was the one kept ahead,
    # the versions made by undos among them.
    assert turns > 40 and undone >= 5 and listed == turns - 3


@pytest.mark.parametrize("on", ["memory", "redis"])
def test_a_reader_waits_for_a_listing_being_worked_out_ahead_and_no_longer_than_its_bound(
        on: str, api_on, redis_url: str) -> None:
    """A listing marked pending (Games.list_ahead is working it out) is waited for, not worked
    out twice; a pending one that never comes is waited for legal_moves_wait_ms at most, then
    listed by the reader."""
    import threading

    from service.store import MemoryStore, RedisStore

    store = MemoryStore() if on == "memory" else RedisStore(redis_url)
    api = api_on(store, legal_moves_wait_ms=100)
    game = api.create(players=3, seed="pending")
    game_id, seat = game["game_id"], game["active_seat"]
    url = f"/v1/games/{game_id}/legal-moves?seat={seat}"
    assert api.client.get(url).status_code == 200  # read: worth listing ahead
    name, state = legal.name(seat), store.load(game_id).state
    marked = orjson.dumps({"version": 0, "seat": seat, "phase": "issue_shares", "moves": [
        {"type": "issue_shares", "count": 0, "text": "listed ahead"}]})
    # Marked as a commit marks it when the name is read lately (Games.ahead_of).
    store.keep(game_id, name, 0, legal.PENDING, legal.PENDING_TTL)
    later = threading.Timer(0.03, lambda: store.keep(game_id, name, 0, legal.kept_value(state, marked),
                                                     60, wake=True))
    later.start()
    # `marked` exists only once the timer has kept it, 30 ms on: the reader waited for it (and
    # under its bound) rather than listing the moves itself. Not timed: a start time taken after
    # the timer's start made this flaky (29.6 ms) on a loaded machine.
    assert api.client.get(url).get_data() == marked
    later.join()

    store.keep(game_id, name, 0, legal.PENDING, legal.PENDING_TTL)
    started = time.monotonic()
    answer = api.client.get(url).get_json()
    assert 0.1 <= time.monotonic() - started < 2
    assert answer["version"] == 0 and len(answer["moves"]) > 1


def test_a_kept_listing_is_served_only_for_the_state_it_was_worked_out_from(api) -> None:
    """A listing kept at the game's version but worked out from another state (a version that
    came back some other way than a move) is never the answer: the digest of its state is not
    the stored state's."""
    game = api.create(players=3, seed="digest")
    game_id, seat = game["game_id"], game["active_seat"]
    store = api.app.extensions["aos.games"].store
    wrong = orjson.dumps({"version": 0, "seat": seat, "phase": "issue_shares", "moves": []})
    store.keep(game_id, legal.name(seat), 0, legal.kept_value(b"another state", wrong), 60)
    answer = api.client.get(f"/v1/games/{game_id}/legal-moves?seat={seat}").get_json()
    assert answer["version"] == 0 and len(answer["moves"]) > 1


def test_game_ids_never_start_with_a_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    """A leading `-` makes `--game ID` an option to argparse, curl and shells: such ids are drawn
    again (1 in 64 of token_urlsafe's)."""
    from service.referee import games

    drawn = iter(["-Fx1abcdefghijklm", "_Fx1abcdefghijklm", "Fx1abcdefghijklm"])
    monkeypatch.setattr(games.secrets, "token_urlsafe", lambda n: next(drawn))
    assert games._random_id(None) == "_Fx1abcdefghijklm"
    monkeypatch.undo()
    # Without the redraw, 3,000 ids hold a leading dash with probability 1 - (63/64)**3000.
    assert not [i for i in (games._random_id(None) for _ in range(3000)) if i.startswith("-")]


@pytest.mark.parametrize("on", ["memory", "redis"])
def test_a_listing_worked_out_here_is_served_from_here_and_only_where_the_store_keeps_one(
        on: str, api_on, redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The process that listed a seat's moves ahead answers its next reader from its own copy,
    without reading the ~40 KB back from the store; another process reads the store's. A copy
    here is served only where the store keeps a listing at the game's version, and only for
    the state it was worked out from."""
    from service.store import MemoryStore, RedisStore
    from tests.api.tables import Table

    store = MemoryStore() if on == "memory" else RedisStore(redis_url)
    table = Table(api_on(store), players=3, seed="listed-here")
    games = table.api.app.extensions["aos.games"]
    first, second = table.state()["queue"][:2]
    url = f"/v1/games/{table.id}/legal-moves?seat={{}}"
    assert table.api.client.get(url.format(second)).status_code == 200  # read: listed ahead
    response = table.move(first, {"type": "issue_shares", "count": 1})
    assert response.status_code == 200
    response.close()  # as a server does once it is sent: the listing ahead runs

    reads: list[tuple[str, str, int]] = []
    read_store = store.kept
    monkeypatch.setattr(store, "kept", lambda *asked: reads.append(asked) or read_store(*asked))
    stored = store.load(table.id)
    fresh = legal.body(orjson.loads(stored.state), second, stored.version)
    assert table.api.client.get(url.format(second)).get_data() == fresh
    assert reads == []  # from this process's copy

    games.listed_here = legal.ListedHere()  # as another process, which listed nothing
    assert table.api.client.get(url.format(second)).get_data() == fresh
    assert reads == [(table.id, legal.name(second), 1)]

    # A copy here of a listing the store does not keep, or of another state, is not served.
    bogus = orjson.dumps({"version": 1, "seat": first, "phase": "issue_shares",
                          "moves": [{"type": "issue_shares", "count": 9, "text": "bogus"}]})
    games.listed_here.put(table.id, legal.name(first), 1, legal.kept_value(stored.state, bogus))
    assert table.api.client.get(url.format(first)).get_data() != bogus
    games.listed_here.put(table.id, legal.name(second), 1, legal.kept_value(b"another state", bogus))
    assert table.api.client.get(url.format(second)).get_data() == fresh


def test_a_process_keeps_only_its_last_listings_and_each_for_its_version() -> None:
    here = legal.ListedHere(size=2)
    for n in range(3):
        here.put(f"g{n}", "legal:0", 5, b"value %d" % n)
    assert [here.get(f"g{n}", "legal:0", 5) for n in range(3)] == [None, b"value 1", b"value 2"]
    assert here.get("g2", "legal:0", 6) is None and here.get("g2", "legal:1", 5) is None
