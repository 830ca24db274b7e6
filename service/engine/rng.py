"""A small seeded generator whose whole state is one integer, so it lives inside the game state.

SplitMix64: statistically sound for a board game's bag and dice, trivially serialised, and
identical on every platform, which byte-for-byte replay needs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

_MASK = (1 << 64) - 1

# Set during a dry run (game.validate): every draw of the game goes through next_u64, so
# refusing there stops the run at its first random step, whatever that step is (dice, a drawn
# cube, a shuffle, a map's own draw), and no answer can show an outcome before its move is made.
_refusing: ContextVar[bool] = ContextVar("aos_rng_refusing", default=False)


class RandomStep(Exception):
    """The generator was asked to draw while draws are refused: the run reached a random step.
    `draw` is the draw refused, when a chooser (below) refused it."""

    def __init__(self, draw: Draw | None = None) -> None:
        super().__init__(draw)
        self.draw = draw


@dataclass(frozen=True)
class Draw:
    """One random draw of the game as a chooser sees it: outcome i has the probability
    weights[i] / sum(weights), and labels[i] names it (a die's face, a cube's colour...)."""

    kind: str  # "die" | "cube" | "shuffle" | "pick"
    weights: tuple[int, ...]
    labels: tuple


# Set by the simulation above the engine (service/sim): every draw of the game (choose, below)
# asks it for the outcome instead of the seeded generator, so a caller plays a chance outcome
# it picked or sampled itself and the game's own generator is never read.
_chooser: ContextVar[Callable[[Draw], int] | None] = ContextVar("aos_rng_chooser", default=None)


@contextmanager
def choosing(chooser: Callable[[Draw], int]) -> Iterator[None]:
    """Within this block every draw's outcome is chooser(draw), an index into draw.weights with
    a weight above 0; the chooser may raise RandomStep(draw) to stop the run there."""
    token = _chooser.set(chooser)
    try:
        yield
    finally:
        _chooser.reset(token)


def choose(state: int, draw: Draw) -> tuple[int, int]:
    """Returns (new state, the outcome's index): weighted by draw.weights. Every draw of the
    game goes through here; without a chooser it is one `below` over the weights' sum, so the
    draws (and replays) are those of a plain uniform pick counted through the weights."""
    chooser = _chooser.get()
    if chooser is not None:
        i = chooser(draw)
        if not (isinstance(i, int) and 0 <= i < len(draw.weights) and draw.weights[i] > 0):
            raise ValueError(f"no outcome {i!r} of this {draw.kind} draw")
        return state, i
    state, pick = below(state, sum(draw.weights))
    for i, w in enumerate(draw.weights):
        if pick < w:
            return state, i
        pick -= w
    raise AssertionError("a pick below the weights' sum falls in one of them")


@contextmanager
def refusing() -> Iterator[None]:
    """Within this block the generator draws nothing: the first draw raises RandomStep."""
    token = _refusing.set(True)
    try:
        yield
    finally:
        _refusing.reset(token)


def seed_state(seed: str) -> int:
    return int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big")


def commitment(seed: str) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()


def next_u64(state: int) -> tuple[int, int]:
    """Returns (new state, 64 random bits)."""
    if _refusing.get():
        raise RandomStep
    state = (state + 0x9E3779B97F4A7C15) & _MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return state, z ^ (z >> 31)


def below(state: int, n: int) -> tuple[int, int]:
    """Returns (new state, a uniform integer in [0, n)) by rejection, so there is no modulo bias."""
    limit = (1 << 64) - ((1 << 64) % n)
    while True:
        state, x = next_u64(state)
        if x < limit:
            return state, x % n
