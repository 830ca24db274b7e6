"""Age of Steam as a PettingZoo AEC environment and a Gymnasium single-agent one (the rl extra).

    from service.sim.envs import AgeOfSteamAEC, AgeOfSteamGym
    env = AgeOfSteamAEC("iraq", players=4)           # pettingzoo.test.api_test passes
    env = AgeOfSteamGym("rust_belt", players=3, seat=0, policy=None)   # check_env passes

Both observe {"observation": observation.py's vector, "action_mask": int8 over the action ids};
chance outcomes (dice, draws) are sampled from the environment's own generator, seeded by
reset(seed=...), which also picks the setup (`setup_seed` and the seed). Rewards come at the
end: 1 for first place down to -1 for last. In the Gymnasium one the other seats are played by
`policy(state, rng) -> action` (a SimState and a numpy Generator; default: a legal action at
random); an action that is not legal leaves the game as it was, with the reward
`illegal_reward` and info["illegal"] True.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from gymnasium import Env, spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv

from service.sim.observation import describe, layout, observation
from service.sim.state import SimState

Policy = Callable[[SimState, np.random.Generator], int]


def _spaces(map_id: str, players: int, n_actions: int, bound: int) -> spaces.Dict:
    """`bound`: the most cash a player can hold, which no number observed exceeds either way."""
    size = layout(map_id, players).size
    return spaces.Dict({
        "observation": spaces.Box(low=-bound, high=bound, shape=(size,), dtype=np.float32),
        "action_mask": spaces.Box(low=0, high=1, shape=(n_actions,), dtype=np.int8),
    })


def _new_state(map_id: str, players: int, setup_seed: str, seed: int | None,
               max_rounds: int | None, cash: int | None) -> SimState:
    setup = setup_seed if seed is None else f"{setup_seed}-{seed}"
    return SimState.new(map_id, players, setup, max_rounds, cash)


def resolve_chance(state: SimState, rng: np.random.Generator) -> None:
    """Samples chance outcomes by their probabilities until someone decides or the game ends."""
    while state.is_chance_node():
        outcomes = state.chance_outcomes()
        pick = rng.choice(len(outcomes), p=[p for _, p in outcomes])
        state.apply_action(outcomes[int(pick)][0])


def _observe(state: SimState, seat: int, acting: bool, n_actions: int) -> dict:
    mask = np.zeros(n_actions, dtype=np.int8)
    if acting and not state.is_terminal():
        mask[state.legal_actions()] = 1
    return {"observation": observation(state, seat), "action_mask": mask}


def random_policy(state: SimState, rng: np.random.Generator) -> int:
    legal = state.legal_actions()
    return legal[int(rng.integers(len(legal)))]


class AgeOfSteamAEC(AECEnv):
    metadata = {"render_modes": ["ansi"], "name": "age_of_steam_v1", "is_parallelizable": False}

    def __init__(self, map_id: str = "rust_belt", players: int = 3, setup_seed: str = "setup",
                 max_rounds: int | None = None, cash: int | None = None,
                 render_mode: str | None = None) -> None:
        super().__init__()
        self.map_id, self.players, self.setup_seed = map_id, players, setup_seed
        self.max_rounds, self.cash, self.render_mode = max_rounds, cash, render_mode
        self.possible_agents = [f"player_{i}" for i in range(players)]
        self.agents = self.possible_agents[:]
        self.sim = _new_state(map_id, players, setup_seed, None, max_rounds, cash)
        self.n_actions = self.sim.space.num_distinct_actions
        self.action_spaces = {a: spaces.Discrete(self.n_actions) for a in self.possible_agents}
        space = _spaces(map_id, players, self.n_actions, self.sim.space.move_space.max_cash)
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.rng, _ = seeding.np_random(None)

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self.rng, _ = seeding.np_random(seed)
        self.sim = _new_state(self.map_id, self.players, self.setup_seed, seed, self.max_rounds,
                              self.cash)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict] = {a: {} for a in self.agents}
        resolve_chance(self.sim, self.rng)
        self._select()

    def _select(self) -> None:
        if self.sim.is_terminal():
            returns = self.sim.returns()
            for i, agent in enumerate(self.possible_agents):
                if agent in self.rewards:
                    self.rewards[agent] = returns[i]
            self.terminations = dict.fromkeys(self.agents, True)
            if self.agents:
                self.agent_selection = self.agents[0]
        else:
            self.agent_selection = self.possible_agents[self.sim.current_player()]

    def observe(self, agent: str) -> dict:
        seat = self.possible_agents.index(agent)
        return _observe(self.sim, seat, agent == self.agent_selection, self.n_actions)

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        assert action is not None
        self._cumulative_rewards[agent] = 0.0
        self.sim.apply_action(int(action))
        resolve_chance(self.sim, self.rng)
        self._select()
        self._accumulate_rewards()

    def render(self) -> str | None:
        return describe(self.sim, None) if self.render_mode == "ansi" else None

    def close(self) -> None:
        pass


class AgeOfSteamGym(Env):
    """One seat of a game as a single-agent Gymnasium environment."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, map_id: str = "rust_belt", players: int = 3, seat: int = 0,
                 policy: Policy | None = None, setup_seed: str = "setup",
                 max_rounds: int | None = None, cash: int | None = None,
                 illegal_reward: float = -0.01, render_mode: str | None = None) -> None:
        self.map_id, self.players, self.seat = map_id, players, seat
        self.policy = policy or random_policy
        self.setup_seed, self.max_rounds, self.cash = setup_seed, max_rounds, cash
        self.illegal_reward, self.render_mode = illegal_reward, render_mode
        self.sim = _new_state(map_id, players, setup_seed, None, max_rounds, cash)
        self.n_actions = self.sim.space.num_distinct_actions
        self.action_space = spaces.Discrete(self.n_actions)
        self.observation_space = _spaces(map_id, players, self.n_actions,
                                         self.sim.space.move_space.max_cash)

    def _others(self) -> None:
        """Plays chance and the other seats until this seat decides or the game ends."""
        while not self.sim.is_terminal():
            resolve_chance(self.sim, self.np_random)
            if self.sim.is_terminal() or self.sim.current_player() == self.seat:
                return
            self.sim.apply_action(self.policy(self.sim, self.np_random))

    def _obs(self) -> dict:
        return _observe(self.sim, self.seat, True, self.n_actions)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        super().reset(seed=seed)
        self.sim = _new_state(self.map_id, self.players, self.setup_seed, seed, self.max_rounds,
                              self.cash)
        self._others()
        return self._obs(), {}

    def step(self, action: int) -> tuple[dict, float, bool, bool, dict]:
        if self.sim.is_terminal() or int(action) not in self.sim.legal_actions():
            return self._obs(), self.illegal_reward, self.sim.is_terminal(), False, {"illegal": True}
        self.sim.apply_action(int(action))
        self._others()
        done = self.sim.is_terminal()
        reward = self.sim.returns()[self.seat] if done else 0.0
        return self._obs(), float(reward), done, False, {"illegal": False}

    def render(self) -> str | None:
        return describe(self.sim, self.seat) if self.render_mode == "ansi" else None
