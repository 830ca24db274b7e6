"""The in-process greedy bot decides exactly as the client's GreedyPolicy does, decision by
decision, over whole games on several maps (the arena's "greedy" is the bot client authors know)."""

from __future__ import annotations

import random

import pytest
from aos_client.bot import GreedyPolicy as ClientGreedy
from aos_client.models import GameView, MapDetail, Move

from service.engine import game
from service.sim.greedy import GreedyPolicy, map_detail
from service.sim.search import move_key

# What the API adds to the engine's view (none of it matters to greedy).
ROUNDS = 4
API_FIELDS = {"game_id": "g", "version": 1, "clock": None, "deadline": None, "takeback": None}


@pytest.mark.parametrize("map_id,players,seed", [("rust_belt", 4, "g1"), ("madagascar", 3, "g2"),
                                                 ("berlin", 4, "g3")])
def test_the_port_makes_the_client_greedys_every_choice(map_id: str, players: int, seed: str) -> None:
    state = game.new_game(map_id, [f"P{i}" for i in range(players)], seed)
    ours = GreedyPolicy(random.Random(1))
    theirs = ClientGreedy(random.Random(1), MapDetail.from_dict(map_detail(map_id)))
    decisions = builds = 0
    # The first rounds hold every kind of decision; the client's own greedy is too slow for more.
    while not game.is_finished(state) and state["round"] <= ROUNDS:
        seat = game.active_seat(state)
        assert seat is not None
        moves = game.legal_moves(state, seat)
        view = game.view(state)
        mine = ours.choose_view(view, seat, moves)
        client = theirs.choose(GameView.from_dict({**view, **API_FIELDS}), seat,
                               [Move.from_dict(m) for m in moves])
        assert move_key(mine) == move_key(client.to_dict()), (state["round"], state["phase"], seat)
        decisions += 1
        builds += mine["type"] == "build"
        state, _ = game.apply(state, seat, mine)
    assert decisions > 60 and builds > 10
