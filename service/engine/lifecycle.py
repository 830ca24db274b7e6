"""The round as one table: which step follows which, and the loop that runs them.

Every step is a module of phases/ with the same contract (phases/__init__.py): `start` opens it,
`finish` settles it and clears its record once nobody is left to decide. Steps with decisions
(the phases a game stands in between moves) add `legal`, `apply` and `leave`. After a move,
`advance` finishes each step whose queue is empty and starts the one that NEXT names, until
someone must decide or a step ends the game (operations, phases/scoring.end_game). A player who
leaves mid-step (a resignation) goes through `leave_step`: the phase's own `leave`, then its
`finish` if the game ends there, else the same loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from service.engine.layout import DecidingPhase, Event, GivenMove, Move, State, Step
from service.engine.phases import (
    actions,
    auction,
    build,
    growth,
    move_goods,
    next_round,
    operations,
    production,
    scoring,
    shares,
)
from service.engine.state import active_players

if TYPE_CHECKING:
    from service.engine.variants.base import Rules


class StepModule(Protocol):
    def start(self, state: State, rules: Rules, events: list[Event]) -> None: ...

    def finish(self, state: State, rules: Rules, events: list[Event]) -> None: ...


class PhaseModule(StepModule, Protocol):
    @property
    def MOVE_TYPES(self) -> tuple[str, ...]: ...  # noqa: N802  (a module constant)

    def legal(self, state: State, rules: Rules, seat: int) -> list[Move]: ...

    def apply(self, state: State, rules: Rules, seat: int, move: GivenMove, events: list[Event]) -> None: ...

    def leave(self, state: State, rules: Rules, seat: int, events: list[Event]) -> None:
        """Takes a seat whose player is out of the game out of the phase's queue and record, at
        any moment of the phase (rules decision 25); the queue may be left empty."""


# The phases with decisions, in the order of the round; state["phase"] names one of them.
DECIDING: dict[DecidingPhase, PhaseModule] = {
    "issue_shares": shares,
    "auction": auction,
    "select_action": actions,
    "build": build,
    "move_goods": move_goods,
    "production": production,
}

STEPS: dict[Step, StepModule] = {
    "issue_shares": shares,
    "auction": auction,
    "select_action": actions,
    "build": build,
    "move_goods": move_goods,
    "operations": operations,
    "production": production,
    "growth": growth,
    "next_round": next_round,
}

# Which step follows which: the one place that says so.
NEXT: dict[Step, Step] = {
    "issue_shares": "auction",
    "auction": "select_action",
    "select_action": "build",
    "build": "move_goods",
    "move_goods": "operations",
    "operations": "production",
    "production": "growth",
    "growth": "next_round",
    "next_round": "issue_shares",
}


def base_move_types() -> frozenset[str]:
    """Every move type of the base game's phases (a map adds its own: Rules.extra_move_types)."""
    return frozenset(t for module in DECIDING.values() for t in module.MOVE_TYPES)


def enter(state: State, rules: Rules, step: Step, events: list[Event]) -> None:
    """Opens one step, as the loop does when it reaches it."""
    STEPS[step].start(state, rules, events)


def advance(state: State, rules: Rules, events: list[Event]) -> None:
    """Runs every step that needs no decision, until someone must decide or the game ends."""
    phase = state["phase"]
    if phase == "finished":
        return
    step: Step = phase
    while not state["queue"] and state["phase"] != "finished":
        STEPS[step].finish(state, rules, events)
        step = NEXT[step]
        STEPS[step].start(state, rules, events)


def leave_step(state: State, rules: Rules, seat: int, events: list[Event]) -> None:
    """`seat`'s player is out of the game (marked eliminated already) in the middle of the phase
    the game stands in. The phase's `leave` takes the seat out of it; with one player or none
    left the phase's `finish` settles what is open and the game ends (rules decision 1),
    otherwise the steps that need no decision run as after any move."""
    phase = state["phase"]
    if phase == "finished":
        return
    module = DECIDING[phase]
    module.leave(state, rules, seat, events)
    if len(active_players(state)) <= 1:
        module.finish(state, rules, events)
        scoring.end_game(state, rules, events)
    elif not state["queue"]:
        advance(state, rules, events)
