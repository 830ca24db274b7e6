"""The peers' own test suites, unchanged, over service/sim (the rl extra, which the test extra
installs): OpenSpiel's random simulation test and MCTSBot, PettingZoo's api_test, Gymnasium's
check_env."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest
from gymnasium.utils.env_checker import check_env
from open_spiel.python.algorithms import mcts
from open_spiel.python.algorithms.evaluate_bots import evaluate_bots
from pettingzoo.test import api_test

import service.sim.spiel  # noqa: F401  (registers the game)
from service.engine import game
from service.sim.envs import AgeOfSteamAEC, AgeOfSteamGym
from service.sim.spiel import NAME


def test_the_game_is_registered_under_a_name_with_age_of_steam():
    assert "age_of_steam" in NAME
    assert NAME in pyspiel.registered_names()
    g = pyspiel.load_game(NAME, {"map": "holland", "players": 4})
    assert g.num_players() == 4 and g.num_distinct_actions() == 14573
    assert g.get_type().chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    state = g.new_initial_state()
    assert len(state.observation_tensor(0)) == g.observation_tensor_size()
    assert "holland round 1/8 issue_shares" in state.observation_string(2)


@pytest.mark.parametrize("map_id", game.MAP_IDS)
def test_openspiels_random_simulation_test_passes(map_id):
    for params in ({"map": map_id}, {"map": map_id, "players": 4, "cash": 60, "max_rounds": 2}):
        pyspiel.random_sim_test(pyspiel.load_game(NAME, params), num_sims=2, serialize=True,
                                verbose=False)


def test_openspiels_mcts_bot_plays_a_whole_game():
    g = pyspiel.load_game(NAME, {"map": "rust_belt", "players": 3})
    rng = np.random.RandomState(1)
    bots = [mcts.MCTSBot(g, 2.0, 4, mcts.RandomRolloutEvaluator(1, rng), random_state=rng)
            for _ in range(3)]
    state = g.new_initial_state()
    returns = evaluate_bots(state, bots, rng)
    assert state.is_terminal() and len(returns) == 3 and all(-1 <= r <= 1 for r in returns)
    assert len(state.history()) > 20


@pytest.mark.parametrize("map_id", game.MAP_IDS)
def test_pettingzoos_api_test_passes(map_id):
    api_test(AgeOfSteamAEC(map_id, 3), num_cycles=1000, verbose_progress=False)
    api_test(AgeOfSteamAEC(map_id, 4, cash=60, max_rounds=2), num_cycles=300, verbose_progress=False)


@pytest.mark.parametrize("map_id", game.MAP_IDS)
def test_gymnasiums_check_env_passes(map_id):
    check_env(AgeOfSteamGym(map_id, 3), skip_render_check=True)


def test_the_gym_seat_decides_and_the_given_policy_plays_the_others():
    asked = []

    def first_legal(state, rng):
        asked.append(state.current_player())
        return state.legal_actions()[0]

    env = AgeOfSteamGym("iraq", 3, seat=1, policy=first_legal, cash=60, max_rounds=1)
    obs, _ = env.reset(seed=3)
    assert env.sim.current_player() == 1 and obs["action_mask"].sum() == len(env.sim.legal_actions())
    done, steps, reward = False, 0, 0.0
    while not done:
        legal = np.flatnonzero(obs["action_mask"])
        illegal = next(a for a in range(env.n_actions) if a not in set(legal))
        same, r, _, _, info = env.step(illegal)
        assert info["illegal"] and r == env.illegal_reward
        assert np.array_equal(same["observation"], obs["observation"])
        obs, reward, done, _, info = env.step(int(legal[-1]))
        steps += 1
    assert asked and 1 not in asked and steps > 3
    assert reward == env.sim.returns()[1]
