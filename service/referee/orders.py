"""Programmed moves: a seat's private standing orders for its own coming decisions, and the step
of the move path that carries them out.

A seat's orders are a list, kept in the game's metadata (never in its state, view, history or
events). Each order is for the seat's next decision in one phase; at a decision the first order
for that phase is the one that acts. It makes its move from the engine's legal moves (the one
source of truth) and is used up, except `bid_up_to`, which bids the lowest bid at each of the
seat's turns in one auction until the bid would pass its limit, and then drops out. An order
that can make no legal move is dropped, and the seat decides by hand.

Whenever a move leaves a seat with orders to decide, that seat's order moves at once, and the
next seat's, and so on: every move of the chain goes in the commit of the move that started it.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass

from service.engine import game
from service.engine.layout import Event, GivenMove, State

# The phase each kind of order acts in.
PHASE_OF = {
    "issue_shares": "issue_shares",
    "bid_up_to": "auction",
    "drop_out": "auction",
    "select_action": "select_action",
    "end_build": "build",
    "upgrade_locomotive": "move_goods",
    "pass": "move_goods",
}
MAX_ORDERS = 16
MAX_BID = 1000
# A chain ends when no seat with orders is to decide; every order is used up as it acts except
# a bid_up_to, whose bids only rise and end at its limit. This bounds one commit regardless.
MAX_CHAIN = 2 * MAX_BID + 6 * MAX_ORDERS


# -- where they are kept -------------------------------------------------------------------------

def book_of(meta: dict) -> dict[str, list[dict]]:
    """Every seat's orders, by seat (a string, as JSON keys are)."""
    return meta.get("orders") or {}


def public(orders: list[dict]) -> list[dict]:
    """A seat's orders as it reads them back: without what the server notes on them."""
    return [{k: v for k, v in order.items() if k != "round"} for order in orders]


def with_book(meta: dict, book: dict[str, list[dict]]) -> dict:
    kept = {seat: orders for seat, orders in book.items() if orders}
    rest = {k: v for k, v in meta.items() if k != "orders"}
    return {**rest, "orders": kept} if kept else rest


# -- carrying them out ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Fired:
    """A move an order made."""

    seat: int
    move: GivenMove
    events: list[Event]


def expired(order: dict, seat: int, state: State) -> bool:
    """Whether a bid_up_to that has bid is done: its auction is over, or the seat is out of it.
    (It notes the round of the auction it bids in.)"""
    if "round" not in order:
        return False
    auction = state["auction"]
    return not (state["phase"] == "auction" and state["round"] == order["round"]
                and auction is not None and seat in auction["in"])


def choose(order: dict, legal: Sequence[GivenMove]) -> tuple[GivenMove | None, bool]:
    """The legal move `order` makes, and whether the order stands after it; None when the order
    can make no legal move."""
    kind = order["type"]
    if kind == "bid_up_to":
        bids = [m["amount"] for m in legal if m["type"] == "bid"]
        if bids and min(bids) <= order["max"]:
            return {"type": "bid", "amount": min(bids)}, True
        kind = "drop_out"
    if kind == "select_action":
        listed = {m["action"] for m in legal if m["type"] == "select_action"}
        action = next((a for a in order["actions"] if a in listed), None)
        return (None if action is None else {"type": "select_action", "action": action}), False
    move = {"type": kind, **({"count": order["count"]} if kind == "issue_shares" else {})}
    return (move if move in legal else None), False


def settle(state: State, book: dict[str, list[dict]]) -> bool:
    """Drops the bid_up_to orders whose auction is over; whether any was."""
    changed = False
    for seat, orders in book.items():
        kept = [o for o in orders if not expired(o, int(seat), state)]
        if len(kept) != len(orders):
            book[seat] = kept
            changed = True
    return changed


def carry_out(state: State, book: dict[str, list[dict]], *, first_seat: int | None = None
              ) -> tuple[State, list[Fired], dict[str, list[dict]], bool]:
    """The orders of the seats to decide, one after the other, from `state`: (the state after
    them, the moves they made, every seat's orders after them, whether the orders changed).
    With `first_seat`, nothing acts unless that seat is the one to decide now."""
    book = copy.deepcopy(book)
    fired: list[Fired] = []
    changed = settle(state, book)
    while len(fired) < MAX_CHAIN:
        seat = game.active_seat(state)
        if seat is None or (first_seat is not None and not fired and seat != first_seat):
            break
        orders = book.get(str(seat)) or []
        at = next((i for i, o in enumerate(orders) if PHASE_OF[o["type"]] == state["phase"]), None)
        if at is None:
            break
        order = orders[at]
        move, stands = choose(order, game.legal_moves(state, seat))
        changed = True
        if move is None:
            del orders[at]  # not legal now: the seat decides this one by hand
            break
        auction_round = state["round"]
        try:
            state, events = game.apply(state, seat, move)
        except game.IllegalMove:
            del orders[at]  # legal_moves listed it, so this is never reached; still, by hand
            break
        fired.append(Fired(seat, move, events))
        if stands:
            order["round"] = auction_round
        else:
            del orders[at]
        settle(state, book)
    return state, fired, book, changed
