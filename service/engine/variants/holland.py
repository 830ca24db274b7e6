"""Holland (docs/rules-decisions.md, Holland): 3-4 players; new-city tile E is removed and the sea is
impassable (both in the map data); polders cost $3 (data) and are closed until round 5 with 3
players, round 4 with 4; with 3 players one of Urbanization and Engineer is blocked, swapping at
the end of every round; the windmill variant as a game option.

Options: `blocked_action` ("urbanization" | "engineer" | None: the seed chooses at setup; 3
players only) and `windmills` (bool). With windmills each windmill hex holds one cube drawn at
setup and costs $5 to build on. Once track is on a windmill its cube may be delivered: it
travels first along a complete link through the windmill to one of that link's stops, named
`toward` in the deliver move, and that link is the route's first link (its owner gets +1). A
windmill is no stop, so passing one earns nothing.

state["variant"]: {"blocked": action id | None, "windmills": {hex key: colour | None},
"cubes_held": the windmill cubes still on the board (counted by state.cubes_in_play)}.
"""

from __future__ import annotations

from collections.abc import Iterable

from service.engine import rng
from service.engine import rules_data as R
from service.engine.errors import SetupError
from service.engine.hexgrid import Hex, as_dict, key, parse_key
from service.engine.layout import Event, State
from service.engine.maps import MapData
from service.engine.network import Route
from service.engine.state import draw_cube
from service.engine.variants.base import Rules

BLOCKABLE = ("urbanization", "engineer")
WINDMILL_COST = 5
POLDERS_OPEN = {3: 5, 4: 4}  # round in which polders open, by players at the start


class Holland(Rules):
    def __init__(self, board: MapData) -> None:
        super().__init__(board)
        self.polders = frozenset((p["q"], p["r"]) for p in board.special["polder_hexes"])
        self.windmill_hexes = tuple(sorted((p["q"], p["r"]) for p in board.special["polder_hexes"]
                                           if p["windmill"]))

    def map_features(self) -> dict:
        return {
            **super().map_features(),
            "polders": [as_dict(h) for h in sorted(self.polders)],
            "polders_open_in_round": {str(p): r for p, r in POLDERS_OPEN.items()},
            "polder_cost": self.map.terrain_costs["polder"],
            "windmills": [as_dict(h) for h in self.windmill_hexes],
            "windmill_cost": WINDMILL_COST,
            "three_player_block": list(BLOCKABLE),
        }

    # -- setup ---------------------------------------------------------------------------

    def options_schema(self) -> dict[str, tuple[type, bool | int | str | None]]:
        return {"blocked_action": (str, None), "windmills": (bool, False)}

    def check_options(self, options: dict) -> None:
        blocked = options.get("blocked_action")
        if blocked is not None and blocked not in BLOCKABLE:
            raise SetupError("BAD_OPTION", "blocked_action must be urbanization or engineer")

    def setup(self, state: State, events: list[Event]) -> None:
        blocked = state["options"].get("blocked_action")
        if state["start_players"] != 3:
            if blocked is not None:
                raise SetupError("BAD_OPTION", "blocked_action is for 3-player games only")
        elif blocked is None:
            state["rng"], pick = rng.choose(state["rng"], rng.Draw("pick", (1,) * len(BLOCKABLE), BLOCKABLE))
            blocked = BLOCKABLE[pick]
        windmills = {}
        if state["options"].get("windmills"):
            windmills = {key(h): draw_cube(state) for h in self.windmill_hexes}
        state["variant"] = {"blocked": blocked, "windmills": windmills,
                            "cubes_held": sum(1 for c in windmills.values() if c)}

    def polders_open_round(self, state: State) -> int:
        return POLDERS_OPEN[state["start_players"]]

    # -- the round -----------------------------------------------------------------------

    def start_round(self, state: State, events: list[Event]) -> None:
        blocked = state["variant"]["blocked"]
        if blocked is not None:
            state["actions"]["locked"] = [blocked]
            events.append({"type": "actions_locked", "actions": [blocked]})

    def end_round(self, state: State, events: list[Event]) -> None:
        blocked = state["variant"]["blocked"]
        if blocked is not None:
            state["variant"]["blocked"] = BLOCKABLE[1 - BLOCKABLE.index(blocked)]

    # -- build ---------------------------------------------------------------------------

    def hex_closed(self, state: State, h: Hex) -> bool:
        return h in self.polders and state["round"] < self.polders_open_round(state)

    def new_tile_cost(self, state: State, h: Hex, kind: str) -> int:
        if key(h) in state["variant"]["windmills"]:
            return WINDMILL_COST + R.BUILD_COSTS["new_tile_extra_by_kind"][kind]
        return super().new_tile_cost(state, h, kind)

    # -- move goods ----------------------------------------------------------------------

    def cube_sources(self, state: State) -> dict[str, list[str]]:
        ready = {k: [c] for k, c in state["variant"]["windmills"].items()
                 if c is not None and k in state["track"]}
        return {**state["cubes"], **ready} if ready else state["cubes"]

    def delivery_first_steps(self, state: State, start: Hex,
                             links: Iterable[Route]) -> list[tuple[Route, Hex]] | None:
        if key(start) not in state["variant"]["windmills"]:
            return None
        steps: list[tuple[Route, Hex]] = []
        for link in links:
            if any(p[0] == start for p in link.pieces):
                steps.extend((link, stop) for stop in link.stops)
        return steps

    def take_cube(self, state: State, start: Hex, colour: str) -> None:
        k = key(start)
        variant = state["variant"]
        if k in variant["windmills"]:
            assert variant["windmills"][k] == colour
            variant["windmills"][k] = None
            variant["cubes_held"] -= 1
            return
        super().take_cube(state, start, colour)

    # -- the view ------------------------------------------------------------------------

    def board_features(self, state: State) -> dict:
        opens = self.polders_open_round(state)
        return {
            "polders": {"hexes": [as_dict(h) for h in sorted(self.polders)],
                        "open_from_round": opens, "open": state["round"] >= opens},
            "blocked_action": state["variant"]["blocked"],
            "windmills": [{"hex": as_dict(parse_key(k)), "color": c, "on_track": k in state["track"]}
                          for k, c in sorted(state["variant"]["windmills"].items(),
                                             key=lambda kc: parse_key(kc[0]))],
        }
