"""What-if (service/sim/simulate.py): nothing written, nothing of the real future read; the three
modes; caps; illegal steps with their index."""

from __future__ import annotations

import pytest

from service.engine import game
from service.sim.simulate import (
    MAX_MOVES,
    IllegalStep,
    SimulationCap,
    simulate,
)
from tests.engine.helpers import game_at, take_actions


def passes_to_growth() -> tuple[dict, list[dict]]:
    """Move goods, every seat passing twice: the last pass rolls the growth dice."""
    state = game_at("move_goods", 3)
    order = list(state["queue"])
    return state, [{"seat": s, "move": {"type": "pass"}} for s in order * 2]


def with_secret(state: dict, secret: str) -> dict:
    """The same public game with another secret seed and generator."""
    return dict(state, seed=secret, rng=game.new_game("rust_belt", ["a", "b", "c"], secret)["rng"])


def test_stop_plays_up_to_the_first_draw_and_writes_nothing():
    state, moves = passes_to_growth()
    before = repr(state)
    out = simulate(state, moves, "stop")
    assert out.stops_at == "random" and len(out.steps) == 6
    assert [e["type"] for e in out.steps[-1]["events"]][:1] == ["passed"]
    assert not any(e["type"] == "dice_rolled" for s in out.steps for e in s["events"])
    assert out.state["phase"] == "move_goods" and repr(state) == before
    assert out.steps[0]["text"].endswith("moves no goods this round")
    assert all(e["text"] for s in out.steps for e in s["events"])


def test_expect_lists_the_next_draws_outcomes_with_their_probabilities():
    state, moves = passes_to_growth()
    out = simulate(state, moves, "expect")
    assert out.stops_at == "random"
    assert out.expect == {"kind": "die", "complete": True,
                          "outcomes": [{"outcome": f, "probability": 1 / 6} for f in range(1, 7)]}


def test_sample_draws_from_the_callers_seed_alone():
    state, moves = passes_to_growth()
    a = simulate(state, moves, "sample", seed="mine")
    b = simulate(with_secret(state, "another secret"), moves, "sample", seed="mine")
    assert a.stops_at is None and a.state["round"] == 2
    assert a.steps == b.steps  # the secret plays no part: the same seed, the same dice
    dice = [e["dice"] for s in a.steps for e in s["events"] if e["type"] == "dice_rolled"]
    assert len(dice) == 2 and all(len(d) == 3 for d in dice)
    c = simulate(state, moves, "sample", seed="yours")
    assert c.steps != a.steps


def test_no_answer_in_any_mode_predicts_the_real_next_draw_better_than_chance():
    """The answers are the same whatever the secret: they are functions of the public state and
    the caller's seed alone. Over many secrets the real dice vary while every answer stays the
    same, so an answer matches the real roll no more often than chance (1 in 6 per die)."""
    state, moves = passes_to_growth()
    answers = {mode: simulate(state, moves, mode, seed="s") for mode in ("stop", "sample", "expect")}
    hits = total = 0
    predicted = [e["dice"] for s in answers["sample"].steps for e in s["events"]
                 if e["type"] == "dice_rolled"][0]
    for n in range(120):
        real = with_secret(state, f"secret {n}")
        for mode, answer in answers.items():
            again = simulate(real, moves, mode, seed="s")
            assert (again.steps, again.stops_at, again.expect) == (answer.steps, answer.stops_at,
                                                                  answer.expect)
        after = real
        for step in moves:
            after, events = game.apply(after, step["seat"], step["move"])
        rolled = next(e["dice"] for e in events if e["type"] == "dice_rolled")
        hits += sum(p == r for p, r in zip(predicted, rolled, strict=True))
        total += len(rolled)
    assert abs(hits / total - 1 / 6) < 0.08, hits / total  # 360 dice: chance is 1/6


def test_the_production_draw_is_expected_by_the_bag_and_never_revealed():
    state = take_actions(game_at("move_goods", 3), {"production": 0})
    state["bag"] = {"red": 3, "blue": 1, "purple": 0, "yellow": 0, "black": 4}
    order = list(state["queue"])
    moves = [{"seat": s, "move": {"type": "pass"}} for s in order * 2]
    out = simulate(state, moves, "expect")
    assert out.expect["kind"] == "cube"
    assert out.expect["outcomes"] == [{"outcome": "black", "probability": 0.5},
                                      {"outcome": "red", "probability": 0.375},
                                      {"outcome": "blue", "probability": 0.125}]


def test_caps_and_illegal_steps():
    state, moves = passes_to_growth()
    with pytest.raises(SimulationCap) as cap:
        simulate(state, moves * 20, "stop")
    assert cap.value.code == "SIMULATE_MOVES_CAP" and len(moves * 20) > MAX_MOVES
    funded = game_at("auction", 3, seats={s: {"cash": 10**6} for s in range(3)})
    bids = []
    for i in range(MAX_MOVES):
        seat = funded["turn_order"][i % 3]
        bids.append({"seat": seat, "move": {"type": "bid", "amount": i + 1}})
    with pytest.raises(SimulationCap) as cap:
        simulate(funded, bids, "stop", cpu_seconds=0.0)
    assert cap.value.code == "SIMULATE_CPU_CAP"
    with pytest.raises(IllegalStep) as bad:
        simulate(state, [moves[0], {"seat": moves[0]["seat"], "move": {"type": "pass"}}], "stop")
    assert bad.value.index == 1 and bad.value.error.code == "NOT_YOUR_TURN"
    for body in (("nope", "stop", None), ([{"seat": 0}], "stop", None), (moves, "guess", None),
                 (moves, "sample", 5), ([{"seat": True, "move": {}}], "stop", None)):
        with pytest.raises(ValueError):
            simulate(state, *body)
