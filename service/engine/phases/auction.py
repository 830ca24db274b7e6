"""Determine Player Order: the turn-order auction, with the Turn Order pass and its payments.

Bidding goes round in the current turn order, skipping the high bidder. Dropping out takes the
last free place. When one bidder is left the auction ends: the last place pays nothing, the first
two places pay their full bids, everyone else half of their own bid, rounded up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.engine.contract_types import TurnOrderSetEventPayment
from service.engine.errors import IllegalMove
from service.engine.layout import Auction, Event, GivenMove, Move, State
from service.engine.moves import expect_type, int_field
from service.engine.state import active_players, open_auction

if TYPE_CHECKING:
    from service.engine.variants.base import Rules

MOVE_TYPES = ("bid", "drop_out", "turn_order_pass")


def start(state: State, rules: Rules, events: list[Event]) -> None:
    state["phase"] = "auction"
    order = active_players(state)
    state["auction"] = {
        "order": order,
        "in": list(order),
        "bids": {},
        "high_bid": 0,
        "high_bidder": None,
        "dropped": [],
        "pass_holder": state.get("pass_holder"),
        "pass_used": False,
    }
    # With one bidder or none there is nothing to decide: finish settles at once.
    state["queue"] = [order[0]] if len(order) > 1 else []


def min_bid(auction: Auction) -> int:
    return auction["high_bid"] + 1


def can_pass(auction: Auction, seat: int) -> bool:
    return (auction["pass_holder"] == seat and not auction["pass_used"]
            and len(auction["in"]) > 2)


def legal(state: State, rules: Rules, seat: int) -> list[Move]:
    auction = open_auction(state)
    moves: list[Move] = [{"type": "drop_out"}]
    if rules.forced_drop_out(state, seat):
        return moves
    if can_pass(auction, seat):
        moves.append({"type": "turn_order_pass"})
    cash = state["players"][seat]["cash"]
    moves.extend({"type": "bid", "amount": a} for a in range(min_bid(auction), cash + 1))
    return moves


def check(state: State, rules: Rules, seat: int, move: GivenMove) -> str:
    kind = expect_type(move, *MOVE_TYPES)
    auction = open_auction(state)
    if kind != "drop_out" and rules.forced_drop_out(state, seat):
        raise IllegalMove("MUST_DROP_OUT", "this player's action makes them drop out of this auction")
    if kind == "turn_order_pass" and not can_pass(auction, seat):
        raise IllegalMove("TURN_ORDER_PASS_UNAVAILABLE")
    if kind == "bid":
        amount = int_field(move, "amount")
        if amount < min_bid(auction):
            raise IllegalMove("BID_TOO_LOW", f"the lowest bid now is ${min_bid(auction)}",
                              minimum=min_bid(auction), amount=amount)
        cash = state["players"][seat]["cash"]
        if amount > cash:
            raise IllegalMove("BID_ABOVE_CASH", f"bid ${amount} but has ${cash}", need=amount, have=cash,
                              amount=amount)
    return kind


def apply(state: State, rules: Rules, seat: int, move: GivenMove, events: list[Event]) -> None:
    kind = check(state, rules, seat, move)
    auction = open_auction(state)
    if kind == "bid":
        auction["bids"][str(seat)] = move["amount"]
        auction["high_bid"] = move["amount"]
        auction["high_bidder"] = seat
        events.append({"type": "bid", "seat": seat, "amount": move["amount"]})
    elif kind == "turn_order_pass":
        auction["pass_used"] = True
        events.append({"type": "turn_order_pass", "seat": seat})
    else:
        auction["in"].remove(seat)
        auction["dropped"].append(seat)
        events.append({"type": "dropped_out", "seat": seat,
                       "place": len(auction["in"]) + 1})
    # One bidder left ends the auction: the empty queue has finish settle it.
    state["queue"] = [] if len(auction["in"]) == 1 else [next_bidder(auction, seat)]


def leave(state: State, rules: Rules, seat: int, events: list[Event]) -> None:
    """A bidder out of the game (resign.py): their bid is withdrawn and pays nothing, the high bid
    is again the highest bid of those still in it (or none), and the auction ends when one bidder
    is left. A seat that dropped out already keeps its place and payment."""
    a = open_auction(state)
    if seat not in a["in"]:
        return
    deciding = state["queue"][:1] == [seat]
    a["in"].remove(seat)
    a["bids"].pop(str(seat), None)
    standing = {int(s): bid for s, bid in a["bids"].items() if int(s) in a["in"]}
    high = max(standing, key=standing.__getitem__) if standing else None
    a["high_bidder"] = high
    a["high_bid"] = 0 if high is None else standing[high]
    if len(a["in"]) <= 1:
        state["queue"] = []  # the auction is over: its finish settles it
        return
    decider = state["queue"][0]
    if deciding or decider == a["high_bidder"]:
        # The high bidder is skipped; with the seat gone the turn passes on from where it was.
        state["queue"] = [next_bidder(a, seat if deciding else decider)]


def next_bidder(auction: Auction, after: int) -> int:
    order = auction["order"]
    i = order.index(after)
    for step in range(1, len(order) + 1):
        s = order[(i + step) % len(order)]
        if s in auction["in"] and s != auction["high_bidder"]:
            return s
    raise AssertionError("an auction with two bidders always has a next bidder")


def payment(place: int, places: int, bid: int) -> int:
    """What the player finishing in `place` (1 = first) pays for their bid."""
    if place == places and places > 1:
        return 0
    if place <= 2:
        return bid
    return (bid + 1) // 2


def finish(state: State, rules: Rules, events: list[Event]) -> None:
    """Sets the new turn order from the bids and drop-outs, and takes the payments."""
    auction = open_auction(state)
    new_order = auction["in"] + auction["dropped"][::-1]
    payments: list[TurnOrderSetEventPayment] = []
    for place, seat in enumerate(new_order, start=1):
        bid = auction["bids"].get(str(seat), 0)
        pay = payment(place, len(new_order), bid)
        state["players"][seat]["cash"] -= pay
        payments.append({"seat": seat, "place": place, "bid": bid, "paid": pay})
    eliminated = [s for s in state["turn_order"] if s not in new_order]
    state["turn_order"] = new_order + eliminated
    state["auction"] = None
    state["queue"] = []
    events.append({"type": "turn_order_set", "order": new_order, "payments": payments})
