"""Plays random games in process and reports speed and the score spread.

    python -m service.engine.playout --map rust_belt --players 4 --games 100 --seed 1
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence

from service.engine import game
from service.engine.hexgrid import Hex, around, neighbour
from service.engine.layout import Event, GivenMove, State
from service.engine.maps import load_map
from service.engine.network import CENTRE, End, Network, Piece, hex_swap
from service.engine.variants import rules_for

# Called after every move: (state before, seat, move, the moves listed, state after, events).
OnMove = Callable[[State, int, GivenMove, Sequence[GivenMove], State, list[Event]], None]


class EngineClock:
    """Seconds spent inside the engine's legal_moves and apply, apart from the player's own
    thinking (RandomPlayer tries builds ahead)."""

    def __init__(self) -> None:
        self.seconds = 0.0


def play_random_game(map_id: str, players: int, seed: str, chooser: random.Random,
                     max_moves: int = 20000, on_move: OnMove | None = None,
                     clock: EngineClock | None = None, cash: int | None = None) -> tuple[State, int]:
    """Plays one game with RandomPlayer for every seat; returns (final state, moves made).
    `cash` starts every player with that much instead of $10, so random play lasts every round."""
    clock = clock or EngineClock()
    state = game.new_game(map_id, [f"P{i}" for i in range(players)], seed)
    for seated in state["players"]:
        seated["cash"] = seated["cash"] if cash is None else cash
    player = RandomPlayer(chooser)
    moves = 0
    while not game.is_finished(state):
        seat = game.active_seat(state)
        assert seat is not None  # someone decides in every phase but the end
        t = time.perf_counter()
        options = game.legal_moves(state, seat)
        clock.seconds += time.perf_counter() - t
        move = player.choose(state, seat, options)
        before = state
        t = time.perf_counter()
        state, events = game.apply(state, seat, move)
        clock.seconds += time.perf_counter() - t
        moves += 1
        if on_move is not None:
            on_move(before, seat, move, options, state, events)
        if moves >= max_moves:
            raise RuntimeError(f"game {seed} did not end in {max_moves} moves")
    return state, moves


class RandomPlayer:
    """A random but not suicidal player, to drive whole games through every phase: it delivers
    when it can, builds toward links it can finish while it has money, issues shares when short
    and bids low. Within the kind of move it picks it chooses uniformly, so every listed build
    and route gets played somewhere."""

    WEIGHTS = {"deliver": 20.0, "build": 4.0, "urbanize": 3.0, "upgrade_locomotive": 0.15,
               "pass": 0.5, "end_build": 1.0, "drop_out": 1.0, "bid": 1.0}

    def __init__(self, chooser: random.Random) -> None:
        self.chooser = chooser

    def choose(self, state: State, seat: int, options: Sequence[GivenMove]) -> GivenMove:
        player = state["players"][seat]
        cash, reserve = player["cash"], player["shares"] + player["loco"]
        by_type: dict[str, list[GivenMove]] = {}
        for m in options:
            if m["type"] == "build" and m["cost"] > cash - reserve:
                continue
            by_type.setdefault(m["type"], []).append(m)
        kinds = sorted(by_type)
        kind = self.chooser.choices(kinds, weights=[self.WEIGHTS.get(k, 1.0) for k in kinds])[0]
        same = by_type[kind]
        if kind == "issue_shares":
            same = same[2:5] if cash < reserve + 8 and len(same) > 4 else same[:1]
        elif kind == "bid":
            same = same[:2]
        elif kind == "build":
            same = self._builds_worth_trying(state, seat, same)
        return self.chooser.choice(same)

    def _builds_worth_trying(self, state: State, seat: int, builds: list[GivenMove]) -> list[GivenMove]:
        net = rules_for(state["map"]).network(state)
        ends = frontier(state, seat, net)
        stops = stop_hexes(state)
        links_at = complete_links_by_hex(net)
        stop_edges: dict[Hex, frozenset[int]] = {}  # per hex, the edges that face a stop
        finishing, extending = [], []
        for m in builds:
            h = (m["hex"]["q"], m["hex"]["r"])
            if h in ends:
                extending.append(m)
                # Whether the build adds a link, traced on the network as the build leaves it
                # (the same answer as applying it and counting links: test_playout checks).
                if links_through(net, h, pieces_after(h, m)) > links_at.get(h, 0):
                    finishing.append(m)
            elif "tracks" in m:
                facing = stop_edges.get(h)
                if facing is None:
                    facing = stop_edges[h] = frozenset(
                        e for e, n in enumerate(around(h)) if n in stops)
                if len(facing) > 1 and any(a in facing and b in facing for a, b in m["tracks"]):
                    finishing.append(m)
        if finishing and self.chooser.random() < 0.9:
            return finishing
        if extending and self.chooser.random() < 0.8:
            return extending
        return builds


def link_count(state: State) -> int:
    return len(rules_for(state["map"]).network(state).links())


def stop_hexes(state: State) -> set[tuple[int, int]]:
    board = load_map(state["map"])
    return set(board.cities) | set(board.towns)


def frontier(state: State, seat: int, net: Network | None = None) -> set[tuple[int, int]]:
    """Hexes where the seat's incomplete track points: building there extends it."""
    net = rules_for(state["map"]).network(state) if net is None else net
    return {neighbour(end.hex, end.edge) for r in net.routes() if r.owner == seat
            for end in r.ends if end.kind == "open"}


def pieces_after(h: Hex, move: GivenMove) -> list[Piece]:
    """What a listed build leaves on its hex (a build names everything the hex holds after)."""
    if "town_exits" in move:
        return [(h, e, CENTRE) for e in move["town_exits"]]
    return [(h, a, b) for a, b in move["tracks"]]


def complete_links_by_hex(net: Network) -> dict[Hex, int]:
    """How many complete links run over each hex."""
    out: dict[Hex, int] = {}
    for r in net.links():
        for h in {p[0] for p in r.pieces}:
            out[h] = out.get(h, 0) + 1
    return out


def links_through(net: Network, h: Hex, pieces: list[Piece]) -> int:
    """How many complete links would run over h if it held `pieces` instead of what it holds.
    Links that do not touch h are the same either way: a build changes only the routes through
    its hex."""
    swap = hex_swap(h, pieces)
    seen: set[Piece] = set()
    count = 0
    for p in pieces:
        if p in seen:
            continue
        seen.add(p)
        _, a, b = p
        first = End("stop", h, a) if b == CENTRE else net.walk(h, a, seen, swap)[1]
        second = net.walk(h, a if b == CENTRE else b, seen, swap)[1]
        count += first.kind == "stop" and second.kind == "stop"
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--map", default="rust_belt")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cash", type=int, default=None,
                        help="start every player with this cash (e.g. 300: games last every round)")
    args = parser.parse_args(argv)
    chooser = random.Random(args.seed)
    total_moves = 0
    scores: list[int] = []
    clock = EngineClock()
    started = time.perf_counter()
    for g in range(args.games):
        state, moves = play_random_game(args.map, args.players, f"{args.seed}-{g}", chooser,
                                        clock=clock, cash=args.cash)
        total_moves += moves
        scores.extend(s["points"] for s in state["scores"] or [] if s["points"] is not None)
        print(f"game {g + 1}/{args.games}: {moves} moves, round {state['round']}", file=sys.stderr)
    elapsed = time.perf_counter() - started
    print(f"map={args.map} players={args.players} games={args.games} "
          f"games/s={args.games / elapsed:.2f} moves/s={total_moves / elapsed:.0f} "
          f"moves/game={total_moves / args.games:.0f}")
    print(f"engine alone (legal_moves + apply): games/s={args.games / clock.seconds:.2f} "
          f"moves/s={total_moves / clock.seconds:.0f} "
          f"ms/game={1000 * clock.seconds / args.games:.0f}")
    if scores:
        print(f"scores: min={min(scores)} median={statistics.median(scores)} max={max(scores)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
