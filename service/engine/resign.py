"""A seat resigns: its player is out of the game as if eliminated, at any moment of any phase.

The player's ownership markers go (the track stays, unowned), their cash and income stay as they
are and score nothing: like a bankrupt player they take no further part, have `points: null`
and rank last. They leave the step in progress at once (rules decision 20):

- a decision of theirs that is pending is not made: the next seat decides;
- in the auction their bid is withdrawn and pays nothing; the high bid is again the highest bid
  of those still in it (or none), and the auction ends when one bidder is left;
- in their build turn the tiles laid stay, unowned, and the next seat's build turn opens;
- as Production holder deciding a placement, the cubes drawn go back to the bag.

With one player or none left the game ends at once (decision 1); otherwise it goes on, and the
steps that need no decision run as after any move.
"""

from __future__ import annotations

from service.engine.errors import IllegalMove
from service.engine.network import drop_owner
from service.engine.phases import auction, build, growth, move_goods
from service.engine.state import active_players, copy_state
from service.engine.variants import rules_for


def resign(state: dict, seat: int) -> tuple[dict, list[dict]]:
    """`seat` resigns; returns the new state and what happened. The input is unchanged."""
    # The facade's flow of a round, which imports this module: looked up when called.
    from service.engine import game

    check(state, seat)
    new = copy_state(state)
    rules = rules_for(new["map"])
    player = new["players"][seat]
    events: list[dict] = [{"type": "player_resigned", "seat": seat}]
    was_deciding = game.active_seat(new) == seat
    player["eliminated"] = True
    drop_owner(new, seat)
    events.append({"type": "player_eliminated", "seat": seat, "income": player["income"]})
    _leave_step(new, rules, seat, was_deciding, events)
    if len(active_players(new)) <= 1:
        _close_phase(new, events)
        game._finish(new, rules, events)
    elif not new["queue"]:
        game._advance(new, rules, events)
    return new, events


def check(state: dict, seat: int) -> None:
    """Refuses a resignation that cannot be made: the game is over, no such seat, or the seat's
    player is out already."""
    if state["phase"] == "finished":
        raise IllegalMove("GAME_FINISHED")
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < len(state["players"]):
        raise IllegalMove("BAD_MOVE", f"no seat {seat}")
    if state["players"][seat]["eliminated"]:
        raise IllegalMove("PLAYER_ELIMINATED", f"seat {seat} is out of the game already")


def _leave_step(state: dict, rules, seat: int, was_deciding: bool, events: list) -> None:
    """Takes the seat out of the current step's queue, and out of the phase's own record."""
    phase = state["phase"]
    if phase == "auction":
        _leave_auction(state, seat, was_deciding, events)
        return
    if phase == "production" and was_deciding:
        growth.finish_production(state, [], events)
        return
    if seat in state["queue"]:
        state["queue"].remove(seat)
    if not was_deciding:
        return
    if phase == "build":
        # The turn is over without its end-of-turn expiry: the player owns no track any more.
        build.begin_turn(state, rules, events)
    elif phase == "move_goods" and not state["queue"] and state["move_goods"]["round"] == 1:
        state["move_goods"]["round"] = 2
        move_goods._open_round(state, rules)


def _close_phase(state: dict, events: list) -> None:
    """The game ends in the middle of a phase: cubes drawn for production go back to the bag,
    and no phase record stays open."""
    if state["production"]:
        growth.finish_production(state, [], events)
    for phase in ("auction", "build", "move_goods"):
        state[phase] = None


def _leave_auction(state: dict, seat: int, was_deciding: bool, events: list) -> None:
    a = state["auction"]
    if seat not in a["in"]:
        return  # dropped out already: their place and payment stand
    a["in"].remove(seat)
    a["bids"].pop(str(seat), None)
    standing = {int(s): bid for s, bid in a["bids"].items() if int(s) in a["in"]}
    a["high_bidder"] = max(standing, key=standing.__getitem__) if standing else None
    a["high_bid"] = standing.get(a["high_bidder"], 0) if standing else 0
    if len(a["in"]) <= 1:
        auction.finish(state, events)
        return
    decider = state["queue"][0]
    if was_deciding or decider == a["high_bidder"]:
        # The high bidder is skipped; with the seat gone the turn passes on from where it was.
        state["queue"] = [auction.next_bidder(a, seat if was_deciding else decider)]
