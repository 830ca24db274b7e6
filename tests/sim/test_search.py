"""The search bot: it learns nothing from the real game's hidden randomness, keeps to its budget,
and answers a legal move with the values and visits of its candidates."""

from __future__ import annotations

import random

from service.engine import game
from service.sim import heuristics
from service.sim.search import Budget, SearchPolicy, determinize, move_key, search


def opened(seed: str = "s1", players: int = 4) -> dict:
    """A game in its first build turn (shares, auction and actions played by greedy)."""
    from service.sim.greedy import GreedyPolicy

    state = game.new_game("rust_belt", [f"P{i}" for i in range(players)], seed)
    greedy = GreedyPolicy(random.Random(0))
    while state["phase"] != "build":
        seat = game.active_seat(state)
        assert seat is not None
        state, _ = game.apply(state, seat, greedy.choose(state, seat, game.legal_moves(state, seat)))
    return state


def analysis_of(state: dict, sims: int = 6) -> list[tuple[bytes, float, int]]:
    seat = game.active_seat(state)
    assert seat is not None
    found = search(state, seat, Budget(simulations=sims), random.Random(7))
    return [(move_key(r.move), r.value, r.visits) for r in found.moves]


def test_the_search_never_reads_the_real_generator() -> None:
    """Two states that differ only in what their generator will draw (and in the seed it came
    from) get the same analysis, value for value: every cube and die the search saw it made up."""
    state = opened()
    other = dict(state, rng=(state["rng"] * 7 + 12345) % (1 << 64), seed="another seed")
    assert analysis_of(state) == analysis_of(other)


def test_a_determinization_changes_only_the_hidden_randomness() -> None:
    state = opened()
    sample = determinize(state, random.Random(3))
    assert sample["rng"] != state["rng"] and sample["seed"] != state["seed"]
    assert {k: v for k, v in sample.items() if k not in ("rng", "seed")} == \
        {k: v for k, v in state.items() if k not in ("rng", "seed")}
    assert game.view(sample) == game.view(state)


def test_the_budget_in_simulations_is_kept_and_every_candidate_is_tried() -> None:
    state = opened()
    seat = game.active_seat(state)
    assert seat is not None
    found = search(state, seat, Budget(simulations=9), random.Random(1))
    assert found.simulations == 9
    assert sum(r.visits for r in found.moves) == 9
    assert all(r.visits >= 1 and 0.0 <= r.value <= 1.0 for r in found.moves)
    legal = {move_key(m) for m in game.legal_moves(state, seat)}
    assert 2 <= len(found.moves) <= 5 and all(move_key(r.move) in legal for r in found.moves)


def test_a_budget_in_milliseconds_stops_the_search() -> None:
    """Past the budget no new simulation starts, beyond the one each candidate always gets."""
    state = opened()
    seat = game.active_seat(state)
    assert seat is not None
    found = search(state, seat, Budget(time_ms=1), random.Random(1))
    assert found.simulations == len(found.moves) >= 2
    assert all(r.visits == 1 for r in found.moves)


def test_the_search_policy_plays_a_legal_move_and_a_lone_move_without_search() -> None:
    state = opened()
    seat = game.active_seat(state)
    assert seat is not None
    policy = SearchPolicy(random.Random(2), simulations=5)
    moves = game.legal_moves(state, seat)
    move = policy.choose(state, seat, moves)
    game.apply(state, seat, move)  # raises if illegal
    only = [moves[0]]
    assert policy.choose(state, seat, only) is only[0]


def test_rewards_are_a_smooth_share_of_first_place() -> None:
    level, ahead, behind = heuristics.rewards([30.0, 30.0, 20.0])[0], *heuristics.rewards([40.0, 30.0])
    assert level == 0.5 and ahead > 0.8 and behind < 0.2 and abs(ahead + behind - 1) < 1e-9


def test_the_estimate_counts_points_as_scoring_does() -> None:
    """In the last round the estimate is the score: 3 per income, -3 per share, 1 per segment."""
    state = opened()
    view = game.view(state)
    view = dict(view, round=view["last_round"])
    players = [dict(p, income=5, shares=4, cash=50) for p in view["players"]]
    view["players"] = players
    assert heuristics.estimate(view)[0] == 3 * 5 - 3 * 4 + sum(
        link["segments"] for link in view["board"]["links"] if link["owner"] == 0)


def test_greedys_move_stands_unless_the_search_finds_one_clearly_better() -> None:
    from service.sim.greedy import GreedyPolicy

    state = opened()
    seat = game.active_seat(state)
    assert seat is not None
    greedy = move_key(GreedyPolicy(random.Random(0)).choose(state, seat, game.legal_moves(state, seat)))
    stubborn = search(state, seat, Budget(simulations=8), random.Random(4), margin=1.0)
    assert move_key(stubborn.moves[0].move) == greedy
    # Shares are never searched: what their cash buys shows after the cut-off.
    shares = game.new_game("rust_belt", ["A", "B", "C", "D"], "shares")
    first = game.active_seat(shares)
    assert first is not None
    found = search(shares, first, Budget(simulations=4), random.Random(4))
    assert len(found.moves) == 1 and found.simulations == 0


def test_the_estimate_charges_3_points_a_dollar_short_and_values_a_used_locomotive() -> None:
    view = game.view(opened())
    last = view["last_round"]
    end = dict(view, round=last)  # no rounds left: cash and engines buy nothing
    players = [dict(p, income=5, shares=4, locomotive=2, cash=10) for p in end["players"]]
    end["players"] = players
    base = heuristics.estimate(end)[0]
    players[0]["cash"] = 0  # income $5 against expenses $6 (4 shares, locomotive 2): $1 short
    assert heuristics.estimate(end)[0] == base - 3 * 1
    players[0]["cash"] = -2  # $3 short
    assert heuristics.estimate(end)[0] == base - 3 * 3
    # In round 1, with two links of its own, a second locomotive level is worth LOCO_POINTS over
    # the rounds left, less the dollar a round it costs.
    early = dict(view, round=1)
    early["board"] = dict(view["board"], links=[{"owner": 0, "segments": 2}, {"owner": 0, "segments": 3}])
    early["players"] = [dict(p, income=5, shares=2, locomotive=1, cash=10) for p in view["players"]]
    one = heuristics.estimate(early)[0]
    early["players"][0]["locomotive"] = 2
    left = last - 1
    gained = heuristics.LOCO_POINTS - heuristics.CASH_POINTS * left
    assert abs(heuristics.estimate(early)[0] - one - gained) < 1e-9
