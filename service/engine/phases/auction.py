"""Determine Player Order: the turn-order auction, with the Turn Order pass and its payments.

Bidding goes round in the current turn order, skipping the high bidder. Dropping out takes the
last free place. When one bidder is left the auction ends: the last place pays nothing, the first
two places pay their full bids, everyone else half of their own bid, rounded up.
"""

from __future__ import annotations

from service.engine.errors import IllegalMove
from service.engine.phases.common import expect_type, int_field
from service.engine.state import active_players


def start(state: dict, rules, events: list) -> None:
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
    state["queue"] = [order[0]] if order else []
    if len(order) <= 1:
        finish(state, events)


def min_bid(auction: dict) -> int:
    return auction["high_bid"] + 1


def can_pass(auction: dict, seat: int) -> bool:
    return (auction["pass_holder"] == seat and not auction["pass_used"]
            and len(auction["in"]) > 2)


def legal(state: dict, rules, seat: int) -> list[dict]:
    auction = state["auction"]
    moves: list[dict] = [{"type": "drop_out"}]
    if rules.forced_drop_out(state, seat):
        return moves
    if can_pass(auction, seat):
        moves.append({"type": "turn_order_pass"})
    cash = state["players"][seat]["cash"]
    moves.extend({"type": "bid", "amount": a} for a in range(min_bid(auction), cash + 1))
    return moves


def check(state: dict, rules, seat: int, move: dict) -> str:
    kind = expect_type(move, "bid", "drop_out", "turn_order_pass")
    auction = state["auction"]
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


def apply(state: dict, rules, seat: int, move: dict, events: list) -> None:
    kind = check(state, rules, seat, move)
    auction = state["auction"]
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
    if len(auction["in"]) == 1:
        finish(state, events)
    else:
        state["queue"] = [next_bidder(auction, seat)]


def next_bidder(auction: dict, after: int) -> int:
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


def finish(state: dict, events: list) -> None:
    auction = state["auction"]
    new_order = auction["in"] + auction["dropped"][::-1]
    payments = []
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
