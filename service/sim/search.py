"""The search bot: Monte Carlo tree search over the engine, determinized.

Every simulation starts from the real position with its hidden randomness replaced: the state's
generator gets a fresh 64-bit value drawn from the searcher's own generator (and the seed, which
the engine reads only for the record, is blanked). The bag's contents, the display and the board
are public; only the order of future draws and dice is hidden, and that order is exactly what the
generator decides. So a searcher handed the true state learns nothing a player could not know:
every future cube and die it sees is one it made up. Chance needs no node of its own: each
simulation samples it afresh by playing on from its own determinization (open-loop search), and a
move a sampled outcome forbids is skipped in that simulation.

The tree: one node per sequence of moves from the root, holding the few candidate moves
`heuristics.candidates` picks (greedy's choice first) and, per move, its visits and the reward it
brought each seat. Each seat chooses, at its own nodes, by UCB1 on its own reward (max^n for many
players). A new node is valued by a rollout in which every seat plays greedy (`greedy.py`, planning
links of up to 4 hexes rather than 5, for speed), cut off after `max_rollout` decisions, at the start
of the round after the root's, or at the game's end, whichever comes first; the position reached is
then judged by `heuristics.estimate`, and each seat's reward is a smooth share of first place
(`heuristics.rewards`).

    policy = SearchPolicy(random.Random(1), simulations=64)          # or time_ms=1000
    move = policy.choose(state, seat, game.legal_moves(state, seat))
    analysis = search(state, seat, Budget(time_ms=500), rng)        # the top moves, with values
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from service.engine import game
from service.engine.errors import IllegalMove
from service.engine.layout import GivenMove, State
from service.sim import heuristics
from service.sim.greedy import GreedyPolicy

# The fields of a listed move that apply ignores (what it costs, what it brings): not part of the
# move's identity.
READ_ONLY = ("cost", "income")
EXPLORATION = 0.7


def move_key(move: GivenMove) -> bytes:
    return orjson.dumps({k: v for k, v in move.items() if k not in READ_ONLY},
                        option=orjson.OPT_SORT_KEYS)


def determinize(state: State, rng: random.Random) -> State:
    """A copy of `state` whose future draws and dice are made up by `rng`, not the real ones."""
    sample = orjson.loads(orjson.dumps(state))
    sample["rng"] = rng.getrandbits(64)
    sample["seed"] = "determinized"
    return sample


@dataclass
class Budget:
    """How much to search one decision: a number of simulations, a time in milliseconds, or both
    (whichever runs out first). At least one simulation per candidate is always made."""

    simulations: int | None = None
    time_ms: float | None = None

    def __post_init__(self) -> None:
        if self.simulations is None and self.time_ms is None:
            raise ValueError("a budget needs simulations or time_ms")


@dataclass
class Edge:
    move: GivenMove
    visits: int = 0
    totals: list[float] = field(default_factory=list)
    node: Node | None = None


@dataclass
class Node:
    seat: int
    edges: list[Edge]
    visits: int = 0


@dataclass
class Ranked:
    """One root move as the search judged it: its mean reward to the deciding seat (a smooth
    share of first place, 0 to 1) and how many simulations went through it."""

    move: GivenMove
    value: float
    visits: int


@dataclass
class Analysis:
    moves: list[Ranked]
    simulations: int
    seconds: float


class Searcher:
    def __init__(self, rng: random.Random, horizon_rounds: int = 1, max_rollout: int = 12,
                 width: int = 5, rollout_depth: int = 4, margin: float = 0.03) -> None:
        self.rng = rng
        self.margin = margin
        self.horizon_rounds = horizon_rounds
        self.max_rollout = max_rollout
        self.width = width
        # Greedy picks the candidates; the rollouts play a greedy that plans shorter links (its
        # planning is most of a rollout's time: depth 4 is about twice as fast as 5).
        self.greedy = GreedyPolicy(random.Random(rng.random()))
        self.rollout_greedy = GreedyPolicy(random.Random(rng.random()), depth=rollout_depth)

    def new_node(self, state: State, seat: int, moves: Sequence[GivenMove] | None = None) -> Node:
        if moves is None:
            moves = game.legal_moves(state, seat)
        view = game.view(state)
        picked = heuristics.candidates(view, seat, moves, self.greedy, self.width)
        return Node(seat, [Edge(m, totals=[0.0] * len(state["players"])) for m in picked])

    def run(self, state: State, seat: int, budget: Budget,
            moves: Sequence[GivenMove] | None = None) -> Analysis:
        started = time.perf_counter()
        root = self.new_node(state, seat, moves)
        horizon = state["round"] + self.horizon_rounds
        sims = 0
        while len(root.edges) > 1:
            if sims >= len(root.edges):
                if budget.simulations is not None and sims >= budget.simulations:
                    break
                if budget.time_ms is not None and (time.perf_counter() - started) * 1000 >= budget.time_ms:
                    break
            self.simulate(determinize(state, self.rng), root, horizon)
            sims += 1
        ranked = [Ranked(e.move, e.totals[seat] / e.visits if e.visits else 0.0, e.visits)
                  for e in root.edges]
        ranked.sort(key=lambda r: (r.visits, r.value), reverse=True)
        # Greedy's move stays first unless the search found one clearly better: a few noisy
        # simulations should not talk the bot out of a sound move.
        if len(ranked) > 1:
            default = next(r for r in ranked if r.move is root.edges[0].move)
            if ranked[0] is not default and ranked[0].value < default.value + self.margin:
                ranked.remove(default)
                ranked.insert(0, default)
        return Analysis(ranked, sims, time.perf_counter() - started)

    def simulate(self, state: State, node: Node, horizon: int) -> None:
        path: list[tuple[Node, Edge]] = []
        while True:
            if game.active_seat(state) != node.seat:  # chance led elsewhere in this sample
                state = self.rollout(state, horizon)
                break
            played = self.play(node, state)
            if played is None:  # nothing of this node is legal in this sample: judge it so
                state = self.rollout(state, horizon)
                break
            edge, state = played
            path.append((node, edge))
            if game.is_finished(state) or state["round"] >= horizon:
                break
            if edge.node is None:
                if edge.visits == 0:
                    state = self.rollout(state, horizon)
                    break
                # The second visit through a move grows the tree by one node.
                seat = game.active_seat(state)
                assert seat is not None
                edge.node = self.new_node(state, seat)
            node = edge.node
        reward = heuristics.rewards(self.judge(state))
        for n, e in path:
            n.visits += 1
            e.visits += 1
            for s, r in enumerate(reward):
                e.totals[s] += r

    def play(self, node: Node, state: State) -> tuple[Edge, State] | None:
        """Plays the node's move that UCB1 picks for its seat (an unvisited one first, in the
        candidates' order); a move this sample makes illegal is skipped."""
        tried: set[int] = set()
        log_n = math.log(max(1, node.visits))
        while len(tried) < len(node.edges):
            best, best_score = -1, -math.inf
            for i, e in enumerate(node.edges):
                if i in tried:
                    continue
                if e.visits == 0:
                    best = i
                    break
                score = e.totals[node.seat] / e.visits + EXPLORATION * math.sqrt(log_n / e.visits)
                if score > best_score:
                    best, best_score = i, score
            edge = node.edges[best]
            try:
                after, _ = game.apply(state, node.seat, edge.move)
            except IllegalMove:
                tried.add(best)
                continue
            return edge, after
        return None

    def rollout(self, state: State, horizon: int) -> State:
        for _ in range(self.max_rollout):
            if game.is_finished(state) or state["round"] >= horizon:
                break
            seat = game.active_seat(state)
            assert seat is not None
            moves = game.legal_moves(state, seat)
            state, _ = game.apply(state, seat, self.rollout_greedy.choose(state, seat, moves))
        return state

    @staticmethod
    def judge(state: State) -> list[float]:
        view = game.view(state)
        if game.is_finished(state):
            return heuristics.final_points(view)
        return heuristics.estimate(view)


def search(state: State, seat: int, budget: Budget, rng: random.Random | None = None,
           moves: Sequence[GivenMove] | None = None, **options: Any) -> Analysis:
    """Searches `seat`'s decision in `state` (the true state is safe to pass: see the module's
    docstring). Returns the candidate moves, most searched first."""
    return Searcher(rng or random.Random(), **options).run(state, seat, budget, moves)


class SearchPolicy:
    """The search bot as a policy: `choose(state, seat, moves)`."""

    name = "search"

    def __init__(self, rng: random.Random | None = None, simulations: int | None = None,
                 time_ms: float | None = None, **options: Any) -> None:
        self.rng = rng or random.Random()
        if simulations is None and time_ms is None:
            time_ms = 1000
        self.budget = Budget(simulations, time_ms)
        self.searcher = Searcher(self.rng, **options)

    def choose(self, state: State, seat: int, moves: Sequence[GivenMove]) -> GivenMove:
        if len(moves) == 1:
            return moves[0]
        return self.searcher.run(state, seat, self.budget, moves).moves[0].move
