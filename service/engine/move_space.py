"""Every move a map could ever list, as data: what a fixed numbering of moves (the action ids
of service/sim) is built from. It depends on the map, its rules hooks, the tile manifest and the
player count alone, never on a game under way.

Every field is a sorted tuple (or a number) so the numbering built from it is the same in every
process; `tests/sim` pins its digest per map, so a change here is a new version of the ids.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.engine import rules_data as R
from service.engine import tiles as T
from service.engine.hexgrid import Hex
from service.engine.layout import Move
from service.engine.maps import load_map
from service.engine.maps.loader import NEW_CITY_COLUMNS, NUMBER_COLUMNS
from service.engine.phases.build import _impassable
from service.engine.variants import rules_for

# Each delivery of a round raises incomes by at most one per link, and a route has at most
# MAX_LOCOMOTIVE links; a map's own income (Iraq's oil drums: one per black cube) adds at most
# one per cube of the game.
DELIVERIES_PER_ROUND_PER_PLAYER = 2


@dataclass(frozen=True)
class MoveSpace:
    map_id: str
    players: int
    hexes: tuple[Hex, ...]  # every hex of the map
    build_hexes: tuple[Hex, ...]  # the hexes a build may ever be on (not cities, not impassable)
    towns: tuple[Hex, ...]
    track_shapes: tuple[tuple[T.Track, ...], ...]  # every set of tracks a tile makes
    town_shapes: tuple[tuple[int, ...], ...]  # every set of town exits a tile makes
    new_city_letters: tuple[str, ...]
    actions: tuple[str, ...]
    columns: tuple[str, ...]  # the display columns in play, number columns first
    colours: tuple[str, ...]
    max_shares: int
    max_cash: int  # no player's cash can exceed it (so no bid can)
    production_placements: int  # the most cubes one produce move places
    production_extras: tuple[tuple[tuple[str, Hex], ...], ...]  # a produce move's other fields
    extra_build_moves: tuple[Move, ...]  # the map's own build moves, each as listed


def move_space(map_id: str, players: int) -> MoveSpace:
    """Every move `map_id` with `players` could ever list (raises SetupError as new_game does)."""
    from service.engine.game import new_game  # the facade builds on this module's callers

    state = new_game(map_id, [f"P{i}" for i in range(players)], "move-space")
    board, rules = load_map(map_id), rules_for(map_id)
    impassable = _impassable(board)
    rounds = state["last_round"]
    # The income collected in round r is at most the start's plus every link of every delivery
    # made in rounds 1..r; cash is at most the start's, every share sold and every income.
    gain = DELIVERIES_PER_ROUND_PER_PLAYER * players * R.MAX_LOCOMOTIVE
    max_cash = (R.START["cash"] + R.MAX_SHARES * R.SHARE_PRICE
                + sum(R.START["income"] + gain * r for r in range(1, rounds + 1))
                + sum(R.CUBE_COUNTS.values()))
    return MoveSpace(
        map_id=map_id,
        players=players,
        hexes=tuple(sorted(board.terrain)),
        build_hexes=tuple(sorted(h for h in board.terrain
                                 if h not in board.cities and h not in impassable)),
        towns=tuple(sorted(board.towns)),
        track_shapes=tuple(sorted(tuple(sorted(s)) for s in T.TRACK_SHAPES)),
        town_shapes=tuple(sorted(tuple(sorted(s)) for s in T.TOWN_SHAPES)),
        new_city_letters=tuple(rules.new_city_letters()),
        actions=tuple(rules.actions()),
        columns=tuple(c for c in (*NUMBER_COLUMNS, *NEW_CITY_COLUMNS) if c in state["display"]),
        colours=R.COLOURS,
        max_shares=R.MAX_SHARES,
        max_cash=max_cash,
        production_placements=rules.production_placements(state),
        production_extras=tuple(tuple(sorted(e.items())) for e in rules.production_extras()),
        extra_build_moves=tuple(rules.every_extra_build_move()),
    )
