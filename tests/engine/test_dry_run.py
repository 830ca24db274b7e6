"""A dry run (game.validate) stops at the move's first random step and says so: no verdict shows
a die, a drawn cube or a shuffle before the move that causes it is made."""

from __future__ import annotations

import orjson
import pytest

from service.engine import game, rng
from tests.engine.helpers import decider, events_of, game_at, play_events

RANDOM_EVENTS = ("dice_rolled", "goods_grown", "production_drawn")


def last_pass_of_move_goods(players: int = 3, **kwargs: object) -> dict:
    """Move goods, round 1, with one pass left: the last seat's pass ends the round's decisions."""
    state = game_at("move_goods", players, **kwargs)
    for _ in range(2 * players - 1):  # two move-goods rounds, each seat passes in both
        state, _ = play_events(state, decider(state), {"type": "pass"})
    assert state["phase"] == "move_goods" and len(state["queue"]) == 1
    return state


def test_the_last_pass_of_move_goods_stops_before_the_dice() -> None:
    state = last_pass_of_move_goods()
    seat = decider(state)
    verdict = game.validate(state, seat, {"type": "pass"})
    assert verdict["legal"] is True and verdict["stops_at"] == "random"
    kinds = [e["type"] for e in verdict["effects"]]
    assert not set(kinds) & set(RANDOM_EVENTS), kinds
    # What comes before the dice is there, as the move makes it: the pass, income, expenses.
    _, real = play_events(state, seat, {"type": "pass"})
    rolled = next(i for i, e in enumerate(real) if e["type"] in RANDOM_EVENTS)
    assert verdict["effects"] == real[:rolled]
    assert "income_collected" in kinds and "expenses_paid" in kinds and "income_reduced" in kinds
    assert events_of(real, "dice_rolled"), "the real move rolls"


def test_a_dry_run_with_production_stops_before_the_draw() -> None:
    state = last_pass_of_move_goods(actions={"production": 1})
    verdict = game.validate(state, decider(state), {"type": "pass"})
    assert verdict["stops_at"] == "random"
    assert not {e["type"] for e in verdict["effects"]} & set(RANDOM_EVENTS)


def test_the_real_move_after_a_dry_run_rolls_as_it_would_have() -> None:
    state = last_pass_of_move_goods()
    seat = decider(state)
    before = orjson.dumps(state)
    alone, alone_events = play_events(state, seat, {"type": "pass"})
    game.validate(state, seat, {"type": "pass"})
    assert orjson.dumps(state) == before, "the dry run changed its input"
    after, events = play_events(state, seat, {"type": "pass"})
    assert orjson.dumps(after) == orjson.dumps(alone) and events == alone_events


def test_a_move_with_nothing_random_is_run_to_its_end_without_stops_at() -> None:
    state = game_at("issue_shares", 3)
    seat = decider(state)
    verdict = game.validate(state, seat, {"type": "issue_shares", "count": 2})
    _, real = play_events(state, seat, {"type": "issue_shares", "count": 2})
    assert verdict == {"legal": True, "effects": real}


def test_an_illegal_move_is_judged_whatever_would_follow() -> None:
    state = last_pass_of_move_goods()
    seat = decider(state)
    verdict = game.validate(state, seat, {"type": "deliver", "from": {"q": 0, "r": 0},
                                          "color": "red", "links": ["L0"]})
    assert verdict["legal"] is False and "stops_at" not in verdict


def test_the_generator_draws_again_after_a_dry_run() -> None:
    # The refusal lasts only as long as the dry run, even when the dry run stopped on it.
    state = last_pass_of_move_goods()
    game.validate(state, decider(state), {"type": "pass"})
    assert rng.below(7, 6)[1] in range(6)
    with rng.refusing(), pytest.raises(rng.RandomStep):
        rng.below(7, 6)


def test_every_draw_is_refused_in_a_dry_run_not_only_the_dice() -> None:
    # The shuffle and the bag go through the same generator: a new game cannot be set up in one.
    with rng.refusing(), pytest.raises(rng.RandomStep):
        game.new_game("rust_belt", ["Ann", "Bob", "Cat"], "seed")


def test_a_round_of_simplest_moves_has_one_stopped_dry_run_per_random_step() -> None:
    # Over a whole round, exactly the moves whose real run draws stop, and the others do not.
    state = game_at("issue_shares", 3)
    for _ in range(60):
        if state["round"] == 2 and state["phase"] == "auction":
            break
        seat = decider(state)
        move = {"issue_shares": {"type": "issue_shares", "count": 0}, "auction": {"type": "drop_out"},
                "build": {"type": "end_build"}, "move_goods": {"type": "pass"}}.get(
            state["phase"]) or game.legal_moves(state, seat)[0]
        verdict = game.validate(state, seat, move)
        after, _ = play_events(state, seat, move)
        assert ("stops_at" in verdict) == (after["rng"] != state["rng"]), (state["phase"], move)
        state = after
    else:
        raise AssertionError("round 2 not reached")
