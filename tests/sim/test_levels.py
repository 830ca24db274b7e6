"""The computer's levels: each plays legal moves, the same position always gets the same move,
and a level that does not exist is refused."""

from __future__ import annotations

import random

import pytest

from service.engine import game
from service.sim import levels
from service.sim.search import move_key


@pytest.mark.parametrize("level", sorted(levels.LEVELS))
def test_every_level_plays_a_legal_move_and_the_same_one_again(level: int) -> None:
    state = game.new_game("rust_belt", ["A", "B", "C", "D"], "levels")
    made = 0
    while state["phase"] != "build":  # shares, auction, actions, then the first build
        seat = game.active_seat(state)
        assert seat is not None
        moves = game.legal_moves(state, seat)
        move = levels.choose(state, seat, moves, 2, made)
        state, _ = game.apply(state, seat, move)
        made += 1
    seat = game.active_seat(state)
    assert seat is not None
    moves = game.legal_moves(state, seat)
    first = levels.choose(state, seat, moves, level, made)
    again = levels.choose(state, seat, moves, level, made)
    assert move_key(first) == move_key(again)
    game.apply(state, seat, first)  # raises if illegal


def test_the_levels_run_from_random_to_the_search_and_no_further() -> None:
    assert levels.LEVELS[levels.MIN_LEVEL][0] == "random" and levels.MIN_LEVEL == 1
    assert levels.LEVELS[levels.MAX_LEVEL][0] == "search"
    for bad in (0, levels.MAX_LEVEL + 1):
        with pytest.raises(ValueError, match="no level"):
            levels.policy(bad, random.Random(0))
