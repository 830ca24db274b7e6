"""The engine's facade: create a game, list legal moves, apply a move, view the state.

A game is a plain dict (the State of layout.py) that you keep; every call takes it and none
changes it. `apply` checks a move with the same phase functions that `legal_moves` enumerates
with, so a move is accepted exactly when it is listed. Steps without decisions (income,
expenses, income reduction, growth, the next round) run at once after the last decision before
them (lifecycle.py).

>>> from service.engine import game
>>> state = game.new_game("rust_belt", ["Ann", "Bob", "Cat"], seed="readme")
>>> state["phase"], state["round"], state["last_round"]
('issue_shares', 1, 10)
>>> seat = game.active_seat(state)
>>> game.legal_moves(state, seat)[:2]
[{'type': 'issue_shares', 'count': 0}, {'type': 'issue_shares', 'count': 1}]
>>> state, events = game.apply(state, seat, {"type": "issue_shares", "count": 2})
>>> events
[{'type': 'shares_issued', 'seat': 1, 'count': 2, 'cash': 10}]
>>> game.view(state)["players"][seat]["cash"]
20
>>> game.apply(state, seat, {"type": "issue_shares", "count": 1})
Traceback (most recent call last):
...
service.engine.errors.IllegalMove: NOT_YOUR_TURN: seat 2 decides now
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from service.engine import lifecycle, rng, tiles
from service.engine import rules_data as R
from service.engine.contract_types import IllegalVerdict, LegalVerdict, RulesView, Verdict
from service.engine.errors import IllegalMove, SetupError
from service.engine.hexgrid import key
from service.engine.layout import Event, GivenMove, Move, State
from service.engine.maps import MAP_IDS, load_map
from service.engine.maps.loader import NEW_CITY_COLUMNS, NUMBER_COLUMNS
from service.engine.move_space import MoveSpace, move_space
from service.engine.phases import move_goods
from service.engine.phases.next_round import open_round
from service.engine.resign import resign
from service.engine.rng import Draw, RandomStep, choosing
from service.engine.state import FORMAT, copy_state, draw_cube, shuffle
from service.engine.variants import rules_for
from service.engine.variants.base import Rules
from service.engine.variants.registry import VARIANTS
from service.engine.view import game_view, game_view_to_write, map_info, maps

RULES_VERSION = "aos-rules/1.0"

__all__ = ["IllegalMove", "SetupError", "RULES_VERSION", "MAP_IDS", "COLOURS", "NEW_CITY_LETTERS",
           "new_game", "legal_moves", "apply", "validate", "view", "active_seat", "is_finished",
           "record_header", "replay", "maps", "map_info", "action_ids", "resign", "play", "RESIGN",
           "move_space", "MoveSpace", "delivery_edges", "choosing", "Draw", "RandomStep"]

COLOURS = R.COLOURS
NEW_CITY_LETTERS = NEW_CITY_COLUMNS
# Every move type of the base phases and of every playable map (Rules.extra_build_move_types).
ALL_MOVE_TYPES = lifecycle.base_move_types() | frozenset(
    t for variant in VARIANTS.values() for t in variant.extra_build_move_types())


# -- creating a game -----------------------------------------------------------------------------

def new_game(map_id: str, names: list[str], seed: str, options: dict | None = None,
             seed_given: bool = True) -> State:
    """A new game on `map_id` for the players `names` (in seat order), round 1, shares phase.

    Everything random (the turn order, the bag, dice) follows from `seed`: the same seed,
    names, options and moves give the same states, byte for byte. `options` are the map's game
    options (view.maps() lists them); `seed_given` False marks a seed the service chose itself.
    Raises SetupError (UNKNOWN_MAP, PLAYER_COUNT, BAD_OPTION) for a game that cannot be made.

    >>> state = new_game("rust_belt", ["Ann", "Bob", "Cat"], seed="readme")
    >>> [p["name"] for p in state["players"]], state["turn_order"]
    (['Ann', 'Bob', 'Cat'], [1, 2, 0])
    >>> new_game("rust_belt", ["Ann"], seed="readme")
    Traceback (most recent call last):
    ...
    service.engine.errors.SetupError: PLAYER_COUNT: Rust Belt (Age of Steam base map) takes 3-6 players, not 1
    """
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
    state: State = {
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
    events: list[Event] = []
    state["turn_order"] = shuffle(state, state["turn_order"])
    rules.setup_before_draws(state, events)
    _fill_display(state, rules)
    for h in sorted(board.cities):
        state["cubes"][key(h)] = [c for c in (draw_cube(state) for _ in range(
            rules.starting_cubes(h))) if c]
    rules.setup(state, events)
    open_round(state, rules, events)
    lifecycle.enter(state, rules, "issue_shares", events)
    return state


def _check_options(rules: Rules, options: dict) -> dict:
    if not isinstance(options, dict):
        raise SetupError("BAD_OPTION", "options must be an object")
    schema = rules.options_schema()
    unknown = set(options) - set(schema)
    if unknown:
        raise SetupError("BAD_OPTION", f"unknown option(s) for this map: {', '.join(sorted(unknown))}")
    chosen: dict[str, object] = {}
    for name, (kind, default) in schema.items():
        value = options.get(name, default)
        if value is not None and not isinstance(value, kind):
            raise SetupError("BAD_OPTION", f"option {name} must be {kind.__name__}")
        chosen[name] = value
    rules.check_options(chosen)
    return chosen


def _fill_display(state: State, rules: Rules) -> None:
    """Fills the display a row at a time, left to right: number columns, then new-city columns.

    A new city the map takes out of the game has no column at all, so nothing (production,
    growth, the view) can ever put a cube where no city will take it."""
    empty = rules.display_columns_left_empty(state)
    letters = [c for c in NEW_CITY_COLUMNS if c not in rules.map.removed_new_cities]
    display: dict[str, list[str | None]] = {c: [None] * R.NUMBER_SQUARES for c in NUMBER_COLUMNS}
    display.update({c: [None] * R.NEW_CITY_SQUARES for c in letters})
    for columns, rows in ((NUMBER_COLUMNS, R.NUMBER_SQUARES), (letters, R.NEW_CITY_SQUARES)):
        for row in range(rows):
            for column in columns:
                if column not in empty:
                    display[column][row] = draw_cube(state)
    state["display"] = display


# -- the public interface ------------------------------------------------------------------------

def action_ids() -> tuple[str, ...]:
    """Every action id some playable map offers, base actions first."""
    ids: dict[str, None] = {}
    for map_id in VARIANTS:
        ids.update(dict.fromkeys(rules_for(map_id).actions()))
    return tuple(ids)


def active_seat(state: State) -> int | None:
    """The seat that decides now, or None when the game is finished.

    >>> state = new_game("rust_belt", ["Ann", "Bob", "Cat"], seed="readme")
    >>> active_seat(state), state["turn_order"][0]
    (1, 1)
    """
    return state["queue"][0] if state["queue"] else None


def is_finished(state: State) -> bool:
    """Whether the game is over; then state["scores"] holds the final scores."""
    return state["phase"] == "finished"


def legal_moves(state: State, seat: int) -> list[Move]:
    """Every move `seat` may make now, each as apply takes it; [] when it is not their turn.

    Moves that cost something say so (a build's "cost"), and a delivery names the income it
    brings; apply ignores those fields. `apply` accepts exactly the moves listed here.

    >>> state = new_game("rust_belt", ["Ann", "Bob", "Cat"], seed="readme")
    >>> len(legal_moves(state, 1)), legal_moves(state, 0)
    (14, [])
    """
    phase = state["phase"]
    if active_seat(state) != seat or phase == "finished":
        return []
    return lifecycle.DECIDING[phase].legal(state, rules_for(state["map"]), seat)


def _check_turn(state: State, seat: int, move: object) -> None:
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


def apply(state: State, seat: int, move: GivenMove, *, in_place: bool = False) -> tuple[State, list[Event]]:
    """Makes one move of `seat`: returns the new state and the events of what happened, in order
    (the move's own, then those of every step that ran without a decision after it). The state
    passed in is unchanged, unless `in_place`: then the move is played on it, for a caller that
    owns it and drops it if the move is refused (a refused move may leave it half played); that
    saves a copy, a fiftieth of a move over HTTP. Raises IllegalMove, whose `code` (errors.CODES)
    names the rule the move breaks, for any move legal_moves does not list.

    >>> state = new_game("rust_belt", ["Ann", "Bob", "Cat"], seed="readme")
    >>> after, events = apply(state, 1, {"type": "issue_shares", "count": 0})
    >>> active_seat(after), active_seat(state)
    (2, 1)
    >>> apply(state, 1, {"type": "issue_shares", "count": 14})
    Traceback (most recent call last):
    ...
    service.engine.errors.IllegalMove: SHARE_LIMIT: 2 issued already; at most 13 more
    """
    _check_turn(state, seat, move)
    new = state if in_place else copy_state(state)
    events: list[Event] = []
    _play(new, seat, move, events)
    return new, events


def _play(state: State, seat: int, move: GivenMove, events: list[Event]) -> None:
    """Plays one move of `seat` (its turn checked) on `state` in place, appending what happens
    to `events`."""
    rules = rules_for(state["map"])
    phase = state["phase"]
    assert phase != "finished"
    lifecycle.DECIDING[phase].apply(state, rules, seat, move, events)
    lifecycle.advance(state, rules, events)


def validate(state: State, seat: int, move: GivenMove) -> Verdict:
    """A dry run: whether the move is legal now, what it costs and what it would do, up to its
    first random step. The generator refuses to draw in a dry run, so the effects stop before
    any dice, drawn cube or shuffle, and the verdict says so with `stops_at: "random"`."""
    events: list[Event] = []
    stops_at = None
    try:
        _check_turn(state, seat, move)
        with rng.refusing():
            _play(copy_state(state), seat, move, events)
    except IllegalMove as e:
        # The code's own fields come after code and detail (additionalProperties in the contract).
        return cast(IllegalVerdict, {"legal": False, **e.as_dict()})
    except rng.RandomStep:
        stops_at = "random"
    result: LegalVerdict = {"legal": True, "effects": events}
    if stops_at is not None:
        result["stops_at"] = stops_at
    cost = next((e["cost"] for e in events if e["type"] == "track_built"), None)
    if cost is not None:
        result["cost"] = cost
    return result


def delivery_edges(state: State, moves: Sequence[GivenMove]) -> list[list[int]]:
    """For each delivery listed now, the edges by which its cube leaves its source and each stop
    it passes (move_goods.delivery_edges): the route as geometry, for a numbering of its steps."""
    return move_goods.delivery_edges(state, rules_for(state["map"]), moves)


def view(state: State) -> RulesView:
    """What a client sees of the game: players, phase, the deciding seat, the board, the display.

    Nothing in it tells a random outcome before the move that causes it (the seed is not in it).

    >>> v = view(new_game("rust_belt", ["Ann", "Bob", "Cat"], seed="readme"))
    >>> v["phase"], v["active_seat"], v["players"][1]["cash"], len(v["board"]["cities"])
    ('issue_shares', 1, 10, 12)
    """
    return game_view(state, rules_for(state["map"]))


def view_to_write(state: State) -> RulesView:
    """view(state) for orjson to write (the stored view): the same JSON, byte for byte, made
    without the board's dicts (view.game_view_to_write)."""
    return game_view_to_write(state, rules_for(state["map"]))


def record_header(state: State) -> dict:
    """The header of the game's record: what replay needs besides the moves. The seed is in it
    only once the game is finished (before, its commitment stands in for it)."""
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


# The recorded move of a seat that leaves the game (resign.py): not a move of any phase, so no
# listing offers it, but logs and records hold it as they hold moves.
RESIGN = "resign"


def play(state: State, seat: int, move: GivenMove, *, in_place: bool = False) -> tuple[State, list[Event]]:
    """One recorded move, as a log or a record holds it: a resignation ({"type": RESIGN}) or a
    move that apply judges (`in_place` as there)."""
    if move.get("type") == RESIGN:
        return resign(state, seat)
    return apply(state, seat, move, in_place=in_place)


def replay(header: dict, moves: list[dict]) -> State:
    """Plays a record's moves from its seed, checking each; IllegalMove carries the bad index."""
    state = new_game(header["map"], [p["name"] for p in header["players"]], header["seed"],
                     header.get("options") or {})
    for i, entry in enumerate(moves):
        try:
            state, _ = play(state, entry["seat"], entry["move"])
        except IllegalMove as e:
            e.extra["index"] = i
            raise
    return state
