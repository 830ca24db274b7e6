"""Computer seats over the API with real worker processes on a real Redis: the worker plays the
seats created with `bot`, each move a version with `"by": "bot"`, exactly once even when the
worker searching a seat is killed."""

from __future__ import annotations

import random
import time
from pathlib import Path

BOTS = [{"name": "Rand", "bot": {"level": 1}}, {"name": "Greed", "bot": {"level": 2}},
        {"name": "Search", "bot": {"level": 3}}]


def create(api, players: list[dict], seed: str = "bots") -> dict:
    response = api.client.post("/v1/games", json={"map": "rust_belt", "players": players, "seed": seed})
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def descendants(pid: int) -> list[int]:
    """The processes below `pid` (read from /proc)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        children = [child for child, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def wait_for(condition, timeout: float, what: str):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        found = condition()
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_human_and_three_computer_seats_play_a_whole_game(api, start_worker) -> None:
    start_worker()
    created = create(api, [{"name": "Ada"}, *BOTS])
    game_id = created["game_id"]
    seats = created["seats"]
    assert seats[0]["token"] and "bot" not in seats[0]
    assert [(s["token"], s["bot"]) for s in seats[1:]] == [(None, {"level": n}) for n in (1, 2, 3)]
    rng = random.Random(3)
    human_moves = 0
    deadline = time.monotonic() + 240
    while True:
        assert time.monotonic() < deadline, f"the game did not finish: {api.view(game_id)['version']}"
        view = api.view(game_id)
        if view["status"] == "finished":
            break
        if view["active_seat"] != 0:
            time.sleep(0.02)  # the worker's turn
            continue
        moves = api.legal(game_id, 0)
        # Random, but never selling shares: the human stays in the game longer.
        move = rng.choice([m for m in moves if m.get("count", 0) == 0 or m["type"] != "issue_shares"])
        response = api.client.post(f"/v1/games/{game_id}/moves", json=move, headers={
            "Authorization": f"Bearer {seats[0]['token']}", "If-Match": f'"{view["version"]}"'})
        assert response.status_code == 200, response.get_json()
        human_moves += 1

    history = api.history(game_id)
    assert len(history) == view["version"]
    by_seat: dict[int, set] = {}
    for entry in history:
        by_seat.setdefault(entry["seat"], set()).add(entry.get("by"))
    assert by_seat[0] == {None}  # the human's own moves
    for seat in (1, 2, 3):
        assert by_seat[seat] == {"bot"}, (seat, by_seat[seat])
    assert sum(1 for e in history if e["seat"] == 0) == human_moves
    assert [e["version"] for e in history] == list(range(1, len(history) + 1))  # each once
    assert view["scores"] is not None and len(view["scores"]) == 4


def test_a_computer_seat_has_no_token_and_no_token_moves_for_it(api) -> None:
    created = create(api, [{"name": "Ada"}, {"name": "Bob"}, {"name": "Cat", "bot": {"level": 2}}])
    game_id = created["game_id"]
    # Nobody holds a token of the computer's seat: none made up passes for one.
    for token in (f"{game_id}.2.made-up", f"{game_id}.2.", f"{game_id}.2.{'0' * 43}"):
        response = api.client.post(f"/v1/games/{game_id}/moves", json={"type": "issue_shares", "count": 0},
                                   headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 401, response.get_json()
        assert response.get_json()["code"] == "TOKEN_INVALID"
    assert api.view(game_id)["version"] == 0


def test_a_bad_level_is_refused_and_creates_nothing(api) -> None:
    for bot in ({"level": 0}, {"level": 6}, {"level": "3"}, {}, {"level": 3, "think": 9}):
        response = api.client.post("/v1/games", json={"map": "rust_belt", "players": [
            {"name": "Ada"}, {"name": "Bob"}, {"name": "Cat", "bot": bot}]})
        assert response.status_code == 400, bot
        assert response.get_json()["code"] == "VALIDATION_ERROR"


def test_a_worker_killed_mid_search_leaves_the_seat_to_another_which_plays_it_once(api, start_worker) -> None:
    # Level 5 (128 simulations) from the first decision; a short lease so the takeover is quick.
    env = {"AOS_BOT_LEASE_SECONDS": "3", "AOS_BOT_MAX_MS": "2500"}
    first = start_worker(**env)
    created = create(api, [{"name": "Ada"}, {"name": "Bob"}, {"name": "Deep", "bot": {"level": 5}}],
                     seed="takeover")
    game_id = created["game_id"]
    # Play the humans' moves until the computer has a real choice (an action to pick), then
    # wait for the first worker to start searching it and kill that worker.
    rng = random.Random(5)
    while True:
        view = api.view(game_id)
        seat = view["active_seat"]
        if seat == 2:
            if view["phase"] == "select_action":
                break
            wait_for(lambda v=view: api.view(game_id)["version"] > v["version"], 20, "the bot's move")
            continue
        move = rng.choice(api.legal(game_id, seat))
        response = api.client.post(f"/v1/games/{game_id}/moves", json=move, headers={
            "Authorization": f"Bearer {created['seats'][seat]['token']}", "If-Match": f'"{view["version"]}"'})
        assert response.status_code in (200, 412), response.get_json()
    version = view["version"]
    # The seat is in the search once its clock is the search's lease (3 s ahead), no longer the
    # clock job's claim (AOS_CLOCK_LEASE_SECONDS, 60 s ahead) nor due: killed between the claim
    # and the search, the worker would leave the seat for the claim's whole minute.
    wait_for(lambda: any(g == game_id and due > time.time()
                         for g, due in api.store.due_clocks(time.time() + 4)), 20, "the search")
    # A search of 128 simulations takes about a second: the first worker is in it now, in a
    # search process of its fork server's.
    searchers = descendants(first.process.pid)
    assert searchers, "the worker searches in processes of its own"
    first.kill()
    killed_at = api.view(game_id)["version"]
    second = start_worker(**env)
    wait_for(lambda: api.view(game_id)["version"] > version, 30, "the takeover")
    history = api.history(game_id)
    made = [e for e in history if e["version"] == version + 1]
    assert len(made) == 1 and made[0]["seat"] == 2 and made[0]["by"] == "bot"
    assert made[0]["move"]["type"] == "select_action"
    if killed_at == version:  # killed before its move: the second worker played the seat
        assert second.metric("aos_clock_moves_total", outcome="bot_applied") >= 1
    # The killed worker's search processes and fork server went with it.
    wait_for(lambda: not [pid for pid in searchers if Path(f"/proc/{pid}").exists()], 10, "no orphans")


def test_a_retried_create_shows_the_computer_seat_again_without_a_token(api) -> None:
    body = {"map": "rust_belt",
            "players": [{"name": "Ada"}, {"name": "Bob"}, {"name": "Cat", "bot": {"level": 4}}]}
    headers = {"Idempotency-Key": "computer-seat-retry-0001"}
    first = api.client.post("/v1/games", json=body, headers=headers)
    again = api.client.post("/v1/games", json=body, headers=headers)
    assert first.status_code == 201 and again.status_code in (200, 201)
    assert again.get_json()["seats"] == first.get_json()["seats"]
    assert first.get_json()["seats"][2] == {"seat": 2, "name": "Cat", "token": None, "bot": {"level": 4}}


def test_a_hint_is_searched_by_a_real_worker_and_read_by_long_poll(api, start_worker) -> None:
    worker = start_worker(AOS_HINT_MAX_MS="600")
    created = create(api, [{"name": "Ada"}, {"name": "Bob"}, {"name": "Cat"}], seed="hint-e2e")
    game_id = created["game_id"]
    rng = random.Random(1)
    while True:  # to a decision with a real choice
        view = api.view(game_id)
        seat = view["active_seat"]
        moves = api.legal(game_id, seat)
        if view["phase"] == "select_action":
            break
        response = api.client.post(f"/v1/games/{game_id}/moves", json=rng.choice(moves), headers={
            "Authorization": f"Bearer {created['seats'][seat]['token']}"})
        assert response.status_code == 200
    headers = {"Authorization": f"Bearer {created['seats'][seat]['token']}"}
    # The API process's own settings cap the budget it records; the worker caps what it searches.
    asked = api.client.post(f"/v1/games/{game_id}/hints", json={"seat": seat, "budget_ms": 500},
                            headers=headers)
    assert asked.status_code == 202, asked.get_json()
    started = time.monotonic()
    done = api.client.get(asked.headers["Location"], headers={**headers, "Prefer": "wait=20"}).get_json()
    assert done["status"] == "done", done
    assert time.monotonic() - started < 10
    assert 1 <= len(done["moves"]) <= 3 and all(m["visits"] >= 1 for m in done["moves"])
    assert {m["move"]["type"] for m in done["moves"]} == {"select_action"}
    assert worker.metric("aos_hints_total", outcome="done") == 1
    # The worker's searches list builds with the engine as built (scripts/bootstrap.sh).
    assert worker.metric("aos_engine_processes", native="compiled") == 1
