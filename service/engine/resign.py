"""A seat resigns: its player is out of the game as if eliminated, at any moment of any phase.

The player's ownership markers go (the track stays, unowned), their cash and income stay as they
are and score nothing: like a bankrupt player they take no further part, have `points: null`
and rank last. They leave the step in progress at once (rules decision 25), through the phase's
own `leave` (lifecycle.leave_step):

- a decision of theirs that is pending is not made: the next seat decides;
- in the auction their bid is withdrawn and pays nothing; the high bid is again the highest bid
  of those still in it (or none), and the auction ends when one bidder is left;
- in their build turn the tiles laid stay, unowned, and the next seat's build turn opens;
- as Production holder deciding a placement, the cubes drawn go back to the bag.

With one player or none left the phase's `finish` settles it and the game ends at once
(decision 1); otherwise it goes on, and the steps that need no decision run as after any move.
"""

from __future__ import annotations

from service.engine import lifecycle
from service.engine.errors import IllegalMove
from service.engine.layout import Event, State
from service.engine.network import drop_owner
from service.engine.state import copy_state
from service.engine.variants import rules_for


def resign(state: State, seat: int) -> tuple[State, list[Event]]:
    """`seat` resigns; returns the new state and what happened. The input is unchanged."""
    check(state, seat)
    new = copy_state(state)
    player = new["players"][seat]
    events: list[Event] = [{"type": "player_resigned", "seat": seat}]
    player["eliminated"] = True
    drop_owner(new, seat)
    events.append({"type": "player_eliminated", "seat": seat, "income": player["income"]})
    lifecycle.leave_step(new, rules_for(new["map"]), seat, events)
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
