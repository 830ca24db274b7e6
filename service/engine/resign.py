"""A seat resigns: its player is out of the game as if eliminated, at any moment of any phase.

The player's ownership markers go (the track stays, unowned), their cash and income stay as they
are and score nothing: like a bankrupt player they take no further part, have `points: null`
and rank last. They leave the step in progress at once (rules decision 25):

- a decision of theirs that is pending is not made: the next seat decides;
- in the auction their bid is withdrawn and pays nothing; the high bid is again the highest bid
  of those still in it (or none), and the auction ends when one bidder is left;
- in their build turn the tiles laid stay, unowned, and the next seat's build turn opens;
- as Production holder deciding a placement, the cubes drawn go back to the bag.

With one player or none left the game ends at once (decision 1); otherwise it goes on, and the
steps that need no decision run as after any move.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.engine import lifecycle
from service.engine.errors import IllegalMove
from service.engine.layout import Event, State
from service.engine.network import drop_owner
from service.engine.phases import auction, build, move_goods, production, scoring
from service.engine.state import active_players, copy_state, open_auction, open_move_goods
from service.engine.variants import rules_for

if TYPE_CHECKING:
    from service.engine.variants.base import Rules


def resign(state: State, seat: int) -> tuple[State, list[Event]]:
    """`seat` resigns; returns the new state and what happened. The input is unchanged."""
    check(state, seat)
    new = copy_state(state)
    rules = rules_for(new["map"])
    player = new["players"][seat]
    events: list[Event] = [{"type": "player_resigned", "seat": seat}]
    was_deciding = new["queue"][:1] == [seat]
    player["eliminated"] = True
    drop_owner(new, seat)
    events.append({"type": "player_eliminated", "seat": seat, "income": player["income"]})
    _leave_step(new, rules, seat, was_deciding, events)
    if len(active_players(new)) <= 1:
        _close_phase(new, rules, events)
        scoring.end_game(new, rules, events)
    elif not new["queue"]:
        lifecycle.advance(new, rules, events)
    return new, events


def check(state: State, seat: int) -> None:
    """Refuses a resignation that cannot be made: the game is over, no such seat, or the seat's
    player is out already."""
    if state["phase"] == "finished":
        raise IllegalMove("GAME_FINISHED")
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < len(state["players"]):
        raise IllegalMove("BAD_MOVE", f"no seat {seat}")
    if state["players"][seat]["eliminated"]:
        raise IllegalMove("PLAYER_ELIMINATED", f"seat {seat} is out of the game already")


def _leave_step(state: State, rules: Rules, seat: int, was_deciding: bool, events: list[Event]) -> None:
    """Takes the seat out of the current step's queue, and out of the phase's own record."""
    phase = state["phase"]
    if phase == "auction":
        _leave_auction(state, seat, was_deciding, events)
        return
    if phase == "production" and was_deciding:
        production.place(state, [], events)  # nothing placed: the drawn cubes go back
        return
    if seat in state["queue"]:
        state["queue"].remove(seat)
    if not was_deciding:
        return
    if phase == "build":
        # The turn is over without its end-of-turn expiry: the player owns no track any more.
        build.begin_turn(state, rules, events)
    elif phase == "move_goods" and not state["queue"] and open_move_goods(state)["round"] == 1:
        open_move_goods(state)["round"] = 2
        move_goods._open_round(state, rules)


def _close_phase(state: State, rules: Rules, events: list[Event]) -> None:
    """The game ends in the middle of a phase: an auction down to one bidder is settled, cubes
    drawn for production go back to the bag, and no phase record stays open."""
    if state["auction"] is not None:
        auction.finish(state, rules, events)
    if state["production"] is not None:
        production.place(state, [], events)
    state["build"] = state["move_goods"] = state["production"] = None


def _leave_auction(state: State, seat: int, was_deciding: bool, events: list[Event]) -> None:
    a = open_auction(state)
    if seat not in a["in"]:
        return  # dropped out already: their place and payment stand
    a["in"].remove(seat)
    a["bids"].pop(str(seat), None)
    standing = {int(s): bid for s, bid in a["bids"].items() if int(s) in a["in"]}
    high = max(standing, key=standing.__getitem__) if standing else None
    a["high_bidder"] = high
    a["high_bid"] = 0 if high is None else standing[high]
    if len(a["in"]) <= 1:
        state["queue"] = []  # the auction is over: its finish settles it (or _close_phase does)
        return
    decider = state["queue"][0]
    if was_deciding or decider == a["high_bidder"]:
        # The high bidder is skipped; with the seat gone the turn passes on from where it was.
        state["queue"] = [auction.next_bidder(a, seat if was_deciding else decider)]
