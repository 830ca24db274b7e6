"""Chance as chance nodes (service/sim/state.py, engine rng.choosing): the growth dice, the
Production draw, shuffles and each map's own draws are outcomes with probabilities, chosen by
the caller; the game's own generator is never read."""

from __future__ import annotations

import random

import pytest

from service.engine import game
from service.engine.errors import IllegalMove
from service.sim.state import CHANCE, SimState
from tests.engine.helpers import game_at, take_actions
from tests.sim.players import play_game, sample_outcome


def frugal(state: SimState) -> int:
    """The first legal action, but never a build: ends build turns at once."""
    legal = state.legal_actions()
    end = state.space.encode({"type": "end_build"})
    return end if end in legal else legal[0]


def to_chance(state: SimState) -> SimState:
    """Plays frugal decisions until a chance node."""
    while not state.is_chance_node():
        state.apply_action(frugal(state))
    return state


def test_the_production_draw_is_a_chance_node_over_the_bag():
    """Seat 0 holds Production; the last pass of move goods draws 2 cubes: each draw's outcomes
    are the bag's colours, weighted by how many of each are left."""
    engine = take_actions(game_at("move_goods", 3, seats={0: {"loco": 1}}), {"production": 0})
    for k in engine["cubes"]:
        engine["cubes"][k] = []
    engine["bag"] = {"red": 3, "blue": 1, "purple": 0, "yellow": 0, "black": 4}
    engine["display"]["light-1"] = [None, None, None]  # room to place: Production decides
    sim = to_chance(SimState.from_game(engine))
    assert sim.current_player() == CHANCE and sim.pending.draw.kind == "cube"
    assert sim.chance_outcomes() == [(0, 3 / 8), (1, 1 / 8), (4, 4 / 8)]
    assert sim.action_to_string(4) == "cube black"
    sim.apply_action(4)
    assert sim.chance_outcomes() == [(0, 3 / 7), (1, 1 / 7), (4, 3 / 7)]
    sim.apply_action(1)
    assert not sim.is_chance_node() and sim.engine["phase"] == "production"
    assert sim.engine["production"]["drawn"] == ["black", "blue"]
    assert sim.engine["bag"] == {"red": 3, "blue": 0, "purple": 0, "yellow": 0, "black": 3}
    with pytest.raises(ValueError):
        sim.clone().apply_action(-1)


def test_growth_dice_are_six_even_outcomes_each_and_move_the_cube_they_name():
    engine = game_at("move_goods", 3)
    sim = to_chance(SimState.from_game(engine))
    assert sim.pending.draw.kind == "die"
    assert sim.chance_outcomes() == [(i, 1 / 6) for i in range(6)]
    light_3 = list(sim.engine["display"]["light-3"])
    city = game.map_info("rust_belt")  # which city light-3 feeds
    target = next(c["hex"] for c in city["cities"] if "light-3" in c["columns"])
    before = list(sim.engine["cubes"][f"{target['q']},{target['r']}"])
    for _ in range(3):  # three light dice, all showing 3
        sim.apply_action(2)
    for _ in range(3):  # three dark dice, all showing 6
        sim.apply_action(5)
    # light-3's top three cubes went to its city, in order
    after = sim.engine["cubes"][f"{target['q']},{target['r']}"]
    assert after == before + [c for c in light_3 if c]
    assert sim.engine["display"]["light-3"] == [None, None, None]


def test_a_maps_own_draws_are_chance_nodes_too():
    """Madagascar locks actions by dice as each round starts."""
    sim = SimState.new("madagascar", 3, "locks")
    while sim.engine["round"] == 1:
        if sim.is_chance_node():
            assert sim.pending.draw.kind == "die"
            sim.apply_action(0)  # every die a 1
        else:
            sim.apply_action(frugal(sim))
    assert len(sim.engine["actions"]["locked"]) == 4  # 7 - 3 players, counted by ones


def test_the_real_generator_is_never_read_the_outcomes_chosen_decide():
    """Two copies of a game with different seeds and generators, given the same outcomes, end
    in the same state: what the real game would draw next plays no part."""
    a = game_at("move_goods", 3)
    b = dict(a, seed="other", rng=987654321)
    finals = []
    for engine in (a, b):
        sim = SimState.from_game(engine)
        play_game(sim, random.Random(7))
        finals.append(sim.engine)
    assert finals[0] == finals[1]


def test_outcomes_sampled_by_their_probabilities_cover_a_whole_game():
    for map_id in game.MAP_IDS:
        sim = SimState.new(map_id, 3, "whole", cash=60, max_rounds=3)
        play_game(sim, random.Random(map_id))
        assert sim.is_terminal() and sim.engine["round"] == 3 and sim.returns()


def test_a_move_played_as_it_is_reaches_the_same_chance_node():
    sim = SimState.from_game(game_at("move_goods", 3))
    while not sim.is_chance_node():
        seat = sim.current_player()
        sim.apply_move(seat, {"type": "pass"})
    assert sim.pending.draw.kind == "die"
    clone = sim.clone()
    clone.apply_action(sample_outcome(clone, random.Random(1)))
    assert sim.pending is not None and len(clone.pending.chosen) == 1
    with pytest.raises(IllegalMove):
        SimState.new("rust_belt", 3).apply_move(0, {"type": "bid", "amount": 1})
