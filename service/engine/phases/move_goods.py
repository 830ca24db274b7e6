"""Move Goods: two rounds; in each, every player delivers one cube, upgrades the locomotive
(once per phase, never above 6) or passes. First Move holder first, then turn order.

A delivery runs over complete links only, at most the locomotive level of them, never visiting
a city or town twice, and stops at the first city that takes the cube's colour. Each link used
raises its owner's income by 1.
"""

from __future__ import annotations

from service.engine import rules_data as R
from service.engine.errors import IllegalMove
from service.engine.hexgrid import Hex, as_dict, key, parse_key
from service.engine.network import Route
from service.engine.phases.common import expect_type, hex_field
from service.engine.variants.base import raise_locomotive


def start(state: dict, rules, events: list) -> None:
    state["phase"] = "move_goods"
    state["move_goods"] = {"round": 1, "upgraded": [], "used": {}}
    _open_round(state, rules)


def _open_round(state: dict, rules) -> None:
    used = state["move_goods"]["used"]
    state["queue"] = [s for s in rules.move_order(state)
                      if used.get(str(s), 0) < rules.move_opportunities(state, s)]


def legal(state: dict, rules, seat: int) -> list[dict]:
    moves = [{"type": "pass"}]
    try:
        check_upgrade(state, seat)
        moves.append({"type": "upgrade_locomotive"})
    except IllegalMove:
        pass
    moves.extend(deliveries(state, rules, seat))
    return moves


def check_upgrade(state: dict, seat: int) -> None:
    if seat in state["move_goods"]["upgraded"]:
        raise IllegalMove("LOCOMOTIVE_UPGRADED")
    if state["players"][seat]["loco"] >= R.MAX_LOCOMOTIVE:
        raise IllegalMove("LOCOMOTIVE_MAX", locomotive=state["players"][seat]["loco"])


class LinkGraph:
    """Complete links by id and by the stops they join, for route search and checking."""

    def __init__(self, state: dict, rules) -> None:
        net = rules.network(state)
        self.by_id: dict[str, Route] = {}
        self.at_stop: dict[Hex, list[tuple[Route, Hex]]] = {}
        for link in net.links():
            self.by_id[link.link_id] = link
            a, b = link.stops
            self.at_stop.setdefault(a, []).append((link, b))
            self.at_stop.setdefault(b, []).append((link, a))
        self.cities = net.cities


def income_of(state: dict, rules, links: list[Route]) -> dict[str, int]:
    income: dict[str, int] = {}
    for link in links:
        owner = rules.link_income_owner(state, link)
        if owner is not None and not state["players"][owner]["eliminated"]:
            income[str(owner)] = income.get(str(owner), 0) + 1
    return income


def deliveries(state: dict, rules, seat: int) -> list[dict]:
    graph = LinkGraph(state, rules)
    loco = state["players"][seat]["loco"]
    passes = rules.passes_allowed(state, seat)
    moves: list[dict] = []
    for k, colours in sorted(rules.cube_sources(state).items()):
        start = parse_key(k)
        first = rules.delivery_first_steps(state, start, graph.by_id.values())
        for colour in sorted(set(colours)):
            for links, stops in _routes_from(state, rules, graph, start, colour, loco, passes, first):
                if rules.route_blocked(state, seat, colour, start, stops, links):
                    continue
                move = {"type": "deliver", "from": as_dict(start), "color": colour,
                        "links": [link.link_id for link in links],
                        "income": income_of(state, rules, links)}
                if first is not None:
                    move["toward"] = as_dict(stops[0])
                moves.append(move)
    return moves


def _routes_from(state, rules, graph: LinkGraph, start: Hex, colour: str, loco: int, passes: int,
                 first: list[tuple] | None = None):
    """Every route a cube of `colour` can take from `start`: (links, stops after start). `first`
    lists the first steps of a cube that starts between stops (see Rules.delivery_first_steps)."""
    path: list[Route] = []
    stops: list[Hex] = []
    visited = {start} if first is None else set()

    def extend(at: Hex, passes_left: int):
        if len(path) == loco:
            return
        for link, there in (first if not path and first is not None else graph.at_stop.get(at, [])):
            if there in visited or any(link is used for used in path):
                continue
            path.append(link)
            stops.append(there)
            visited.add(there)
            takes = there in graph.cities and rules.accepts(state, there, colour)
            if takes:
                yield list(path), list(stops)
                if passes_left > 0:
                    yield from extend(there, passes_left - 1)
            else:
                yield from extend(there, passes_left)
            path.pop()
            stops.pop()
            visited.discard(there)

    yield from extend(start, passes)


def check_delivery(state: dict, rules, seat: int,
                   move: dict) -> tuple[Hex, str, list[Route], list[Hex]]:
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
    links, stops = [], []
    at, visited = start, ({start} if first is None else set())
    passes_left = rules.passes_allowed(state, seat)
    for i, link_id in enumerate(ids):
        link = graph.by_id.get(link_id)
        if link is None:
            raise IllegalMove("NO_SUCH_LINK", f"no complete link {link_id!r}", link=link_id)
        a, b = link.stops
        if i == 0 and first is not None:
            if not any(link is f and toward == s for f, s in first):
                raise IllegalMove("ROUTE_BROKEN", f"link {link_id} does not pass {start} toward "
                                  f"{toward}", link=link_id)
            there = toward
        elif at not in (a, b):
            raise IllegalMove("ROUTE_BROKEN", f"link {link_id} does not start at {at}", link=link_id)
        else:
            there = b if at == a else a
        if there in visited:
            raise IllegalMove("REVISITS_STOP", f"the route visits {there} twice", hex=as_dict(there))
        if any(link is used for used in links):
            raise IllegalMove("ROUTE_BROKEN", f"the route uses link {link_id} twice", link=link_id)
        takes = there in graph.cities and rules.accepts(state, there, colour)
        last = i == len(ids) - 1
        if takes and not last:
            if passes_left == 0:
                raise IllegalMove("PASSES_OWN_COLOUR", f"the cube must stop at {there}", city=as_dict(there))
            passes_left -= 1
        if last and not takes:
            raise IllegalMove("WRONG_DESTINATION", f"{there} does not take {colour}", hex=as_dict(there))
        links.append(link)
        stops.append(there)
        visited.add(there)
        at = there
    if rules.route_blocked(state, seat, colour, start, stops, links):
        raise IllegalMove("ROUTE_BLOCKED")
    return start, colour, links, stops


def check(state: dict, rules, seat: int, move: dict):
    kind = expect_type(move, "deliver", "upgrade_locomotive", "pass")
    if kind == "upgrade_locomotive":
        check_upgrade(state, seat)
        return kind, None
    if kind == "deliver":
        return kind, check_delivery(state, rules, seat, move)
    return kind, None


def apply(state: dict, rules, seat: int, move: dict, events: list) -> None:
    kind, detail = check(state, rules, seat, move)
    mg = state["move_goods"]
    if kind == "upgrade_locomotive":
        mg["upgraded"].append(seat)
        raise_locomotive(state, seat, events)
    elif kind == "deliver":
        start, colour, links, stops = detail
        deliver(state, rules, seat, start, colour, links, stops[-1], events)
    else:
        events.append({"type": "passed", "seat": seat, "round": mg["round"]})
    if kind != "pass":
        mg["used"][str(seat)] = mg["used"].get(str(seat), 0) + 1
    state["queue"].pop(0)
    if not state["queue"] and mg["round"] == 1:
        mg["round"] = 2
        _open_round(state, rules)


def deliver(state: dict, rules, seat: int, start: Hex, colour: str, links: list[Route],
            destination: Hex, events: list) -> None:
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

