"""Track laid straight into a state, for build and delivery tests on the Rust Belt map.

The fixtures name real Rust Belt hexes. The chain used most:

    Chicago (7,11) red -(8,11)- Michigan City (9,10) -(10,10)- Fort Wayne (11,10)
        -(12,10)- Cincinnati (12,11) blue -(11,12)- Indianapolis (10,12) -(10,13)- Evansville (9,14) blue
"""

from __future__ import annotations

import random

from service.engine import game, tiles
from service.engine.hexgrid import Hex, as_dict
from service.engine.variants import rules_for

CHICAGO, CINCINNATI, EVANSVILLE = (7, 11), (12, 11), (9, 14)
MICHIGAN_CITY, FORT_WAYNE, INDIANAPOLIS = (9, 10), (11, 10), (10, 12)

# (hex, tracks) for plain hexes, (hex, exits) for towns, along the chain above.
CHICAGO_TO_MICHIGAN_CITY = [((8, 11), [[1, 5]]), (MICHIGAN_CITY, "town", [4])]
MICHIGAN_CITY_TO_FORT_WAYNE = [(MICHIGAN_CITY, "town", [2]), ((10, 10), [[2, 5]]),
                               (FORT_WAYNE, "town", [5])]
FORT_WAYNE_TO_CINCINNATI = [(FORT_WAYNE, "town", [2]), ((12, 10), [[3, 5]])]
CINCINNATI_TO_INDIANAPOLIS = [((11, 12), [[1, 5]]), (INDIANAPOLIS, "town", [2])]
INDIANAPOLIS_TO_EVANSVILLE = [(INDIANAPOLIS, "town", [3]), ((10, 13), [[0, 4]])]


def key(h: Hex) -> str:
    return f"{h[0]},{h[1]}"


def lay(state: dict, pieces: list, owner: int | None) -> dict:
    """Lays track in place: each item is (hex, [[a, b], ...]) or (hex, "town", [exits]).
    Town exits add to those already there; the tile records and the supply are kept right."""
    for item in pieces:
        h = item[0]
        k = key(h)
        if item[1] == "town":
            exits = state["towns"].setdefault(k, [])
            exits.extend([e, owner] for e in item[2])
            exits.sort(key=lambda x: x[0])
            shape = tiles.town_shape(frozenset(e for e, _ in exits))
            _set_tile(state, k, shape.tiles[0], disk=shape.uses_disk)
        else:
            tracks = state["track"].setdefault(k, [])
            tracks.extend([min(a, b), max(a, b), owner] for a, b in item[1])
            tracks.sort()
            shape = tiles.track_shape(frozenset((a, b) for a, b, _ in tracks))
            _set_tile(state, k, shape.tile, disk=False)
    return state


def _set_tile(state: dict, k: str, tile: str, disk: bool) -> None:
    old = state["tiles"].get(k)
    if old:
        state["supply"][old] += 1
        if k in state["towns"] and old in ("straight", "gentle", "tight"):
            state["supply"]["town_disk"] += 1
    state["tiles"][k] = tile
    state["supply"][tile] -= 1
    if disk:
        state["supply"]["town_disk"] -= 1


def chain(upto: int = 5) -> list:
    """The chain's pieces, its first `upto` links."""
    parts = [CHICAGO_TO_MICHIGAN_CITY, MICHIGAN_CITY_TO_FORT_WAYNE, FORT_WAYNE_TO_CINCINNATI,
             CINCINNATI_TO_INDIANAPOLIS, INDIANAPOLIS_TO_EVANSVILLE]
    return [p for part in parts[:upto] for p in part]


def links(state: dict) -> list:
    """The complete links as Route objects."""
    return rules_for(state["map"]).network(state).links()


def link_between(state: dict, a: Hex, b: Hex) -> str:
    ids = [r.link_id for r in links(state) if set(r.stops) == {a, b}]
    assert len(ids) == 1, f"{len(ids)} links between {a} and {b}"
    return ids[0]


def owner_of(state: dict, h: Hex) -> list:
    """Owners of the pieces on a hex: plain tracks first, then town exits."""
    k = key(h)
    return [o for _, _, o in state["track"].get(k, [])] + [o for _, o in state["towns"].get(k, [])]


def builds_listed(state: dict, seat: int) -> dict[tuple, int]:
    """The listed builds as {(hex, shape): cost}."""
    out = {}
    for m in game.legal_moves(state, seat):
        if m["type"] == "build":
            h = (m["hex"]["q"], m["hex"]["r"])
            shape = tuple(map(tuple, m["tracks"])) if "tracks" in m else ("town", *m["town_exits"])
            out[(h, shape)] = m["cost"]
    return out


def build_move(hex_: Hex, tracks: list | None = None, exits: list | None = None) -> dict:
    """A build move: `tracks` for a plain hex, `exits` for a town."""
    move: dict = {"type": "build", "hex": as_dict(hex_)}
    if exits is not None:
        move["town_exits"] = exits
    else:
        move["tracks"] = tracks
    return move


def deliver_move(start: Hex, colour: str, link_ids: list[str], toward: Hex | None = None) -> dict:
    move = {"type": "deliver", "from": as_dict(start), "color": colour, "links": link_ids}
    if toward is not None:
        move["toward"] = as_dict(toward)
    return move


def funded_decisions(map_id: str, players: int, seed: int, phase: str,
                     game_seed: str) -> list[tuple[dict, int]]:
    """Every decision of `phase` (with the deciding seat) in one random game from `game_seed`
    whose players start with $300, so that it lasts every round; `seed` drives the players."""
    from service.engine.playout import RandomPlayer

    state = game.new_game(map_id, [f"P{i}" for i in range(players)], game_seed)
    for p in state["players"]:
        p["cash"] = 300
    player, found = RandomPlayer(random.Random(seed)), []
    while not game.is_finished(state):
        seat = game.active_seat(state)
        options = game.legal_moves(state, seat)
        if state["phase"] == phase:
            found.append((state, seat))
        state, _ = game.apply(state, seat, player.choose(state, seat, options))
    return found
