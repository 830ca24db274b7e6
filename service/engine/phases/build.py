"""Build Track: placing, upgrading and redirecting track, town track, urbanization, and the
expiry of incomplete track that its owner did not extend.

A `build` move names what the hex holds afterwards; `plan_build` works out whether that is a new
tile, an upgrade or a redirect, checks every rule and prices it. What a shape does on a hex,
judged from the hex's surroundings alone, is `build_shapes.py`; what depends on the rest of the
state (supply, loops, cost, cash) is `price`. `legal` lists, on the hexes where track could
connect, the shapes both accept.

Every write to the track during a build goes through a `BuildContext`, which keeps the track
network it was built with current, so no step reads a stale network or rebuilds it.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from service.engine import rules_data as R
from service.engine import tiles as T
from service.engine.contract_types import BuildMove, TrackBuiltEvent
from service.engine.errors import IllegalMove
from service.engine.hexgrid import Hex, around, as_dict, key, neighbour, parse_key
from service.engine.layout import BuildTurn, EdgeStatus, Event, GivenMove, Move, State
from service.engine.moves import expect_type, hex_field, leave_queue
from service.engine.network import CENTRE, Network, Piece, Route, set_route_owner, write_hex
from service.engine.once import once_per
from service.engine.phases import build_shapes as S
from service.engine.phases.build_shapes import Status
from service.engine.state import open_build_turn
from service.engine.variants.base import Rules

# Rules is imported at run time, not only for the type checker: mypyc (service.engine.native)
# makes the dataclasses below with their annotations looked up in this module. BaseRules names
# the base class where the listing asks whether a map's variant kept one of its hooks.
BaseRules = Rules

MOVE_TYPES = ("build", "urbanize", "end_build")
Geometry = S.TrackGeometry | S.TownGeometry
NOTHING: frozenset = frozenset()
NO_EDGES: tuple[int, ...] = ()
# What an empty hex holds, for the listing, which only reads it (a dict per hex else).
NO_PIECES: dict[Piece, int | None] = {}


# -- the context of a build --------------------------------------------------------------------

class Site:
    """One hex as a build finds it: what lies across each edge, what it holds (with owners)."""

    __slots__ = ("hex", "status", "old", "old_tile")

    def __init__(self, h: Hex, status: Status, old: dict[Piece, int | None],
                 old_tile: str | None) -> None:
        self.hex, self.status, self.old, self.old_tile = h, status, old, old_tile


@dataclass
class BuildContext:
    """A build decision: the state, its rules, the track network and the seat deciding. The
    network is built once; every write to the track goes through here and updates it too."""

    state: State
    rules: Rules
    seat: int
    net: Network = field(default=None)  # type: ignore[assignment]
    # The map's surcharge on every tile for this seat now (asked once per decision).
    extra: int = field(default=0, init=False)
    # Where the track beyond each hex edge leads, while the track is unchanged (loop checks).
    walks: dict = field(default_factory=dict, init=False, repr=False)
    # The listing's loop verdicts drawn from those walks alone, by hex and joined track
    # (_closes_loop_listed): many shapes of a hex join the same track. Cleared with them.
    loops: dict = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.net is None:
            self.net = self.rules.network(self.state)
        self._edges = _edge_table(self.rules.map)
        self._closable = _closable_table(self.rules)
        self.extra = self.rules.extra_cost_per_tile(self.state, self.seat)

    def site(self, h: Hex) -> Site:
        on_hex = self.net.pieces_on(h)
        if not on_hex:
            return Site(h, self.statuses(h), {}, None)
        owner = self.net.owner
        return Site(h, self.statuses(h), {p: owner[p] for p in on_hex},
                    self.state["tiles"].get(key(h)))

    def statuses(self, h: Hex) -> Status:
        """edge_statuses of h for this seat, with the tables of the map worked out once."""
        return edge_statuses(self.state, self.rules, self.net, self.seat, h, self._edges,
                             self._closable, self.walks)

    def write_hex(self, h: Hex, pieces: dict[Piece, int | None]) -> None:
        write_hex(self.state, h, pieces)
        self.net.replace_hex(h, pieces)
        self.walks.clear()
        self.loops.clear()

    def set_route_owner(self, route: Route, owner: int | None) -> None:
        set_route_owner(self.state, route, owner)
        self.net.set_owner(route.pieces, owner)

    def urbanize(self, h: Hex, letter: str) -> None:
        """The town on h becomes a new city: its town track goes, and it is a city from now on."""
        k = key(h)
        self.state["towns"].pop(k, None)
        self.state["new_cities"][k] = letter
        self.net.replace_hex(h, {p: o for p, o in self.net.owner.items()
                                 if p[0] == h and p[2] != CENTRE})
        self.net.towns.discard(h)
        self.net.cities.add(h)
        self.walks.clear()
        self.loops.clear()


# -- turn structure ------------------------------------------------------------------------

def start(state: State, rules: Rules, events: list[Event]) -> None:
    state["phase"] = "build"
    state["queue"] = rules.build_order(state)
    begin_turn(state, rules, events)


def begin_turn(state: State, rules: Rules, events: list[Event], net: Network | None = None) -> None:
    """Opens the build turn of the first seat in the queue, skipping seats with nothing to do."""
    net = rules.network(state) if net is None else net
    while state["queue"]:
        seat = state["queue"][0]
        tiles = rules.tiles_allowed(state, seat)
        state["build"] = {
            "seat": seat,
            "tiles_left": tiles,
            "urbanized": False,
            "built": [],
            "extended": [],
            "redirected": {},
            "map_moves": [],  # types of the map's own build moves made this turn
            "incomplete_at_start": incomplete_routes(state, rules, seat, net),
        }
        if tiles > 0 or rules.may_urbanize(state, seat):
            return
        close_turn(state, rules, events, net)


def leave(state: State, rules: Rules, seat: int, events: list[Event]) -> None:
    """A player out of the game (resign.py) leaves the build order. In their own turn the tiles
    laid stay, unowned, and the turn is over without its end-of-turn expiry (they own no track
    any more): the next seat's turn opens."""
    building = state["queue"][:1] == [seat]
    leave_queue(state, seat)
    if building:
        begin_turn(state, rules, events)


def finish(state: State, rules: Rules, events: list[Event]) -> None:
    state["build"] = None


def end_turn(state: State, rules: Rules, events: list[Event], net: Network | None = None) -> None:
    net = rules.network(state) if net is None else net
    close_turn(state, rules, events, net)
    begin_turn(state, rules, events, net)


def close_turn(state: State, rules: Rules, events: list[Event], net: Network | None = None) -> None:
    net = rules.network(state) if net is None else net
    expire_unextended(BuildContext(state, rules, open_build_turn(state)["seat"], net), events)
    state["queue"].pop(0)


def incomplete_routes(state: State, rules: Rules, seat: int, net: Network | None = None) -> list[list]:
    net = rules.network(state) if net is None else net
    return [
        [[key(p[0]), p[1], p[2]] for p in r.pieces]
        for r in net.routes()
        if r.owner == seat and not r.complete
    ]


# A redirect is stored in the build sub-state as {"q,r|a|b": ["q,r", a, b]} (old piece -> new
# piece). The form is kept as it is because saved states and replays hold it byte for byte;
# these two functions are the only places that read or write it.

def store_redirect(build: BuildTurn, old: Piece, new: Piece) -> None:
    build["redirected"][f"{key(old[0])}|{old[1]}|{old[2]}"] = [key(new[0]), new[1], new[2]]


def redirects(build: BuildTurn) -> dict[Piece, Piece]:
    """The redirects of this build turn, as pieces: old piece -> the piece it became."""
    out = {}
    for k, (nk, na, nb) in build["redirected"].items():
        hk, a, b = k.split("|")
        out[(parse_key(hk), int(a), int(b))] = (parse_key(nk), na, nb)
    return out


def expire_unextended(ctx: BuildContext, events: list[Event]) -> None:
    """Incomplete track owned at the start of this turn and not extended during it goes unowned."""
    build = open_build_turn(ctx.state)
    seat, net = build["seat"], ctx.net
    extended = {(parse_key(k), a, b) for k, a, b in build["extended"]}
    redirected = redirects(build)
    for pieces in build["incomplete_at_start"]:
        alive = []
        for k, a, b in pieces:
            was: Piece = (parse_key(k), a, b)
            p = was if was in net.owner else redirected.get(was)
            if p is not None and p in net.owner:
                alive.append(p)
        if not alive:
            continue
        route = net.route_through(alive[0])
        if route.complete or route.owner != seat or any(p in extended for p in route.pieces):
            continue
        ctx.set_route_owner(route, None)
        events.append({"type": "track_unowned", "seat": seat,
                       "hexes": [as_dict(h) for h in route.hexes()]})


# -- legality --------------------------------------------------------------------------------

@dataclass
class BuildPlan:
    hex: Hex
    town: bool
    pieces: dict[Piece, int | None]  # what the hex holds afterwards, with owners
    added: list[Piece]
    redirect: tuple[Piece, Piece] | None  # (old piece, new piece)
    tile: str
    old_tile: str | None
    disk_delta: int  # town disks taken (+1) or returned (-1)
    cost: int

    def as_move(self) -> BuildMove:
        move: BuildMove = {"type": "build", "hex": as_dict(self.hex)}
        if self.town:
            move["town_exits"] = sorted(p[1] for p in self.pieces)
        else:
            move["tracks"] = sorted([p[1], p[2]] for p in self.pieces)
        move["cost"] = self.cost
        return move


# Per hex, per edge: the neighbour, what lies there whatever the state ("off" the map, a
# "city" of the map, "closed": impassable unless it becomes a stop; None: the state decides),
# and the key of the track end that would face the edge from across it.
EdgeRow = tuple[tuple[Hex, EdgeStatus | None, tuple[Hex, int]], ...]


@dataclass(frozen=True)
class HexEdges:
    """A hex's edges as the map alone tells them (worked out once per map, _edge_table): its
    EdgeRow, and its statuses where nothing the state holds comes into it (an edge the state
    decides taken as "free", a closed one as "closed")."""

    row: EdgeRow
    settled: Status


def edge_statuses(state: State, rules: Rules, net: Network, seat: int, h: Hex,
                  table: dict[Hex, HexEdges] | None = None,
                  closable_hexes: frozenset[Hex] | None = None, memo: dict | None = None) -> Status:
    """What lies across each edge of h, as the builder of seat sees it: off, closed, city,
    free, own, unowned (whose route runs back to a city or a town where seat has track),
    stranded (other unowned track) or opponent. `table` and `closable_hexes` are the map's, when
    the caller keeps them (_edge_table, _closable_table), and `memo` the walks of an unchanged
    network (BuildContext.walks)."""
    edges = (table.get(h) if table is not None else None) or _hex_edges(rules.map, h)
    closable_hexes = _closable_table(rules) if closable_hexes is None else closable_hexes
    # The hook is asked only about the edges the map may ever close (none on a map that keeps
    # the base hook).
    closable = rules.closable_edges(h) if h in closable_hexes else NO_EDGES
    return _statuses_by_edge(state, rules, net, seat, h, edges.row, closable, memo)


class TrackAround:
    """What the state's track brings to the hexes around it, by rank (ListingMap), as the
    listing reads it (_track_around): the hexes it is on or faces and those next to a stop made
    (`faced`), the statuses that its ends and the stops made give the hexes they face (as
    lists, from HexEdges.settled: `changed`), and each hex's track and town exits as the state
    holds them ([a, b, owner], [e, owner]: `tracks`, `exits`)."""

    __slots__ = ("map", "faced", "changed", "tracks", "exits", "cities")

    def __init__(self, lm: ListingMap) -> None:
        self.map = lm
        self.faced: set[int] = set()
        self.changed: dict[int, list[EdgeStatus]] = {}
        self.tracks: dict[int, list] = {}
        self.exits: dict[int, list] = {}
        self.cities: frozenset[int] = NOTHING  # the network's cities (ListingMap.stop_ranks)


def _track_around(state: State, lm: ListingMap, net: Network, seat: int, stops: Collection[Hex],
                  memo: dict | None) -> TrackAround:
    """The TrackAround of the state (`net` its network, `stops` stops_made(net)), looked for
    from the state's side, the stops made and the track ends (a few dozen), rather than from
    the hexes' (some 300 edges, most of them leading to an empty hex). The track is read by the
    keys the state holds it by (ListingMap.key_ranks), whole numbers from there on, where the
    network's indexes hash a pair (a hex, an edge) at every lookup."""
    out = TrackAround(lm)
    faced, changed, edges, rank = out.faced, out.changed, lm.edges, lm.rank
    # A stop made where the map has none (a new city, a map's trackless stop): a city across
    # each edge toward it, closed or not.
    for c in stops:
        for edge_of_c, h in enumerate(around(c)):
            n = rank.get(h)
            if n is None:
                continue
            faced.add(n)
            edge = (edge_of_c + 3) % 6
            if edges[n].row[edge][1] in (None, "closed"):
                statuses = changed.get(n)
                if statuses is None:
                    statuses = changed[n] = list(edges[n].settled)
                statuses[edge] = "city"
    # The track ends, each with the hex it faces; those off a stop, facing across an edge the
    # map neither settles nor closes a hex where track may be laid, are kept for their
    # statuses (`opened`: the hex faced, its edge, the owner, and the end as the state holds
    # it: its hex's rank, its edge, its piece).
    cities = out.cities = lm.stop_ranks(stops)
    key_ranks, facing = lm.key_ranks, lm.facing
    opened: list[tuple[int, int, int | None, int, int, list]] = []
    for k, pieces in state["track"].items():
        if pieces:
            at = key_ranks[k]
            out.tracks[at] = pieces
            faced.add(at)
            row, off_stop = facing[at], at not in cities
            for piece in pieces:  # its two ends written out: no loop over a pair made for it
                a, b, owner = piece
                n, edge, may_change = row[a]
                faced.add(n)
                if may_change and off_stop:
                    opened.append((n, edge, owner, at, a, piece))
                n, edge, may_change = row[b]
                faced.add(n)
                if may_change and off_stop:
                    opened.append((n, edge, owner, at, b, piece))
    # The towns' exits as the track above, one end a piece. Written out, not shared with the
    # loop above: merged (a town's piece as a track's with one end) it cost a cold listing
    # 14 k instructions more (count_cold --split --played, 616d840's round).
    for k, exits in state["towns"].items():
        if exits:
            at = key_ranks[k]
            out.exits[at] = exits
            faced.add(at)
            row, off_stop = facing[at], at not in cities
            for piece in exits:
                e, owner = piece
                n, edge, may_change = row[e]
                faced.add(n)
                if may_change and off_stop:
                    opened.append((n, edge, owner, at, e, piece))
    for n, edge, owner, at, e, piece in opened:
        statuses = changed.get(n)
        if statuses is None:
            statuses = changed[n] = list(edges[n].settled)
        statuses[edge] = ("own" if owner == seat else "opponent" if owner is not None
                          else "unowned" if _runs_home_from(net, seat, lm, out, n, edge, at, e,
                                                            piece, memo)
                          else "stranded")
    return out


def edge_statuses_of(state: State, rules: Rules, net: Network, seat: int, ranks: Collection[int],
                     closable_hexes: frozenset[Hex], track: TrackAround,
                     memo: dict | None = None) -> dict[int, Status]:
    """edge_statuses of those hexes of the map, by rank (ListingMap), whose statuses the state
    changes (the others' are their HexEdges.settled), in one go: the listing asks it of every
    candidate hex (`ranks`). What the track and the stops made change is `track`'s
    (_track_around), taken whole, by C loops: it may name hexes besides `ranks`, which nobody
    asks about."""
    changed = track.changed
    found: dict[int, Status] = dict(zip(changed, map(tuple, changed.values()), strict=True))
    # The hook is asked only about the hexes with an edge the map may ever close (none on a
    # map that keeps the base hook); what it closes comes before what the track changes.
    if closable_hexes:
        lm = _listing_map(rules.map)
        for r in ranks:
            h = lm.hexes[r]
            closable = rules.closable_edges(h) if h in closable_hexes else NO_EDGES
            if closable:
                found[r] = _statuses_by_edge(state, rules, net, seat, h, lm.edges[r].row,
                                             closable, memo)
    return found


def _statuses_by_edge(state: State, rules: Rules, net: Network, seat: int, h: Hex, row: EdgeRow,
                      closable: tuple[int, ...], memo: dict | None) -> Status:
    """edge_statuses of one hex, edge by edge (`closable`: the edges the map may close)."""
    cities, ends, owners = net.cities, net.end_index, net.owner
    out: list[EdgeStatus] = []
    for edge, (n, known, facing) in enumerate(row):
        if known != "off" and edge in closable and rules.edge_closed(state, seat, h, edge):
            out.append("closed")
        elif known is None or known == "closed":  # a stop may be made there, or track lead
            if n in cities:
                out.append("city")
            elif known is not None:
                out.append(known)
            else:
                p = ends.get(facing)
                if p is None:
                    out.append("free")
                else:
                    owner = owners[p]
                    out.append("own" if owner == seat else "opponent" if owner is not None
                               else "unowned" if runs_home(net, seat, h, edge, memo)
                               else "stranded")
        else:  # off the map, or a city of the map
            out.append(known)
    return tuple(out)


def stops_made(net: Network) -> Collection[Hex]:
    """The stops of the network that the map does not have: new cities, a map's trackless
    stops. The network's cities are the map's and these (none when they are as many)."""
    cities, of_map = net.cities, net.map.cities
    return cities - of_map.keys() if len(cities) != len(of_map) else NOTHING


def runs_home(net: Network, seat: int, h: Hex, edge: int, memo: dict | None = None) -> bool:
    """Whether the track beyond h's edge runs back to a city, or to a town where seat has
    track: what makes an unowned track end a connection (seed 000, rule 5: later construction
    must ultimately reach a city through that player's track)."""
    end = net.far_end(h, edge, memo)
    if end.kind != "stop":
        return False
    return end.hex in net.cities or _holds_track_of(net, seat, end.hex)


def _holds_track_of(net: Network, seat: int, h: Hex) -> bool:
    """Whether seat owns a piece on hex h (a loop, not any() over a generator: the listing asks
    it of a few track ends each time)."""
    owner = net.owner
    for p in net.pieces_on(h):  # noqa: SIM110
        if owner[p] == seat:
            return True
    return False


def _runs_home_from(net: Network, seat: int, lm: ListingMap, track: TrackAround, n: int,
                    edge: int, at: int, entry: int, piece: list, memo: dict | None) -> bool:
    """runs_home(net, seat, lm.hexes[n], edge, memo), where the track beyond the edge of the
    hex of rank n is `piece` as the state holds it ([a, b, owner], or [e, owner] on a town) on
    the hex of rank `at`, no stop (_track_around asks of no other), whose edge `entry` faces
    n: most such track is one piece long (a stub toward a city or a town), told here from the
    piece and what lies beyond its other end, as `track` has the state's track by rank,
    without a walk (Network.walk's steps, in its order); longer track is walked (runs_home)."""
    if at in lm.towns:  # the piece enters the town: a stop
        return _holds_exit_of(track.exits.get(at, []), seat)
    out = piece[1] if piece[0] == entry else piece[0]
    beyond, facing, _ = lm.facing[at][out]
    if beyond in track.cities:
        return True
    if beyond in lm.towns:
        exits = track.exits.get(beyond)
        return exits is not None and _has_exit(exits, facing) and _holds_exit_of(exits, seat)
    tracks = track.tracks.get(beyond)
    if tracks is None or not _has_end(tracks, facing):  # open
        return False
    return runs_home(net, seat, lm.hexes[n], edge, memo)


def _has_exit(exits: list, edge: int) -> bool:
    """Whether a town's exits as the state holds them ([e, owner]) leave through `edge`."""
    for e, _ in exits:  # noqa: SIM110
        if e == edge:
            return True
    return False


def _has_end(tracks: list, edge: int) -> bool:
    """Whether a hex's track as the state holds it ([a, b, owner]) ends at `edge`."""
    for a, b, _ in tracks:  # noqa: SIM110
        if a == edge or b == edge:
            return True
    return False


@once_per
def _edge_table(board) -> dict[Hex, HexEdges]:
    """The HexEdges of every hex of the map, worked out once per map."""
    return {h: _hex_edges(board, h) for h in board.terrain}


def _hex_edges(board, h: Hex) -> HexEdges:
    impassable = _impassable(board)
    row: EdgeRow = tuple((n, "off" if n not in board.terrain else "city" if n in board.cities
                          else "closed" if n in impassable else None, (n, (edge + 3) % 6))
                         for edge, n in enumerate(around(h)))
    settled: Status = tuple(known or "free" for _, known, _ in row)
    return HexEdges(row, settled)


@once_per
def _closable_table(rules: Rules) -> frozenset[Hex]:
    """The hexes with an edge the map's edge_closed may close (none on a map that keeps the
    base hook), from closable_edges, which reads the map's data alone: once per rules."""
    if type(rules).edge_closed is BaseRules.edge_closed:
        return frozenset()
    return frozenset(h for h in rules.map.terrain if rules.closable_edges(h))


@once_per
def _impassable(board) -> frozenset[Hex]:
    """Hexes no track enters: terrain without a build cost, unless a town is there (a city
    is judged before this). Depends on the map alone, so it is worked out once per map."""
    return frozenset(h for h, t in board.terrain.items()
                     if h not in board.towns and board.terrain_costs.get(t) is None)


@once_per
def _passable(board) -> frozenset[Hex]:
    """The hexes of the map that are not impassable: once per map."""
    return frozenset(board.terrain.keys() - _impassable(board))


def parse_build(move: GivenMove) -> tuple[Hex, frozenset | None, frozenset | None]:
    expect_type(move, "build")
    h = hex_field(move, "hex")
    tracks = move.get("tracks")
    exits = move.get("town_exits")
    if (tracks is None) == (exits is None):
        raise IllegalMove("BAD_MOVE", "a build names either tracks or town_exits")
    if tracks is not None:
        if not isinstance(tracks, list) or not tracks:
            raise IllegalMove("BAD_MOVE", "tracks must be a non-empty list of edge pairs")
        out = set()
        for t in tracks:
            if (not isinstance(t, list) or len(t) != 2
                    or not all(isinstance(e, int) and not isinstance(e, bool) and 0 <= e <= 5 for e in t)
                    or t[0] == t[1]):
                raise IllegalMove("BAD_MOVE", "each track is a pair of different edges 0-5")
            out.add(T.norm(t[0], t[1]))
        edges = [e for t in out for e in t]
        if len(edges) != len(set(edges)) or len(out) != len(tracks):
            raise IllegalMove("TILE_UNKNOWN", "two tracks on one tile never share an edge")
        return h, frozenset(out), None
    if not isinstance(exits, list) or not exits or not all(
            isinstance(e, int) and not isinstance(e, bool) and 0 <= e <= 5 for e in exits):
        raise IllegalMove("BAD_MOVE", "town_exits must be a non-empty list of edges 0-5")
    if len(set(exits)) != len(exits):
        raise IllegalMove("BAD_MOVE", "town_exits lists an edge twice")
    return h, None, frozenset(exits)


def check_turn(state: State, rules: Rules, seat: int, h: Hex) -> None:
    build = open_build_turn(state)
    if build["tiles_left"] <= 0:
        raise IllegalMove("NO_TILES_LEFT")
    if not rules.map.on_map(h):
        raise IllegalMove("OFF_MAP", f"{h} is not on the map", hex=as_dict(h))
    if key(h) in build["built"]:
        raise IllegalMove("HEX_ALREADY_BUILT", hex=as_dict(h))


def hex_buildable(state: State, rules: Rules, net: Network, h: Hex) -> bool:
    # candidate_hexes applies these same three rules inline.
    if h in net.cities:
        return False
    if h in _impassable(rules.map):
        return False
    return not rules.hex_closed(state, h)


def plan_build(state: State, rules: Rules, net: Network, seat: int, h: Hex,
               tracks: frozenset | None, exits: frozenset | None) -> BuildPlan:
    """Checks one build against every rule and prices it; raises IllegalMove naming the rule."""
    ctx = BuildContext(state, rules, seat, net)
    check_hex(state, rules, net, seat, h)
    return plan_shape(ctx, ctx.site(h), tracks, exits)


def check_hex(state: State, rules: Rules, net: Network, seat: int, h: Hex) -> None:
    """The rules about the hex itself and the turn, whatever is built there."""
    check_turn(state, rules, seat, h)
    if not hex_buildable(state, rules, net, h):
        raise IllegalMove("NOT_BUILDABLE", f"no track may be built on {h}", hex=as_dict(h))


def plan_shape(ctx: BuildContext, site: Site, tracks: frozenset | None,
               exits: frozenset | None) -> BuildPlan:
    """The rules about what is built on a hex that check_hex accepted."""
    h, old, seat = site.hex, site.old, ctx.seat
    is_town = h in ctx.net.towns
    if is_town != (exits is not None):
        raise IllegalMove("TOWN_NEEDS_TOWN_TRACK", hex=as_dict(h))
    owns = ctx.net.owns_track(seat)
    if exits is not None:
        mine = any(o == seat for o in old.values())
        geo: Geometry = S.judge_town(exits, frozenset(p[1] for p in old), mine, site.status,
                                     owns, h)
    else:
        assert tracks is not None
        geo = S.judge_track(tracks, frozenset((p[1], p[2]) for p in old),
                            _turnable(old, seat), site.status, owns, h)
    cost, tile, disk_delta = price(ctx, site, geo)
    pieces = hex_pieces(h, geo, old, seat)
    if isinstance(geo, S.TownGeometry):
        return BuildPlan(h, True, pieces, [(h, e, CENTRE) for e in geo.fresh], None, tile,
                         site.old_tile, disk_delta, cost)
    if geo.redirect_from is not None:
        a, b = geo.redirect_from
        redirect = ((h, a, b), (h, *geo.fresh[0]))
        return BuildPlan(h, False, pieces, [], redirect, tile, site.old_tile, 0, cost)
    return BuildPlan(h, False, pieces, [(h, a, b) for a, b in geo.fresh], None, tile,
                     site.old_tile, 0, cost)


def _turnable(old: dict[Piece, int | None], seat: int) -> frozenset[T.Track]:
    return frozenset([(p[1], p[2]) for p, o in old.items() if o is None or o == seat])


def hex_pieces(h: Hex, geo: Geometry, old: dict[Piece, int | None],
               seat: int) -> dict[Piece, int | None]:
    """What the hex holds after the build, with owners: the kept track keeps its owner, and
    fresh track (a redirected one too, which may be unowned before) is the builder's, so the
    route it joins never mixes owners."""
    if isinstance(geo, S.TownGeometry):
        pieces = dict(old)
        for e in geo.fresh:
            pieces[(h, e, CENTRE)] = seat
        return pieces
    pieces = {p: o for p, o in old.items() if (p[1], p[2]) != geo.redirect_from}
    for a, b in geo.fresh:
        pieces[(h, a, b)] = seat
    return pieces


def price(ctx: BuildContext, site: Site, geo: Geometry) -> tuple[int, str, int]:
    """The rules that depend on the rest of the state: a tile in supply, no loop, the cost and
    the cash to pay it. Returns (cost, tile, town disks taken); raises the IllegalMove of the
    first rule broken, on this hex."""
    out = judge_price(ctx, site, geo)
    if isinstance(out, S.Refusal):
        raise S.refused(out, site.hex)
    return out


def judge_price(ctx: BuildContext, site: Site, geo: Geometry) -> tuple[int, str, int] | S.Refusal:
    """price, with a refusal as a value: the listing tries every shape on every hex, and a
    player short of cash would have hundreds raised and caught per listing."""
    state, old_tile = ctx.state, site.old_tile
    supply = state["supply"]
    if isinstance(geo, S.TownGeometry):
        tile, disk_delta = _town_tile(geo, site, lambda t: tile_left(supply, old_tile, t))
        cost = geo.base_cost
    else:
        tile, disk_delta, cost = geo.tile, 0, _track_cost(ctx, site.hex, site.old_tile, geo)
    if not tile_left(supply, old_tile, tile):
        return S.Refusal("TILE_UNAVAILABLE", f"no {tile} tile is left", tile=tile)
    if disk_delta > 0 and supply[T.DISK] <= 0:
        return S.Refusal("TOWN_DISKS_EXHAUSTED")
    if geo.joined and _closes_loop(ctx.net, site.hex, geo,
                                   hex_pieces(site.hex, geo, site.old, ctx.seat), ctx.walks):
        return S.Refusal("LOOP")
    cost += ctx.extra
    cash = state["players"][ctx.seat]["cash"]
    if cost > cash:
        return S.Refusal("INSUFFICIENT_CASH", f"the build costs ${cost}, cash is ${cash}",
                         need=cost, have=cash)
    return cost, tile, disk_delta


def tile_left(supply: dict[str, int], old_tile: str | None, tile: str) -> bool:
    """A tile to build with: one in the supply, or the one the hex holds (a replaced tile goes
    back to the supply as the new one is taken)."""
    return supply.get(tile, 0) > 0 or tile == old_tile


def _town_tile(geo: S.TownGeometry, site: Site, left: Callable[[str], bool]) -> tuple[str, int]:
    """The tile a town build takes (the first of its shape's makers that is left) and the
    town disks it takes (+1) or gives back (-1)."""
    shape, old_tile = geo.shape, site.old_tile
    tile = next((t for t in shape.tiles if left(t)), shape.tiles[0])
    old_disk = (1 if old_tile and T.TOWN_SHAPES[frozenset(p[1] for p in site.old)].uses_disk
                else 0)
    return tile, int(shape.uses_disk) - old_disk


def _track_cost(ctx: BuildContext, h: Hex, old_tile: str | None, geo: S.TrackGeometry) -> int:
    """What a track tile costs on hex h, holding old_tile: a redirect, an upgrade or a new tile
    (the same for every shape of one kind of build, geo.pricing)."""
    state, rules = ctx.state, ctx.rules
    b = R.BUILD_COSTS
    if geo.redirect_from is not None:
        return rules.replace_cost(state, h, b["redirect"])
    if geo.upgrade:
        assert old_tile is not None  # track on the hex came with its tile
        base = (b["upgrade_to_crossing_from_simple"]
                if geo.kind == "crossing" and T.TILE_KIND[old_tile] == "simple"
                else b["upgrade_other"])
        return rules.replace_cost(state, h, base)
    return rules.new_tile_cost(state, h, geo.kind)


def _closes_loop(net: Network, h: Hex, geo: Geometry, pieces: dict[Piece, int | None],
                 memo: dict | None) -> bool:
    """A new track closes a loop only if both its ends join something (geo.joined); only those
    are traced, on the network as it would be, without editing it."""
    through = [(h, j, CENTRE) if isinstance(j, int) else (h, *j) for j in geo.joined]
    return net.closes_loop(h, list(pieces), through, memo)


def _closes_loop_listed(ctx: BuildContext, track: TrackAround, r: int, h: Hex,
                        old: dict[Piece, int | None], geo: Geometry) -> bool:
    """_closes_loop, for the listing, on hex h (of rank r, `track` the listing's TrackAround)
    holding `old`: where the track beyond each joined end is known not to come back to the hex
    (net.end_beyond), the verdict needs no walk with the new pieces, and is the same for every
    shape that joins the same tracks (kept)."""
    known = ctx.loops.get((h, geo.joined), _UNKNOWN)
    if known is _UNKNOWN:
        known = ctx.loops[(h, geo.joined)] = _loop_beyond(ctx.net, track, r, h, geo.joined,
                                                          ctx.walks)
    if known is not None:
        return known
    return _closes_loop(ctx.net, h, geo, hex_pieces(h, geo, old, ctx.seat), ctx.walks)


_UNKNOWN = object()


def _loop_beyond(net: Network, track: TrackAround, r: int, h: Hex, joined: tuple,
                 memo: dict) -> bool | None:
    """Whether the `joined` tracks (or town exits) built on h (of rank r) close a loop, as the
    track beyond their ends tells (net.end_beyond); None when that track comes back to h, and
    only a walk with the new pieces can tell."""
    for j in joined:
        if isinstance(j, int):  # a town exit: its route starts at the town on h
            end = _beyond(net, track, r, h, j, memo)
            if end is None:
                return None
            if end is _CYCLE:
                return True
            continue
        first, second = _beyond(net, track, r, h, j[0], memo), _beyond(net, track, r, h, j[1], memo)
        if first is None or second is None:
            return None
        if first is _CYCLE or second is _CYCLE or (first == second and first is not _OPEN):
            return True
    return False


_OPEN, _CYCLE, _UNSURE = object(), object(), object()


def _beyond(net: Network, track: TrackAround, r: int, h: Hex, edge: int,
            memo: dict) -> int | Hex | object | None:
    """net.end_beyond(h, edge, memo) as _loop_beyond reads it: the stop (its rank), _OPEN,
    _CYCLE, or None (the track comes back to h), h of rank r. Track of at most two pieces
    before its end (most of what a listing asks about: a city across the edge, a stub) is told
    from the state's track by rank (`track`, the listing's TrackAround), as Network.walk steps
    through it, without the network's indexes (UnindexedNetwork: most listings never make
    them); longer track, or track the state holds as no tile does, is walked (end_beyond)."""
    # The two steps are written out, not a helper called twice: the call cost 12 k instructions
    # a cold listing (count_cold --seeds 1: legal.body 0.978 -> 0.990 M).
    lm, cities = track.map, track.cities
    n, entry, _ = lm.facing[r][edge]
    if n in cities:
        return n
    if n in lm.towns:
        return n if _ends_at(track, n, entry) else _OPEN
    piece = _piece_at(track, n, entry)
    if piece is None:
        return _OPEN
    if isinstance(piece, list):  # one track ends there
        out = piece[1] if piece[0] == entry else piece[0]
        beyond, facing, _ = lm.facing[n][out]
        if beyond != r:
            if beyond in cities:
                return beyond
            if beyond in lm.towns:
                return beyond if _ends_at(track, beyond, facing) else _OPEN
            if not _ends_at(track, beyond, facing):
                return _OPEN
    end = net.end_beyond(h, edge, memo)
    if end is None:
        return None
    return (lm.rank.get(end.hex, end.hex) if end.kind == "stop"
            else _CYCLE if end.kind == "cycle" else _OPEN)


def _ends_at(track: TrackAround, n: int, edge: int) -> bool:
    """Whether a piece of the state's track on the hex of rank n ends at its edge (a track's end
    or a town's exit): whether the network's end_index holds (that hex, edge)."""
    exits = track.exits.get(n)
    if exits is not None and _has_exit(exits, edge):
        return True
    tracks = track.tracks.get(n)
    return tracks is not None and _has_end(tracks, edge)


def _piece_at(track: TrackAround, n: int, edge: int) -> list | object | None:
    """The track ([a, b, owner]) on the hex of rank n, no stop, that ends at its edge, as the
    state holds it; None where none does, and _UNSURE where the state holds that hex's track as
    no tile does (town exits off a town, two tracks at one edge), which only the network's
    end_index tells as a walk reads it."""
    if n in track.exits:
        return _UNSURE
    tracks = track.tracks.get(n)
    if tracks is None:
        return None
    found = None
    for piece in tracks:
        if piece[0] == edge or piece[1] == edge:
            if found is not None:
                return _UNSURE
            found = piece
    return found


# -- urbanization ------------------------------------------------------------------------------

def check_urbanize(state: State, rules: Rules, seat: int, move: GivenMove, net: Network) -> tuple[Hex, str]:
    expect_type(move, "urbanize")
    h = hex_field(move, "hex")
    letter = move.get("new_city")
    if not rules.may_urbanize(state, seat):
        raise IllegalMove("URBANIZE_NOT_HOLDER")
    build = open_build_turn(state)
    if build["urbanized"] or build["built"]:
        raise IllegalMove("URBANIZE_ALREADY")
    if h not in net.towns:
        raise IllegalMove("URBANIZE_NOT_TOWN", f"{h} is not a town", hex=as_dict(h))
    if letter not in rules.new_city_letters() or letter in state["new_cities"].values():
        raise IllegalMove("NEW_CITY_UNAVAILABLE", f"new city {letter!r} cannot be placed")
    return h, letter


def apply_urbanize(ctx: BuildContext, h: Hex, letter: str, events: list[Event]) -> None:
    state, net, seat = ctx.state, ctx.net, ctx.seat
    waiting = [r for r in net.routes()
               if not r.complete and r.owner is None
               and any(e.kind == "open" and neighbour(e.hex, e.edge) == h for e in r.ends)]
    k = key(h)
    old_tile = state["tiles"].pop(k, None)
    if old_tile:
        exits = frozenset(e for e, _ in state["towns"][k])
        state["supply"][old_tile] += 1
        if T.TOWN_SHAPES[exits].uses_disk:
            state["supply"][T.DISK] += 1
    ctx.urbanize(h, letter)
    state["cubes"].setdefault(k, [])
    open_build_turn(state)["urbanized"] = True
    colour = ctx.rules.map.new_city_tiles[letter].color
    events.append({"type": "city_urbanized", "seat": seat, "hex": as_dict(h), "new_city": letter,
                   "color": colour})
    for r in waiting:
        live = [p for p in r.pieces if p in net.owner]
        if live:
            now = net.route_through(live[0])
            if now.complete:
                ctx.set_route_owner(now, seat)
                events.append({"type": "track_claimed", "seat": seat,
                               "hexes": [as_dict(x) for x in now.hexes()]})


# -- enumeration ------------------------------------------------------------------------------

def candidate_hexes(state: State, rules: Rules, net: Network) -> list[Hex]:
    """Every hex where a build could connect (next to a city, on track, or next to track) and
    that check_hex accepts, but for the tiles left."""
    board = rules.map
    found = set(_next_to_cities(board))
    for c in net.cities - board.cities.keys():  # new cities, a map's trackless stops
        found.update(around(c))
    found.update([h for h, on_hex in net.by_hex.items() if on_hex])
    facing = _facing_table(board)
    found.update([facing[end][0] for end in net.end_index])
    found &= _passable(board)
    found -= {parse_key(k) for k in open_build_turn(state)["built"]}
    found -= net.cities
    # A map that keeps the base hook closes no hex: skip asking it once per hex.
    if type(rules).hex_closed is not BaseRules.hex_closed:
        found = {h for h in found if not rules.hex_closed(state, h)}
    return sorted(found, key=_rank_table(board).__getitem__)


@once_per
def _next_to_cities(board) -> frozenset[Hex]:
    """The hexes next to a city of the map: once per map."""
    return frozenset(n for c in board.cities for n in around(c))


@once_per
def _rank_table(board) -> dict[Hex, int]:
    """Each hex of the map by its place in the hexes' order (q, then r), which sorts the
    candidates on whole numbers rather than pairs: once per map."""
    return {h: i for i, h in enumerate(sorted(board.terrain))}


# Per track end of a hex of the map (the hex, its edge): the hex it faces, the edge of that hex
# it faces, and what lies across that edge whatever the state (HexEdges; "off" when the hex
# faced is off the map).
Facing = tuple[Hex, int, EdgeStatus | None]


@once_per
def _facing_table(board) -> dict[tuple[Hex, int], Facing]:
    """The Facing of every edge of every hex of the map: once per map."""
    table = _edge_table(board)
    facing: dict[tuple[Hex, int], Facing] = {}
    for t in board.terrain:
        for e, n in enumerate(around(t)):
            edge = (e + 3) % 6
            facing[(t, e)] = (n, edge, table[n].row[edge][1] if n in table else "off")
    return facing


# A Facing by rank (ListingMap): the rank of the hex faced (-1 off the map), the edge of it
# faced, and whether a track end there may change that hex's statuses (_track_around): what
# lies across the edge is left to the state (the end's hex is no city of the map, not closed)
# and the hex faced is one where track may be laid (passable, no city of the map).
RankFacing = tuple[int, int, bool]


class ListingMap:
    """The map as the listing reads it, its hexes by rank (_rank_table): worked out once per
    map (_listing_map) and fetched once per listing. Whole numbers hash as themselves, where a
    hex, a pair, is hashed again at every lookup (tuples keep no hash); the state's keys
    ("q,r") are looked up as they are (strings keep theirs), not parsed into hexes."""

    __slots__ = ("rank", "hexes", "keys", "key_ranks", "edges", "facing", "passable", "near",
                 "near_towns", "towns", "cities")

    def __init__(self, board) -> None:
        rank = self.rank = _rank_table(board)
        hexes = self.hexes = _by_rank(board)
        self.keys = tuple([key(h) for h in hexes])  # each hex's key in the state
        self.key_ranks = {k: r for r, k in enumerate(self.keys)}
        table = _edge_table(board)
        self.edges = tuple([table[h] for h in hexes])  # HexEdges
        facing, passable = _facing_table(board), _passable(board)
        self.facing: tuple[tuple[RankFacing, ...], ...] = tuple([
            tuple([(rank.get(n, -1), edge,
                    known is None and n in passable and n not in board.cities)
                   for n, edge, known in (facing[(h, e)] for e in range(6))])
            for h in hexes])
        self.passable = frozenset(rank[h] for h in passable)
        # The hexes next to a city of the map where track may be laid (passable, not a city
        # of the map), as _split_candidates lists them: the towns among them apart.
        near = [h for h in _next_to_cities(board) if h in passable and h not in board.cities]
        self.near = frozenset(rank[h] for h in near if h not in board.towns)
        self.near_towns = frozenset(rank[h] for h in near if h in board.towns)
        self.towns = frozenset(rank[h] for h in board.towns if h in rank)
        self.cities = frozenset(rank[c] for c in board.cities if c in rank)

    def stop_ranks(self, stops: Collection[Hex]) -> frozenset[int]:
        """The ranks of a network's cities on the map: the map's, and the stops made
        (stops_made)."""
        if not stops:
            return self.cities
        return self.cities.union([self.rank[c] for c in stops if c in self.rank])


@once_per
def _listing_map(board) -> ListingMap:
    """The ListingMap of a map: once per map."""
    return ListingMap(board)


# What words give a hex's builds, as pieces of their JSON: the head (up to the tracks or the
# exits), where the hex is, per shape of its listing (what it makes up to the cost, the words
# before where, the words after) and per price (None: not priced) the cost up to the words and
# the price to the end. A build is head + made + cost + a + where + b + price, with the
# builder's name left out (BuildWords.joined puts it in).
HexWords = tuple[str, str, Sequence[tuple[str, str, str]], Sequence[tuple[str, str] | None]]


class HexBuilds(NamedTuple):
    """A hex's builds as words make them (BuildWords.kept), for one situation of the hex: the
    listing of its surrounding (held, so that its id in the key is never another's), every
    build's text joined into one (UTF-8), and, when some shape needs a loop check, every
    build's text with its geometry (None: no loop check) and the distinct tracks their shapes
    join (geo.joined): where none of those closes a loop, the joined text is listed whole."""

    listing: Any  # not `object`: mypyc looks the annotations up in the module
    joined: bytes
    checked: tuple[tuple[bytes, Geometry | None], ...] | None
    joins: tuple[tuple, ...]


# A hex's builds where it has none (no shape, or none within the budget): nothing made, no
# words, nothing kept.
NO_BUILDS = HexBuilds(None, b"", None, ())


class BuildWords(Protocol):
    """The builds of a listing made to be answered (words.ListedBuilds, words.listing), as JSON
    text with their words: a hex's builds are made once per situation of the hex (what it
    holds, what lies around it, what each kind of build costs there, the tiles left) and kept
    for every listing of the map that meets it again (`kept`); a listing then only checks
    loops and joins texts (the hot loop: no dict to make and serialize, no string per move)."""

    def kept(self, *context: object) -> dict[Any, HexBuilds]:
        """The hexes' builds kept for this map and `context` (the tiles left, and what else
        the listing shares), by the rest of their situation."""
        ...

    def track_words(self, h: Hex, old_tracks: frozenset[T.Track], listing: S.TrackListing,
                    costs: Sequence[int | None]) -> HexWords:
        """The pieces of a track hex's builds, a price per kind of build (None: not priced)."""
        ...

    def town_words(self, h: Hex, old_exits: frozenset[int], listing: S.TownListing,
                   extra: int) -> HexWords:
        """The pieces of a town's builds, a price per set of exits with the surcharge `extra`."""
        ...

    def joined(self, texts: list[bytes]) -> Any:
        """The listing's builds, the JSON texts `texts` (UTF-8) made from HexWords, as one JSON value
        of as many moves (orjson.Fragment) with the builder's name put in."""
        ...

    def word(self, moves: list[Move]) -> None:
        """Gives each of `moves`, the turn's moves but the builds and urbanizations, its
        text."""
        ...

    def urbanizing(self, letters: tuple[str, ...], towns: tuple[Hex, ...]) -> Any:
        """The urbanize moves of these new cities (in order) on these towns (in order, for
        each letter), with their texts, as one JSON value of as many moves (orjson.Fragment)."""
        ...


def legal(state: State, rules: Rules, seat: int, words: BuildWords | None = None) -> list[Move]:
    """The build turn's moves; with `words`, each has its text and each build is its JSON
    (words.listing)."""
    ctx = BuildContext(state, rules, seat, rules.network(state, unindexed=True))
    net = ctx.net
    build = open_build_turn(state)
    moves: list[Move] = []
    if rules.may_urbanize(state, seat) and not build["urbanized"] and not build["built"]:
        placed = set(state["new_cities"].values())
        letters = tuple([letter for letter in rules.new_city_letters() if letter not in placed])
        towns = tuple(sorted(net.towns))
        if words is not None:
            if letters and towns:
                moves.append(words.urbanizing(letters, towns))
        else:
            for letter in letters:
                moves.extend({"type": "urbanize", "hex": as_dict(h), "new_city": letter}
                             for h in towns)
    urbanizing = 0 if words is not None else len(moves)
    if build["tiles_left"] > 0:
        list_builds(ctx, moves, words)
    after: list[Move] = [*rules.extra_build_moves(state, seat), {"type": "end_build"}]
    if words is not None:
        words.word(moves[:urbanizing] + after)
    moves.extend(after)
    return moves


def list_builds(ctx: BuildContext, moves: list[Move], words: BuildWords | None = None) -> None:
    """Appends every build the seat may make, judged by the rules judge_price applies, in the
    order that makes each rule cheapest: the tiles left once per listing, the cost and cash
    once per kind of build on a hex, the loop check per shape. The hot loop of the engine:
    the listing of a build turn names a few hundred moves.

    With `words` the moves are made to be answered (words.listing): their JSON text with their
    words, in one piece (_worded_builds); without, every move is a JSON value of its own."""
    if words is not None:
        texts = _worded_builds(ctx, words)
        if texts:
            moves.append(words.joined(texts))
        return
    state, seat, net = ctx.state, ctx.seat, ctx.net
    supply = state["supply"]
    left = {t for t in supply if tile_left(supply, None, t)}
    disks = supply[T.DISK] > 0
    extra = ctx.extra
    budget = state["players"][seat]["cash"] - extra  # the most a tile may cost before the surcharge
    owns = net.owns_track(seat)
    towns, by_hex, owners, tiles = net.towns, net.by_hex, net.owner, state["tiles"]
    new_tile_cost = ctx.rules.new_tile_cost
    # candidate_hexes keeps only hexes that check_hex accepts (a tile is left: see legal).
    hexes = candidate_hexes(state, ctx.rules, net)
    table, lm = ctx._edges, _listing_map(ctx.rules.map)
    rank = lm.rank
    track = _track_around(state, lm, net, seat, stops_made(net), ctx.walks)
    changed = edge_statuses_of(state, ctx.rules, net, seat, {rank[h] for h in hexes},
                               ctx._closable, track, ctx.walks)
    for h in hexes:
        status = changed.get(rank[h]) or table[h].settled
        if h in by_hex and by_hex[h]:  # what the hex holds, with owners, and its tile
            old, old_tile = {p: owners[p] for p in by_hex[h]}, tiles.get(key(h))
        else:
            old, old_tile = NO_PIECES, None
        q, r = h
        if h in towns:
            old_exits = frozenset(p[1] for p in old)
            town_listing = S.town_listing(old_exits, seat in old.values(), status, owns)
            # A shape that takes a disk is out when none is left and the hex gives none back.
            no_disk = not disks and not (old_tile and T.TOWN_SHAPES[old_exits].uses_disk)
            for tiles_made, uses_disk, base, exits, town in town_listing.shapes:
                if base > budget or (left.isdisjoint(tiles_made) and old_tile not in tiles_made) or (
                        uses_disk and no_disk) or (
                        town is not None and _closes_loop_listed(ctx, track, rank[h], h, old,
                                                                 town)):
                    continue
                moves.append({"type": "build", "hex": {"q": q, "r": r},
                              "town_exits": list(exits), "cost": base + extra})
            continue
        old_tracks = frozenset((p[1], p[2]) for p in old) if old else NOTHING
        listing = S.track_listing(old_tracks, _turnable(old, seat) if old else NOTHING, status,
                                  owns)
        if not listing.shapes:
            continue
        # What each kind of build costs here with the surcharge, None beyond the seat's cash
        # (on an empty hex every kind is a new tile: _track_cost's new_tile_cost).
        costs: list[int | None] = []
        for geo in listing.kinds:
            base = _track_cost(ctx, h, old_tile, geo) if old else new_tile_cost(state, h, geo.kind)
            costs.append(None if base > budget else base + extra)
        for k, tile, edges, _, loop_geo in listing.shapes:
            cost = costs[k]
            if cost is None or (tile not in left and tile != old_tile) or (
                    loop_geo is not None and _closes_loop_listed(ctx, track, rank[h], h, old,
                                                                 loop_geo)):
                continue
            # Unrolled: a tile holds one track or two, and this runs for every move listed.
            tracks = ([[edges[0], edges[1]]] if len(edges) == 2
                      else [[edges[0], edges[1]], [edges[2], edges[3]]])
            moves.append({"type": "build", "hex": {"q": q, "r": r}, "tracks": tracks,
                          "cost": cost})


def _worded_builds(ctx: BuildContext, words: BuildWords) -> list[bytes]:
    """list_builds' builds as words write them: the JSON texts of a hex's builds are made once
    per situation of the hex and kept (BuildWords.kept), so that a listing mostly looks them
    up and checks their loops. A situation is what the builds read: the hex, its listing of
    build_shapes (what it holds, what lies around it, whether the seat owns track), its tile,
    what each kind of build costs there and the tiles left. Most candidate hexes are empty and
    have the statuses the map alone gives them (HexEdges.settled): where their costs are the
    map's alone too (the base new_tile_cost), their situation is the hex and a few numbers of
    the listing, and the hex is looked up without its listing or its costs (an empty hex with
    other statuses, by the hex and its statuses)."""
    state, seat, net, rules = ctx.state, ctx.seat, ctx.net, ctx.rules
    supply = state["supply"]
    # The tiles left (tile_left without a tile on the hex).
    left = frozenset([t for t, count in supply.items() if count > 0])
    disks = supply[T.DISK] > 0
    extra = ctx.extra
    budget = state["players"][seat]["cash"] - extra  # the most a tile may cost before the surcharge
    owns = net.owns_track(seat)
    tiles = state["tiles"]
    kept = words.kept(left)
    top = _top_new_tile_cost(rules)
    # Only whether each cost is within the budget counts: capped, it keys fewer situations.
    settled = None if top is None else words.kept(left, owns, extra, min(budget, top))
    lm = _listing_map(rules.map)
    stops = stops_made(net)
    track = _track_around(state, lm, net, seat, stops, ctx.walks)
    # candidate_hexes keeps only hexes that check_hex accepts (a tile is left: see legal). On
    # a map that settles empty hexes (settled), closes no hex and no edge, its hexes next to a
    # city that the state leaves as the map has them are told apart (_split_candidates): they
    # are listed from `settled` alone, by their rank, without a look at the state.
    plain: Collection[int]
    if settled is None or ctx._closable or type(rules).hex_closed is not BaseRules.hex_closed:
        special, plain = {lm.rank[h] for h in candidate_hexes(state, rules, net)}, NOTHING
    else:
        special, plain = _split_candidates(state, lm, track)
    changed = edge_statuses_of(state, rules, net, seat, special, ctx._closable, track, ctx.walks)
    # Each hex's builds (their texts joined) by rank, put in place (the plain hexes' at once,
    # by C loops, the others' one by one), then taken in rank order: no sort. The hexes with
    # none hold None, which filter() tells false at once (an empty bytes' length is asked).
    placed: list[bytes | None] = [None] * len(lm.hexes)
    if plain and settled is not None:
        # Empty, their statuses the map's, no town: HexEdges.settled. Their shapes join nothing
        # but the map's cities (no track is on them or faces them), each across an edge of its
        # own: no loop to check.
        try:
            made_plain = list(map(settled.__getitem__, plain))
        except KeyError:  # some not kept yet: made
            made_plain = [_settled_kept(ctx, settled, lm.hexes[r], r, words, left, owns, budget)
                          for r in plain]
        list(map(placed.__setitem__, plain, map(_JOINED, made_plain)))
    made: HexBuilds | None
    for r in special:
        h, status = lm.hexes[r], changed.get(r)
        if r in lm.towns:
            exits = track.exits.get(r)
            made = _town_situation(ctx, h, exits, tiles.get(lm.keys[r]) if exits else None,
                                   status or lm.edges[r].settled, kept, words, left, disks,
                                   budget, owns)
        else:
            pieces = track.tracks.get(r)
            if settled is not None and not pieces:
                # Empty: its builds read its statuses and the listing's context alone, kept by
                # its rank (with its statuses where they are not the map's).
                name = r if status is None else (r, status)
                made = settled.get(name) or _settled_kept(ctx, settled, h, name, words, left,
                                                          owns, budget, status)
            else:
                made = _track_situation(ctx, h, pieces, tiles.get(lm.keys[r]) if pieces else None,
                                        status or lm.edges[r].settled, kept, words, left, budget,
                                        owns)
                if made is None:
                    continue
        if made.checked is None or _no_loop_joined(ctx, track, r, h, made.joins):
            placed[r] = made.joined
        else:
            held = _held(track, r, h)
            placed[r] = b",".join([text for text, geo in made.checked if geo is None
                                   or not _closes_loop_listed(ctx, track, r, h, held, geo)])
    return list(filter(None, placed))


def _held(track: TrackAround, r: int, h: Hex) -> dict[Piece, int | None]:
    """What hex h (of rank r) holds, with owners, as Site.old has it (the network's pieces on
    it, in its order: the track, then the town exits), from the state's track by rank: the
    network's indexes are not made for it (UnindexedNetwork)."""
    held: dict[Piece, int | None] = {}
    for a, b, owner in track.tracks.get(r, ()):
        held[(h, a, b)] = owner
    for e, owner in track.exits.get(r, ()):
        held[(h, e, CENTRE)] = owner
    return held


# The joined text of a hex's builds (HexBuilds.joined), for map().
_JOINED = operator.attrgetter("joined")


def _settled_kept(ctx: BuildContext, settled: dict[Any, HexBuilds], h: Hex, name: object,
                  words: BuildWords, left: frozenset[str], owns: bool, budget: int,
                  status: Status | None = None) -> HexBuilds:
    """_settled_builds, kept in `settled` under `name` (the hex's rank, with its statuses
    where they are not the map's)."""
    made = settled.get(name)
    if made is None:
        made = settled[name] = _settled_builds(ctx, h, words, left, owns, budget, status)
    return made


# The set of one track between edges a and b (either way round), by a then b: a hex holding
# one track reads its set here rather than making it, and the listings of build_shapes, kept
# by it, find it by the hash it keeps.
_ONE_TRACK: tuple[tuple[frozenset[T.Track], ...], ...] = tuple(
    tuple(frozenset([(a, b)]) for b in range(6)) for a in range(6))


# The set of a town's exits by their bit mask (edge e is bit e): a town with track reads its
# set here rather than making it, and TOWN_SHAPES and the listings of build_shapes, kept by
# it, find it by the hash it keeps and by identity (64 frozensets made at import).
_EXIT_SETS: tuple[frozenset[int], ...] = tuple(
    frozenset(e for e in range(6) if mask >> e & 1) for mask in range(64))


def _holds_exit_of(exits: list, seat: int) -> bool:
    """Whether seat owns one of a town's exits as the state holds them ([e, owner]): a loop, not
    a list made to look in."""
    for _, owner in exits:  # noqa: SIM110
        if owner == seat:
            return True
    return False


def _track_situation(ctx: BuildContext, h: Hex, pieces: list | None, old_tile: str | None,
                     status: Status, kept: dict[tuple, HexBuilds], words: BuildWords,
                     left: frozenset[str], budget: int, owns: bool) -> HexBuilds | None:
    """A track hex's builds in its situation (_worded_builds), kept or made; None when no
    shape fits or none is within the budget. `pieces` is its track as the state holds it
    ([a, b, owner])."""
    if not pieces:
        old_tracks = turnable = NOTHING
    elif len(pieces) == 1:  # most track hexes: one track, its set the kept one (_ONE_TRACK)
        a, b, owner = pieces[0]
        old_tracks = _ONE_TRACK[a][b]
        turnable = old_tracks if owner is None or owner == ctx.seat else NOTHING
    else:  # _turnable, from the state's pieces
        seat = ctx.seat
        old_tracks = frozenset([(a, b) for a, b, _ in pieces])
        turnable = frozenset([(a, b) for a, b, o in pieces if o is None or o == seat])
    listing = S.track_listing(old_tracks, turnable, status, owns)
    if not listing.shapes:
        return None
    costs: list[int | None] = []  # _within, inline
    for geo in listing.kinds:
        base = (_track_cost(ctx, h, old_tile, geo) if pieces
                else ctx.rules.new_tile_cost(ctx.state, h, geo.kind))
        costs.append(None if base > budget else base + ctx.extra)
    if costs.count(None) == len(costs):  # no build here within the budget
        return None
    situation = (h, id(listing), old_tile, *costs)
    made = kept.get(situation)
    if made is None:
        made = kept[situation] = _track_builds(words.track_words(h, old_tracks, listing, costs),
                                               listing, left, old_tile)
    return made


def _settled_builds(ctx: BuildContext, h: Hex, words: BuildWords, left: frozenset[str],
                    owns: bool, budget: int, status: Status | None = None) -> HexBuilds:
    """The builds of an empty hex with these statuses (by default the map's, HexEdges.settled),
    on a map whose new tiles cost what the map alone says (_worded_builds' `settled`): kept
    there by the hex's rank, and its statuses where they are not the map's."""
    listing = S.track_listing(NOTHING, NOTHING,
                              ctx._edges[h].settled if status is None else status, owns)
    costs = [_within(ctx.rules.new_tile_cost(ctx.state, h, geo.kind), budget, ctx.extra)
             for geo in listing.kinds]
    if costs.count(None) == len(costs):  # none within the budget (or no shape): nothing to make
        return NO_BUILDS
    # Made in another listing's context (other tiles left, another budget) where what they
    # read is the same: the hex, its listing, the costs and which of its shapes' tiles are left.
    alike = words.kept()
    situation = (h, id(listing), _listing_tiles(listing) & left, *costs)
    made = alike.get(situation)
    if made is None:
        made = alike[situation] = _track_builds(words.track_words(h, NOTHING, listing, costs),
                                                listing, left, None)
    return made


def _listing_tiles(listing: S.TrackListing) -> frozenset[str]:
    """The tiles of a listing's shapes, kept per listing (held, as the phrases are)."""
    known = _LISTING_TILES.get(id(listing))
    if known is None or known[0] is not listing:
        if len(_LISTING_TILES) >= 1 << 15:  # the bound only guards memory
            _LISTING_TILES.clear()
        known = _LISTING_TILES[id(listing)] = (
            listing, frozenset([t for _, t, _, _, _ in listing.shapes]))
    return known[1]


_LISTING_TILES: dict[int, tuple[S.TrackListing, frozenset[str]]] = {}


def _split_candidates(state: State, lm: ListingMap,
                      track: TrackAround) -> tuple[set[int], frozenset[int]]:
    """candidate_hexes on a map that closes no hex, by rank (ListingMap), in two: the
    candidates the state may have changed (a town, track on them or facing them, next to a stop
    the map does not have: `track`'s), and the rest, hexes next to a city of the map as the map
    has them (no candidate a hex that the state did not change)."""
    found = track.faced & lm.passable
    found.update(lm.near_towns)
    built = [lm.key_ranks.get(k, -1) for k in open_build_turn(state)["built"]]
    cities = track.cities
    found.difference_update(built, cities)
    return found, lm.near.difference(found, built, cities)


@once_per
def _by_rank(board) -> tuple[Hex, ...]:
    """The hexes of the map in rank order (_rank_table): once per map."""
    return tuple(sorted(board.terrain))


def _no_loop_joined(ctx: BuildContext, track: TrackAround, r: int, h: Hex,
                    joins: tuple[tuple, ...]) -> bool:
    """Whether no shape of a hex's builds closes a loop, as the track beyond the ends each
    joins tells (_loop_beyond): then every build is listed, their texts joined once
    (HexBuilds.joined). False when one may: each shape is checked on its own then
    (_closes_loop_listed). A listing looks at each hex once, so the verdicts are not kept."""
    net, walks = ctx.net, ctx.walks
    # A loop, not all() over a generator: this runs for several hexes of every listing.
    for joined in joins:  # noqa: SIM110
        if _loop_beyond(net, track, r, h, joined, walks) is not False:
            return False
    return True


def _within(base: int, budget: int, extra: int) -> int | None:
    """A kind of build's cost with the surcharge, None beyond the seat's cash."""
    return None if base > budget else base + extra


def _town_situation(ctx: BuildContext, h: Hex, exits: list | None, old_tile: str | None,
                    status: Status, kept: dict[tuple, HexBuilds], words: BuildWords,
                    left: frozenset[str], disks: bool, budget: int, owns: bool) -> HexBuilds:
    """A town's builds in its situation (_worded_builds), kept or made; `exits` its town track
    as the state holds it ([e, owner]), `owns` whether the seat owns track."""
    if exits:  # its exits' set the kept one (_EXIT_SETS), and whether the seat owns one
        mask, mine, seat = 0, False, ctx.seat
        for e, owner in exits:
            mask |= 1 << e
            if owner == seat:
                mine = True
        old_exits = _EXIT_SETS[mask]
    else:  # most towns listed: no track on them
        old_exits, mine = NOTHING, False
    listing = S.town_listing(old_exits, mine, status, owns)
    if not listing.shapes or budget < listing.least:  # none within the budget: nothing to make
        return NO_BUILDS
    # A shape that takes a disk is out when none is left and the hex gives none back.
    no_disk = not disks and not (old_tile and T.TOWN_SHAPES[old_exits].uses_disk)
    # Only whether each shape is within the budget counts: capped, it keys fewer situations.
    situation = (h, id(listing), old_tile, no_disk, ctx.extra, min(budget, listing.most))
    made = kept.get(situation)
    if made is None:
        made = kept[situation] = _town_builds(words.town_words(h, old_exits, listing, ctx.extra),
                                              listing, left, old_tile, no_disk, budget)
    return made


@once_per
def _top_new_tile_cost(rules: Rules) -> int | None:
    """The most a new tile costs on the map, when its cost is the map's alone (the base
    new_tile_cost: the terrain and the kind of tile); None when the map prices new tiles its
    own way (which may read the state). Once per rules."""
    if type(rules).new_tile_cost is not BaseRules.new_tile_cost:
        return None
    terrain = [c for c in rules.map.terrain_costs.values() if c is not None]
    return max(terrain, default=0) + max(R.BUILD_COSTS["new_tile_extra_by_kind"].values())


@once_per
def short_budgets(rules: Rules) -> tuple[int, ...]:
    """The budgets below the dearest new tile (_top_new_tile_cost) that price the map's new
    tiles apart: nothing, and each cost a new tile may have under the dearest. A listing keeps
    its empty hexes' builds per budget among these and above (_worded_builds' `settled`), so
    a worker's warm-up lists its build turns at each (warm.py). None on a map that prices new
    tiles its own way. Once per rules."""
    top = _top_new_tile_cost(rules)
    if top is None:
        return ()
    costs = {cost + kind for cost in rules.map.terrain_costs.values() if cost is not None
             for kind in R.BUILD_COSTS["new_tile_extra_by_kind"].values()}
    return (0, *sorted(cost for cost in costs if 0 < cost < top))


def _track_builds(words: HexWords, listing: S.TrackListing, left: frozenset[str],
                  old_tile: str | None) -> HexBuilds:
    """A track hex's builds in one situation (_worded_builds): every shape priced within the
    budget whose tile is left, with its geometry where it may close a loop."""
    head, where, phrases, prices = words
    out: list[tuple[bytes, Geometry | None]] = []
    for (k, tile, _, _, loop_geo), (made, a, b) in zip(listing.shapes, phrases, strict=True):
        priced = prices[k]
        if priced is None or (tile not in left and tile != old_tile):
            continue
        cost, price = priced
        out.append((f"{head}{made}{cost}{a}{where}{b}{price}".encode(), loop_geo))
    return _hex_builds(listing, out)


def _town_builds(words: HexWords, listing: S.TownListing, left: frozenset[str],
                 old_tile: str | None, no_disk: bool, budget: int) -> HexBuilds:
    """A town's builds in one situation (_worded_builds), as _track_builds."""
    head, town_name, phrases, prices = words
    out: list[tuple[bytes, Geometry | None]] = []
    for (tiles_made, uses_disk, base, _, town), (made, a, b), priced in zip(
            listing.shapes, phrases, prices, strict=True):
        if base > budget or (left.isdisjoint(tiles_made) and old_tile not in tiles_made) or (
                uses_disk and no_disk):
            continue
        cost, price = priced  # type: ignore[misc]  # every exits' is priced
        out.append((f"{head}{made}{cost}{a}{town_name}{b}{price}".encode(), town))
    return _hex_builds(listing, out)


def _hex_builds(listing: object, builds: list[tuple[bytes, Geometry | None]]) -> HexBuilds:
    joined = b",".join([text for text, _ in builds])
    geos = [geo for _, geo in builds if geo is not None]
    if not geos:
        return HexBuilds(listing, joined, None, ())
    joins = tuple(dict.fromkeys([geo.joined for geo in geos]))
    return HexBuilds(listing, joined, tuple(builds), joins)


# -- applying ------------------------------------------------------------------------------------

def apply(state: State, rules: Rules, seat: int, move: GivenMove, events: list[Event]) -> None:
    kind = expect_type(move, "build", "urbanize", "end_build", *rules.extra_build_move_types())
    ctx = BuildContext(state, rules, seat)
    if kind == "end_build":
        events.append({"type": "build_ended", "seat": seat})
        end_turn(state, rules, events, ctx.net)
        return
    if kind == "urbanize":
        h, letter = check_urbanize(state, rules, seat, move, ctx.net)
        apply_urbanize(ctx, h, letter, events)
    elif kind == "build":
        h, tracks, exits = parse_build(move)
        plan = plan_build(state, rules, ctx.net, seat, h, tracks, exits)
        commit_build(ctx, plan, events)
    else:
        rules.apply_extra_build_move(state, seat, move, events)
        open_build_turn(state)["map_moves"].append(kind)
    if open_build_turn(state)["tiles_left"] <= 0:
        end_turn(state, rules, events, ctx.net)


def commit_build(ctx: BuildContext, plan: BuildPlan, events: list[Event]) -> None:
    state, seat = ctx.state, ctx.seat
    k = key(plan.hex)
    supply = state["supply"]
    if plan.old_tile:
        supply[plan.old_tile] += 1
    supply[plan.tile] -= 1
    supply[T.DISK] -= plan.disk_delta
    state["tiles"][k] = plan.tile
    ctx.write_hex(plan.hex, plan.pieces)
    build = open_build_turn(state)
    build["tiles_left"] -= 1
    build["built"].append(k)
    if plan.redirect:
        store_redirect(build, *plan.redirect)
    build["extended"].extend([key(p[0]), p[1], p[2]] for p in plan.added)
    state["players"][seat]["cash"] -= plan.cost
    move = plan.as_move()
    event: TrackBuiltEvent = {
        "type": "track_built", "seat": seat, "hex": move["hex"], "cost": plan.cost, "tile": plan.tile,
        "kind": "redirect" if plan.redirect else ("upgrade" if plan.old_tile else "new")}
    if "tracks" in move:
        event["tracks"] = move["tracks"]
    if "town_exits" in move:
        event["town_exits"] = move["town_exits"]
    events.append(event)
    claim_joined_routes(ctx, plan, events)


def claim_joined_routes(ctx: BuildContext, plan: BuildPlan, events: list[Event]) -> None:
    """Unowned track that the new track joins becomes the builder's, all of its route."""
    net = ctx.net
    fresh = plan.added + ([plan.redirect[1]] if plan.redirect else [])
    for p in fresh:
        route = net.route_through(p)
        if any(net.owner[q] is None for q in route.pieces):
            ctx.set_route_owner(route, ctx.seat)
            events.append({"type": "track_claimed", "seat": ctx.seat,
                           "hexes": [as_dict(h) for h in route.hexes()]})
