# Hand-written (not generated): a bot that plays whole games through the generated client.
"""A bot that plays Age of Steam over HTTP through `AosClient`: whole games, every seat, or one
seat of a game someone else created.

    python -m aos_client.bot --url http://127.0.0.1:8000 --map rust_belt --players 4 --games 10 \\
        [--policy random|greedy|search|mypkg.mybot:MyPolicy | --seats greedy,greedy,random,random] [--seed S]
    python -m aos_client.bot --url http://127.0.0.1:8000 --game GAME_ID --token SEAT_TOKEN \\
        [--policy mypkg.mybot:MyPolicy]

`--policy` takes a policy's name or the import path of a class of your own (`module:Class`, a
`Policy` subclass, made as `Class(random.Random(...))`).

Policies:
- `random`: picks a kind of move uniformly (bid, drop out, build, end the build, deliver, ...),
  then one move of that kind uniformly: legal but aimless.
- `greedy`: a sensible baseline. It issues shares only to cover its expenses and, in the first half
  of the game, a little building money; bids modestly (the minimum, only while that is at most a
  twentieth of its cash, else it drops out); picks actions by a fixed
  preference (a bigger locomotive once it has the links for it, then building and moving first);
  builds short links, town exits included, toward cities it could deliver to or from, extending its
  own track first and starting a link only if it can finish it this turn; delivers the good that
  pays it the most (legal moves carry `income` per seat); upgrades its locomotive when it has
  nothing to deliver and the links to use it.
- `search`: the service's own search bot, over HTTP. At each decision with a choice it asks the
  service for a hint (`POST …/hints` with the seat's token; the service's worker searches it) and
  plays the hint's best move. Where the service gives none (hints turned off, the allowance spent
  for longer than a minute, the game moved on) it plays greedy's move instead.

A bot of your own needs only `choose(view, seat, moves)`: see `Policy`.
"""

from __future__ import annotations

import argparse
import importlib
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import requests

from .client import AosClient
from .errors import ApiError, Forbidden, NotFound, PreconditionFailed, TooManyRequests, Unauthorized
from .models import (
    BidMove,
    BuildMove,
    DeliverMove,
    GameView,
    Hint,
    HintRequest,
    IssueSharesMove,
    MapDetail,
    MapId,
    Move,
    NewGame,
    NewGamePlayer,
    SelectActionMove,
    UrbanizeMove,
)
from .models import Hex as HexRef

Hex = tuple[int, int]
TOWN_EXIT_COST = 3  # about what a town's track costs; legal moves say exactly
DIRECTIONS: dict[int, Hex] = {0: (0, -1), 1: (1, -1), 2: (1, 0), 3: (0, 1), 4: (-1, 1), 5: (-1, 0)}


# The pair of edges a step of track gets, by (entry, exit): made once, not per step tried.
PAIRS = [[frozenset((a, b)) for b in range(6)] for a in range(6)]


def neighbour(h: Hex, edge: int) -> Hex:
    dq, dr = DIRECTIONS[edge]
    return h[0] + dq, h[1] + dr


@lru_cache(maxsize=65536)
def neighbours(h: Hex) -> tuple[Hex, ...]:
    return tuple(neighbour(h, e) for e in range(6))


def distance(a: Hex, b: Hex) -> int:
    dq, dr = a[0] - b[0], a[1] - b[1]
    return (abs(dq) + abs(dr) + abs(dq + dr)) // 2


def hex_of(h: HexRef | Mapping[str, int]) -> Hex:
    """A hex of the API (`{q, r}`, as a model or a plain dict) as a `(q, r)` tuple."""
    if isinstance(h, HexRef):
        return h.q, h.r
    return h["q"], h["r"]


class Policy:
    """Chooses one of the legal moves of `seat`. `map_detail` is the map's geometry (`get_map`),
    which `play_game` and `play_seat` set once per game."""

    name = "policy"

    def __init__(self, rng: random.Random | None = None, map_detail: MapDetail | None = None) -> None:
        self.rng = rng or random.Random()
        self.map_detail = map_detail

    def choose(self, view: GameView, seat: int, moves: Sequence[Move]) -> Move:
        """The move `seat` makes now: one of `moves`, returned as it is.

        `view` is the game as it stands (`view.active_seat == seat`); `moves` are the seat's legal
        moves at `view.version`, as `GET …/legal-moves` lists them: typed by their `type`
        (`BidMove`, `BuildMove` with its `cost`, `DeliverMove` with its `income` per seat, ...),
        never empty. `self.map_detail` is the map's geometry and `self.rng` the policy's own random
        numbers (seeded by the bot's `--seed`). Override it; the bot posts what it returns."""
        raise NotImplementedError


class RandomPolicy(Policy):
    name = "random"

    def choose(self, view: GameView, seat: int, moves: Sequence[Move]) -> Move:
        kinds = sorted({m.type for m in moves})
        kind = self.rng.choice(kinds)
        return self.rng.choice([m for m in moves if m.type == kind])


ACTION_PREFERENCE = [
    "engineer",
    "first_build",
    "first_move",
    "urbanization",
    "locomotive",
    "turn_order",
    "production",
    "us_army_escort",
    "urbanization_one_track",
    "single_transport",
    "last_move",
    "last_player",
    "slow_engineer",
    "locomotive_no_build",
    "high_cost",
    "last_build",
]


class GreedyPolicy(Policy):
    name = "greedy"

    def choose(self, view: GameView, seat: int, moves: Sequence[Move]) -> Move:
        by_type: dict[str, list[Move]] = {}
        for m in moves:
            by_type.setdefault(m.type, []).append(m)
        me = view.players[seat]
        expenses = me.shares + me.locomotive
        if "issue_shares" in by_type:
            return self._issue_shares(view, seat, by_type["issue_shares"], expenses)
        if "bid" in by_type or "drop_out" in by_type:
            return self._bid(view, seat, by_type)
        if "select_action" in by_type:
            options = {m.action: m for m in by_type["select_action"] if isinstance(m, SelectActionMove)}
            links = sum(1 for link in view.board.links if link.owner == seat)
            if me.locomotive < min(4, links) and "locomotive" in options:
                return options["locomotive"]
            for action in ACTION_PREFERENCE:
                if action in options:
                    return options[action]
            return by_type["select_action"][0]
        if "deliver" in by_type or "upgrade_locomotive" in by_type or "pass" in by_type:
            return self._move_goods(view, seat, by_type)
        if "build" in by_type or "end_build" in by_type or "urbanize" in by_type:
            return self._build(view, seat, by_type, expenses)
        return self.rng.choice(list(moves))

    def _issue_shares(self, view: GameView, seat: int, options: list[Move], expenses: int) -> Move:
        me = view.players[seat]
        # Cash for this round's expenses, and early on for some building; a share brings $5 and
        # costs $1 a round from then on.
        budget = 10 if view.round == 1 else 6 if view.round <= view.last_round // 2 else 0
        if me.shares >= 8:
            budget = 0
        short = max(0, expenses - me.income) + budget - me.cash
        wanted = max(0, -(-short // 4))
        counts = {m.count: m for m in options if isinstance(m, IssueSharesMove)}
        best = max((c for c in counts if c <= wanted), default=min(counts))
        return counts[best]

    def _bid(self, view: GameView, seat: int, by_type: dict[str, list[Move]]) -> Move:
        bids = sorted((m for m in by_type.get("bid", []) if isinstance(m, BidMove)), key=lambda m: m.amount)
        me = view.players[seat]
        if bids and bids[0].amount <= me.cash // 20:
            return bids[0]
        for kind in ("drop_out", "turn_order_pass"):
            if kind in by_type:
                return by_type[kind][0]
        return bids[0]

    def _move_goods(self, view: GameView, seat: int, by_type: dict[str, list[Move]]) -> Move:
        me = view.players[seat]
        delivers = [m for m in by_type.get("deliver", []) if isinstance(m, DeliverMove)]

        def value(m: DeliverMove) -> tuple[int, int]:
            income = m.income or {}
            mine = income.get(str(seat), 0)
            return mine, mine - sum(v for k, v in income.items() if k != str(seat))

        if delivers:
            best = max(delivers, key=value)
            if value(best)[0] > 0:
                return best
        links = sum(1 for link in view.board.links if link.owner == seat)
        if "upgrade_locomotive" in by_type and me.locomotive < min(3, links) and me.income > 0:
            return by_type["upgrade_locomotive"][0]
        if "pass" in by_type:
            return by_type["pass"][0]
        if delivers:
            return max(delivers, key=value)
        return next(iter(by_type.values()))[0]

    # -- building ------------------------------------------------------------------------------
    def _build(self, view: GameView, seat: int, by_type: dict[str, list[Move]], expenses: int) -> Move:
        me = view.players[seat]
        spendable = me.cash - max(0, expenses - me.income)
        board = Board(view, seat, self.map_detail)
        tiles_left = view.build.tiles_left if view.build is not None else 3
        builds: dict[tuple[Hex, frozenset[int]], BuildMove] = {}
        for m in by_type.get("build", []):
            if isinstance(m, BuildMove) and m.tracks and (m.cost or 0) <= spendable:
                h = hex_of(m.hex)
                if h not in board.segments and len(m.tracks) == 1:
                    builds[(h, frozenset(m.tracks[0]))] = m
        for town_exit, m in self._town_builds(board, by_type.get("build", []), spendable):
            builds[town_exit] = m
        for _score, path, continues, estimate in board.plans(tiles_left):
            first = builds.get(path[0])
            if first is None:
                continue
            # Start a new link only if it can be finished this turn with the money there is.
            if continues or (len(path) <= tiles_left and estimate <= spendable):
                return first
        urbanize = [m for m in by_type.get("urbanize", []) if board.urbanize_value(m) > 1.0]
        if urbanize:
            return max(urbanize, key=board.urbanize_value)
        if "end_build" in by_type:
            return by_type["end_build"][0]
        return next(iter(by_type.values()))[0]

    @staticmethod
    def _town_builds(
        board: Board, moves: list[Move], spendable: int
    ) -> Iterator[tuple[tuple[Hex, frozenset[int]], BuildMove]]:
        """Builds on town hexes that add exactly one exit, keyed like the planner's steps."""
        for m in moves:
            if isinstance(m, BuildMove) and m.town_exits is not None and (m.cost or 0) <= spendable:
                h = hex_of(m.hex)
                added = set(m.town_exits) - set(board.exits.get(h, {}))
                if len(added) == 1 and len(m.town_exits) == len(board.exits.get(h, {})) + 1:
                    yield (h, frozenset(added)), m


class Board:
    """What the greedy builder needs to know of the board, from the view and the map."""

    def __init__(self, view: GameView, seat: int, detail: MapDetail | None) -> None:
        self.seat = seat
        self.cities: dict[Hex, list[str]] = {hex_of(c.hex): list(c.colors) for c in view.board.cities}
        self.goods: dict[Hex, list[str]] = {hex_of(c.hex): list(c.goods) for c in view.board.cities}
        self.towns: set[Hex] = {hex_of(t.hex) for t in (view.board.towns or [])}
        self.terrain: dict[Hex, str] = {}
        self.costs: dict[str, int | None] = {}
        self.tiles: dict[str, str] = {}
        if detail is not None:
            if not view.board.towns:
                self.towns = {hex_of(t.hex) for t in detail.towns} - set(self.cities)
            self.terrain = {(h.q, h.r): h.terrain for h in detail.hexes}
            self.costs = dict(detail.terrain_costs or {})
            self.tiles = {t.letter: t.color for t in (detail.new_city_tiles or [])}
        self.stops = set(self.cities) | self.towns
        # Track by hex: the edge pairs and their owners; the edges of each hex that carry track.
        self.segments: dict[Hex, list[tuple[frozenset[int], int | None]]] = {}
        self.exits: dict[Hex, dict[int, int | None]] = {}
        for ht in view.board.tracks:
            h = hex_of(ht.hex)
            for t in ht.tracks:
                self.segments.setdefault(h, []).append((frozenset(t.edges), t.owner))
                for e in t.edges:
                    self.exits.setdefault(h, {})[e] = t.owner
            for x in ht.town_exits or []:
                self.exits.setdefault(h, {})[x.edge] = x.owner
        # What building on each empty hex costs (water and the like cost None: not there),
        # worked out once: the planner asks it of the same hexes some 600,000 times a game.
        self.free: dict[Hex, int] = {}
        for h, terrain in self.terrain.items():
            if h not in self.exits and h not in self.stops:
                cost = self.costs.get(terrain, 2)
                if cost is not None:
                    self.free[h] = cost
        self._values: dict[tuple[Hex, Hex], float] = {}  # value(a, b), once worked out
        # The stops my complete links reach: my network.
        self.network: set[Hex] = set()
        for link in view.board.links:
            if link.owner == seat:
                self.network |= {hex_of(s) for s in link.stops}

    def open_ends(self) -> list[tuple[Hex, int]]:
        """(hex, edge) where my unfinished track leaves `hex` across `edge` into an empty hex."""
        ends = []
        for h, exits in self.exits.items():
            if h in self.cities:
                continue
            for e, owner in exits.items():
                if owner != self.seat:
                    continue
                other = neighbour(h, e)
                if other not in self.stops and (e + 3) % 6 not in self.exits.get(other, {}):
                    ends.append((h, e))
        return sorted(ends)

    def step_cost(self, h: Hex) -> int | None:
        return self.free.get(h)

    def value(self, a: Hex, b: Hex) -> float:
        """What a link between stops `a` and `b` is worth to me: the goods it lets me deliver.
        Worked out once per pair and board: the planner asks for the same pairs again and again."""
        known = self._values.get((a, b))
        if known is None:
            known = self._values[(a, b)] = self._value(a, b)
        return known

    def _value(self, a: Hex, b: Hex) -> float:
        near_a = ({a} | self.network) if a in self.network else {a}
        value = 0.0
        for src in near_a:
            value += sum(g in self.cities.get(b, ()) for g in self.goods.get(src, ()))
            value += sum(g in self.cities.get(src, ()) for g in self.goods.get(b, ())) * (
                1 if src == a else 0.5
            )
        if b in self.towns:
            # A town is a stepping stone: worth part of the best city a short way beyond it.
            beyond = [c for c in self.cities if c != a and 0 < distance(b, c) <= 3]
            value += (
                0.4 * max((self.value(a, c) for c in beyond if c in self.cities), default=0.0)
                if (a in self.cities)
                else 0.0
            )
        if b in self.network:
            value *= 0.5
        return value

    def plans(
        self, tiles_left: int, depth: int = 5
    ) -> list[tuple[float, list[tuple[Hex, frozenset[int]]], bool, int]]:
        """Links I could build, best first, each as its steps (hex, the pair of edges it gets) and
        whether it continues my unfinished track, and what it should cost."""
        # (origin stop or track end, first hex, its entry edge, whether fresh, the steps before it)
        starts: list[tuple[Hex, Hex, int, int, list[tuple[Hex, frozenset[int]]]]] = []
        for h, e in self.open_ends():
            starts.append((h, neighbour(h, e), (e + 3) % 6, 0, []))
        for stop in sorted(self.stops):
            for e in range(6):
                if e in self.exits.get(stop, {}):
                    continue
                first = neighbour(stop, e)
                if self.step_cost(first) is not None:
                    # Track leaving a town needs the town's exit built first.
                    prefix = [(stop, frozenset({e}))] if stop in self.towns else []
                    starts.append((stop, first, (e + 3) % 6, 1, prefix))
        found: list[tuple[float, list[tuple[Hex, frozenset[int]]], bool, int]] = []
        # The loop's lookups held in locals: it runs some ten thousand steps a plan.
        stops, towns, exits, value = self.stops, self.towns, self.exits, self.value
        free_hexes, free = self.free, self.free.get
        for origin, first, entry, fresh, prefix in starts:
            source = origin if origin in stops else self._source_of(origin)
            # Depth-first over short paths of empty hexes, ending next to a stop. A push that its
            # pop would drop (a hex no track can enter) is left out, and a step's list is made
            # only where it is kept: the same pops in the same order, so the same plans, for
            # about half the CPU (the e2e bots' games spent most of theirs here).
            stack = [(first, entry, prefix, TOWN_EXIT_COST * len(prefix))]
            best_to: dict[Hex, int] = {}
            while stack:
                h, into, path, cost = stack.pop()
                step = free(h)
                if step is None:
                    continue
                cost += step
                if best_to.get(h, 1 << 30) <= cost:
                    continue
                best_to[h] = cost
                deeper = len(path) + 1 < depth
                around = neighbours(h)
                for out in range(6):
                    if out == into:
                        continue
                    nxt = around[out]
                    if nxt in stops:
                        if nxt in (source, origin):
                            continue
                        worth = value(source, nxt) if source is not None else 0.5
                        if worth <= 0:
                            continue
                        steps = path + [(h, PAIRS[into][out])]
                        total = cost
                        if nxt in towns and (out + 3) % 6 not in exits.get(nxt, {}):
                            # The link ends only once the town has an exit toward it.
                            steps = steps + [(nxt, frozenset({(out + 3) % 6}))]
                            total += TOWN_EXIT_COST
                        bonus = 1.5 if len(steps) <= tiles_left else 1.0
                        bonus *= 1.3 if not fresh else 1.0
                        found.append((worth * bonus / (total + 2), steps, not fresh, total))
                    elif deeper and nxt in free_hexes:
                        stack.append((nxt, (out + 3) % 6, path + [(h, PAIRS[into][out])], cost))
        found.sort(key=lambda f: (-f[0], len(f[1]), sorted(f[1][0][0])))
        return found

    def _source_of(self, h: Hex) -> Hex | None:
        """The stop my unfinished track at `h` started from."""
        seen = {h}
        frontier = [h]
        while frontier:
            cur = frontier.pop()
            for e, owner in self.exits.get(cur, {}).items():
                if owner != self.seat:
                    continue
                nxt = neighbour(cur, e)
                if nxt in self.stops:
                    return nxt
                if nxt not in seen and (e + 3) % 6 in self.exits.get(nxt, {}):
                    seen.add(nxt)
                    frontier.append(nxt)
        return None

    def urbanize_value(self, m: Move) -> float:
        if not isinstance(m, UrbanizeMove):
            return 0.0
        h = hex_of(m.hex)
        colour = self.tiles.get(m.new_city)
        near = sum(
            g == colour for other, goods in self.goods.items() if distance(h, other) <= 4 for g in goods
        )
        mine = 1.0 if any(self.exits.get(h, {}).get(e) == self.seat for e in range(6)) else 0.0
        return 0.5 * near + mine


class SearchPolicy(GreedyPolicy):
    """The service's search bot, asked over HTTP for each decision (hints: `POST …/hints`, then
    a long-poll of the hint until the worker has searched it). `play_seats` binds it to the
    game, its client and the seat's token (`bind`); unbound, or where the service gives no hint,
    it decides as `GreedyPolicy` does."""

    name = "search"
    budget_ms = 1000  # the search time asked for each decision (the service caps it)
    wait_seconds = 60.0  # the longest it waits for one hint (or for a spent allowance)

    def __init__(self, rng: random.Random | None = None, map_detail: MapDetail | None = None) -> None:
        super().__init__(rng, map_detail)
        self.api: AosClient | None = None
        self.game_id: str | None = None
        self.token: str | None = None
        self.hints = 0  # decisions the service's hint made
        self.fallbacks = 0  # decisions greedy made for want of a hint

    def bind(self, api: AosClient, game_id: str, token: str) -> None:
        self.api, self.game_id, self.token = api, game_id, token

    def choose(self, view: GameView, seat: int, moves: Sequence[Move]) -> Move:
        if len(moves) > 1 and self.api is not None:
            picked = self._hinted(view, seat, moves)
            if picked is not None:
                self.hints += 1
                return picked
            self.fallbacks += 1
        return super().choose(view, seat, moves)

    def _hinted(self, view: GameView, seat: int, moves: Sequence[Move]) -> Move | None:
        """The listed move the service's hint ranks first, or None when there is no hint."""
        assert self.api is not None and self.game_id is not None and self.token is not None
        deadline = time.monotonic() + self.wait_seconds
        try:
            hint = self._ask(seat, deadline)
            while hint is not None and hint.status == "pending":
                left = int(deadline - time.monotonic())
                if left <= 0:
                    return None
                hint = self.api.get_hint(self.game_id, hint.hint_id, token=self.token,
                                         prefer=f"wait={min(left, 30)}")
        except (ApiError, requests.RequestException):
            return None  # hints turned off, the game moved on, the service away: greedy decides
        if hint is None or hint.status != "done" or hint.version != view.version or not hint.moves:
            return None
        best = _identity(hint.moves[0].move)
        return next((m for m in moves if _identity(m) == best), None)

    def _ask(self, seat: int, deadline: float) -> Hint | None:
        assert self.api is not None and self.game_id is not None and self.token is not None
        while True:
            try:
                return self.api.ask_hint(self.game_id, HintRequest(seat=seat, budget_ms=self.budget_ms),
                                         token=self.token)
            except TooManyRequests as exc:  # the seat's allowance of hints: wait for it, once in a while
                wait = exc.retry_after or 1.0
                if time.monotonic() + wait > deadline:
                    return None
                time.sleep(wait)


def _identity(move: Move) -> dict[str, object]:
    """A move as the service judges it: without its words."""
    return {k: v for k, v in move.to_dict().items() if k != "text"}


POLICIES: dict[str, type[Policy]] = {"random": RandomPolicy, "greedy": GreedyPolicy, "search": SearchPolicy}


def policy_class(spec: str) -> type[Policy]:
    """A policy by name (`greedy`) or by import path (`mypkg.mybot:MyPolicy`)."""
    if spec in POLICIES:
        return POLICIES[spec]
    module_name, sep, class_name = spec.partition(":")
    if not sep or not module_name or not class_name:
        raise ValueError(f"a policy is one of {', '.join(sorted(POLICIES))} or module:Class, not {spec!r}")
    try:
        found = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"cannot load the policy {spec!r}: {exc}") from exc
    if not isinstance(found, type) or not callable(getattr(found, "choose", None)):
        raise ValueError(f"{spec!r} is not a class with a choose(view, seat, moves) method")
    return found


@dataclass
class GameResult:
    game_id: str
    view: GameView
    moves: int
    seconds: float
    policies: list[str] = field(default_factory=list)


def play_game(
    api: AosClient,
    map_id: MapId,
    policies: Sequence[Policy],
    *,
    seed: str | None = None,
    names: Sequence[str] | None = None,
    max_moves: int = 20000,
    on_move: Callable[[GameView, int, Move], None] | None = None,
) -> GameResult:
    """Creates a game on `map_id` with one seat per policy and plays it to the end."""
    started = time.perf_counter()
    names = list(names or [f"{p.name}-{i}" for i, p in enumerate(policies)])
    created = api.create_game(NewGame(map=map_id, players=[NewGamePlayer(name=n) for n in names], seed=seed))
    tokens = {s.seat: s.token for s in created.seats if s.token is not None}
    view, moves = play_seats(api, created.game_id, dict(enumerate(policies)), tokens,
                             max_moves=max_moves, on_move=on_move)
    return GameResult(view.game_id, view, moves, time.perf_counter() - started, [p.name for p in policies])


def play_seats(
    api: AosClient,
    game_id: str,
    policies: dict[int, Policy],
    tokens: dict[int, str],
    *,
    max_moves: int = 20000,
    on_move: Callable[[GameView, int, Move], None] | None = None,
    on_round: Callable[[GameView, int], None] | None = None,
) -> tuple[GameView, int]:
    """Plays the seats in `policies` (their tokens in `tokens`) until the game finishes, whoever
    plays the other seats: it follows the game's events stream and moves whenever one of its
    seats is to decide. `on_round(view, moves)` is called as each round begins and once at the
    end, with the moves made so far. Returns the final view and how many moves it made."""
    view = api.get_game(game_id)
    detail = api.get_map(view.map)
    for seat, p in policies.items():
        p.map_detail = detail
        bind = getattr(p, "bind", None)
        if callable(bind):  # a policy that asks the service itself (SearchPolicy's hints)
            bind(api, game_id, tokens[seat])
    moves = 0

    def turn(view: GameView) -> bool:
        """Makes the move of the seat to decide, if it is ours; whether one was made."""
        seat = view.active_seat
        if seat is None or seat not in policies or view.status == "finished":
            return False
        legal = api.get_legal_moves(game_id, seat)
        if legal.version != view.version or not legal.moves:
            return False  # the game moved on: its event is on the way
        move = policies[seat].choose(view, seat, legal.moves)
        if on_move is not None:
            on_move(view, seat, move)
        try:
            api.apply_move(game_id, move, token=tokens[seat], if_match=view.version)
        except PreconditionFailed:
            return False  # someone else moved first: their event is on the way
        return True

    round_seen = view.round
    if on_round is not None:
        on_round(view, moves)
    moves += turn(view)
    # The stream brings every move, ours included, in order: each one says who decides next.
    for event in api.events(game_id, after=view.version):
        view = event.game
        if on_round is not None and (view.round != round_seen or view.status == "finished"):
            round_seen = view.round
            on_round(view, moves)
        moves += turn(view)
        if moves >= max_moves:
            raise RuntimeError(f"game {game_id} did not end in {max_moves} moves")
    return view, moves


def seat_of_token(token: str) -> int | None:
    """The seat a seat token is for (tokens read `<game id>.<seat>.<secret>`), if it says."""
    parts = token.split(".")
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None


def check_token(api: AosClient, game_id: str, token: str, seat: int | None = None) -> int:
    """The seat `token` plays in game `game_id`, checked with the service before any move: a read
    only the seat's own token may make (`GET …/seats/{seat}/orders`), which changes nothing. Raises
    `NotFound` for no such game, `Unauthorized` or `Forbidden` (`.code` says why, e.g.
    `TOKEN_OTHER_GAME`) for a token that is not that seat's of that game, `ValueError` for a token
    that does not say its seat when `seat` is not given."""
    seat = seat_of_token(token) if seat is None else seat
    if seat is None:
        raise ValueError("the token does not say its seat: pass seat= (--seat)")
    api.get_orders(game_id, seat, token=token)
    return seat


def play_seat(
    api: AosClient,
    game_id: str,
    token: str,
    policy: Policy,
    *,
    seat: int | None = None,
    max_moves: int = 20000,
    on_move: Callable[[GameView, int, Move], None] | None = None,
    on_round: Callable[[GameView, int], None] | None = None,
) -> GameResult:
    """Plays one seat of an existing game, with that seat's token, until the game is finished.
    Other seats are played by others: it follows the game's events stream (`play_seats`) and
    moves as soon as the seat is to decide. The token is checked first (`check_token`): a wrong
    one fails before anything is played."""
    started = time.perf_counter()
    seat = check_token(api, game_id, token, seat)
    view, moves = play_seats(api, game_id, {seat: policy}, {seat: token}, max_moves=max_moves,
                             on_move=on_move, on_round=on_round)
    return GameResult(game_id, view, moves, time.perf_counter() - started, [policy.name])


def progress_line(view: GameView, seat: int, moves: int) -> str:
    """One line on how a seat stands: at each round's start in `--game` mode."""
    me = view.players[seat]
    where = "finished" if view.status == "finished" else f"round {view.round}/{view.last_round}"
    state = "out" if me.eliminated else (
        f"${me.cash}, income {me.income}, {me.shares} shares, locomotive {me.locomotive}")
    return f"game {view.game_id} {where}: seat {seat} ({me.name}) {state}; {moves} moves made"


def failure(exc: BaseException, url: str, game: str | None = None) -> str:
    """The one line that says what went wrong and what to do, for the errors a user can fix."""
    if isinstance(exc, requests.ConnectionError | requests.Timeout):
        return (f"cannot reach the service at {url} ({type(exc).__name__}): start it (./run.sh) "
                f"or pass its address with --url")
    if isinstance(exc, NotFound) and exc.code == "GAME_NOT_FOUND":
        return f"no game {game!r} at {url}: check --game (and --url; a game expires after a while)"
    if isinstance(exc, Unauthorized | Forbidden):
        return (f"the token is not a seat token of game {game} ({exc.code}: {exc.detail}): pass the "
                f"token the game's creator gave your seat with --token")
    if isinstance(exc, ApiError):
        return f"the service answered {exc.status} {exc.code}: {exc.detail}"
    return str(exc)


DESCRIPTION = """\
A bot that plays Age of Steam over HTTP through aos_client: whole games (every seat), or one
seat of a game someone else created. It follows each game's events stream and moves as soon as
one of its seats is to decide.

Whole games: it creates --games games on --map with --players seats, plays every seat with
--policy (or one policy per seat with --seats), prints a line per game and the final scores.

One seat (--game and --token): it checks the token first, plays that seat to the game's end,
prints a line as each round begins, then the seat's points and rank.

A policy is `random`, `greedy`, `search` (the service's search bot, through hints) or the import
path of a Policy subclass of your own
(`mypkg.mybot:MyPolicy`, made as MyPolicy(random.Random(...)); see aos_client/bot.py)."""

EXAMPLES = """\
examples:
  python -m aos_client.bot --url http://127.0.0.1:8000 --map rust_belt --players 4 --games 10
  python -m aos_client.bot --players 4 --games 50 --seats greedy,greedy,random,random --rotate --seed 1
  python -m aos_client.bot --game GAME_ID --token SEAT_TOKEN --policy mypkg.mybot:MyPolicy"""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m aos_client.bot", description=DESCRIPTION, epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", default="http://127.0.0.1:8000",
                   help="the service's base URL (default: %(default)s)")
    p.add_argument("--policy", default="greedy",
                   help=f"every seat's policy: {', '.join(sorted(POLICIES))} or module:Class "
                        "(default: %(default)s)")
    whole = p.add_argument_group("whole games")
    whole.add_argument("--map", default="rust_belt", help="the map of the games (default: %(default)s)")
    whole.add_argument("--players", type=int, default=4, help="seats per game (default: %(default)s)")
    whole.add_argument("--games", type=int, default=1, help="how many games to play (default: %(default)s)")
    whole.add_argument("--seats",
                       help="a policy per seat, comma-separated (e.g. greedy,greedy,random,random)")
    whole.add_argument("--rotate", action="store_true", help="with --seats: rotate the policies each game")
    whole.add_argument("--seed", type=int, default=None,
                       help="makes the games and the bots reproducible (game g is seeded SEED-g)")
    one = p.add_argument_group("one seat of an existing game")
    one.add_argument("--game", help="the game's id (with --token)")
    one.add_argument("--token", help="the seat's token, as the game's creator got it (it says which seat)")
    one.add_argument("--seat", type=int, help="the seat, for a token that does not say it")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        if args.game is not None or args.token is not None:
            return play_one_seat(args)
        return play_whole_games(args)
    except (requests.ConnectionError, requests.Timeout, ApiError, ValueError) as exc:
        print(f"aos_client.bot: {failure(exc, args.url, args.game)}", file=sys.stderr, flush=True)
        return 1


def play_one_seat(args: argparse.Namespace) -> int:
    if not (args.game and args.token):
        parser().error("--game and --token go together")
    try:
        policy = policy_class(args.policy)(random.Random(random.Random(args.seed).random()))
    except ValueError as exc:
        parser().error(str(exc))
    with AosClient(args.url) as api:
        seat = check_token(api, args.game, args.token, args.seat)

        def progress(view: GameView, moves: int) -> None:
            print(progress_line(view, seat, moves), flush=True)

        result = play_seat(api, args.game, args.token, policy, seat=seat, on_round=progress)
    mine = next((s for s in result.view.scores or [] if s.seat == seat), None)
    points = "out" if mine is None or mine.points is None else mine.points
    print(f"game {result.game_id}: seat {seat} made {result.moves} moves in {result.seconds:.1f}s; "
          f"points {points}, rank {mine.rank if mine else '?'}", flush=True)
    return 0


def play_whole_games(args: argparse.Namespace) -> int:
    kinds: list[str] = args.seats.split(",") if args.seats else [args.policy] * args.players
    if len(kinds) != args.players:
        parser().error(f"--seats needs {args.players} policies")
    try:
        classes = {k: policy_class(k) for k in kinds}
    except ValueError as exc:
        parser().error(str(exc))
    rng = random.Random(args.seed)
    points: dict[str, list[int]] = {}
    wins: dict[str, float] = {}
    with AosClient(args.url) as api:
        for g in range(args.games):
            order = kinds[g % len(kinds) :] + kinds[: g % len(kinds)] if args.rotate else kinds
            policies = [classes[k](random.Random(rng.random())) for k in order]
            seed = None if args.seed is None else f"{args.seed}-{g}"
            result = play_game(api, args.map, policies, seed=seed)
            scores = sorted(result.view.scores or [], key=lambda s: s.seat)
            shown = []
            winners = [s for s in scores if s.rank == 1]
            for s in scores:
                kind = order[s.seat]
                points.setdefault(kind, []).append(s.points if s.points is not None else 0)
                if s.rank == 1:
                    wins[kind] = wins.get(kind, 0.0) + 1 / len(winners)
                shown.append(f"{s.seat}:{kind}={'out' if s.points is None else s.points}")
            print(
                f"game {g + 1}/{args.games} {result.game_id}: {result.moves} moves in {result.seconds:.1f}s, "
                f"round {result.view.round}; points {' '.join(shown)}",
                flush=True,
            )
    print("final scores (eliminated seats count 0):")
    for kind in sorted(points):
        values = points[kind]
        print(
            f"  {kind}: {len(values)} seat-games, mean {statistics.mean(values):.1f} points, "
            f"median {statistics.median(values)}, wins {wins.get(kind, 0):.1f}/{args.games}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
