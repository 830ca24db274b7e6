"""The computer's levels, for seats the server plays (`{"name", "bot": {"level": int}}`), calibrated
against the arena (docs/arena.md): level 1 is the random bot, 2 greedy, and from 3 up the search
bot with more simulations a decision. Every level's budget is in simulations, not milliseconds,
and its generator is seeded from public facts of the position (the seed's commitment, the number
of moves made, the seat), so the same position always gets the same move: a worker that dies
mid-search and a second one that takes the seat over play the same move, whichever commits it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from service.engine.layout import GivenMove, State
from service.sim.greedy import GreedyPolicy
from service.sim.policies import Policy, RandomPolicy
from service.sim.search import SearchPolicy

# Level: (what plays, simulations a decision for the search). Level 3's budget is the one the
# arena measured (docs/arena.md: 10 of 12 first places against three greedy seats on Rust Belt).
LEVELS: dict[int, tuple[str, int]] = {1: ("random", 0), 2: ("greedy", 0), 3: ("search", 8),
                                      4: ("search", 32), 5: ("search", 128)}
MIN_LEVEL, MAX_LEVEL = min(LEVELS), max(LEVELS)


def policy(level: int, rng: random.Random, time_ms: float | None = None) -> Policy:
    """The player of a level; ValueError for a level there is not. `time_ms` caps a search
    level's time a decision (the host's cap): whichever of it and the simulations ends first."""
    if level not in LEVELS:
        raise ValueError(f"no level {level}: levels are {MIN_LEVEL} to {MAX_LEVEL}")
    kind, simulations = LEVELS[level]
    if kind == "random":
        return RandomPolicy(rng)
    if kind == "greedy":
        return GreedyPolicy(rng)
    return SearchPolicy(rng, simulations=simulations, time_ms=time_ms)


def choose(state: State, seat: int, moves: Sequence[GivenMove], level: int, moves_made: int,
           time_ms: float | None = None) -> GivenMove:
    """The move a computer seat of `level` makes now; the same for the same position (unless
    `time_ms` cuts a search short)."""
    rng = random.Random(f"{state['seed_commitment']}:{moves_made}:{seat}:{level}")
    return policy(level, rng, time_ms).choose(state, seat, moves)
