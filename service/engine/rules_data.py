"""The base game's numbers (costs, tables, limits), read from data/rules.json."""

from __future__ import annotations

import json
from pathlib import Path

RULES: dict = json.loads((Path(__file__).parent / "data" / "rules.json").read_text())

START: dict = RULES["start"]
SHARE_PRICE: int = RULES["share_price"]
MAX_SHARES: int = RULES["max_shares"]
MAX_LOCOMOTIVE: int = RULES["max_locomotive"]
ROUNDS_BY_PLAYERS: dict[int, int] = {int(k): v for k, v in RULES["rounds_by_players"].items()}
CUBE_COUNTS: dict[str, int] = RULES["cube_counts"]
# The goods colours, in the bag's order (draws count through them in this order).
COLOURS: tuple[str, ...] = tuple(CUBE_COUNTS)
BUILD_COSTS: dict = RULES["build_costs"]
TILES_PER_BUILD_TURN: int = RULES["tiles_per_build_turn"]
ENGINEER_TILES: int = RULES["engineer_tiles"]
SCORING: dict = RULES["scoring"]
BASE_ACTIONS: tuple[str, ...] = tuple(RULES["actions"])
PRODUCTION_DRAWS: int = RULES["production_draws"]
NUMBER_SQUARES: int = RULES["display"]["squares_per_number_column"]
NEW_CITY_SQUARES: int = RULES["display"]["squares_per_new_city_column"]


def income_reduction(income: int) -> int:
    for band in RULES["income_reduction"]:
        if income >= band["min"]:
            return band["reduce"]
    return 0
