"""Berlin, the Wall map: 2 tiles a turn, $3 a hex, the 19-disc wall and the occupation cubes.

State kept by this map in state["variant"]:
  wall [disc id]   the discs still standing (ids of special.wall_edges)
  wall_falls int   the round whose start brings the wall down (the round before the last)
  fallen bool      whether it has fallen (from then on: no discs, no colour blocking)
"""

from __future__ import annotations

from service.engine.errors import IllegalMove
from service.engine.hexgrid import Hex, as_dict, key, neighbour, parse_key
from service.engine.layout import Event, GivenMove, Move, State
from service.engine.maps import MapData
from service.engine.network import Route
from service.engine.state import action_holder, draw_cube, open_build_turn
from service.engine.variants.base import Rules

WEST, EAST = "west", "east"
# A cube of this colour in a city of that side closes the city to other colours
# (rule text; docs/rules-decisions.md, Berlin).
OCCUPIER = {EAST: "red", WEST: "blue"}


class Berlin(Rules):
    def __init__(self, board: MapData) -> None:
        super().__init__(board)
        special = board.special
        self.side: dict[Hex, str] = {h: raw["side"] for h, raw in board.raw_hexes.items()}
        self.discs: dict[int, tuple[Hex, Hex]] = {
            w["id"]: ((w["a"]["q"], w["a"]["r"]), (w["b"]["q"], w["b"]["r"]))
            for w in special["wall_edges"]}
        self.disc_at: dict[frozenset, int] = {frozenset(ab): i for i, ab in self.discs.items()}
        # The edges of each hex that a disc stands on (while it stands).
        self._disc_edges: dict[Hex, tuple[int, ...]] = {
            h: tuple(e for e in range(6) if frozenset((h, neighbour(h, e))) in self.disc_at)
            for ab in self.discs.values() for h in ab}
        self.tiles_per_turn: int = special["tiles_per_round"]
        self.engineer_tiles: int = special["engineer"]["tiles"]
        self.hex_cost: int = special["build_cost_non_town_hex"]

    def map_features(self) -> dict:
        return {
            **super().map_features(),
            "wall": [{"id": i, "a": as_dict(a), "b": as_dict(b)} for i, (a, b) in sorted(self.discs.items())],
            "wall_falls_in_round": {str(p): self.last_round(p) - 1
                                    for p in range(self.map.min_players, self.map.max_players + 1)},
            "tiles_per_turn": self.tiles_per_turn,
            "engineer": {"tiles": self.engineer_tiles, "or_tiles_and_one_wall_disc": self.engineer_tiles - 1},
            "non_town_hex_cost": self.hex_cost,
            "sides": {side: sorted((as_dict(h) for h, s in self.side.items() if s == side),
                                   key=lambda d: (d["q"], d["r"])) for side in ("west", "east")},
        }

    def standing(self, state: State) -> set[int]:
        return set(state["variant"]["wall"])

    def disc_between(self, state: State, a: Hex, b: Hex) -> int | None:
        """The standing disc on the edge between a and b, if any."""
        disc = self.disc_at.get(frozenset((a, b)))
        return disc if disc is not None and disc in state["variant"]["wall"] else None

    # -- setup and the round ---------------------------------------------------------------

    def setup(self, state: State, events: list[Event]) -> None:
        """A blue cube drawn for an East city or a red one for a West city goes back to the bag
        and another is drawn in its place, until one of another colour comes."""
        for k, cubes in sorted(state["cubes"].items()):
            h = parse_key(k)
            banned = OCCUPIER[WEST if self.side[h] == EAST else EAST]
            for i, colour in enumerate(cubes):
                if colour != banned:
                    continue
                returned = [colour]
                replacement = draw_cube(state)
                while replacement == banned:
                    returned.append(replacement)
                    replacement = draw_cube(state)
                assert replacement is not None, "the bag is full at setup"
                for c in returned:
                    state["bag"][c] += 1
                cubes[i] = replacement
                events.append({"type": "cube_replaced", "hex": as_dict(h), "removed": colour,
                               "placed": replacement})
        state["variant"] = {"wall": sorted(self.discs), "wall_falls": state["last_round"] - 1,
                            "fallen": False}

    def start_round(self, state: State, events: list[Event]) -> None:
        variant = state["variant"]
        if not variant["fallen"] and state["round"] >= variant["wall_falls"]:
            removed = variant["wall"]
            variant["wall"] = []
            variant["fallen"] = True
            events.append({"type": "wall_fallen", "round": state["round"], "discs": removed})

    def board_features(self, state: State) -> dict:
        variant = state["variant"]
        return {"wall": {
            "discs": [{"id": i, "a": as_dict(self.discs[i][0]), "b": as_dict(self.discs[i][1])}
                      for i in variant["wall"]],
            "falls_in_round": variant["wall_falls"],
            "fallen": variant["fallen"],
        }}

    # -- build ------------------------------------------------------------------------------

    def tiles_allowed(self, state: State, seat: int) -> int:
        if action_holder(state, "engineer") == seat:
            return self.engineer_tiles
        return self.tiles_per_turn

    def edge_closed(self, state: State, seat: int, h: Hex, edge: int) -> bool:
        """No track crosses a standing disc; track may point at one only where a city lies
        directly across (the link then ends at that city)."""
        n = neighbour(h, edge)
        if self.disc_between(state, h, n) is None:
            return False
        return n not in self.map.cities and key(n) not in state["new_cities"]

    def closable_edges(self, h: Hex) -> tuple[int, ...]:
        return self._disc_edges.get(h, ())

    def new_tile_cost(self, state: State, h: Hex, kind: str) -> int:
        return self.hex_cost

    def replace_cost(self, state: State, h: Hex, base_cost: int) -> int:
        return self.hex_cost

    @classmethod
    def extra_build_move_types(cls) -> tuple[str, ...]:
        return ("remove_wall",)

    def _may_remove_wall(self, state: State, seat: int) -> str | None:
        """Why the seat may not remove a disc now, or None when it may."""
        build = open_build_turn(state)
        if action_holder(state, "engineer") != seat:
            return "only the Engineer holder removes a wall disc"
        if "remove_wall" in build["map_moves"]:
            return "one disc per Engineer build turn"
        if build["tiles_left"] <= 0:
            return "removing a disc takes the place of a tile, and none is left"
        if not state["variant"]["wall"]:
            return "no disc is standing"
        return None

    def extra_build_moves(self, state: State, seat: int) -> list[Move]:
        if self._may_remove_wall(state, seat) is not None:
            return []
        return [{"type": "remove_wall",
                 "edge": {"a": as_dict(self.discs[i][0]), "b": as_dict(self.discs[i][1])}}
                for i in state["variant"]["wall"]]

    def every_extra_build_move(self) -> list[Move]:
        return [{"type": "remove_wall", "edge": {"a": as_dict(a), "b": as_dict(b)}}
                for _, (a, b) in sorted(self.discs.items())]

    def apply_extra_build_move(self, state: State, seat: int, move: GivenMove, events: list[Event]) -> None:
        why = self._may_remove_wall(state, seat)
        if why is not None:
            raise IllegalMove("REMOVE_WALL_NOT_ALLOWED", why)
        edge = move.get("edge")
        if set(move) - {"type", "edge"} or not isinstance(edge, dict) or set(edge) != {"a", "b"}:
            raise IllegalMove("BAD_MOVE", "remove_wall names edge {a, b}")
        ends = []
        for name in ("a", "b"):
            v = edge[name]
            if (not isinstance(v, dict) or set(v) != {"q", "r"}
                    or not all(isinstance(v[c], int) and not isinstance(v[c], bool) for c in "qr")):
                raise IllegalMove("BAD_MOVE", f"edge.{name} must be a hex {{q, r}}")
            ends.append((v["q"], v["r"]))
        disc = self.disc_between(state, ends[0], ends[1])
        if disc is None or self.discs[disc] != tuple(ends):
            raise IllegalMove("REMOVE_WALL_NOT_ALLOWED",
                              "no standing disc there (a is the West hex, b the East hex)",
                              edge={"a": as_dict(ends[0]), "b": as_dict(ends[1])})
        state["variant"]["wall"].remove(disc)
        open_build_turn(state)["tiles_left"] -= 1
        events.append({"type": "wall_removed", "seat": seat, "disc": disc,
                       "edge": {"a": as_dict(ends[0]), "b": as_dict(ends[1])}})

    # -- move goods -------------------------------------------------------------------------

    def route_blocked(self, state: State, seat: int, colour: str, start: Hex, stops: list[Hex],
                      links: list[Route]) -> bool:
        variant = state["variant"]
        if variant["fallen"]:
            return False
        # A link that ends at a standing disc carries nothing.
        if variant["wall"]:
            for link in links:
                for end in link.ends:
                    if self.disc_between(state, end.hex, neighbour(end.hex, end.edge)) is not None:
                        return True
        # Occupied cities: East with a red cube, West with a blue one, close to other colours.
        for stop in stops:
            occupier = OCCUPIER[self.side[stop]]
            if colour != occupier and occupier in state["cubes"].get(key(stop), ()):
                return True
        return False
