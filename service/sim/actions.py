"""A fixed numbering of moves per map and player count: the action ids a network can output.

Ids are laid out in blocks, in this order (docs/simulation.md has the table); each block's
order follows the engine's MoveSpace (engine/move_space.py), which depends on the map data, the
tile manifest and the rules numbers alone, so the same map and player count give the same ids
in every process and release of one ACTIONS_VERSION:

    issue_shares(count 0..15), drop_out, turn_order_pass, bid(amount 1..max_cash),
    select_action(each action of the map), build(each build hex x each shape: track shapes on
    an ordinary hex, town shapes on a town), urbanize(each town x each new city), end_build,
    the map's own build moves, pass, upgrade_locomotive, deliver_cube(each hex x each colour),
    deliver_via(edge 0..5), deliver_stop, produce(each set of extra fields x each multiset of
    (colour, column) placements, 0..the most placed).

A delivery is several actions (a route has no bounded table): the cube (its source and colour),
then the edge by which it leaves each place it is at, then `deliver_stop` only where the route
could also go on past a city that takes the cube (state.py builds this from the engine's own
listing, so the steps give exactly the legal deliveries). Every other move is one action.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from itertools import combinations_with_replacement

import orjson

from service.engine import game
from service.engine.layout import GivenMove, State

ACTIONS_VERSION = "aos-actions/1"
EDGES = 6

Key = tuple


def move_key(move: GivenMove) -> Key:
    """What names a move, without the fields apply ignores (a build's cost, a delivery's
    income): two moves with the same key are the same move."""
    t = move["type"]
    if t == "build":
        h = move["hex"]
        if "tracks" in move:
            return ("build", h["q"], h["r"], tuple(sorted((min(a, b), max(a, b)) for a, b in move["tracks"])))
        return ("town", h["q"], h["r"], tuple(sorted(move["town_exits"])))
    if t == "issue_shares":
        return (t, move["count"])
    if t == "bid":
        return (t, move["amount"])
    if t == "select_action":
        return (t, move["action"])
    if t == "urbanize":
        return (t, move["hex"]["q"], move["hex"]["r"], move["new_city"])
    if t == "produce":
        placements = tuple(sorted((p["color"], p["column"]) for p in move["placements"]))
        extras = tuple(sorted((k, (v["q"], v["r"])) for k, v in move.items()
                              if k not in ("type", "placements")))
        return (t, placements, extras)
    if t == "deliver":
        raise ValueError("a delivery is several actions: ActionSpace.delivery_steps")
    if t in ("drop_out", "turn_order_pass", "end_build", "pass", "upgrade_locomotive"):
        return (t,)
    return ("map", orjson.dumps(move, option=orjson.OPT_SORT_KEYS))


class ActionSpace:
    """The ids of one map and player count. `encode(move)` is the id of a move that is one
    action; `delivery_steps` the ids of a delivery's steps; `describe(id)` names any id."""

    def __init__(self, map_id: str, players: int) -> None:
        space = game.move_space(map_id, players)
        self.map_id, self.players, self.move_space = map_id, players, space
        self.version = ACTIONS_VERSION
        self._names: list[str] = []
        self._ids: dict[Key, int] = {}

        def add(key: Key, name: str) -> int:
            self._ids[key] = len(self._names)
            self._names.append(name)
            return self._ids[key]

        for n in range(space.max_shares + 1):
            add(("issue_shares", n), f"issue {n} shares")
        add(("drop_out",), "drop out")
        add(("turn_order_pass",), "use the turn order pass")
        self.first_bid = len(self._names)
        for amount in range(1, space.max_cash + 1):
            add(("bid", amount), f"bid ${amount}")
        for action in space.actions:
            add(("select_action", action), f"take {action}")
        towns = set(space.towns)
        for q, r in space.build_hexes:
            if (q, r) in towns:
                for exits in space.town_shapes:
                    add(("town", q, r, exits), f"build town {q},{r} exits {''.join(map(str, exits))}")
            else:
                for tracks in space.track_shapes:
                    name = " ".join(f"{a}-{b}" for a, b in tracks)
                    add(("build", q, r, tracks), f"build {q},{r} track {name}")
        for q, r in space.towns:
            for letter in space.new_city_letters:
                add(("urbanize", q, r, letter), f"urbanize {q},{r} as {letter}")
        add(("end_build",), "end build")
        for move in space.extra_build_moves:
            add(move_key(move), orjson.dumps(move).decode())
        add(("pass",), "pass")
        add(("upgrade_locomotive",), "upgrade locomotive")
        self.first_cube = len(self._names)
        self.colours = space.colours
        self.cube_hexes = space.hexes
        self._cube_index = {h: i for i, h in enumerate(space.hexes)}
        for q, r in space.hexes:
            for colour in space.colours:
                add(("cube", q, r, colour), f"deliver a {colour} cube from {q},{r}")
        self.first_via = len(self._names)
        for edge in range(EDGES):
            add(("via", edge), f"on by edge {edge}")
        self.stop = add(("stop",), "deliver here")
        pairs = [(c, col) for c in sorted(space.colours) for col in sorted(space.columns)]
        for extras in space.production_extras:
            extra_name = "".join(f" {k} {v[0]},{v[1]}" for k, v in extras)
            for k in range(space.production_placements + 1):
                for placements in combinations_with_replacement(pairs, k):
                    name = ", ".join(f"{c} to {col}" for c, col in placements) or "nothing"
                    add(("produce", placements, extras), f"produce {name}{extra_name}")
        self.num_distinct_actions = len(self._names)

    def __deepcopy__(self, memo: dict) -> ActionSpace:
        return self  # never changed once made

    def encode(self, move: GivenMove) -> int:
        """The id of a move that is one action; KeyError for a move no id names."""
        if move["type"] == "build":
            # The listing names tracks and exits in order already: try that key first (the
            # build listing is the hot path), and the normalised one only if it names nothing.
            h = move["hex"]
            tracks = move.get("tracks")
            key = (("build", h["q"], h["r"], tuple(map(tuple, tracks))) if tracks is not None
                   else ("town", h["q"], h["r"], tuple(move["town_exits"])))
            found = self._ids.get(key)
            if found is not None:
                return found
        return self._ids[move_key(move)]

    def cube_id(self, source: tuple[int, int], colour: str) -> int:
        return self.first_cube + self._cube_index[source] * len(self.colours) + self.colours.index(colour)

    def is_delivery_step(self, action: int) -> bool:
        return self.first_cube <= action <= self.stop

    def delivery_paths(self, state: State, deliveries: Sequence[GivenMove]) -> list[tuple[int, ...]]:
        """The steps of each listed delivery, without the closing deliver_stop (state.py adds
        it where a route could also go on): its cube, then each edge it leaves by."""
        edges = game.delivery_edges(state, deliveries)
        return [(self.cube_id((m["from"]["q"], m["from"]["r"]), m["color"]),
                 *(self.first_via + e for e in route)) for m, route in zip(deliveries, edges, strict=True)]

    def describe(self, action: int) -> str:
        """A short name of any id (without a state: a build names no cost)."""
        return self._names[action]

    def digest(self) -> str:
        """A fingerprint of the whole numbering: the same digest, the same ids."""
        import hashlib

        return hashlib.sha256("\n".join(self._names).encode()).hexdigest()[:16]


@cache
def action_space(map_id: str, players: int) -> ActionSpace:
    """The action space of a map and player count (made once per process)."""
    return ActionSpace(map_id, players)
