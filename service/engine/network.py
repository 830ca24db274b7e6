"""Track as a network: pieces of track, the routes they form, and which routes are links.

A piece is one track on one hex: `(hex, a, b)` between edges a and b, or `(hex, e, CENTRE)`
for a town exit from edge e to the town in the middle. A route is a maximal chain of pieces
joined end to end; it is a complete link when both of its ends are stops (a city, or a town
whose track it enters).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from service.engine.hexgrid import Hex, around, key, opposite, parse_key
from service.engine.layout import State
from service.engine.maps import MapData

CENTRE = -1
Piece = tuple[Hex, int, int]


@dataclass
class End:
    """One end of a route: at a stop (`hex` is the stop, `edge` leaves it toward the route),
    open (track on `hex` points out through `edge` at nothing), or a cycle."""

    kind: str  # "stop" | "open" | "cycle"
    hex: Hex
    edge: int


@dataclass
class Route:
    pieces: list[Piece]
    ends: tuple[End, End]
    owner: int | None

    @property
    def complete(self) -> bool:
        return self.ends[0].kind == "stop" and self.ends[1].kind == "stop"

    @property
    def stops(self) -> tuple[Hex, Hex]:
        return (self.ends[0].hex, self.ends[1].hex)

    @property
    def link_id(self) -> str:
        a, b = self.ends
        first = min((a.hex, a.edge), (b.hex, b.edge))
        return f"{key(first[0])},{first[1]}"

    def hexes(self) -> list[Hex]:
        out = [self.ends[0].hex]
        for p in self.pieces:
            if p[0] != out[-1]:
                out.append(p[0])
        if self.ends[1].hex != out[-1]:
            out.append(self.ends[1].hex)
        return out


class Network:
    """The track of one state, indexed for tracing. Built per call; cheap (a few hundred pieces)."""

    def __init__(self, state: State, board: MapData, more_stops: frozenset[Hex] = frozenset()) -> None:
        self._find_stops(state, board, more_stops)
        self._index(state)
        self._forget_routes()

    def _find_stops(self, state: State, board: MapData, more_stops: frozenset[Hex]) -> None:
        self.map = board
        # Cities, and hexes a map makes stops without track on them (Iraq's oil fields).
        self.cities: set[Hex] = set(board.cities)
        self.towns: set[Hex] = set(board.towns)
        if state["new_cities"]:  # none before the first urbanization: no set made for them
            new_cities = {parse_key(k) for k in state["new_cities"]}
            self.cities |= new_cities
            self.towns -= new_cities
        if more_stops:
            self.cities |= more_stops

    def _index(self, state: State) -> None:
        owners: dict[Piece, int | None] = {}
        ends: dict[tuple[Hex, int], Piece] = {}
        by_hex: dict[Hex, list[Piece]] = {}
        for k, tracks in state["track"].items():
            h = parse_key(k)
            here = by_hex[h] = []  # the first of h's pieces: the state's keys are distinct
            for a, b, owner in tracks:
                p = (h, a, b)
                owners[p] = owner
                ends[(h, a)] = ends[(h, b)] = p
                here.append(p)
        for k, exits in state["towns"].items():
            h = parse_key(k)
            here = by_hex.setdefault(h, [])
            for e, owner in exits:
                p = (h, e, CENTRE)
                owners[p] = owner
                ends[(h, e)] = p
                here.append(p)
        self.owner = owners
        self.end_index = ends
        self.by_hex = by_hex

    def _forget_routes(self) -> None:
        """Drops what is worked out from the track (routes, owners, traces), made again when
        next asked for: at the start, and after the owners change."""
        self._routes: list[Route] | None = None
        self._owners: set[int | None] | None = None
        self._traced: list[tuple[Piece, Route, set[Hex]]] | None = None
        self._one_route_each: bool | None = None

    # -- editing (used to try a build before it is made) --------------------------------

    def _add(self, piece: Piece, owner: int | None) -> None:
        self.owner[piece] = owner
        self.end_index[(piece[0], piece[1])] = piece
        if piece[2] != CENTRE:
            self.end_index[(piece[0], piece[2])] = piece
        self.by_hex.setdefault(piece[0], []).append(piece)
        self._routes = None
        self._owners = None

    def _remove(self, piece: Piece) -> None:
        del self.owner[piece]
        del self.end_index[(piece[0], piece[1])]
        if piece[2] != CENTRE:
            del self.end_index[(piece[0], piece[2])]
        self.by_hex[piece[0]].remove(piece)
        self._routes = None
        self._owners = None

    def replace_hex(self, h: Hex, pieces: dict[Piece, int | None]) -> dict[Piece, int | None]:
        """Puts `pieces` (with owners) on hex h instead of what it holds; returns what it held."""
        old = {p: self.owner[p] for p in self.by_hex.get(h, [])}
        for p in old:
            self._remove(p)
        for p, owner in pieces.items():
            self._add(p, owner)
        self._traced = None
        self._one_route_each = None
        return old

    def changed_on(self, state: State, hexes: Collection[Hex]) -> Network:
        """The state's network, made from this one: its pieces with those the state holds on
        `hexes` instead, where the state's other hexes hold what this one's do and its stops
        are these (the same sets, and the same lists of the other hexes' pieces: neither
        network may be edited after). One route each (one_route_each) when this one has and
        the pieces on `hexes` keep to it."""
        owner, ends, by_hex = dict(self.owner), dict(self.end_index), dict(self.by_hex)
        track, towns, cities = state["track"], state["towns"], self.cities
        sound = self.one_route_each()
        for h in hexes:
            for p in by_hex.pop(h, ()):
                del owner[p]
                del ends[(h, p[1])]
                if p[2] != CENTRE:
                    del ends[(h, p[2])]
            k = key(h)
            plain, exits = track.get(k), towns.get(k)
            if plain is None and exits is None:
                continue
            here = by_hex[h] = []
            edges = 0
            for a, b, o in plain or ():
                p = (h, a, b)
                owner[p] = o
                ends[(h, a)] = ends[(h, b)] = p
                here.append(p)
                edges += 2
            for e, o in exits or ():
                p = (h, e, CENTRE)
                owner[p] = o
                ends[(h, e)] = p
                here.append(p)
                edges += 1
            sound = (sound and not (here and h in cities) and not (plain and h in self.towns)
                     and edges == len({e for p in here for e in p[1:] if e != CENTRE}))
        net = Network.__new__(Network)
        net.map, net.cities, net.towns = self.map, cities, self.towns
        net.owner, net.end_index, net.by_hex = owner, ends, by_hex
        net._routes = net._owners = net._traced = None
        net._one_route_each = sound
        return net

    # -- queries -----------------------------------------------------------------------

    def owns_track(self, seat: int) -> bool:
        if self._owners is None:
            self._owners = set(self.owner.values())
        return seat in self._owners

    def pieces_on(self, h: Hex) -> list[Piece]:
        return self.by_hex.get(h, [])

    def facing(self, h: Hex, edge: int) -> Piece | None:
        """The piece on the far side of h's edge that ends at that edge, if any."""
        return self.end_index.get((around(h)[edge], opposite(edge)))

    def walk(self, h: Hex, edge: int, seen: set[Piece],
             swap: tuple[Hex, dict[int, Piece]] | None = None) -> tuple[list[Piece], End]:
        """Follows track leaving hex h through `edge` until it reaches a stop or stops.
        `swap` (a hex, and its pieces by edge) walks as if that hex held those pieces instead."""
        pieces: list[Piece] = []
        cities, towns, ends = self.cities, self.towns, self.end_index
        while True:
            n = around(h)[edge]
            entry = (edge + 3) % 6
            if n in cities:
                return pieces, End("stop", n, entry)
            p = swap[1].get(entry) if swap is not None and n == swap[0] else ends.get((n, entry))
            if n in towns:
                if p is not None:
                    pieces.append(p)
                    seen.add(p)
                    return pieces, End("stop", n, entry)
                return pieces, End("open", h, edge)
            if p is None:
                return pieces, End("open", h, edge)
            if p in seen:
                return pieces, End("cycle", n, entry)
            seen.add(p)
            pieces.append(p)
            h, edge = n, (p[2] if p[1] == entry else p[1])

    def route_through(self, piece: Piece, seen: set[Piece] | None = None) -> Route:
        seen = set() if seen is None else seen
        seen.add(piece)
        h, a, b = piece
        if b == CENTRE:
            ahead, end = self.walk(h, a, seen)
            return Route([piece, *ahead], (End("stop", h, a), end), self.owner[piece])
        left, end_a = self.walk(h, a, seen)
        right, end_b = self.walk(h, b, seen)
        left.reverse()
        return Route([*left, piece, *right], (end_a, end_b), self.owner[piece])

    def closes_loop(self, h: Hex, pieces: list[Piece], through: list[Piece],
                    memo: dict | None = None) -> bool:
        """Whether, with `pieces` on hex h instead of what it holds, a route through any of
        `through` (pieces among them) runs in a cycle or from a stop back to the same stop.
        Walks without editing the network. `memo` (one per unchanged network) keeps where the
        track beyond each hex edge leads, for the walks that never come back to h."""
        swap = hex_swap(h, pieces)
        for piece in through:
            seen = {piece}
            _, a, b = piece
            if b == CENTRE:  # a town exit: its route starts at the town on h
                end = self._end_beyond(h, a, seen, swap, memo)
                if end.kind == "cycle" or (end.kind == "stop" and end.hex == h):
                    return True
                continue
            first = self._end_beyond(h, a, seen, swap, memo)
            second = self._end_beyond(h, b, seen, swap, memo)
            if first.kind == "cycle" or second.kind == "cycle" or (
                    first.kind == second.kind == "stop" and first.hex == second.hex):
                return True
        return False

    def _end_beyond(self, h: Hex, edge: int, seen: set[Piece], swap: tuple[Hex, dict[int, Piece]],
                    memo: dict | None) -> End:
        if memo is not None:
            known = self.end_beyond(h, edge, memo)
            if known is not None:
                return known
        return self.walk(h, edge, seen, swap)[1]

    def end_beyond(self, h: Hex, edge: int, memo: dict) -> End | None:
        """Where the track beyond h's edge leads on the network as it is, kept in `memo` (one
        per unchanged network); None when that track comes back to h, whose pieces a build
        changes (only a walk with them can tell then)."""
        known = memo.get((h, edge)) or self._beyond(h, edge, memo)  # asked once per loop check
        return None if h in known[1] else known[0]

    def far_end(self, h: Hex, edge: int, memo: dict | None = None) -> End:
        """Where the track beyond h's edge leads on the network as it is (h's own pieces
        included), kept in `memo` when given (the one end_beyond keeps)."""
        if memo is None:
            return self.walk(h, edge, set())[1]
        return self._beyond(h, edge, memo)[0]

    def _beyond(self, h: Hex, edge: int, memo: dict) -> tuple[End, set[Hex]]:
        """The end of the walk through h's edge, and the hexes it passes or points at."""
        known = memo.get((h, edge))
        if known is None:
            pieces, end = self.walk(h, edge, set())
            last = around(end.hex)[end.edge] if end.kind == "open" else end.hex
            known = memo[(h, edge)] = (end, {p[0] for p in pieces} | {last})
        return known

    def set_owner(self, pieces: list[Piece], owner: int | None) -> None:
        """Gives these pieces one owner (the state is written by set_route_owner)."""
        for p in pieces:
            self.owner[p] = owner
        self._forget_routes()

    def routes(self) -> list[Route]:
        if self._routes is None:
            seen: set[Piece] = set()
            routes = []
            for piece in sorted(self.owner):
                if piece not in seen:
                    routes.append(self.route_through(piece, seen))
            self._routes = routes
        return self._routes

    def links(self) -> list[Route]:
        return [r for r in self.routes() if r.complete]

    def routes_from(self, before: Network, changed: Collection[Hex]) -> list[Route]:
        """routes(), where `before` differs from this network only in the pieces on the hexes
        `changed`: its routes that read none of those hexes (a walk reads only the hexes of its
        pieces and the hex each open end faces) are the routes here too, and the rest are
        traced again. routes() starts each route at its least piece, the first in sorted order,
        so the traced ones start at their least piece too: every piece of a route traced again
        is among those traced again. Traces all when the stops differ, or when a piece may be
        on two routes (track on a city, plain track on a town, two pieces at one edge), where
        which piece a walk starts from would matter."""
        if self._routes is not None:
            return self._routes
        if (before.cities != self.cities or before.towns != self.towns
                or not (self.one_route_each() and before.one_route_each())):
            return self.routes()
        traced: list[tuple[Piece, Route, set[Hex]]] = []
        again: set[Piece] = {p for h in changed for p in self.by_hex.get(h, ())}
        for entry in before.traced():
            if entry[2].isdisjoint(changed):
                traced.append(entry)
            else:
                again.update([p for p in entry[1].pieces if p[0] not in changed])
        seen: set[Piece] = set()
        for piece in sorted(again):
            if piece not in seen:
                route = self.route_through(piece, seen)
                traced.append((piece, route, _reads(route)))
        traced.sort(key=_first)
        self._traced = traced
        self._routes = [entry[1] for entry in traced]
        return self._routes

    def traced(self) -> list[tuple[Piece, Route, set[Hex]]]:
        """The routes, each with the piece it is traced from and the hexes its walks read."""
        if self._traced is None:
            self._traced = [(min(r.pieces), r, _reads(r)) for r in self.routes()]
        return self._traced

    def one_route_each(self) -> bool:
        """Whether each piece is on the one route traced from any of its pieces: no track on a
        city, no plain track on a town, no two pieces at one edge of a hex."""
        if self._one_route_each is None:
            by_hex = self.by_hex
            self._one_route_each = (
                len(self.end_index) == sum([1 if p[2] == CENTRE else 2 for p in self.owner])
                and not any(by_hex[h] for h in self.cities.intersection(by_hex))
                and all(p[2] == CENTRE for h in self.towns.intersection(by_hex) for p in by_hex[h]))
        return self._one_route_each


class UnindexedNetwork(Network):
    """A Network whose indexes of the track (owner, end_index, by_hex) are made when one is
    first read: for the build listing, which reads the state's track by rank (the listing's
    TrackAround) and the network's stops, and its indexes only where a walk or a loop check
    needs them (most listings never: building them cost some 55 k instructions a listing). The
    state must not change before they are made."""

    def __init__(self, state: State, board: MapData, more_stops: frozenset[Hex] = frozenset()) -> None:
        self._find_stops(state, board, more_stops)
        self._unindexed: State | None = state
        self._forget_routes()

    def __getattr__(self, name: str) -> Any:
        # Only for an attribute not found: the indexes, before they are made.
        state = self.__dict__.get("_unindexed")
        if state is None or name not in _INDEXES:
            raise AttributeError(name)
        self._unindexed = None
        self._index(state)
        return self.__dict__[name]

    def owns_track(self, seat: int) -> bool:
        state = self._unindexed
        if state is None:
            return super().owns_track(seat)
        # From the state as it holds the track: the same owners the index would hold.
        for tracks in state["track"].values():
            for _, _, owner in tracks:
                if owner == seat:
                    return True
        for exits in state["towns"].values():
            for _, owner in exits:
                if owner == seat:
                    return True
        return False


_INDEXES = frozenset(["owner", "end_index", "by_hex"])


def _reads(route: Route) -> set[Hex]:
    """The hexes a walk along the route reads: its pieces' and those its open ends face."""
    reads = {p[0] for p in route.pieces}
    for end in route.ends:
        if end.kind == "open":
            reads.add(around(end.hex)[end.edge])
    return reads


def _first(entry: tuple[Piece, Route, set[Hex]]) -> Piece:
    return entry[0]


def hex_swap(h: Hex, pieces: list[Piece]) -> tuple[Hex, dict[int, Piece]]:
    """Hex h as if it held `pieces` instead of what it holds, for walks that read it: which
    piece touches each of its edges."""
    local: dict[int, Piece] = {}
    for p in pieces:
        local[p[1]] = p
        if p[2] != CENTRE:
            local[p[2]] = p
    return h, local


def write_hex(state: State, h: Hex, pieces: dict[Piece, int | None]) -> None:
    """Stores the pieces of one hex in the state (plain track or town exits)."""
    k = key(h)
    plain = sorted([p[1], p[2], o] for p, o in pieces.items() if p[2] != CENTRE)
    exits = sorted([p[1], o] for p, o in pieces.items() if p[2] == CENTRE)
    if plain:
        state["track"][k] = plain
    else:
        state["track"].pop(k, None)
    if exits:
        state["towns"][k] = exits
    else:
        state["towns"].pop(k, None)


def set_route_owner(state: State, route: Route, owner: int | None) -> None:
    """Gives every piece of a route one owner, in the state."""
    for (h, a, b) in route.pieces:
        k = key(h)
        if b == CENTRE:
            for entry in state["towns"][k]:
                if entry[0] == a:
                    entry[1] = owner
        else:
            for entry in state["track"][k]:
                if (entry[0], entry[1]) == (a, b):
                    entry[2] = owner


def drop_owner(state: State, seat: int) -> None:
    """Removes every ownership marker of one seat (the track stays, unowned)."""
    for tracks in state["track"].values():
        for entry in tracks:
            if entry[2] == seat:
                entry[2] = None
    for exits in state["towns"].values():
        for entry in exits:
            if entry[1] == seat:
                entry[1] = None
