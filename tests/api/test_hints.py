"""Hints over HTTP (every request and answer checked against openapi.yaml), with the worker's
hint job searching in a thread of the test, on the API's own memory store."""

from __future__ import annotations

import random
import threading
import time

from service.admission import _wait_of
from service.referee.games import Games
from service.store import MemoryStore
from service.worker.hints import HintJob
from service.worker.searches import SearchPool


def auth(token: str, **headers: str) -> dict:
    return {"Authorization": f"Bearer {token}", **headers}


def to_a_choice(api, game: dict) -> dict:
    """Random moves until the deciding seat picks an action (several legal moves)."""
    rng = random.Random(4)
    tokens = [s["token"] for s in game["seats"]]
    while True:
        view = api.view(game["game_id"])
        moves = api.legal(game["game_id"], view["active_seat"])
        if view["phase"] == "select_action" and len(moves) >= 3:
            return view
        response = api.move(game["game_id"], tokens[view["active_seat"]], rng.choice(moves))
        assert response.status_code == 200


class Worker:
    """The worker's hint job, run in a thread of the test on the app's store."""

    def __init__(self, games: Games) -> None:
        self.pool = SearchPool(1)
        self.job = HintJob(games, self.pool)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while not self.stop.is_set():
            if not self.job.run_once():
                self.stop.wait(0.02)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        self.pool.close()


def test_a_seat_asks_for_a_hint_and_reads_it_by_long_poll_then_it_goes_stale(api_on) -> None:
    api = api_on(MemoryStore(), hint_default_ms=300, hint_max_ms=400)
    game = api.create(players=4)
    game_id = game["game_id"]
    view = to_a_choice(api, game)
    seat, version = view["active_seat"], view["version"]
    token = game["seats"][seat]["token"]

    asked = api.client.post(f"/v1/games/{game_id}/hints", json={"seat": seat, "budget_ms": 5000},
                            headers=auth(token))
    assert asked.status_code == 202, asked.get_json()
    hint = asked.get_json()
    assert hint == {"hint_id": f"{version}-{seat}", "status": "pending", "version": version, "seat": seat,
                    "budget_ms": 400, "moves": []}  # the host's cap
    location = asked.headers["Location"]
    assert location == f"/v1/games/{game_id}/hints/{version}-{seat}"
    assert asked.headers["Cache-Control"] == "no-store"
    # No worker yet: pending, and a short long-poll comes back pending.
    started = time.monotonic()
    held = api.client.get(location, headers=auth(token, Prefer="wait=1"))
    assert held.status_code == 200 and held.get_json()["status"] == "pending"
    assert 0.9 <= time.monotonic() - started < 3 and held.headers["Preference-Applied"] == "wait=1"

    worker = Worker(api.app.extensions["aos.games"])
    try:
        started = time.monotonic()
        done = api.client.get(location, headers=auth(token, Prefer="wait=20"))
        took = time.monotonic() - started
    finally:
        worker.close()
    answer = done.get_json()
    assert done.status_code == 200 and answer["status"] == "done", answer
    assert took < 10  # answered when the search ended, not at the end of the wait
    legal = {m["text"]: {k: v for k, v in m.items() if k != "text"} for m in api.legal(game_id, seat)}
    assert 1 <= len(answer["moves"]) <= 3
    for ranked in answer["moves"]:
        assert legal[ranked["text"]] == ranked["move"] and ranked["visits"] >= 1  # the listing's words
        assert 0 <= ranked["value"] <= 1
    # Asking again at this version: the same hint, at once.
    again = api.client.post(f"/v1/games/{game_id}/hints", json={"seat": seat}, headers=auth(token))
    assert again.status_code == 200 and again.get_json() == answer
    # Another seat's token reads nothing of it.
    other = game["seats"][(seat + 1) % 4]["token"]
    refused = api.client.get(location, headers=auth(other))
    assert refused.status_code == 403 and refused.get_json()["code"] == "SEAT_MISMATCH"

    moved = api.move(game_id, token, answer["moves"][0]["move"])
    assert moved.status_code == 200
    stale = api.client.get(location, headers=auth(token, Prefer="wait=5"))
    assert stale.status_code == 200
    assert stale.get_json() == {"hint_id": f"{version}-{seat}", "status": "stale", "version": version,
                                "seat": seat, "budget_ms": None, "moves": []}


def test_hints_refused_as_the_contract_says(api_on) -> None:
    api = api_on(MemoryStore())
    game = api.create(players=4)
    game_id = game["game_id"]
    view = to_a_choice(api, game)
    seat = view["active_seat"]
    other = (seat + 1) % 4
    url = f"/v1/games/{game_id}/hints"
    token = game["seats"][seat]["token"]
    cases = [
        (auth(game["seats"][other]["token"]), {"seat": other}, 422, "NOT_YOUR_TURN"),
        (auth(game["seats"][other]["token"]), {"seat": seat}, 403, "SEAT_MISMATCH"),
        ({}, {"seat": seat}, 401, "TOKEN_MISSING"),
        (auth(token), {"seat": seat, "budget_ms": 0}, 400, "VALIDATION_ERROR"),
        (auth(token), {"seat": seat, "think": 1}, 400, "VALIDATION_ERROR"),
        (auth(token), {}, 400, "VALIDATION_ERROR"),
    ]
    for headers, body, status, code in cases:
        response = api.client.post(url, json=body, headers=headers)
        assert response.status_code == status, (body, response.get_json())
        assert response.get_json()["code"] == code
    for hint_id in ("nope", f"{view['version']}-{seat}", f"{view['version'] + 3}-{seat}"):
        response = api.client.get(f"{url}/{hint_id}", headers=auth(token))
        assert response.status_code == 404 and response.get_json()["code"] == "HINT_NOT_FOUND"
    assert api.view(game_id)["version"] == view["version"]

    off = api_on(api.app.extensions["aos.games"].store, hints=False)
    response = off.client.post(url, json={"seat": seat}, headers=auth(token))
    assert response.status_code == 403 and response.get_json()["code"] == "HINTS_DISABLED"


def test_asking_for_hints_is_rate_limited_per_seat(api_on) -> None:
    api = api_on(MemoryStore(), rate_limit_hints="2/minute")
    game = api.create(players=4)
    view = to_a_choice(api, game)
    seat = view["active_seat"]
    url = f"/v1/games/{game['game_id']}/hints"
    token = game["seats"][seat]["token"]
    statuses = [api.client.post(url, json={"seat": seat}, headers=auth(token)).status_code for _ in range(3)]
    assert statuses[:2] == [202, 202]
    assert statuses[2] == 429
    refused = api.client.post(url, json={"seat": seat}, headers=auth(token))
    assert refused.get_json()["code"] == "RATE_LIMITED" and int(refused.headers["Retry-After"]) >= 1


def test_a_hints_long_poll_counts_among_the_waits_an_address_may_hold() -> None:
    game_id = "dcPhpLJAO3xHDTnl"
    hint = {"REQUEST_METHOD": "GET", "PATH_INFO": f"/v1/games/{game_id}/hints/12-0"}
    assert _wait_of({**hint, "HTTP_PREFER": "wait=30"}) == game_id
    assert _wait_of(hint) is None  # read at once: not a wait
    assert _wait_of({**hint, "REQUEST_METHOD": "POST", "HTTP_PREFER": "wait=30"}) is None
    # The game's own long-poll still is one.
    view = {"REQUEST_METHOD": "GET", "PATH_INFO": f"/v1/games/{game_id}", "HTTP_PREFER": "wait=5",
            "HTTP_IF_NONE_MATCH": '"3"'}
    assert _wait_of(view) == game_id
