"""Iraq: oil fields, the EU and US flags, Baghdad, U.S. Army Escort and the Production variant.

State kept by this map in state["variant"]:
  drums {seat: n}   black cubes each seat delivered to a flag (kept, never back in the bag)
  oil_aside int     a black cube taken from the bag by Production, waiting for its oil field
  cubes_held int    drums + oil_aside: cubes out of the bag and off the board (state.cubes_in_play)
Oil-field cubes lie in state["cubes"] under the oil field's hex, like a city's, so deliveries may
start there with the base rules.
"""

from __future__ import annotations

from service.engine import rules_data as R
from service.engine.contract_types import ProduceMove
from service.engine.errors import IllegalMove
from service.engine.hexgrid import Hex, as_dict, key, neighbour
from service.engine.layout import Event, GivenMove, State
from service.engine.maps import MapData
from service.engine.moves import hex_field
from service.engine.network import Route
from service.engine.state import action_holder, active_players, roll_die
from service.engine.variants.base import Rules

ESCORT = "us_army_escort"
BLACK = "black"
NO_PRODUCTION_COLUMNS = ("dark-5", "dark-6")  # production never places on these (rule text)


class Iraq(Rules):
    def __init__(self, board: MapData) -> None:
        super().__init__(board)
        special = board.special
        self.oil_fields: tuple[Hex, ...] = tuple((f["q"], f["r"]) for f in special["oil_fields"])
        self.oil_field_names = {(f["q"], f["r"]): f["name"] for f in special["oil_fields"]}
        self._stops = frozenset(self.oil_fields)
        # The edges of each hex that face an oil field.
        self._oil_edges: dict[Hex, tuple[int, ...]] = {}
        for f in self.oil_fields:
            for e in range(6):
                h = neighbour(f, e)
                self._oil_edges[h] = (*self._oil_edges.get(h, ()), (e + 3) % 6)
        self.flags: tuple[Hex, ...] = tuple((f["q"], f["r"]) for f in special["flags"])
        self.flag_names = {(f["q"], f["r"]): f["name"] for f in special["flags"]}
        self.flag_link_cost: int = special["flag_link_cost"]
        self.empty_columns = frozenset(f"{c['side']}-{c['number']}"
                                       for c in special["display_empty_columns"])
        # The lettered squares beneath an empty number column start empty with it (C and D).
        self.empty_letters = frozenset(t.letter for t in board.new_city_tiles.values()
                                       if t.column_under in self.empty_columns)
        self.drum_income: int = special["flag_rules"]["end_game_bonus_income_per_black_cube"]

    def map_features(self) -> dict:
        return {
            **super().map_features(),
            "oil_fields": [{"hex": as_dict(h), "name": self.oil_field_names[h],
                            "setup_cubes": "1d6 black"} for h in self.oil_fields],
            "oil_field_connect_action": "engineer",
            "flags": [{"hex": as_dict(h), "name": self.flag_names[h], "accepts": [BLACK]}
                      for h in self.flags],
            "flag_link_cost": self.flag_link_cost,
            "drum_income_before_last_reduction": self.drum_income,
            "display_empty_at_setup": sorted(self.empty_columns | self.empty_letters),
            "production": {"black_to_oil_field": 1, "draws": 4, "places": 1,
                           "closed_columns": list(NO_PRODUCTION_COLUMNS)},
        }

    # -- the network: oil fields end links like a town, without track on them ----------------

    def trackless_stops(self, state: State) -> frozenset[Hex]:
        return self._stops

    # -- setup -------------------------------------------------------------------------------

    def actions(self) -> tuple[str, ...]:
        return (*R.BASE_ACTIONS, ESCORT)

    def display_columns_left_empty(self, state: State) -> set[str]:
        return super().display_columns_left_empty(state) | self.empty_columns | self.empty_letters

    def setup_before_draws(self, state: State, events: list[Event]) -> None:
        """The black cubes come out of the bag; each oil field, in map order, gets a die roll of
        them while they last; the rest go back before the cities and display are filled."""
        black = state["bag"][BLACK]
        state["bag"][BLACK] = 0
        for h in self.oil_fields:
            roll = roll_die(state)
            placed = min(roll, black)
            black -= placed
            state["cubes"][key(h)] = [BLACK] * placed
            events.append({"type": "oil_field_filled", "hex": as_dict(h), "roll": roll,
                           "cubes": placed})
        state["bag"][BLACK] = black
        state["variant"] = {"drums": {}, "oil_aside": 0, "cubes_held": 0}

    def board_features(self, state: State) -> dict:
        variant = state["variant"]
        return {
            "oil_fields": [{"hex": as_dict(h), "name": self.oil_field_names[h],
                            "goods": list(state["cubes"].get(key(h), []))}
                           for h in self.oil_fields],
            "flags": [{"hex": as_dict(h), "name": self.flag_names[h], "accepts": [BLACK]}
                      for h in self.flags],
            "oil_drums": {str(s): variant["drums"].get(str(s), 0)
                          for s in range(len(state["players"]))},
        }

    # -- build -------------------------------------------------------------------------------

    def edge_closed(self, state: State, seat: int, h: Hex, edge: int) -> bool:
        """Only the Engineer holder lays track that connects to an oil field. Track already
        joined to one stays joined (nobody may turn it away as if it were a loose end)."""
        if neighbour(h, edge) not in self._stops or action_holder(state, "engineer") == seat:
            return False
        k = key(h)
        joined = any(edge in (a, b) for a, b, _ in state["track"].get(k, ())) or any(
            e == edge for e, _ in state["towns"].get(k, ()))
        return not joined

    def closable_edges(self, h: Hex) -> tuple[int, ...]:
        return self._oil_edges.get(h, ())

    def new_tile_cost(self, state: State, h: Hex, kind: str) -> int:
        """A tile on a flag's approach hex costs a flat $5 whatever its shape."""
        if self.map.terrain[h] == "flag_link":
            return self.flag_link_cost
        return super().new_tile_cost(state, h, kind)

    # -- move goods --------------------------------------------------------------------------

    def accepts(self, state: State, city: Hex, colour: str) -> bool:
        if city in self._stops:
            return False
        return super().accepts(state, city, colour)

    def passes_allowed(self, state: State, seat: int) -> int:
        return 1 if action_holder(state, ESCORT) == seat else 0

    def route_blocked(self, state: State, seat: int, colour: str, start: Hex, stops: list[Hex],
                      links: list[Route]) -> bool:
        """A black cube passes through no oil field unless the mover holds the Escort."""
        if colour != BLACK or action_holder(state, ESCORT) == seat:
            return False
        return any(s in self._stops for s in stops[:-1])

    def on_delivered(self, state: State, seat: int, colour: str, destination: Hex,
                     events: list[Event]) -> bool:
        if colour != BLACK or destination not in self.flag_names:
            return False
        variant = state["variant"]
        drums = variant["drums"]
        drums[str(seat)] = drums.get(str(seat), 0) + 1
        variant["cubes_held"] += 1
        events.append({"type": "oil_drum_kept", "seat": seat, "flag": self.flag_names[destination],
                       "drums": drums[str(seat)]})
        return True

    # -- operations --------------------------------------------------------------------------

    def before_income_reduction(self, state: State, events: list[Event]) -> None:
        """In the last round, +1 income per oil drum held, before the income reduction."""
        if state["round"] != state["last_round"]:
            return
        raised = {}
        for seat in active_players(state):
            drums = state["variant"]["drums"].get(str(seat), 0)
            if drums:
                state["players"][seat]["income"] += drums * self.drum_income
                raised[str(seat)] = drums * self.drum_income
        events.append({"type": "oil_drums_counted", "income": raised})

    # -- production: a black cube to an oil field, then 4 drawn and 1 placed ------------------

    def before_production_draw(self, state: State, seat: int, events: list[Event]) -> None:
        if state["bag"][BLACK] > 0:
            state["bag"][BLACK] -= 1
            state["variant"]["oil_aside"] += 1
            state["variant"]["cubes_held"] += 1
            events.append({"type": "oil_drawn", "seat": seat})

    def production_draws(self, state: State) -> int:
        return 4

    def production_placements(self, state: State) -> int:
        return 1

    def production_columns(self, state: State) -> list[str]:
        return [c for c in state["display"] if c not in NO_PRODUCTION_COLUMNS]

    def production_extra_choices(self, state: State) -> bool:
        return state["variant"]["oil_aside"] > 0

    def production_moves(self, state: State, seat: int, moves: list[ProduceMove]) -> list[ProduceMove]:
        if not self.production_extra_choices(state):
            return moves
        return [{**m, "oil_field": as_dict(h)} for m in moves for h in self.oil_fields]

    def production_extras(self) -> list[dict]:
        return [{}, *({"oil_field": h} for h in self.oil_fields)]

    def check_production_extra(self, state: State, seat: int, move: GivenMove) -> None:
        extra = set(move) - {"type", "placements", "oil_field"}
        if extra:
            raise IllegalMove("BAD_MOVE", f"produce takes no {', '.join(sorted(extra))}")
        if not self.production_extra_choices(state):
            if "oil_field" in move:
                raise IllegalMove("BAD_PLACEMENT", "no black cube waits for an oil field")
            return
        if "oil_field" not in move:
            raise IllegalMove("BAD_PLACEMENT", "name the oil field that takes the black cube")
        if hex_field(move, "oil_field") not in self._stops:
            raise IllegalMove("BAD_PLACEMENT", "oil_field must be an oil-field hex")

    def apply_production_extra(self, state: State, seat: int, move: GivenMove, events: list[Event]) -> None:
        if not self.production_extra_choices(state):
            return
        h = hex_field(move, "oil_field")
        state["cubes"].setdefault(key(h), []).append(BLACK)
        state["variant"]["oil_aside"] -= 1
        state["variant"]["cubes_held"] -= 1
        events.append({"type": "oil_placed", "seat": seat, "hex": as_dict(h)})
