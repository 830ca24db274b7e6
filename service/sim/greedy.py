"""The client's greedy bot (client/aos_client/bot.py GreedyPolicy), ported to play in process on
the engine's own dicts: the game view of `game.view`, the moves of `game.legal_moves` and the map
of `game.map_info`. It decides exactly as the client's does (tests/sim/test_greedy.py holds the
two to each other move by move), so an arena seat of "greedy" is the bot a client author knows.

It is also the search bot's model of everyone: its rollouts play it for every seat, and its
ranked plans name the few builds worth searching (`build_plans`)."""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from functools import cache, lru_cache
from typing import Any

import orjson

from service.engine import game
from service.engine.contract_types import Hex as HexObject
from service.engine.contract_types import MapDetail, RulesView
from service.engine.layout import GivenMove, State

Hex = tuple[int, int]
Step = tuple[Hex, frozenset[int]]
Plan = tuple[float, list[Step], bool, int]
TOWN_EXIT_COST = 3  # about what a town's track costs; legal moves say exactly
DIRECTIONS: dict[int, Hex] = {0: (0, -1), 1: (1, -1), 2: (1, 0), 3: (0, 1), 4: (-1, 1), 5: (-1, 0)}

ACTION_PREFERENCE = [
    "engineer", "first_build", "first_move", "urbanization", "locomotive", "turn_order",
    "production", "us_army_escort", "urbanization_one_track", "single_transport", "last_move",
    "last_player", "slow_engineer", "locomotive_no_build", "high_cost", "last_build",
]


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


def hex_of(h: HexObject) -> Hex:
    return h["q"], h["r"]


@cache
def map_detail(map_id: str) -> MapDetail:
    """The map as the client's `get_map` gives it (read once per process)."""
    return game.map_info(map_id)


def group(moves: Sequence[GivenMove]) -> dict[str, list[GivenMove]]:
    by_type: dict[str, list[GivenMove]] = {}
    for m in moves:
        by_type.setdefault(m["type"], []).append(m)
    return by_type


class GreedyPolicy:
    """The client's GreedyPolicy on engine dicts. `choose_view` is the whole decision from the
    view; `choose` takes the state and makes the view itself."""

    name = "greedy"

    def __init__(self, rng: random.Random | None = None, depth: int = 5) -> None:
        self.rng = rng or random.Random()
        self.depth = depth  # how many empty hexes a planned link crosses at most (the client's 5)

    def choose(self, state: State, seat: int, moves: Sequence[GivenMove]) -> GivenMove:
        return self.choose_view(game.view(state), seat, moves)

    def choose_view(self, view: RulesView, seat: int, moves: Sequence[GivenMove]) -> GivenMove:
        by_type = group(moves)
        me = view["players"][seat]
        expenses = me["shares"] + me["locomotive"]
        if "issue_shares" in by_type:
            return self._issue_shares(view, seat, by_type["issue_shares"], expenses)
        if "bid" in by_type or "drop_out" in by_type:
            return self._bid(view, seat, by_type)
        if "select_action" in by_type:
            options = {m["action"]: m for m in by_type["select_action"]}
            links = sum(1 for link in view["board"]["links"] if link["owner"] == seat)
            if me["locomotive"] < min(4, links) and "locomotive" in options:
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

    def _issue_shares(self, view: RulesView, seat: int, options: list[GivenMove], expenses: int) -> GivenMove:
        me = view["players"][seat]
        # Cash for this round's expenses, and early on for some building; a share brings $5 and
        # costs $1 a round from then on.
        budget = 10 if view["round"] == 1 else 6 if view["round"] <= view["last_round"] // 2 else 0
        if me["shares"] >= 8:
            budget = 0
        short = max(0, expenses - me["income"]) + budget - me["cash"]
        wanted = max(0, -(-short // 4))
        counts = {m["count"]: m for m in options}
        best = max((c for c in counts if c <= wanted), default=min(counts))
        return counts[best]

    def _bid(self, view: RulesView, seat: int, by_type: dict[str, list[GivenMove]]) -> GivenMove:
        bids = sorted(by_type.get("bid", []), key=lambda m: m["amount"])
        me = view["players"][seat]
        if bids and bids[0]["amount"] <= me["cash"] // 20:
            return bids[0]
        for kind in ("drop_out", "turn_order_pass"):
            if kind in by_type:
                return by_type[kind][0]
        return bids[0]

    def _move_goods(self, view: RulesView, seat: int, by_type: dict[str, list[GivenMove]]) -> GivenMove:
        me = view["players"][seat]
        delivers = by_type.get("deliver", [])
        if delivers:
            best = max(delivers, key=lambda m: delivery_value(m, seat))
            if delivery_value(best, seat)[0] > 0:
                return best
        links = sum(1 for link in view["board"]["links"] if link["owner"] == seat)
        if "upgrade_locomotive" in by_type and me["locomotive"] < min(3, links) and me["income"] > 0:
            return by_type["upgrade_locomotive"][0]
        if "pass" in by_type:
            return by_type["pass"][0]
        if delivers:
            return max(delivers, key=lambda m: delivery_value(m, seat))
        return next(iter(by_type.values()))[0]

    # -- building ------------------------------------------------------------------------------
    def _build(self, view: RulesView, seat: int, by_type: dict[str, list[GivenMove]],
               expenses: int) -> GivenMove:
        board = Board(view, seat, map_detail(view["map"]))
        for _score, first in build_plans(view, seat, by_type, expenses, board, self.depth):
            return first
        urbanize = [m for m in by_type.get("urbanize", []) if board.urbanize_value(m) > 1.0]
        if urbanize:
            return max(urbanize, key=board.urbanize_value)
        if "end_build" in by_type:
            return by_type["end_build"][0]
        return next(iter(by_type.values()))[0]


def delivery_value(m: GivenMove, seat: int) -> tuple[int, int]:
    """(my income from it, my income less everyone else's)."""
    income = m.get("income") or {}
    mine = income.get(str(seat), 0)
    return mine, mine - sum(v for k, v in income.items() if k != str(seat))


def spendable_cash(view: RulesView, seat: int) -> int:
    me = view["players"][seat]
    return me["cash"] - max(0, me["shares"] + me["locomotive"] - me["income"])


def build_plans(view: RulesView, seat: int, by_type: dict[str, list[GivenMove]], expenses: int,
                board: Board | None = None, depth: int = 5) -> Iterator[tuple[float, GivenMove]]:
    """The builds greedy would make, best first: (the plan's score, its first build),
    one per plan that greedy accepts (it continues my track, or it can be finished this turn with
    the money there is). Greedy makes the first; the search tries a few."""
    board = board or Board(view, seat, map_detail(view["map"]))
    spendable = spendable_cash(view, seat)
    tiles_left = view["build"]["tiles_left"] if view["build"] is not None else 3
    builds: dict[Step, GivenMove] = {}
    for m in by_type.get("build", []):
        if m.get("tracks") and (m.get("cost") or 0) <= spendable:
            h = hex_of(m["hex"])
            if h not in board.segments and len(m["tracks"]) == 1:
                builds[(h, frozenset(m["tracks"][0]))] = m
    for town_exit, m in town_builds(board, by_type.get("build", []), spendable):
        builds[town_exit] = m
    for score, step, continues, length, estimate in cached_plans(view, seat, board, tiles_left, depth):
        first = builds.get(step)
        if first is None:
            continue
        # Start a new link only if it can be finished this turn with the money there is.
        if continues or (length <= tiles_left and estimate <= spendable):
            yield score, first


# A plan as build_plans reads it: (score, its first step, whether it continues my track, how
# many steps it has, what it should cost).
Brief = tuple[float, Step, bool, int, int]
# Board.plans by board, seat and tiles left: the search's rollouts play greedy from the same
# positions again and again (its moves follow from the board until a die or a draw differs), and
# planning is most of greedy's time.
_PLANS: OrderedDict[bytes, list[Brief]] = OrderedDict()
PLANS_KEPT = 256


def cached_plans(view: RulesView, seat: int, board: Board, tiles_left: int, depth: int = 5) -> list[Brief]:
    key = orjson.dumps([view["map"], seat, tiles_left, depth, view["board"]])
    found = _PLANS.get(key)
    if found is None:
        found = _PLANS[key] = brief(board.plans(tiles_left, depth))
        if len(_PLANS) > PLANS_KEPT:
            _PLANS.popitem(last=False)
    else:
        _PLANS.move_to_end(key)
    return found


def brief(plans: list[Plan]) -> list[Brief]:
    """The plans build_plans could ever accept, in order, as briefs. A plan that starts with the
    same step as an earlier one is left out when the earlier one is accepted whenever it would be:
    the earlier continues my track (always accepted), or it is no longer and no dearer."""
    kept: list[Brief] = []
    seen: dict[tuple[Step, bool], list[tuple[int, int]]] = {}
    for score, path, continues, estimate in plans:
        first, length = path[0], len(path)
        earlier = seen.setdefault((first, continues), [])
        if continues and earlier:
            continue
        if any(n <= length and cost <= estimate for n, cost in earlier):
            continue
        earlier.append((length, estimate))
        kept.append((score, first, continues, length, estimate))
    return kept


def town_builds(board: Board, moves: list[GivenMove], spendable: int) -> Iterator[tuple[Step, GivenMove]]:
    """Builds on town hexes that add exactly one exit, keyed like the planner's steps."""
    for m in moves:
        if m.get("town_exits") is not None and (m.get("cost") or 0) <= spendable:
            h = hex_of(m["hex"])
            added = set(m["town_exits"]) - set(board.exits.get(h, {}))
            if len(added) == 1 and len(m["town_exits"]) == len(board.exits.get(h, {})) + 1:
                yield (h, frozenset(added)), m


class Board:
    """What the greedy builder needs to know of the board, from the view and the map."""

    def __init__(self, view: RulesView, seat: int, detail: Mapping[str, Any] | None) -> None:
        self.seat = seat
        board = view["board"]
        self.cities: dict[Hex, list[str]] = {hex_of(c["hex"]): list(c["colors"]) for c in board["cities"]}
        self.goods: dict[Hex, list[str]] = {hex_of(c["hex"]): list(c["goods"]) for c in board["cities"]}
        self.towns: set[Hex] = {hex_of(t["hex"]) for t in (board.get("towns") or [])}
        self.terrain: dict[Hex, str] = {}
        self.costs: dict[str, int | None] = {}
        self.tiles: dict[str, str] = {}
        if detail is not None:
            if not board.get("towns"):
                self.towns = {hex_of(t["hex"]) for t in detail["towns"]} - set(self.cities)
            self.terrain = {(h["q"], h["r"]): h["terrain"] for h in detail["hexes"]}
            self.costs = dict(detail.get("terrain_costs") or {})
            self.tiles = {t["letter"]: t["color"] for t in (detail.get("new_city_tiles") or [])}
        self.stops = set(self.cities) | self.towns
        self._values: dict[tuple[Hex, Hex], float] = {}  # value() asked again and again
        # Track by hex: the edge pairs and their owners; the edges of each hex that carry track.
        self.segments: dict[Hex, list[tuple[frozenset[int], int | None]]] = {}
        self.exits: dict[Hex, dict[int, int | None]] = {}
        for ht in board["tracks"]:
            h = hex_of(ht["hex"])
            for t in ht["tracks"]:
                self.segments.setdefault(h, []).append((frozenset(t["edges"]), t["owner"]))
                for e in t["edges"]:
                    self.exits.setdefault(h, {})[e] = t["owner"]
            for x in ht.get("town_exits") or []:
                self.exits.setdefault(h, {})[x["edge"]] = x["owner"]
        # What building on each empty hex costs (water and the like cost None: not there).
        self.free: dict[Hex, int] = {}
        for h, terrain in self.terrain.items():
            if h not in self.exits and h not in self.stops:
                cost = self.costs.get(terrain, 2)
                if cost is not None:
                    self.free[h] = cost
        # The stops my complete links reach: my network.
        self.network: set[Hex] = set()
        for link in board["links"]:
            if link["owner"] == seat:
                self.network |= {hex_of(s) for s in link["stops"]}

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
        """What a link between stops `a` and `b` is worth to me: the goods it lets me deliver."""
        cached = self._values.get((a, b))
        if cached is None:
            cached = self._values[(a, b)] = self._value(a, b)
        return cached

    def _value(self, a: Hex, b: Hex) -> float:
        near_a = ({a} | self.network) if a in self.network else {a}
        value = 0.0
        for src in near_a:
            value += sum(g in self.cities.get(b, ()) for g in self.goods.get(src, ()))
            value += sum(g in self.cities.get(src, ()) for g in self.goods.get(b, ())) * (
                1 if src == a else 0.5)
        if b in self.towns:
            # A town is a stepping stone: worth part of the best city a short way beyond it.
            beyond = [c for c in self.cities if c != a and 0 < distance(b, c) <= 3]
            value += (0.4 * max((self.value(a, c) for c in beyond if c in self.cities), default=0.0)
                      if a in self.cities else 0.0)
        if b in self.network:
            value *= 0.5
        return value

    def plans(self, tiles_left: int, depth: int = 5) -> list[Plan]:
        """Links I could build, best first, each as its steps (hex, the pair of edges it gets) and
        whether it continues my unfinished track, and what it should cost."""
        starts: list[tuple[Hex, Hex, int, int, list[Step]]] = []
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
        found: list[Plan] = []
        # The loop's lookups held in locals: it runs some ten thousand steps a plan.
        stops, towns, exits, value = self.stops, self.towns, self.exits, self.value
        free_hexes, free = self.free, self.free.get
        for origin, first, entry, fresh, prefix in starts:
            source = origin if origin in stops else self._source_of(origin)
            # Depth-first over short paths of empty hexes, ending next to a stop. (The client's
            # loop, with its dead pushes left out and its steps built only where kept: the same
            # pops in the same order, so the same plans.)
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

    def urbanize_value(self, m: GivenMove) -> float:
        h = hex_of(m["hex"])
        colour = self.tiles.get(m["new_city"])
        near = sum(g == colour for other, goods in self.goods.items() if distance(h, other) <= 4
                   for g in goods)
        mine = 1.0 if any(self.exits.get(h, {}).get(e) == self.seat for e in range(6)) else 0.0
        return 0.5 * near + mine
