"""The base rules' hooks: every place where a map may change the rules.

Phases call these instead of testing a map's name; a map's variant module overrides the few it
changes. The defaults are the base game on its standard map.
"""

from __future__ import annotations

from collections.abc import Iterable

from service.engine import rules_data as R
from service.engine.contract_types import ProduceMove
from service.engine.hexgrid import Hex, key
from service.engine.layout import Event, GivenMove, Move, State
from service.engine.maps import MapData
from service.engine.network import Network, Route, UnindexedNetwork
from service.engine.state import action_holder, active_players, raise_locomotive

ALL_EDGES = (0, 1, 2, 3, 4, 5)


class Rules:
    def __init__(self, board: MapData) -> None:
        self.map = board

    def network(self, state: State, *, unindexed: bool = False) -> Network:
        """The state's track network; `unindexed`, its indexes of the track made only when
        first read (UnindexedNetwork: for the build listing)."""
        made = UnindexedNetwork if unindexed else Network
        return made(state, self.map, self.trackless_stops(state))

    def trackless_stops(self, state: State) -> frozenset[Hex]:
        """Hexes that end links like a city though no city is there (Iraq's oil fields)."""
        return frozenset()

    # -- setup ---------------------------------------------------------------------------

    def options_schema(self) -> dict[str, tuple[type, bool | int | str | None]]:
        """Game options this map accepts: name -> (type, default)."""
        return {}

    def check_options(self, options: dict) -> None:
        """Raises SetupError when chosen options do not fit together."""

    def last_round(self, players: int) -> int:
        table = self.map.rounds_by_players or R.ROUNDS_BY_PLAYERS
        return table[players]

    def display_columns_left_empty(self, state: State) -> set[str]:
        """Display columns in play that start the game without cubes."""
        return set()

    def setup_before_draws(self, state: State, events: list[Event]) -> None:
        """Map-specific setup before the display and cities are filled from the bag (Iraq's oil
        fields take their black cubes first)."""

    def setup(self, state: State, events: list[Event]) -> None:
        """Map-specific setup after the display and cities are filled."""

    def starting_cubes(self, city_hex: Hex) -> int:
        return self.map.cities[city_hex].starting_cubes

    def map_features(self) -> dict:
        """What this map adds to the base game, for GET /v1/maps/{map}: its actions, and each
        map's own features (walls, oil fields, polders...)."""
        return {"actions": list(self.actions())}

    def board_features(self, state: State) -> dict:
        """Map features to show in the game view's board (walls, oil, polders...)."""
        return {}

    # -- the round -----------------------------------------------------------------------

    def start_round(self, state: State, events: list[Event]) -> None:
        """Called as a round starts, before shares are issued."""

    def end_round(self, state: State, events: list[Event]) -> None:
        """Called after growth, before the next round starts."""

    def actions(self) -> tuple[str, ...]:
        return R.BASE_ACTIONS

    def available_actions(self, state: State) -> list[str]:
        taken = state["actions"]["taken"]
        locked = set(state["actions"]["locked"])
        return [a for a in self.actions() if a not in taken and a not in locked]

    def on_action_selected(self, state: State, seat: int, action: str, events: list[Event]) -> None:
        if action == "locomotive":
            raise_locomotive(state, seat, events)

    def forced_drop_out(self, state: State, seat: int) -> bool:
        """Whether this bidder must drop out at their turn in the auction."""
        return False

    def turn_order_pass_holder(self, state: State) -> int | None:
        return action_holder(state, "turn_order")

    # -- build ---------------------------------------------------------------------------

    def build_order(self, state: State) -> list[int]:
        return first_then_order(state, action_holder(state, "first_build"))

    def tiles_allowed(self, state: State, seat: int) -> int:
        if action_holder(state, "engineer") == seat:
            return R.ENGINEER_TILES
        return R.TILES_PER_BUILD_TURN

    def may_urbanize(self, state: State, seat: int) -> bool:
        return action_holder(state, "urbanization") == seat

    def new_city_letters(self) -> list[str]:
        return [t for t in sorted(self.map.new_city_tiles) if t not in self.map.removed_new_cities]

    def hex_closed(self, state: State, h: Hex) -> bool:
        """Whether no track may be laid on this (otherwise buildable) hex now."""
        return False

    def edge_closed(self, state: State, seat: int, h: Hex, edge: int) -> bool:
        """Whether track on h may not point through this edge (beyond water and the map edge)."""
        return False

    def closable_edges(self, h: Hex) -> tuple[int, ...]:
        """The edges of h that edge_closed may ever close, whatever the state (a map's data
        alone): the build listing asks edge_closed about these only. A map that overrides
        edge_closed without this is asked about every edge."""
        return ALL_EDGES

    def new_tile_cost(self, state: State, h: Hex, kind: str) -> int:
        base = self.map.terrain_costs[self.map.terrain[h]]
        return base + R.BUILD_COSTS["new_tile_extra_by_kind"][kind]

    def replace_cost(self, state: State, h: Hex, base_cost: int) -> int:
        """What replacing track on h costs (upgrades and redirects); base_cost is the base rule's."""
        return base_cost

    def extra_cost_per_tile(self, state: State, seat: int) -> int:
        return 0

    @classmethod
    def extra_build_move_types(cls) -> tuple[str, ...]:
        """Build-phase move types a map adds (beyond build, urbanize, end_build). A class
        method: game.ALL_MOVE_TYPES gathers them from every map without making its rules."""
        return ()

    def extra_build_moves(self, state: State, seat: int) -> list[Move]:
        return []

    def apply_extra_build_move(self, state: State, seat: int, move: GivenMove, events: list[Event]) -> None:
        raise AssertionError("the base game adds no build moves")

    def every_extra_build_move(self) -> list[Move]:
        """Every move extra_build_moves could ever list in a game on this map (the map's data
        alone): what the fixed numbering of moves (move_space.py) gives an id each."""
        return []

    # -- move goods ----------------------------------------------------------------------

    def move_order(self, state: State) -> list[int]:
        return first_then_order(state, action_holder(state, "first_move"))

    def move_opportunities(self, state: State, seat: int) -> int:
        return 2

    def cube_sources(self, state: State) -> dict[str, list[str]]:
        """Where cubes may start a delivery: hex key -> colours. Cities by default."""
        return state["cubes"]

    def delivery_first_steps(self, state: State, start: Hex,
                             links: Iterable[Route]) -> list[tuple[Route, Hex]] | None:
        """For a cube source that is no stop (Holland's windmills): the (link, stop) pairs it may
        take first, travelling along a complete link that passes its hex; the move then names
        that stop as `toward`. None (the base) when the source is a city."""
        return None

    def take_cube(self, state: State, start: Hex, colour: str) -> None:
        state["cubes"][key(start)].remove(colour)

    def accepts(self, state: State, city: Hex, colour: str) -> bool:
        letter = state["new_cities"].get(key(city))
        if letter is not None:
            return self.map.new_city_tiles[letter].color == colour
        return colour in self.map.cities[city].colors

    def route_blocked(self, state: State, seat: int, colour: str, start: Hex, stops: list[Hex],
                      links: list[Route]) -> bool:
        """A map's own reasons to close a delivery route."""
        return False

    def passes_allowed(self, state: State, seat: int) -> int:
        """How many cities of its own colour a cube may pass through."""
        return 0

    def link_income_owner(self, state: State, link: Route) -> int | None:
        return link.owner

    def on_delivered(self, state: State, seat: int, colour: str, destination: Hex,
                     events: list[Event]) -> bool:
        """Returns True when the map keeps the cube (it does not go back to the bag)."""
        return False

    # -- operations and growth -----------------------------------------------------------

    def before_income_reduction(self, state: State, events: list[Event]) -> None:
        """Called in every round after expenses, before the income reduction."""

    def before_production_draw(self, state: State, seat: int, events: list[Event]) -> None:
        """Runs as the Production action starts, before its cubes are drawn."""

    def production_draws(self, state: State) -> int:
        return R.PRODUCTION_DRAWS

    def production_placements(self, state: State) -> int:
        """How many of the drawn cubes are placed (the rest go back to the bag)."""
        return R.PRODUCTION_DRAWS

    def production_columns(self, state: State) -> list[str]:
        """Display columns production may place cubes in."""
        return list(state["display"])

    def production_extra_choices(self, state: State) -> bool:
        """Whether the Production holder decides something besides cube placements."""
        return False

    def production_moves(self, state: State, seat: int, moves: list[ProduceMove]) -> list[ProduceMove]:
        return moves

    def production_extras(self) -> list[dict]:
        """Every set of fields besides the placements that production_moves may add to a
        produce move, {} for none (the map's data alone; move_space.py)."""
        return [{}]

    def check_production_extra(self, state: State, seat: int, move: GivenMove) -> None:
        if set(move) - {"type", "placements"}:
            from service.engine.errors import IllegalMove

            raise IllegalMove("BAD_MOVE", "produce takes only placements on this map")

    def apply_production_extra(self, state: State, seat: int, move: GivenMove, events: list[Event]) -> None:
        """Map-specific effects of the Production action, before cubes are placed."""

    def growth_dice(self, state: State) -> int:
        return state["start_players"]


def first_then_order(state: State, first: int | None) -> list[int]:
    order = active_players(state)
    if first is not None and first in order:
        order.remove(first)
        order.insert(0, first)
    return order

