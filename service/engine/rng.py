"""A small seeded generator whose whole state is one integer, so it lives inside the game state.

SplitMix64: statistically sound for a board game's bag and dice, trivially serialised, and
identical on every platform, which byte-for-byte replay needs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_MASK = (1 << 64) - 1

# Set during a dry run (game.validate): every draw of the game goes through next_u64, so
# refusing there stops the run at its first random step, whatever that step is (dice, a drawn
# cube, a shuffle, a map's own draw), and no answer can show an outcome before its move is made.
_refusing: ContextVar[bool] = ContextVar("aos_rng_refusing", default=False)


class RandomStep(Exception):
    """The generator was asked to draw while draws are refused: the run reached a random step."""


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
