"""The in-process players: every one chooses one of the listed moves of the seat to decide.

    policy.choose(state, seat, moves) -> move

A policy gets the game's true state, as the arena and the worker hold it. The built-in ones read
only what the view shows (random, greedy) or make up the hidden randomness before looking ahead
(search: see search.py), so none of them plays on knowledge a player could not have."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Protocol

from service.engine.layout import GivenMove, State
from service.sim.greedy import GreedyPolicy
from service.sim.search import SearchPolicy


class Policy(Protocol):
    name: str

    def choose(self, state: State, seat: int, moves: Sequence[GivenMove]) -> GivenMove: ...


class RandomPolicy:
    """The client's random bot: a kind of move uniformly (bid, drop out, build, deliver, ...),
    then one move of that kind uniformly. Legal but aimless."""

    name = "random"

    def __init__(self, rng: random.Random | None = None) -> None:
        self.rng = rng or random.Random()

    def choose(self, state: State, seat: int, moves: Sequence[GivenMove]) -> GivenMove:
        kinds = sorted({m["type"] for m in moves})
        kind = self.rng.choice(kinds)
        return self.rng.choice([m for m in moves if m["type"] == kind])


def make(name: str, rng: random.Random, search_simulations: int | None = None,
         search_time_ms: float | None = None) -> Policy:
    """A policy by name: random, greedy or search (with its budget)."""
    makers: dict[str, Callable[[], Policy]] = {
        "random": lambda: RandomPolicy(rng),
        "greedy": lambda: GreedyPolicy(rng),
        "search": lambda: SearchPolicy(rng, simulations=search_simulations, time_ms=search_time_ms),
    }
    if name not in makers:
        raise ValueError(f"no policy {name!r}; policies: {', '.join(NAMES)}")
    return makers[name]()


NAMES = ("random", "greedy", "search")
