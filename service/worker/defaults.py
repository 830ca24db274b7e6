"""The move a seat's clock makes for it when its time runs out: the cheapest legal choice, picked
from the engine's own legal moves (the one source of truth): issue no shares, drop out of the
auction, take the first available action in the engine's fixed order, end the build, pass in
move goods, and place produced goods in the first empty squares of the display."""

from __future__ import annotations

from service.engine import game
from service.engine.layout import GivenMove, Move, State

# Preferred moves by type, cheapest first: the first one listed by legal_moves is made.
CHEAPEST = (
    {"type": "issue_shares", "count": 0},
    {"type": "drop_out"},
    {"type": "end_build"},
    {"type": "pass"},
)
# The goods display read as a player reads it: number columns left to right, light then dark,
# then the new-city columns.
DISPLAY_ORDER = tuple(f"{side}-{n}" for side in ("light", "dark") for n in range(1, 7)) + tuple("ABCDEFGH")


def default_move(state: State, seat: int) -> Move | None:
    """The move the clock makes for `seat`, or None when the seat has no decision."""
    moves = game.legal_moves(state, seat)
    if not moves:
        return None
    for preferred in CHEAPEST:
        if preferred in moves:
            return preferred
    actions = [m for m in moves if m["type"] == "select_action"]
    if actions:
        order = {action: i for i, action in enumerate(game.action_ids())}
        return min(actions, key=lambda m: order.get(m["action"], len(order)))
    productions = [m for m in moves if m["type"] == "produce"]
    if productions:
        return min(productions, key=_display_rank)
    return moves[0]


def _display_rank(move: GivenMove) -> list[int]:
    rank = {column: i for i, column in enumerate(DISPLAY_ORDER)}
    return sorted(rank.get(p["column"], len(rank)) for p in move["placements"])
