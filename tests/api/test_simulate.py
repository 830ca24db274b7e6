"""POST /v1/games/{id}/simulate (issue 24, item 5): what-if over HTTP. A simulated sequence
answers what the real moves do, writes nothing, meets random steps by the caller's mode without
telling the real game's next draw, and is bounded (moves, CPU time, versions, rate limit)."""

from __future__ import annotations

import random

import orjson
import pytest

from service.api import create_app
from service.engine import game as engine
from service.referee.settings import Settings
from service.store import MemoryStore
from tests.api.conftest import Api
from tests.api.test_dry_run import to_last_pass

INFORMATIONAL = ("text", "cost", "income")  # legal-moves tells these; a move's body leaves them


def simulate(api, game_id: str, body: object, **headers: str):  # type: ignore[no-untyped-def]
    return api.client.post(f"/v1/games/{game_id}/simulate", json=body, headers=headers)


def problem(response, status: int, code: str) -> dict:  # type: ignore[no-untyped-def]
    assert response.status_code == status, response.get_json()
    body = response.get_json()
    assert body["code"] == code, body
    return body


def sequence(api, seed: str, moves: int) -> list[dict]:  # type: ignore[no-untyped-def]
    """`moves` legal moves of a game on `seed`, found by playing them on a twin game of its own."""
    twin = api.create(seed=seed)
    rng = random.Random(11)
    view, played = api.view(twin["game_id"]), []
    for _ in range(moves):
        seat = view["active_seat"]
        move = rng.choice(api.legal(twin["game_id"], seat))
        response = api.move(twin["game_id"], twin["seats"][seat]["token"], move)
        assert response.status_code == 200, response.get_json()
        view = response.get_json()["game"]
        played.append({"seat": seat, "move": {k: v for k, v in move.items() if k not in INFORMATIONAL}})
    return played


def with_secret(store: MemoryStore, game_id: str, secret: str) -> None:
    """The stored game gets another secret seed and generator; its public state stays."""
    kept = store._games[game_id]
    state = orjson.loads(kept.state)
    state["seed"], state["rng"] = secret, engine.new_game(state["map"], ["a", "b", "c"], secret)["rng"]
    kept.state = orjson.dumps(state)


@pytest.fixture
def played(api):  # type: ignore[no-untyped-def]
    """A game and 14 moves from its start (shares, the auction, actions, builds: no draw)."""
    moves = sequence(api, "simulate-real", 14)
    return api.create(seed="simulate-real"), moves


def test_a_simulated_sequence_answers_what_the_real_moves_do_and_writes_nothing(api, played) -> None:
    game, moves = played
    gid = game["game_id"]
    before = api.snapshot(gid)
    response = simulate(api, gid, {"moves": moves})
    assert response.status_code == 200 and response.headers["ETag"] == '"0"'
    answer = response.get_json()
    assert answer["from_version"] == 0 and answer["stops_at"] is None and len(answer["steps"]) == 14
    assert api.snapshot(gid) == before  # the game's view, version and history are as they were
    assert api.view(gid)["version"] == 0

    real = []
    for step in moves:
        result = api.move(gid, game["seats"][step["seat"]]["token"], step["move"])
        assert result.status_code == 200, result.get_json()
        real.append(result.get_json())
    assert answer["game"] == api.view(gid) and answer["game"]["version"] == 14
    assert [s["events"] for s in answer["steps"]] == [r["events"] for r in real]
    history = api.client.get(f"/v1/games/{gid}/history").get_json()
    assert [s["text"] for s in answer["steps"]] == [h["text"] for h in history]
    assert [(s["seat"], s["move"]) for s in answer["steps"]] == [(m["seat"], m["move"]) for m in moves]


def test_from_an_earlier_version_the_same_moves_lead_to_the_same_view(api, played) -> None:
    game, moves = played
    gid = game["game_id"]
    for step in moves:
        assert api.move(gid, game["seats"][step["seat"]]["token"], step["move"]).status_code == 200
    now = api.snapshot(gid)
    answer = simulate(api, gid, {"moves": moves[5:], "from_version": 5}).get_json()
    assert answer["from_version"] == 5 and len(answer["steps"]) == 9
    assert answer["game"] == api.view(gid)  # version 5 + 9 moves: the real version 14
    at_five = simulate(api, gid, {"moves": [], "from_version": 5}).get_json()
    assert at_five["steps"] == [] and at_five["game"]["version"] == 5
    assert at_five["game"] != answer["game"]
    # Version 5 went on with moves[5]: another move from there is its own branch.
    other = simulate(api, gid, {"moves": moves[4:5], "from_version": 4}).get_json()
    assert other["game"]["version"] == 5 and other["game"] == at_five["game"]
    assert api.snapshot(gid) == now


def test_from_version_outside_the_history_is_bad_from_version(api, played) -> None:
    game, moves = played
    gid = game["game_id"]
    for step in moves[:3]:
        assert api.move(gid, game["seats"][step["seat"]]["token"], step["move"]).status_code == 200
    for bad in (4, 1000, -1):
        body = problem(simulate(api, gid, {"moves": [], "from_version": bad}), 400, "BAD_FROM_VERSION")
        assert body["version"] == 3
    for good in (0, 3, None):
        assert simulate(api, gid, {"moves": [], "from_version": good}).status_code == 200
    body = problem(simulate(api, gid, {"moves": [], "from_version": "2"}), 400, "VALIDATION_ERROR")
    assert "from_version" in body["errors"]


def test_stop_stops_at_the_first_random_step_as_validate_does(api) -> None:
    game, view = to_last_pass(api, "simulate-dice")
    gid, seat = game["game_id"], view["active_seat"]
    before = api.snapshot(gid)
    verdict = api.client.post(f"/v1/games/{gid}/moves/validate",
                              json={"type": "pass", "seat": seat}).get_json()
    answer = simulate(api, gid, {"moves": [{"seat": seat, "move": {"type": "pass"}}] * 3,
                                 "random": "stop"}).get_json()
    assert answer["stops_at"] == "random" and len(answer["steps"]) == 1  # the rest are not reached
    assert answer["steps"][0]["events"] == verdict["effects"]
    assert "income_collected" in [e["type"] for e in answer["steps"][0]["events"]]
    assert answer["game"] == api.view(gid)  # the stopped step is not played: the view before it
    assert "seed" not in answer and "expect" not in answer
    assert api.snapshot(gid) == before


def test_expect_lists_the_next_draws_outcomes(api) -> None:
    game, view = to_last_pass(api, "simulate-dice")
    gid, seat = game["game_id"], view["active_seat"]
    answer = simulate(api, gid, {"moves": [{"seat": seat, "move": {"type": "pass"}}],
                                 "random": "expect"}).get_json()
    assert answer["stops_at"] == "random"
    assert answer["expect"] == {"kind": "die", "complete": True,
                                "outcomes": [{"outcome": f, "probability": 1 / 6} for f in range(1, 7)]}


def test_sample_is_reproducible_by_its_seed_and_plays_on(api) -> None:
    game, view = to_last_pass(api, "simulate-dice")
    gid, seat = game["game_id"], view["active_seat"]
    before = api.snapshot(gid)
    body = {"moves": [{"seat": seat, "move": {"type": "pass"}}], "random": "sample", "seed": "rollout-1"}
    first, again = simulate(api, gid, body), simulate(api, gid, body)
    assert first.get_data() == again.get_data()
    answer = first.get_json()
    assert answer["stops_at"] is None and answer["seed"] == "rollout-1"
    dice = [e["dice"] for e in answer["steps"][0]["events"] if e["type"] == "dice_rolled"]
    assert [len(d) for d in dice] == [3, 3]
    assert answer["game"]["round"] == 2 and answer["game"]["version"] == view["version"] + 1
    others = {orjson.dumps(simulate(api, gid, {**body, "seed": f"rollout-{n}"}).get_json()["steps"])
              for n in range(2, 6)}
    assert len(others | {orjson.dumps(answer["steps"])}) == 5  # each seed its own dice
    chosen = simulate(api, gid, {**body, "seed": None}).get_json()
    assert isinstance(chosen["seed"], str) and chosen["seed"]  # chosen for the caller, and told
    replayed = simulate(api, gid, {**body, "seed": chosen["seed"]}).get_json()
    assert replayed["steps"] == chosen["steps"]
    assert api.snapshot(gid) == before


def test_no_answer_depends_on_the_games_secret_and_none_predicts_its_next_draw(api_on) -> None:
    """Two games in the same public state with other secrets get the same answers in every mode,
    while their real dice differ: an answer tells nothing of the real draw. Over 30 secrets the
    sampled dice match the real ones about as often as chance (1 in 6)."""
    store = MemoryStore()
    api = api_on(store, rate_limits=False)  # 31 games
    # The twins are brought to the last pass by the same moves as the first game, through an app
    # on the same store without the contract check: those moves' answers are checked once, on
    # the first game (the check was 4/5 of this test's CPU). What they answer from there on is
    # asked of `api`, whose every answer is checked.
    setup = Api(create_app(store=store, settings=Settings(rate_limits=False)))
    game, view = to_last_pass(api, "simulate-secret")
    gid, seat = game["game_id"], view["active_seat"]
    step = [{"seat": seat, "move": {"type": "pass"}}]
    modes = [{"moves": step, "random": "stop"}, {"moves": step, "random": "expect"},
             {"moves": step, "random": "sample", "seed": "guess"}]
    answers = [simulate(api, gid, body).get_data() for body in modes]
    predicted = [e["dice"] for e in orjson.loads(answers[2])["steps"][0]["events"]
                 if e["type"] == "dice_rolled"]
    hits = total = 0
    rolls = set()
    for n in range(30):
        twin, _ = to_last_pass(setup, "simulate-secret")
        with_secret(store, twin["game_id"], f"another secret {n}")
        for body, answer in zip(modes, answers, strict=True):
            again = simulate(api, twin["game_id"], body).get_data()
            assert again == answer.replace(gid.encode(), twin["game_id"].encode())
        moved = api.move(twin["game_id"], twin["seats"][seat]["token"], {"type": "pass"}).get_json()
        real = [e["dice"] for e in moved["events"] if e["type"] == "dice_rolled"]
        rolls.add(orjson.dumps(real))
        hits += sum(p == r for ps, rs in zip(predicted, real, strict=True)
                    for p, r in zip(ps, rs, strict=True))
        total += sum(len(r) for r in real)
    assert len(rolls) > 25  # the secrets do change the real dice
    assert total == 180 and abs(hits / total - 1 / 6) < 0.1, hits / total


def test_an_illegal_step_is_its_rule_code_with_its_index(api, played) -> None:
    game, moves = played
    gid = game["game_id"]
    before = api.snapshot(gid)
    wrong_seat = {"seat": (moves[1]["seat"] + 1) % 3, "move": moves[1]["move"]}
    body = problem(simulate(api, gid, {"moves": [moves[0], wrong_seat, moves[2]]}), 422, "NOT_YOUR_TURN")
    assert body["index"] == 1 and body["active_seat"] == moves[1]["seat"]
    assert simulate(api, gid, {"moves": moves[:3]}).status_code == 200
    too_dear = {"seat": moves[0]["seat"], "move": {"type": "issue_shares", "count": 15}}
    body = problem(simulate(api, gid, {"moves": [too_dear]}), 422, "SHARE_LIMIT")
    assert body["index"] == 0
    assert api.snapshot(gid) == before


def test_the_moves_cap_is_413_before_any_move_is_read(api_on) -> None:
    api = api_on(MemoryStore(), simulate_max_moves=3)
    game = api.create(seed="simulate-cap")
    gid = game["game_id"]
    moves = sequence(api, "simulate-cap", 3)
    assert simulate(api, gid, {"moves": moves}).status_code == 200
    body = problem(simulate(api, gid, {"moves": moves + [{"not": "read"}]}), 413, "SIMULATE_MOVES_CAP")
    assert body["max_moves"] == 3


def test_the_default_moves_cap_is_50(api, played) -> None:
    game, moves = played
    gid = game["game_id"]
    long = moves + [moves[0]] * 36  # 50: read and played up to the 15th, a share issue out of phase
    assert problem(simulate(api, gid, {"moves": long}), 422, "WRONG_PHASE")["index"] == 14
    body = problem(simulate(api, gid, {"moves": long + moves[:1]}), 413, "SIMULATE_MOVES_CAP")
    assert body["max_moves"] == 50


def test_the_cpu_cap_is_413_and_names_itself(api_on) -> None:
    capped = api_on(MemoryStore(), simulate_cpu_ms=0)
    free = api_on(MemoryStore())
    for api in (capped, free):
        game = api.create(seed="simulate-cpu")
        moves = sequence(api, "simulate-cpu", 4)
        response = simulate(api, game["game_id"], {"moves": moves})
        if api is capped:
            assert problem(response, 413, "SIMULATE_CPU_CAP")["cpu_ms"] == 0
        else:
            assert response.status_code == 200 and len(response.get_json()["steps"]) == 4
        # No move, no CPU spent on moves: not refused even at 0 ms.
        assert simulate(api, game["game_id"], {"moves": []}).status_code == 200


def test_the_body_is_checked_as_the_contract_says(api, played) -> None:
    game, moves = played
    gid = game["game_id"]
    bad = [
        {},  # no moves
        {"moves": moves[:1], "random": "guess"},
        {"moves": moves[:1], "random": "sample", "seed": ""},
        {"moves": moves[:1], "extra": 1},
        {"moves": [{"seat": 0}]},
        {"moves": [{"seat": 0, "move": {"type": "fly"}}]},
        {"moves": [{"seat": 9, "move": {"type": "pass"}}]},
        {"moves": [{"seat": 0, "move": {"type": "pass", "seat": 0}}]},
        {"moves": "all of them"},
        [],
    ]
    for body in bad:
        problem(simulate(api, gid, body), 400, "VALIDATION_ERROR")
    # Legal-moves' informational fields are accepted, as on POST …/moves.
    listed = api.legal(gid, game["active_seat"])[0]
    assert simulate(api, gid, {"moves": [{"seat": game["active_seat"], "move": listed}]}).status_code == 200
    problem(simulate(api, "nosuchgame", {"moves": []}), 404, "GAME_NOT_FOUND")


def test_a_token_is_optional_but_checked_when_sent(api, played) -> None:
    game, moves = played
    gid = game["game_id"]
    token = game["seats"][0]["token"]
    body = {"moves": moves[:2]}
    assert simulate(api, gid, body, Authorization=f"Bearer {token}").status_code == 200
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    problem(simulate(api, gid, body, Authorization=f"Bearer {forged}"), 401, "TOKEN_INVALID")
    other = api.create(seed="other")
    problem(simulate(api, gid, body, Authorization=f"Bearer {other['seats'][0]['token']}"), 403,
            "TOKEN_OTHER_GAME")


def test_simulations_spend_the_writes_allowance(api_on) -> None:
    api = api_on(MemoryStore(), rate_limit_writes="2/minute")
    game = api.create(seed="simulate-limit")
    gid = game["game_id"]
    for _ in range(2):
        response = simulate(api, gid, {"moves": []})
        assert response.status_code == 200 and "writes-60s" in response.headers["RateLimit-Policy"]
    body = problem(simulate(api, gid, {"moves": []}), 429, "RATE_LIMITED")
    assert body["policy"] == "writes-60s"


def test_the_caps_are_set_from_the_environment() -> None:
    settings = Settings.from_env({"AOS_SIMULATE_MAX_MOVES": "7", "AOS_SIMULATE_CPU_MS": "90"})
    assert (settings.simulate_max_moves, settings.simulate_cpu_ms) == (7, 90)
    assert (Settings().simulate_max_moves, Settings().simulate_cpu_ms) == (50, 250)
