"""Move Goods: two rounds; in each, every player delivers one cube, upgrades the locomotive
(once per phase, never above 6) or passes. First Move holder first, then turn order.

A delivery runs over complete links only, at most the locomotive level of them, never visiting
a city or town twice, and stops at the first city that takes the cube's colour. Each link used
raises its owner's income by 1.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from service.engine import rules_data as R
from service.engine.contract_types import DeliverMove
from service.engine.errors import IllegalMove
from service.engine.hexgrid import Hex, around, as_dict, key, parse_key
from service.engine.layout import Event, GivenMove, Move, State
from service.engine.moves import expect_type, hex_field, leave_queue
from service.engine.network import Route
from service.engine.state import open_move_goods, raise_locomotive

if TYPE_CHECKING:
    from service.engine.variants.base import Rules

MOVE_TYPES = ("deliver", "upgrade_locomotive", "pass")


def start(state: State, rules: Rules, events: list[Event]) -> None:
    state["phase"] = "move_goods"
    state["move_goods"] = {"round": 1, "upgraded": [], "used": {}}
    _open_round(state, rules)


def leave(state: State, rules: Rules, seat: int, events: list[Event]) -> None:
    """A player out of the game (resign.py) makes no more moves this phase; when they were the
    last to move in the first round, the second opens."""
    leave_queue(state, seat)
    _round_over(state, rules)


def finish(state: State, rules: Rules, events: list[Event]) -> None:
    state["move_goods"] = None


def _open_round(state: State, rules: Rules) -> None:
    used = open_move_goods(state)["used"]
    state["queue"] = [s for s in rules.move_order(state)
                      if used.get(str(s), 0) < rules.move_opportunities(state, s)]


def _round_over(state: State, rules: Rules) -> None:
    """Once nobody is left to move in the first round, the second opens."""
    mg = open_move_goods(state)
    if not state["queue"] and mg["round"] == 1:
        mg["round"] = 2
        _open_round(state, rules)


def legal(state: State, rules: Rules, seat: int) -> list[Move]:
    moves: list[Move] = [{"type": "pass"}]
    try:
        check_upgrade(state, seat)
        moves.append({"type": "upgrade_locomotive"})
    except IllegalMove:
        pass
    moves.extend(deliveries(state, rules, seat))
    return moves


def check_upgrade(state: State, seat: int) -> None:
    if seat in open_move_goods(state)["upgraded"]:
        raise IllegalMove("LOCOMOTIVE_UPGRADED")
    if state["players"][seat]["loco"] >= R.MAX_LOCOMOTIVE:
        raise IllegalMove("LOCOMOTIVE_MAX", locomotive=state["players"][seat]["loco"])


class LinkGraph:
    """Complete links by id and by the stops they join, for route search and checking."""

    def __init__(self, state: State, rules: Rules) -> None:
        net = rules.network(state)
        self.by_id: dict[str, Route] = {}
        self.at_stop: dict[Hex, list[tuple[Route, Hex]]] = {}
        for link in net.links():
            self.by_id[link.link_id] = link
            a, b = link.stops
            self.at_stop.setdefault(a, []).append((link, b))
            self.at_stop.setdefault(b, []).append((link, a))
        self.cities = net.cities


def income_of(state: State, rules: Rules, links: list[Route]) -> dict[str, int]:
    income: dict[str, int] = {}
    for link in links:
        owner = rules.link_income_owner(state, link)
        if owner is not None and not state["players"][owner]["eliminated"]:
            income[str(owner)] = income.get(str(owner), 0) + 1
    return income


class Trip:
    """One cube's journey, as far as it has gone: the single route rule that both the listing
    (which tries every way on) and the check of a named route (which follows one) apply.

    A cube leaves its source over complete links, never uses a link twice, never visits a stop
    twice, and stops at the first city that takes its colour unless the map lets it pass
    (`passes_allowed`); a route ends only at a city that takes it, and is at most the
    locomotive level in links."""

    def __init__(self, state: State, rules: Rules, graph: LinkGraph, seat: int, start: Hex, colour: str,
                 first: list[tuple] | None) -> None:
        self.state, self.rules, self.graph = state, rules, graph
        self.start, self.colour, self.first = start, colour, first
        self.loco = state["players"][seat]["loco"]
        self.passes_left = rules.passes_allowed(state, seat)
        self.links: list[Route] = []
        self.stops: list[Hex] = []
        self.visited: set[Hex] = {start} if first is None else set()
        self._takes: dict[Hex, bool] = {}

    def at(self) -> Hex:
        return self.stops[-1] if self.stops else self.start

    def ways_on(self) -> list[tuple[Route, Hex]]:
        """Every (link, stop at its far end) that leaves where the cube is now."""
        if not self.links and self.first is not None:
            return self.first
        return self.graph.at_stop.get(self.at(), [])

    def refusal(self, link: Route, there: Hex) -> IllegalMove | None:
        """Why the cube may not take `link` to `there` next, or None."""
        if there in self.visited:
            return IllegalMove("REVISITS_STOP", f"the route visits {there} twice", hex=as_dict(there))
        if any(link is used for used in self.links):
            return IllegalMove("ROUTE_BROKEN", f"the route uses link {link.link_id} twice",
                               link=link.link_id)
        return None

    def takes(self, there: Hex) -> bool:
        """Whether the cube's colour is taken at this stop (then it stops, or passes on)."""
        known = self._takes.get(there)
        if known is None:
            known = there in self.graph.cities and self.rules.accepts(self.state, there, self.colour)
            self._takes[there] = known
        return known

    def go(self, link: Route, there: Hex) -> None:
        self.links.append(link)
        self.stops.append(there)
        self.visited.add(there)

    def back(self) -> None:
        self.links.pop()
        self.visited.discard(self.stops.pop())

    def blocked(self, seat: int) -> bool:
        return self.rules.route_blocked(self.state, seat, self.colour, self.start, self.stops,
                                        self.links)

    def every_route(self) -> Iterator[tuple[list[Route], list[Hex]]]:
        """Every route the rule allows from here, as (links, stops after start)."""
        if len(self.links) == self.loco:
            return
        for link, there in self.ways_on():
            if self.refusal(link, there) is not None:
                continue
            self.go(link, there)
            if self.takes(there):
                yield list(self.links), list(self.stops)
                if self.passes_left > 0:
                    self.passes_left -= 1
                    yield from self.every_route()
                    self.passes_left += 1
            else:
                yield from self.every_route()
            self.back()


def deliveries(state: State, rules: Rules, seat: int) -> list[DeliverMove]:
    graph = LinkGraph(state, rules)
    moves: list[DeliverMove] = []
    income: dict[tuple[int, ...], dict[str, int]] = {}
    for k, colours in sorted(rules.cube_sources(state).items()):
        start = parse_key(k)
        first = rules.delivery_first_steps(state, start, graph.by_id.values())
        for colour in sorted(set(colours)):
            trip = Trip(state, rules, graph, seat, start, colour, first)
            for links, stops in trip.every_route():
                if rules.route_blocked(state, seat, colour, start, stops, links):
                    continue
                ids = tuple(id(link) for link in links)
                if ids not in income:
                    income[ids] = income_of(state, rules, links)
                move: DeliverMove = {"type": "deliver", "from": as_dict(start), "color": colour,
                                     "links": [link.link_id for link in links],
                                     "income": dict(income[ids])}
                if first is not None:
                    move["toward"] = as_dict(stops[0])
                moves.append(move)
    return moves


def check_delivery(state: State, rules: Rules, seat: int,
                   move: GivenMove) -> tuple[Hex, str, list[Route], list[Hex]]:
    start = hex_field(move, "from")
    colour = move.get("color")
    ids = move.get("links")
    if not isinstance(colour, str) or not isinstance(ids, list) or not ids or not all(
            isinstance(i, str) for i in ids):
        raise IllegalMove("BAD_MOVE", "a delivery names from, color and a non-empty list of links")
    if colour not in rules.cube_sources(state).get(key(start), []):
        raise IllegalMove("NO_CUBE", f"no {colour} cube at {start}", city=as_dict(start), color=colour)
    loco = state["players"][seat]["loco"]
    if len(ids) > loco:
        raise IllegalMove("ROUTE_TOO_LONG", f"{len(ids)} links with a level-{loco} locomotive",
                          links=len(ids), locomotive=loco)
    graph = LinkGraph(state, rules)
    first = rules.delivery_first_steps(state, start, graph.by_id.values())
    toward = None
    if "toward" in move:
        if first is None:
            raise IllegalMove("BAD_MOVE", "toward is only for a cube that starts between stops")
        toward = hex_field(move, "toward")
    elif first is not None:
        raise IllegalMove("BAD_MOVE", "a cube between two stops names the stop it goes toward")
    trip = Trip(state, rules, graph, seat, start, colour, first)
    for i, link_id in enumerate(ids):
        link = graph.by_id.get(link_id)
        if link is None:
            raise IllegalMove("NO_SUCH_LINK", f"no complete link {link_id!r}", link=link_id)
        ways = [there for way, there in trip.ways_on() if way is link]
        if i == 0 and first is not None:
            if toward not in ways:
                raise IllegalMove("ROUTE_BROKEN", f"link {link_id} does not pass {start} toward "
                                  f"{toward}", link=link_id)
            there = toward
        elif not ways:
            raise IllegalMove("ROUTE_BROKEN", f"link {link_id} does not start at {trip.at()}",
                              link=link_id)
        else:
            there = ways[0]
        refusal = trip.refusal(link, there)
        if refusal is not None:
            raise refusal
        takes = trip.takes(there)
        last = i == len(ids) - 1
        if takes and not last:
            if trip.passes_left == 0:
                raise IllegalMove("PASSES_OWN_COLOUR", f"the cube must stop at {there}",
                                  city=as_dict(there))
            trip.passes_left -= 1
        if last and not takes:
            raise IllegalMove("WRONG_DESTINATION", f"{there} does not take {colour}",
                              hex=as_dict(there))
        trip.go(link, there)
    if trip.blocked(seat):
        raise IllegalMove("ROUTE_BLOCKED")
    return start, colour, trip.links, trip.stops


def check(state: State, rules: Rules, seat: int, move: GivenMove) -> tuple[str, tuple | None]:
    kind = expect_type(move, "deliver", "upgrade_locomotive", "pass")
    if kind == "upgrade_locomotive":
        check_upgrade(state, seat)
        return kind, None
    if kind == "deliver":
        return kind, check_delivery(state, rules, seat, move)
    return kind, None


def apply(state: State, rules: Rules, seat: int, move: GivenMove, events: list[Event]) -> None:
    kind, detail = check(state, rules, seat, move)
    mg = open_move_goods(state)
    if kind == "upgrade_locomotive":
        mg["upgraded"].append(seat)
        raise_locomotive(state, seat, events)
    elif kind == "deliver":
        assert detail is not None
        start, colour, links, stops = detail
        deliver(state, rules, seat, start, colour, links, stops[-1], events)
    else:
        events.append({"type": "passed", "seat": seat, "round": mg["round"]})
    if kind != "pass":
        mg["used"][str(seat)] = mg["used"].get(str(seat), 0) + 1
    state["queue"].pop(0)
    _round_over(state, rules)


def deliver(state: State, rules: Rules, seat: int, start: Hex, colour: str, links: list[Route],
            destination: Hex, events: list[Event]) -> None:
    rules.take_cube(state, start, colour)
    income = income_of(state, rules, links)
    for s, amount in income.items():
        state["players"][int(s)]["income"] += amount
    kept = rules.on_delivered(state, seat, colour, destination, events)
    if not kept:
        state["bag"][colour] += 1
    events.append({"type": "good_delivered", "seat": seat, "from": as_dict(start), "color": colour,
                   "to": as_dict(destination), "links": [link.link_id for link in links],
                   "income": income})



def delivery_edges(state: State, rules: Rules, moves: Sequence[GivenMove]) -> list[list[int]]:
    """For each listed delivery, the edge by which the cube leaves each place it is at: its
    source, then each stop it passes. With the source, these name the route whatever the link
    ids (service/sim numbers a delivery's steps by them). A cube that starts between stops
    (Holland's windmills) leaves its hex by the lowest edge of its first link that heads
    toward the stop the move names."""
    graph = LinkGraph(state, rules)
    out = []
    for move in moves:
        at = hex_field(move, "from")
        edges = []
        for i, link_id in enumerate(move["links"]):
            link = graph.by_id[link_id]
            if i == 0 and "toward" in move:
                there = hex_field(move, "toward")
                edges.append(_edge_toward(link, at, there))
            else:
                end = next(e for e in link.ends if e.hex == at)
                edges.append(end.edge)
                there = link.stops[1] if link.ends[0] is end else link.stops[0]
            at = there
        out.append(edges)
    return out


def _edge_toward(link: Route, h: Hex, stop: Hex) -> int:
    """The lowest edge by which a cube on hex h, on this link, leaves h heading for `stop`."""
    pieces, ends = link.pieces, link.ends
    forward = stop == ends[1].hex
    found: list[int] = []
    for i, p in enumerate(pieces):
        if p[0] != h:
            continue
        j = i + 1 if forward else i - 1
        beyond = pieces[j][0] if 0 <= j < len(pieces) else (ends[1] if forward else ends[0]).hex
        found.extend(e for e in (p[1], p[2]) if e >= 0 and around(h)[e] == beyond)
    return min(found)
