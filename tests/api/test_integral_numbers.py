"""Integers in request bodies, as the contract says: `2` and `2.0` are the integer 2 (JSON Schema
counts both as integers), `2.5`, `"2"` and `true` are not. Every integer field of every move a
game meets is tried both ways over HTTP: the same game results, byte for byte, with no float in
what the service keeps; a half (`2.5`) in any one field is a 400 that changes nothing."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from service.store import MemoryStore
from tests.api.conftest import Api


def integral_floats(value: Any) -> Any:
    """`value` with every integer written as a float (2 -> 2.0)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, list):
        return [integral_floats(v) for v in value]
    if isinstance(value, dict):
        return {k: integral_floats(v) for k, v in value.items()}
    return value


def halves(value: Any) -> Iterator[Any]:
    """`value` with one of its integers made a half (2 -> 2.5), for each integer in turn."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        yield value + 0.5
    elif isinstance(value, list):
        for i, item in enumerate(value):
            for bad in halves(item):
                yield [*value[:i], bad, *value[i + 1:]]
    elif isinstance(value, dict):
        for key, item in value.items():
            for bad in halves(item):
                yield {**value, key: bad}


def floats_in(value: Any) -> list[float]:
    if isinstance(value, float):
        return [value]
    if isinstance(value, list):
        return [f for v in value for f in floats_in(v)]
    if isinstance(value, dict):
        return [f for v in value.values() for f in floats_in(v)]
    return []


def cheap(rng: random.Random, legal: list[dict]) -> dict:
    """One of the first few legal moves (the fewest shares, the lowest bids: random shares and
    bids bankrupt the players within a round), less the fields legal-moves adds."""
    move = rng.choice(legal[:3])
    return {k: v for k, v in move.items() if k not in ("text", "cost", "income")}


def play(api: Api, seed: str, moves: int, write: Any) -> tuple[dict, list[dict]]:
    """A game of `moves` random legal moves, each sent through `write`: its view and history
    (less its id and times)."""
    game = api.create(seed=seed)
    rng = random.Random(11)
    tokens = [s["token"] for s in game["seats"]]
    view = api.view(game["game_id"])
    for _ in range(moves):
        seat = view["active_seat"]
        if seat is None:
            break
        move = cheap(rng, api.legal(game["game_id"], seat))
        response = api.move(game["game_id"], tokens[seat], write({**move, "seat": seat}))
        assert response.status_code == 200, (move, response.get_json())
        view = response.get_json()["game"]
    history = api.client.get(f"/v1/games/{game['game_id']}/history").get_json()
    view = {k: v for k, v in api.view(game["game_id"]).items() if k not in ("game_id", "clock", "deadline")}
    return view, [{k: v for k, v in entry.items() if k != "at"} for entry in history]


def test_a_game_played_with_integral_floats_is_the_game_played_with_integers(api: Api) -> None:
    view, history = play(api, "integral", 80, lambda move: move)
    assert len(history) > 30
    kinds = {entry["move"]["type"] for entry in history}
    assert {"issue_shares", "bid", "select_action", "build"} <= kinds, kinds
    as_floats = play(api, "integral", 80, integral_floats)
    assert as_floats == (view, history)
    assert floats_in(as_floats) == []  # none kept: each 2.0 became the integer 2


def test_a_half_in_any_integer_field_of_any_move_is_a_400_that_changes_nothing(api_on) -> None:
    # Rate limits off: this sends a few hundred refused writes as fast as the app answers them,
    # over 30 a second (the write limit, tested in test_rate_limits.py) once nothing waits.
    api = api_on(MemoryStore(), rate_limits=False)
    game = api.create(seed="halves")
    gid, tokens = game["game_id"], [s["token"] for s in game["seats"]]
    rng = random.Random(5)
    tried: dict[str, int] = {}
    view = api.view(gid)
    for _ in range(60):
        seat = view["active_seat"]
        if seat is None:
            break
        legal = api.legal(gid, seat)
        for move in legal[:2]:
            move = {k: v for k, v in move.items() if k not in ("text", "cost", "income")}
            if tried.get(move["type"], 0) >= 3:
                continue
            tried[move["type"]] = tried.get(move["type"], 0) + 1
            for bad in halves({**move, "seat": seat}):
                before = api.snapshot(gid)
                response = api.move(gid, tokens[seat], bad)
                body = response.get_json()
                assert response.status_code == 400 and body["code"] == "VALIDATION_ERROR", (bad, body)
                verdict = api.client.post(f"/v1/games/{gid}/moves/validate", json=bad)
                assert verdict.status_code == 400, (bad, verdict.get_json())
                assert api.snapshot(gid) == before
        view = api.move(gid, tokens[seat], cheap(rng, legal)).get_json()["game"]
    assert {"issue_shares", "bid", "select_action", "build"} <= set(tried), tried


def test_the_async_and_what_if_bodies_take_integers_alike(api: Api) -> None:
    game = api.create(seed="bodies")
    gid, tokens = game["game_id"], [s["token"] for s in game["seats"]]
    seat = api.view(gid)["active_seat"]
    assert api.move(gid, tokens[seat], {"type": "issue_shares", "count": 1}).status_code == 200
    auth = {"Authorization": f"Bearer {tokens[seat]}"}
    step = {"seat": float(api.view(gid)["active_seat"]), "move": {"type": "issue_shares", "count": 0.0}}
    for half in ({"moves": [step], "from_version": 0.5}, {"moves": [{**step, "seat": 0.5}]}):
        refused = api.client.post(f"/v1/games/{gid}/simulate", json=half)
        assert refused.status_code == 400 and refused.get_json()["code"] == "VALIDATION_ERROR", half
    simulated = api.client.post(f"/v1/games/{gid}/simulate", json={"moves": [step], "from_version": 1.0})
    assert simulated.status_code == 200, simulated.get_json()
    assert simulated.get_json()["steps"][0]["move"] == {"type": "issue_shares", "count": 0}
    before = api.snapshot(gid)
    half = api.client.post(f"/v1/games/{gid}/takeback", json={"to_version": 0.5}, headers=auth)
    assert half.status_code == 400 and half.get_json()["code"] == "VALIDATION_ERROR"
    assert api.snapshot(gid) == before
    whole = api.client.post(f"/v1/games/{gid}/takeback", json={"to_version": 0.0}, headers=auth)
    assert whole.status_code == 200, whole.get_json()
    assert api.client.get(f"/v1/games/{gid}/history").get_json()[-1]["move"] == {
        "type": "takeback", "to_version": 0}
