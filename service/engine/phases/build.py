"""Build Track: placing, upgrading and redirecting track, town track, urbanization, and the
expiry of incomplete track that its owner did not extend.

A `build` move names what the hex holds afterwards; `plan_build` works out whether that is a new
tile, an upgrade or a redirect, checks every rule and prices it. `legal` enumerates candidate
shapes on the hexes where track could connect and keeps those `plan_build` accepts.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from service.engine import rules_data as R
from service.engine import tiles as T
from service.engine.errors import IllegalMove
from service.engine.hexgrid import Hex, as_dict, key, neighbour, parse_key
from service.engine.network import CENTRE, Network, Piece, set_route_owner, write_hex
from service.engine.phases.common import expect_type, hex_field

ANCHORS = frozenset({"city", "own", "unowned"})
OPEN = frozenset({"free", "off", "closed"})


# -- turn structure ------------------------------------------------------------------------

def start(state: dict, rules, events: list) -> None:
    state["phase"] = "build"
    state["queue"] = rules.build_order(state)
    begin_turn(state, rules, events)


def begin_turn(state: dict, rules, events: list) -> None:
    """Opens the build turn of the first seat in the queue, skipping seats with nothing to do."""
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
            "incomplete_at_start": incomplete_routes(state, rules, seat),
        }
        if tiles > 0 or rules.may_urbanize(state, seat):
            return
        close_turn(state, rules, events)
    state["build"] = None


def end_turn(state: dict, rules, events: list) -> None:
    close_turn(state, rules, events)
    begin_turn(state, rules, events)


def close_turn(state: dict, rules, events: list) -> None:
    expire_unextended(state, rules, events)
    state["queue"].pop(0)


def incomplete_routes(state: dict, rules, seat: int) -> list[list]:
    net = rules.network(state)
    return [
        [[key(p[0]), p[1], p[2]] for p in r.pieces]
        for r in net.routes()
        if r.owner == seat and not r.complete
    ]


def expire_unextended(state: dict, rules, events: list) -> None:
    """Incomplete track owned at the start of this turn and not extended during it goes unowned."""
    build = state["build"]
    seat = build["seat"]
    net = rules.network(state)
    extended = {(parse_key(k), a, b) for k, a, b in build["extended"]}
    redirected = {tuple(k.split("|")): v for k, v in build["redirected"].items()}
    for pieces in build["incomplete_at_start"]:
        alive = []
        for k, a, b in pieces:
            p = (parse_key(k), a, b)
            if p not in net.owner:
                moved = redirected.get((k, str(a), str(b)))
                p = (parse_key(moved[0]), moved[1], moved[2]) if moved else None
            if p is not None and p in net.owner:
                alive.append(p)
        if not alive:
            continue
        route = net.route_through(alive[0])
        if route.complete or route.owner != seat or any(p in extended for p in route.pieces):
            continue
        set_route_owner(state, route, None)
        net = rules.network(state)
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

    def as_move(self) -> dict:
        move: dict = {"type": "build", "hex": as_dict(self.hex)}
        if self.town:
            move["town_exits"] = sorted(p[1] for p in self.pieces)
        else:
            move["tracks"] = sorted([p[1], p[2]] for p in self.pieces)
        move["cost"] = self.cost
        return move


def edge_status(state: dict, rules, net: Network, seat: int, h: Hex, edge: int) -> str:
    """What lies across one edge of h, as the builder of seat sees it."""
    n = neighbour(h, edge)
    if not net.map.on_map(n):
        return "off"
    if rules.edge_closed(state, seat, h, edge):
        return "closed"
    if n in net.cities:
        return "city"
    if n not in net.towns and net.map.terrain_costs.get(net.map.terrain[n]) is None:
        return "closed"
    p = net.facing(h, edge)
    if p is None:
        return "free"
    owner = net.owner[p]
    if owner == seat:
        return "own"
    return "unowned" if owner is None else "opponent"


def parse_build(move: dict) -> tuple[Hex, frozenset | None, frozenset | None]:
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


def check_turn(state: dict, rules, seat: int, h: Hex) -> None:
    build = state["build"]
    if build["tiles_left"] <= 0:
        raise IllegalMove("NO_TILES_LEFT")
    if not rules.map.on_map(h):
        raise IllegalMove("OFF_MAP", f"{h} is not on the map", hex=as_dict(h))
    if key(h) in build["built"]:
        raise IllegalMove("HEX_ALREADY_BUILT", hex=as_dict(h))


def hex_buildable(state: dict, rules, net: Network, h: Hex) -> bool:
    if h in net.cities:
        return False
    if h not in net.towns and rules.map.terrain_costs.get(rules.map.terrain[h]) is None:
        return False
    return not rules.hex_closed(state, h)


def plan_build(state: dict, rules, net: Network, seat: int, h: Hex,
               tracks: frozenset | None, exits: frozenset | None) -> BuildPlan:
    """Checks one build against every rule and prices it; raises IllegalMove naming the rule."""
    check_hex(state, rules, net, seat, h)
    status = [edge_status(state, rules, net, seat, h, e) for e in range(6)]
    return plan_shape(state, rules, net, seat, h, tracks, exits, status)


def check_hex(state: dict, rules, net: Network, seat: int, h: Hex) -> None:
    """The rules about the hex itself and the turn, whatever is built there."""
    check_turn(state, rules, seat, h)
    if not hex_buildable(state, rules, net, h):
        raise IllegalMove("NOT_BUILDABLE", f"no track may be built on {h}", hex=as_dict(h))


def plan_shape(state: dict, rules, net: Network, seat: int, h: Hex, tracks: frozenset | None,
               exits: frozenset | None, status: list[str]) -> BuildPlan:
    """The rules about what is built on a hex that check_hex accepted; `status` is its
    edge_status list."""
    is_town = h in net.towns
    if is_town != (exits is not None):
        raise IllegalMove("TOWN_NEEDS_TOWN_TRACK", hex=as_dict(h))
    old = {p: net.owner[p] for p in net.pieces_on(h)}
    old_tile = state["tiles"].get(key(h))
    owns = net.owns_track(seat)
    if is_town:
        plan = _plan_town(seat, h, exits, old, old_tile, status, owns, state["supply"])
    else:
        plan = _plan_track(state, rules, net, seat, h, tracks, old, old_tile, status, owns)
    _check_supply(state, plan)
    _check_loops(net, plan, status)
    plan.cost += rules.extra_cost_per_tile(state, seat)
    cash = state["players"][seat]["cash"]
    if plan.cost > cash:
        raise IllegalMove("INSUFFICIENT_CASH", f"the build costs ${plan.cost}, cash is ${cash}",
                          need=plan.cost, have=cash)
    return plan


def _check_edges(status: list[str], edges) -> None:
    for e in edges:
        if e == CENTRE:
            continue
        s = status[e]
        if s == "off":
            raise IllegalMove("OFF_MAP", f"track would point off the map through edge {e}", edge=e)
        if s == "closed":
            raise IllegalMove("INTO_IMPASSABLE", f"track would point into a closed hex through edge {e}",
                              edge=e)
        if s == "opponent":
            raise IllegalMove("INTO_OPPONENT_TRACK", f"edge {e} meets another player's track end", edge=e)


def _plan_town(seat, h, exits, old, old_tile, status, owns, supply) -> BuildPlan:
    shape = T.town_shape(exits)
    if shape is None:
        raise IllegalMove("TILE_UNKNOWN", f"no town tile has exits {sorted(exits)}")
    old_exits = {p[1] for p in old}
    if not old_exits <= exits:
        raise IllegalMove("MUST_KEEP_TRACK", "a town's existing exits stay", hex=as_dict(h))
    added = sorted(exits - old_exits)
    if not added:
        raise IllegalMove("BAD_MOVE", "the build changes nothing")
    _check_edges(status, added)
    has_track_here = any(o == seat for o in old.values())
    if not has_track_here and not any(status[e] in ANCHORS for e in added):
        raise IllegalMove("NOT_CONNECTED", "town track must connect to a city or your own track",
                          hex=as_dict(h))
    if not owns:
        raise IllegalMove("FIRST_TILE_SIMPLE", hex=as_dict(h))
    pieces = dict(old)
    for e in added:
        pieces[(h, e, CENTRE)] = seat
    old_disk = 1 if old_tile and T.TOWN_SHAPES[frozenset(old_exits)].uses_disk else 0
    supply = dict(supply)
    if old_tile:
        supply[old_tile] += 1
    tile = T.town_tile_from_supply(shape, supply)
    b = R.BUILD_COSTS
    cost = b["town_base"] + b["town_per_exit"] * len(exits) if not old else b["upgrade_town"]
    return BuildPlan(h, True, pieces, [(h, e, CENTRE) for e in added], None,
                     tile or shape.tiles[0], old_tile, int(shape.uses_disk) - old_disk, cost)


def _plan_track(state, rules, net, seat, h, tracks, old, old_tile, status, owns) -> BuildPlan:
    shape = T.track_shape(tracks)
    if shape is None:
        raise IllegalMove("TILE_UNKNOWN", f"no track tile holds {sorted(tracks)}")
    old_tracks = {(p[1], p[2]): p for p in old}
    removed = [t for t in old_tracks if t not in tracks]
    added = [t for t in tracks if t not in old_tracks]
    if not added:
        raise IllegalMove("BAD_MOVE", "the build changes nothing")
    redirect = None
    pieces = {p: o for p, o in old.items() if (p[1], p[2]) in tracks}
    if removed:
        redirect = _check_redirect(net, seat, h, removed, added, old_tracks, status)
        # The redirected track is the builder's from now on (it may be unowned before), so the
        # route it joins never mixes owners.
        pieces[redirect[1]] = seat
    else:
        _check_edges(status, [e for t in added for e in t])
        for t in added:
            if not any(status[e] in ANCHORS for e in t):
                raise IllegalMove("NOT_CONNECTED",
                                  f"track {list(t)} must start from a city or extend your track",
                                  hex=as_dict(h))
        if not owns and (
                old or shape.kind != "simple" or not any(status[e] == "city" for e in added[0])):
            raise IllegalMove("FIRST_TILE_SIMPLE", hex=as_dict(h))
        for t in added:
            pieces[(h, t[0], t[1])] = seat
    b = R.BUILD_COSTS
    if redirect:
        cost = rules.replace_cost(state, h, b["redirect"])
    elif old:
        old_kind = T.TILE_KIND[old_tile]
        base = (b["upgrade_to_crossing_from_simple"]
                if shape.kind == "crossing" and old_kind == "simple" else b["upgrade_other"])
        cost = rules.replace_cost(state, h, base)
    else:
        cost = rules.new_tile_cost(state, h, shape.kind)
    new_pieces = [] if redirect else [(h, t[0], t[1]) for t in added]
    return BuildPlan(h, False, pieces, new_pieces, redirect, shape.tile, old_tile, 0, cost)


def _check_redirect(net, seat, h, removed, added, old_tracks, status) -> tuple[Piece, Piece]:
    if len(removed) != 1 or len(added) != 1:
        raise IllegalMove("MUST_KEEP_TRACK", "a replacement keeps every track but one redirected end",
                          hex=as_dict(h))
    (x, y), new = removed[0], added[0]
    if not {x, y} & set(new):
        raise IllegalMove("MUST_KEEP_TRACK", "a replacement keeps every track but one redirected end",
                          hex=as_dict(h))
    old_piece = old_tracks[(x, y)]
    if net.owner[old_piece] not in (seat, None):
        raise IllegalMove("REDIRECT_NOT_ALLOWED", "that track belongs to another player", hex=as_dict(h))
    joined = {e for e in (x, y) if status[e] not in ("free", "off", "closed")}
    if len(joined) != 1:
        raise IllegalMove("REDIRECT_NOT_ALLOWED", "only a dangling end of incomplete track turns",
                          hex=as_dict(h))
    kept = joined.pop()
    if kept not in new:
        raise IllegalMove("MUST_KEEP_TRACK", "a redirect keeps the end that joins the rest of the track",
                          hex=as_dict(h))
    turned = new[0] if new[1] == kept else new[1]
    _check_edges(status, [turned])
    a, b = T.norm(kept, turned)
    return old_piece, (h, a, b)


def _check_supply(state: dict, plan: BuildPlan) -> None:
    available = state["supply"].get(plan.tile, 0) + (1 if plan.old_tile == plan.tile else 0)
    if available <= 0:
        raise IllegalMove("TILE_UNAVAILABLE", f"no {plan.tile} tile is left", tile=plan.tile)
    if plan.disk_delta > 0 and state["supply"][T.DISK] <= 0:
        raise IllegalMove("TOWN_DISKS_EXHAUSTED")


def _check_loops(net: Network, plan: BuildPlan, status: list[str]) -> None:
    """A new track closes a loop only if both its ends join something; only then trace."""
    fresh = plan.added + ([plan.redirect[1]] if plan.redirect else [])
    joined = [p for p in fresh
              if status[p[1]] not in OPEN and (p[2] == CENTRE or status[p[2]] not in OPEN)]
    if not joined:
        return
    old = net.replace_hex(plan.hex, plan.pieces)
    try:
        for p in joined:
            route = net.route_through(p)
            if any(end.kind == "cycle" for end in route.ends) or (
                    route.complete and route.ends[0].hex == route.ends[1].hex):
                raise IllegalMove("LOOP", hex=as_dict(plan.hex))
    finally:
        net.replace_hex(plan.hex, old)


# -- urbanization ------------------------------------------------------------------------------

def check_urbanize(state: dict, rules, seat: int, move: dict, net: Network) -> tuple[Hex, str]:
    expect_type(move, "urbanize")
    h = hex_field(move, "hex")
    letter = move.get("new_city")
    if not rules.may_urbanize(state, seat):
        raise IllegalMove("URBANIZE_NOT_HOLDER")
    build = state["build"]
    if build["urbanized"] or build["built"]:
        raise IllegalMove("URBANIZE_ALREADY")
    if h not in net.towns:
        raise IllegalMove("URBANIZE_NOT_TOWN", f"{h} is not a town", hex=as_dict(h))
    if letter not in rules.new_city_letters() or letter in state["new_cities"].values():
        raise IllegalMove("NEW_CITY_UNAVAILABLE", f"new city {letter!r} cannot be placed")
    return h, letter


def apply_urbanize(state: dict, rules, seat: int, h: Hex, letter: str, events: list) -> None:
    net = rules.network(state)
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
    state["towns"].pop(k, None)
    state["new_cities"][k] = letter
    state["cubes"].setdefault(k, [])
    state["build"]["urbanized"] = True
    colour = rules.map.new_city_tiles[letter].color
    events.append({"type": "city_urbanized", "seat": seat, "hex": as_dict(h), "new_city": letter,
                   "color": colour})
    net = rules.network(state)
    for r in waiting:
        live = [p for p in r.pieces if p in net.owner]
        if live:
            now = net.route_through(live[0])
            if now.complete:
                set_route_owner(state, now, seat)
                events.append({"type": "track_claimed", "seat": seat,
                               "hexes": [as_dict(x) for x in now.hexes()]})


# -- enumeration ------------------------------------------------------------------------------

def candidate_hexes(state: dict, rules, net: Network) -> list[Hex]:
    """Every hex where a build could connect: next to a city, on track, or next to track."""
    found: set[Hex] = set()
    for c in net.cities:
        for _, n in rules.map.neighbours(c):
            found.add(n)
    for p in net.owner:
        found.add(p[0])
        for e in (p[1], p[2]):
            if e != CENTRE:
                found.add(neighbour(p[0], e))
    built = set(state["build"]["built"])
    return sorted(h for h in found if rules.map.on_map(h) and key(h) not in built
                  and hex_buildable(state, rules, net, h))


def _mask(edges) -> int:
    m = 0
    for e in edges:
        m |= 1 << e
    return m


# Each track shape with the edge mask of each of its tracks, and each town shape with its mask.
_TRACK_MASKS = [(tracks, tuple(_mask(t) for t in tracks)) for tracks in T.TRACK_SHAPES]
_TOWN_MASKS = [(exits, _mask(exits)) for exits in T.TOWN_SHAPES]


def _shapes_for(net: Network, h: Hex, status: list[str], seat: int):
    """Candidate (tracks, exits) for hex h: a superset of every shape plan_build can accept.
    Every added track needs an edge that anchors it and none that is barred."""
    old = net.pieces_on(h)
    anchored = _mask(e for e in range(6) if status[e] in ANCHORS)
    bad = _mask(e for e in range(6) if status[e] in ("off", "closed", "opponent"))
    if h in net.towns:
        mine = any(net.owner[p] == seat for p in old)
        return [(None, exits) for exits in _town_shapes(_mask(p[1] for p in old), mine, anchored, bad)]
    old_tracks = frozenset((p[1], p[2]) for p in old)
    return [(tracks, None) for tracks in _track_shapes(old_tracks, anchored, bad)]


@cache
def _town_shapes(old_mask: int, mine: bool, anchored: int, bad: int) -> tuple[frozenset, ...]:
    out = []
    for exits, mask in _TOWN_MASKS:
        added = mask & ~old_mask
        if mask & old_mask == old_mask and added and not added & bad and (mine or added & anchored):
            out.append(exits)
    return tuple(out)


@cache
def _track_shapes(old_tracks: frozenset, anchored: int, bad: int) -> tuple[frozenset, ...]:
    """Shapes on a plain hex: new tiles or upgrades whose added tracks are anchored and not
    barred, and every one-track redirect (which plan_build judges in full)."""
    out = []
    if not old_tracks and not anchored:
        return ()
    for tracks, masks in _TRACK_MASKS:
        if old_tracks:
            if not old_tracks < tracks:
                continue
            masks = tuple(_mask(t) for t in tracks - old_tracks)
        if all(not m & bad and m & anchored for m in masks):
            out.append(tracks)
    for t in old_tracks:
        rest = old_tracks - {t}
        used = {e for r in rest for e in r}
        for kept in t:
            for turned in range(6):
                if turned in used or turned in t:
                    continue
                tracks = rest | {T.norm(kept, turned)}
                if tracks in T.TRACK_SHAPES:
                    out.append(tracks)
    return tuple(out)


def legal(state: dict, rules, seat: int) -> list[dict]:
    net = rules.network(state)
    build = state["build"]
    moves: list[dict] = []
    if rules.may_urbanize(state, seat) and not build["urbanized"] and not build["built"]:
        placed = set(state["new_cities"].values())
        for letter in rules.new_city_letters():
            if letter not in placed:
                moves.extend({"type": "urbanize", "hex": as_dict(h), "new_city": letter}
                             for h in sorted(net.towns))
    if build["tiles_left"] > 0:
        for h in candidate_hexes(state, rules, net):
            try:
                check_hex(state, rules, net, seat, h)
            except IllegalMove:
                continue
            status = [edge_status(state, rules, net, seat, h, e) for e in range(6)]
            for tracks, exits in _shapes_for(net, h, status, seat):
                try:
                    plan = plan_shape(state, rules, net, seat, h, tracks, exits, status)
                    moves.append(plan.as_move())
                except IllegalMove:
                    pass
    moves.extend(rules.extra_build_moves(state, seat))
    moves.append({"type": "end_build"})
    return moves


# -- applying ------------------------------------------------------------------------------------

def apply(state: dict, rules, seat: int, move: dict, events: list) -> None:
    kind = expect_type(move, "build", "urbanize", "end_build", *rules.extra_build_move_types())
    if kind == "end_build":
        events.append({"type": "build_ended", "seat": seat})
        end_turn(state, rules, events)
        return
    net = rules.network(state)
    if kind == "urbanize":
        h, letter = check_urbanize(state, rules, seat, move, net)
        apply_urbanize(state, rules, seat, h, letter, events)
    elif kind == "build":
        h, tracks, exits = parse_build(move)
        plan = plan_build(state, rules, net, seat, h, tracks, exits)
        commit_build(state, rules, seat, plan, events)
    else:
        rules.apply_extra_build_move(state, seat, move, events)
        state["build"]["map_moves"].append(kind)
    if state["build"]["tiles_left"] <= 0:
        end_turn(state, rules, events)


def commit_build(state: dict, rules, seat: int, plan: BuildPlan, events: list) -> None:
    k = key(plan.hex)
    supply = state["supply"]
    if plan.old_tile:
        supply[plan.old_tile] += 1
    supply[plan.tile] -= 1
    supply[T.DISK] -= plan.disk_delta
    state["tiles"][k] = plan.tile
    write_hex(state, plan.hex, plan.pieces)
    build = state["build"]
    build["tiles_left"] -= 1
    build["built"].append(k)
    if plan.redirect:
        (oh, oa, ob), (nh, na, nb) = plan.redirect
        build["redirected"][f"{key(oh)}|{oa}|{ob}"] = [key(nh), na, nb]
    build["extended"].extend([key(p[0]), p[1], p[2]] for p in plan.added)
    state["players"][seat]["cash"] -= plan.cost
    move = plan.as_move()
    event = {"type": "track_built", "seat": seat, "hex": move["hex"], "cost": plan.cost,
             "tile": plan.tile,
             "kind": "redirect" if plan.redirect else ("upgrade" if plan.old_tile else "new")}
    event.update({f: move[f] for f in ("tracks", "town_exits") if f in move})
    events.append(event)
    claim_joined_routes(state, rules, seat, plan, events)


def claim_joined_routes(state: dict, rules, seat: int, plan: BuildPlan, events: list) -> None:
    """Unowned track that the new track joins becomes the builder's, all of its route."""
    net = rules.network(state)
    fresh = plan.added + ([plan.redirect[1]] if plan.redirect else [])
    for p in fresh:
        route = net.route_through(p)
        if any(net.owner[q] is None for q in route.pieces):
            set_route_owner(state, route, seat)
            net = rules.network(state)
            events.append({"type": "track_claimed", "seat": seat,
                           "hexes": [as_dict(h) for h in route.hexes()]})
