"""Age of Steam as an OpenSpiel game (the rl extra): `python_age_of_steam`.

    import pyspiel
    import service.sim.spiel  # registers the game
    game = pyspiel.load_game("python_age_of_steam", {"map": "iraq", "players": 4})

Parameters: `map` (a map id), `players`, `setup_seed` (the setup's draws: turn order, display,
cities), `max_rounds` (0: the map's own number; fewer for short games), `cash` (0: the rules'
$10; more funds every seat). Perfect information with explicit chance: the growth dice, the
Production draw, shuffles and a map's own draws are chance nodes (docs/simulation.md). Actions
are the fixed ids of service/sim/actions.py; the observation tensor is observation.py's. Returns
at the end: 1 for first place down to -1 for last.
"""

from __future__ import annotations

import numpy as np
import pyspiel
from open_spiel.python.observation import IIGObserverForPublicInfoGame

from service.engine import game as engine_game
from service.sim.observation import describe, layout, observation
from service.sim.state import MAX_CHANCE_OUTCOMES, SimState

NAME = "python_age_of_steam"
DEFAULTS = {"map": "rust_belt", "players": 3, "setup_seed": "setup", "max_rounds": 0, "cash": 0}
MAX_PLAYERS = 6

GAME_TYPE = pyspiel.GameType(
    short_name=NAME,
    long_name="Python Age of Steam",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.GENERAL_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=MAX_PLAYERS,
    min_num_players=3,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=DEFAULTS,
)


class AgeOfSteamGame(pyspiel.Game):
    def __init__(self, params: dict | None = None) -> None:
        p = {**DEFAULTS, **(params or {})}
        self.map_id, self.players = str(p["map"]), int(p["players"])
        self.setup_seed = str(p["setup_seed"])
        self.max_rounds = int(p["max_rounds"]) or None
        self.cash = int(p["cash"]) or None
        self._start = SimState.new(self.map_id, self.players, self.setup_seed, self.max_rounds,
                                   self.cash)
        space = self._start.space
        rounds = self._start.engine["last_round"]
        # Bids can go on up to the most cash; every other step of a round is bounded by seats.
        longest = rounds * (space.move_space.max_cash + 40 * self.players + 64)
        info = pyspiel.GameInfo(
            num_distinct_actions=space.num_distinct_actions,
            max_chance_outcomes=MAX_CHANCE_OUTCOMES,
            num_players=self.players,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=None,
            max_game_length=longest)
        super().__init__(GAME_TYPE, info, p)

    def new_initial_state(self) -> AgeOfSteamState:
        return AgeOfSteamState(self, self._start.clone())

    def make_py_observer(self, iig_obs_type=None, params=None):
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall):
            return Observer(self, params)
        return IIGObserverForPublicInfoGame(iig_obs_type, params)


class AgeOfSteamState(pyspiel.State):
    def __init__(self, game: AgeOfSteamGame, sim: SimState) -> None:
        super().__init__(game)
        self.sim = sim

    def __deepcopy__(self, memo) -> AgeOfSteamState:  # OpenSpiel clones Python states this way
        return AgeOfSteamState(self.get_game(), self.sim.clone())

    def current_player(self) -> int:
        player = self.sim.current_player()
        if player == -1:
            return pyspiel.PlayerId.CHANCE
        if player == -4:
            return pyspiel.PlayerId.TERMINAL
        return player

    def _legal_actions(self, player: int) -> list[int]:
        return self.sim.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return self.sim.chance_outcomes()

    def _apply_action(self, action: int) -> None:
        self.sim.apply_action(action)

    def _action_to_string(self, player: int, action: int) -> str:
        return self.sim.action_to_string(action)

    def is_terminal(self) -> bool:
        return self.sim.is_terminal()

    def returns(self) -> list[float]:
        return self.sim.returns()

    def __str__(self) -> str:
        return describe(self.sim, None)


class Observer:
    """OpenSpiel's PyObserver over observation.py: the same vector for every seat but its own
    one-hot; public information only."""

    def __init__(self, game: AgeOfSteamGame, params) -> None:
        if params:
            raise ValueError(f"no observation parameters; got {params}")
        size = layout(game.map_id, game.players).size
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: AgeOfSteamState, player: int) -> None:
        self.tensor[:] = observation(state.sim, player)

    def string_from(self, state: AgeOfSteamState, player: int) -> str:
        return describe(state.sim, player)


def maps() -> tuple[str, ...]:
    return engine_game.MAP_IDS


pyspiel.register_game(GAME_TYPE, AgeOfSteamGame)
