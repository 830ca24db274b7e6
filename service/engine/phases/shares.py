"""Issue Shares: in turn order, each player issues 0 or more shares for $5 each, up to 15 in all."""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.engine import rules_data as R
from service.engine.errors import IllegalMove
from service.engine.layout import Event, GivenMove, Move, State
from service.engine.moves import expect_type, int_field, leave_queue, next_in_queue
from service.engine.state import active_players

if TYPE_CHECKING:
    from service.engine.variants.base import Rules

MOVE_TYPES = ("issue_shares",)


def start(state: State, rules: Rules, events: list[Event]) -> None:
    state["phase"] = "issue_shares"
    state["queue"] = active_players(state)


def legal(state: State, rules: Rules, seat: int) -> list[Move]:
    room = R.MAX_SHARES - state["players"][seat]["shares"]
    return [{"type": "issue_shares", "count": n} for n in range(room + 1)]


def check(state: State, rules: Rules, seat: int, move: GivenMove) -> int:
    expect_type(move, *MOVE_TYPES)
    count = int_field(move, "count", minimum=0)
    shares = state["players"][seat]["shares"]
    if shares + count > R.MAX_SHARES:
        raise IllegalMove("SHARE_LIMIT", f"{shares} issued already; at most {R.MAX_SHARES - shares} more",
                          have=shares, limit=R.MAX_SHARES, amount=count)
    return count


def apply(state: State, rules: Rules, seat: int, move: GivenMove, events: list[Event]) -> None:
    count = check(state, rules, seat, move)
    player = state["players"][seat]
    player["shares"] += count
    player["cash"] += count * R.SHARE_PRICE
    events.append({"type": "shares_issued", "seat": seat, "count": count,
                   "cash": count * R.SHARE_PRICE})
    next_in_queue(state)


def leave(state: State, rules: Rules, seat: int, events: list[Event]) -> None:
    """A player out of the game (resign.py) makes no decision still to come here; when it was
    theirs to make now, the next seat decides."""
    leave_queue(state, seat)


def finish(state: State, rules: Rules, events: list[Event]) -> None:
    """Nothing to settle: each decision took effect as it was made."""
