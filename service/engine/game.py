"""The engine's facade: create a game, list legal moves, apply a move, view the state.

`apply` checks a move with the same phase functions that `legal_moves` enumerates with, so a move
is accepted exactly when it is listed. Phases without decisions (income, expenses, income
reduction, growth, the next round) run at once after the last decision before them.
"""

from __future__ import annotations

from service.engine import rng, tiles
from service.engine import rules_data as R
from service.engine.errors import IllegalMove, SetupError
from service.engine.maps import MAP_IDS, load_map
from service.engine.maps.loader import NEW_CITY_COLUMNS, NUMBER_COLUMNS
from service.engine.phases import (
    actions,
    auction,
    build,
    growth,
    move_goods,
    operations,
    scoring,
    shares,
)
from service.engine.resign import resign
from service.engine.state import FORMAT, active_players, copy_state, draw_cube, shuffle
from service.engine.variants import rules_for
from service.engine.variants.registry import VARIANTS
from service.engine.view import game_view, map_info, maps

RULES_VERSION = "aos-rules/1.0"

DECIDING = {
    "issue_shares": shares,
    "auction": auction,
    "select_action": actions,
    "build": build,
    "move_goods": move_goods,
    "production": growth,
}

__all__ = ["IllegalMove", "SetupError", "RULES_VERSION", "MAP_IDS", "COLOURS", "NEW_CITY_LETTERS",
           "new_game", "legal_moves", "apply", "validate", "view", "active_seat", "is_finished",
           "record_header", "replay", "maps", "map_info", "action_ids", "resign"]

COLOURS = tuple(R.CUBE_COUNTS)
NEW_CITY_LETTERS = NEW_CITY_COLUMNS


# -- creating a game -----------------------------------------------------------------------------

def new_game(map_id: str, names: list[str], seed: str, options: dict | None = None,
             seed_given: bool = True) -> dict:
    if map_id not in MAP_IDS:
        raise SetupError("UNKNOWN_MAP", f"no map {map_id!r}; maps: {', '.join(MAP_IDS)}")
    board = load_map(map_id)
    if map_id not in VARIANTS:
        raise SetupError("UNKNOWN_MAP", f"{board.name} is not playable yet")
    rules = rules_for(map_id)
    if not board.min_players <= len(names) <= board.max_players:
        raise SetupError("PLAYER_COUNT", f"{board.name} takes {board.min_players}"
                         f"-{board.max_players} players, not {len(names)}")
    if not isinstance(seed, str) or not seed:
        raise SetupError("BAD_OPTION", "seed must be a non-empty string")
    chosen = _check_options(rules, options or {})
    start = R.START
    state: dict = {
        "format": FORMAT,
        "rules_version": RULES_VERSION,
        "map": map_id,
        "options": chosen,
        "seed": seed,
        "seed_given": seed_given,
        "seed_commitment": rng.commitment(seed),
        "rng": rng.seed_state(seed),
        "round": 1,
        "last_round": rules.last_round(len(names)),
        "phase": "issue_shares",
        "queue": [],
        "start_players": len(names),
        "players": [{"name": n, "cash": start["cash"], "income": start["income"],
                     "shares": start["shares"], "loco": start["locomotive"], "action": None,
                     "eliminated": False} for n in names],
        "turn_order": list(range(len(names))),
        "pass_holder": None,
        "actions": {"taken": {}, "locked": []},
        "auction": None, "build": None, "move_goods": None, "production": None,
        "display": {}, "bag": dict(R.CUBE_COUNTS), "cubes": {}, "new_cities": {},
        "track": {}, "towns": {}, "tiles": {}, "supply": tiles.initial_supply(),
        "scores": None, "variant": {},
    }
    events: list = []
    state["turn_order"] = shuffle(state, state["turn_order"])
    rules.setup_before_draws(state, events)
    _fill_display(state, rules)
    for h in sorted(board.cities):
        state["cubes"][f"{h[0]},{h[1]}"] = [c for c in (draw_cube(state) for _ in range(
            rules.starting_cubes(h))) if c]
    rules.setup(state, events)
    _start_round(state, rules, events)
    return state


def _check_options(rules, options: dict) -> dict:
    if not isinstance(options, dict):
        raise SetupError("BAD_OPTION", "options must be an object")
    schema = rules.options_schema()
    unknown = set(options) - set(schema)
    if unknown:
        raise SetupError("BAD_OPTION", f"unknown option(s) for this map: {', '.join(sorted(unknown))}")
    chosen = {}
    for name, (kind, default) in schema.items():
        value = options.get(name, default)
        if value is not None and not isinstance(value, kind):
            raise SetupError("BAD_OPTION", f"option {name} must be {kind.__name__}")
        chosen[name] = value
    rules.check_options(chosen)
    return chosen


def _fill_display(state: dict, rules) -> None:
    """Fills the display a row at a time, left to right: number columns, then new-city columns.

    A new city the map takes out of the game has no column at all, so nothing (production,
    growth, the view) can ever put a cube where no city will take it."""
    empty = rules.display_columns_left_empty(state)
    letters = [c for c in NEW_CITY_COLUMNS if c not in rules.map.removed_new_cities]
    display = {c: [None] * R.NUMBER_SQUARES for c in NUMBER_COLUMNS}
    display.update({c: [None] * R.NEW_CITY_SQUARES for c in letters})
    for columns, rows in ((NUMBER_COLUMNS, R.NUMBER_SQUARES), (letters, R.NEW_CITY_SQUARES)):
        for row in range(rows):
            for column in columns:
                if column not in empty:
                    display[column][row] = draw_cube(state)
    state["display"] = display


# -- the flow of a round -------------------------------------------------------------------------

def _start_round(state: dict, rules, events: list) -> None:
    events.append({"type": "round_started", "round": state["round"]})
    rules.start_round(state, events)
    shares.start(state, rules, events)


def _advance(state: dict, rules, events: list) -> None:
    """Runs every step that needs no decision, until someone must decide or the game ends."""
    while not state["queue"] and state["phase"] != "finished":
        phase = state["phase"]
        if phase == "issue_shares":
            auction.start(state, rules, events)
        elif phase == "auction":
            actions.start(state, rules, events)
        elif phase == "select_action":
            build.start(state, rules, events)
        elif phase == "build":
            state["build"] = None
            move_goods.start(state, rules, events)
        elif phase == "move_goods":
            state["move_goods"] = None
            _operations(state, rules, events)
        elif phase == "production":
            _grow_and_next_round(state, rules, events)
        else:
            raise AssertionError(f"no way on from phase {phase}")


def _operations(state: dict, rules, events: list) -> None:
    operations.collect_income(state, events)
    operations.pay_expenses(state, events)
    operations.eliminate_bankrupt(state, rules, events)
    if len(active_players(state)) <= 1:
        _finish(state, rules, events)
        return
    if state["round"] == state["last_round"]:
        rules.before_income_reduction(state, events)
    operations.reduce_income(state, events)
    if state["round"] == state["last_round"]:
        _finish(state, rules, events)
        return
    state["phase"] = "production"
    state["queue"] = []
    growth.start_production(state, rules, events)


def _grow_and_next_round(state: dict, rules, events: list) -> None:
    growth.roll_growth(state, rules, events)
    rules.end_round(state, events)
    state["pass_holder"] = rules.turn_order_pass_holder(state)
    state["actions"] = {"taken": {}, "locked": []}
    for player in state["players"]:
        player["action"] = None
    state["round"] += 1
    _start_round(state, rules, events)


def _finish(state: dict, rules, events: list) -> None:
    state["phase"] = "finished"
    state["queue"] = []
    state["scores"] = scoring.score(state, rules)
    events.append({"type": "game_finished", "scores": state["scores"]})


# -- the public interface ------------------------------------------------------------------------

def action_ids() -> tuple[str, ...]:
    """Every action id some playable map offers, base actions first."""
    ids: dict[str, None] = {}
    for map_id in VARIANTS:
        ids.update(dict.fromkeys(rules_for(map_id).actions()))
    return tuple(ids)


def active_seat(state: dict) -> int | None:
    return state["queue"][0] if state["queue"] else None


def is_finished(state: dict) -> bool:
    return state["phase"] == "finished"


def legal_moves(state: dict, seat: int) -> list[dict]:
    if active_seat(state) != seat or is_finished(state):
        return []
    return DECIDING[state["phase"]].legal(state, rules_for(state["map"]), seat)


def _check_turn(state: dict, seat: int, move: object) -> None:
    if not isinstance(move, dict) or not isinstance(move.get("type"), str):
        raise IllegalMove("BAD_MOVE", "a move is an object with a type")
    if move["type"] not in ALL_MOVE_TYPES:
        raise IllegalMove("UNKNOWN_MOVE_TYPE", f"no move has type {move['type']!r}")
    if is_finished(state):
        raise IllegalMove("GAME_FINISHED")
    if not isinstance(seat, int) or not 0 <= seat < len(state["players"]):
        raise IllegalMove("BAD_MOVE", f"no seat {seat}")
    if state["players"][seat]["eliminated"]:
        raise IllegalMove("PLAYER_ELIMINATED")
    if active_seat(state) != seat:
        raise IllegalMove("NOT_YOUR_TURN", f"seat {active_seat(state)} decides now",
                          active_seat=active_seat(state))


ALL_MOVE_TYPES = frozenset({
    "issue_shares", "bid", "drop_out", "turn_order_pass", "select_action", "urbanize", "build",
    "remove_wall", "end_build", "deliver", "upgrade_locomotive", "pass", "produce",
})


def apply(state: dict, seat: int, move: dict) -> tuple[dict, list[dict]]:
    """Applies one move of `seat`; returns the new state and what happened. The input is unchanged."""
    _check_turn(state, seat, move)
    new = copy_state(state)
    events: list = []
    _play(new, seat, move, events)
    return new, events


def _play(state: dict, seat: int, move: dict, events: list) -> None:
    """Plays one move of `seat` (its turn checked) on `state` in place, appending what happens
    to `events`."""
    rules = rules_for(state["map"])
    DECIDING[state["phase"]].apply(state, rules, seat, move, events)
    _advance(state, rules, events)


def validate(state: dict, seat: int, move: dict) -> dict:
    """A dry run: whether the move is legal now, what it costs and what it would do, up to its
    first random step. The generator refuses to draw in a dry run, so the effects stop before
    any dice, drawn cube or shuffle, and the verdict says so with `stops_at: "random"`."""
    events: list = []
    stops_at = None
    try:
        _check_turn(state, seat, move)
        with rng.refusing():
            _play(copy_state(state), seat, move, events)
    except IllegalMove as e:
        return {"legal": False, **e.as_dict()}
    except rng.RandomStep:
        stops_at = "random"
    result: dict = {"legal": True, "effects": events}
    if stops_at is not None:
        result["stops_at"] = stops_at
    cost = next((e["cost"] for e in events if e["type"] == "track_built"), None)
    if cost is not None:
        result["cost"] = cost
    return result


def view(state: dict) -> dict:
    return game_view(state, rules_for(state["map"]))


def record_header(state: dict) -> dict:
    header = {
        "format": "aos-record/1",
        "rules_version": state["rules_version"],
        "map": state["map"],
        "players": [{"name": p["name"]} for p in state["players"]],
        "options": state["options"],
        "seed_commitment": state["seed_commitment"],
    }
    if is_finished(state):
        header["seed"] = state["seed"]
    return header


def replay(header: dict, moves: list[dict]) -> dict:
    """Plays a record's moves from its seed, checking each; IllegalMove carries the bad index."""
    state = new_game(header["map"], [p["name"] for p in header["players"]], header["seed"],
                     header.get("options") or {})
    for i, entry in enumerate(moves):
        try:
            seat, move = entry["seat"], entry["move"]
            state, _ = resign(state, seat) if move.get("type") == "resign" else apply(state, seat, move)
        except IllegalMove as e:
            e.extra["index"] = i
            raise
    return state
