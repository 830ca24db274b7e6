"""Drives SimStates through whole games for the tests: engine moves picked by the engine's
RandomPlayer (it plays every phase: deliveries, builds, production), made as action ids, with
chance outcomes sampled by their probabilities."""

from __future__ import annotations

import random
from collections.abc import Callable

from service.engine.playout import RandomPlayer
from service.sim.state import SimState

Check = Callable[[SimState], None]


def sample_outcome(state: SimState, rnd: random.Random) -> int:
    outcomes = state.chance_outcomes()
    return rnd.choices([o for o, _ in outcomes], [p for _, p in outcomes])[0]


def play_game(state: SimState, rnd: random.Random, check: Check | None = None,
              max_actions: int = 50000) -> int:
    """Plays to the end (in place); calls check(state) at every decision. Returns the actions."""
    player = RandomPlayer(rnd)
    n = 0
    while not state.is_terminal():
        if check is not None:
            check(state)
        if state.is_chance_node():
            state.apply_action(sample_outcome(state, rnd))
        else:
            seat = state.current_player()
            moves = [m for m in state.listing().moves.values()] + list(state.listing().paths.values())
            for action in state.actions_of(player.choose(state.engine, seat, moves)):
                state.apply_action(action)
        n += 1
        assert n < max_actions
    return n
