"""Small helpers for the engine's rule tests: build a state at a phase, play moves, control dice.

Every helper starts from `game.new_game` and then edits the plain state dict (its layout is the
State type of service/engine/layout.py). Opening a phase goes through the engine's lifecycle
(`lifecycle.enter`), exactly as the engine does when it reaches the phase, so queues and phase
records are the engine's own. These functions are shared by several test files: keep their signatures stable.

    state = game_at("auction", 4, turn_order=[2, 0, 3, 1], seats={2: {"cash": 30}})
    state = play(state, 2, {"type": "bid", "amount": 3})
    with illegal("BID_TOO_LOW"):
        play(state, 0, {"type": "bid", "amount": 3})
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator

import pytest

from service.engine import game, lifecycle, rng
from service.engine.errors import IllegalMove
from service.engine.variants import rules_for

SEED = "rule-tests"
NAMES = ("Ann", "Bob", "Cat", "Dan", "Eve", "Fay")
PHASES = tuple(lifecycle.DECIDING)  # the phases with decisions, in the round's order


def new(players: int = 3, *, map_id: str = "rust_belt", seed: str = SEED,
        options: dict | None = None) -> dict:
    """A fresh game as new_game makes it: round 1, issue_shares, random turn order."""
    return game.new_game(map_id, list(NAMES[:players]), seed, options)


def rules(state: dict):
    """The map's rules object, for calling a phase function directly."""
    return rules_for(state["map"])


def set_player(state: dict, seat: int, **fields: object) -> dict:
    """Sets player fields (cash, income, shares, loco, ...) in place; returns the state."""
    player = state["players"][seat]
    unknown = set(fields) - set(player)
    assert not unknown, f"no player field(s) {unknown}"
    player.update(fields)
    return state


def take_actions(state: dict, taken: dict[str, int]) -> dict:
    """Gives actions to seats, {action: seat}, as if selected this round, without their immediate
    effects (the Locomotive's +1 is not applied). In place; returns the state."""
    for action, seat in taken.items():
        state["actions"]["taken"][action] = seat
        state["players"][seat]["action"] = action
    return state


def enter(state: dict, phase: str) -> dict:
    """Opens `phase` on this state (in place) as the engine's lifecycle does: sets
    state["phase"] and the queue of seats to decide. "production" needs a Production holder and
    draws the cubes at once (using the rng). Returns the state."""
    r, events = rules(state), []
    for key in ("auction", "build", "move_goods", "production"):
        state[key] = None
    if phase not in PHASES:
        raise ValueError(f"no phase {phase!r}; one of {PHASES}")
    lifecycle.enter(state, r, phase, events)
    if phase == "production":
        assert state["queue"], "no production decision to make"
    return state


def game_at(phase: str, players: int = 3, *, round: int = 1, turn_order: Iterable[int] | None = None,
            actions: dict[str, int] | None = None, pass_holder: int | None = None,
            seats: dict[int, dict] | None = None, map_id: str = "rust_belt",
            seed: str = SEED, options: dict | None = None) -> dict:
    """A new game edited to stand at the start of `phase` in `round`.

    turn_order: the seats in order (default: seat order 0, 1, 2, ...);
    actions: {action: seat} already taken this round (see take_actions);
    pass_holder: the seat holding the Turn Order pass for this round's auction;
    seats: {seat: {field: value}} player fields to set before the phase opens;
    options: the map's game options (new_game's).
    """
    state = new(players, map_id=map_id, seed=seed, options=options)
    state["round"] = round
    state["turn_order"] = list(range(players)) if turn_order is None else list(turn_order)
    assert sorted(state["turn_order"]) == list(range(players)), "turn_order must name every seat"
    state["pass_holder"] = pass_holder
    take_actions(state, actions or {})
    for seat, fields in (seats or {}).items():
        set_player(state, seat, **fields)
    return enter(state, phase)


def play(state: dict, seat: int, move: dict) -> dict:
    """Applies one move with game.apply and returns the new state (the events are dropped)."""
    new_state, _ = game.apply(state, seat, move)
    return new_state


def play_events(state: dict, seat: int, move: dict) -> tuple[dict, list[dict]]:
    """game.apply, named for symmetry with play."""
    return game.apply(state, seat, move)


def events_of(events: list[dict], kind: str) -> list[dict]:
    """The events of one type, in order."""
    return [e for e in events if e["type"] == kind]


def decider(state: dict) -> int:
    """The seat that decides now (fails when nobody does)."""
    seat = game.active_seat(state)
    assert seat is not None, f"nobody decides in phase {state['phase']}"
    return seat


@contextlib.contextmanager
def illegal(code: str) -> Iterator[pytest.ExceptionInfo]:
    """Asserts that the block raises IllegalMove with this code."""
    with pytest.raises(IllegalMove) as info:
        yield info
    assert info.value.code == code, f"expected {code}, got {info.value.code}: {info.value.detail}"


def simplest_move(state: dict, seat: int) -> dict:
    """A move that changes as little as possible: issue 0 shares, drop out, take the first free
    action, end the build, pass, or the first legal production placement."""
    phase = state["phase"]
    if phase == "issue_shares":
        return {"type": "issue_shares", "count": 0}
    if phase == "auction":
        return {"type": "drop_out"}
    if phase == "build":
        return {"type": "end_build"}
    if phase == "move_goods":
        return {"type": "pass"}
    return game.legal_moves(state, seat)[0]


def skip_to(state: dict, phase: str, *, round: int | None = None, events: list | None = None,
            limit: int = 500) -> dict:
    """Plays simplest_move for whoever decides until the game stands in `phase` (of `round`,
    when given) or is finished. Appends every event to `events` when a list is passed."""
    for _ in range(limit):
        if game.is_finished(state) or (
                state["phase"] == phase and (round is None or state["round"] == round)):
            return state
        seat = decider(state)
        state, evs = game.apply(state, seat, simplest_move(state, seat))
        if events is not None:
            events.extend(evs)
    raise AssertionError(f"did not reach {phase} in {limit} moves")


def finish_phase(state: dict, events: list | None = None) -> dict:
    """Plays simplest_move until the current phase (of this round) is over."""
    phase, round_ = state["phase"], state["round"]
    while not game.is_finished(state) and state["phase"] == phase and state["round"] == round_:
        seat = decider(state)
        state, evs = game.apply(state, seat, simplest_move(state, seat))
        if events is not None:
            events.extend(evs)
    return state


def dice_from(rng_state: int, count: int) -> tuple[list[int], int]:
    """The dice that `count` rolls give from this rng state (as state.roll_die rolls them), and
    the rng state after them."""
    dice = []
    for _ in range(count):
        rng_state, value = rng.below(rng_state, 6)
        dice.append(value + 1)
    return dice, rng_state


def rng_for_dice(*rolls: list[int], start: int = 0) -> int:
    """An rng state whose next rolls are exactly these dice, in order (e.g. the light dice then
    the dark dice), found by a deterministic search from `start`. Put it in state["rng"] just
    before the engine rolls. Each extra die multiplies the search by 6: keep it to ~7 dice."""
    wanted = [d for roll in rolls for d in roll]
    assert all(1 <= d <= 6 for d in wanted)
    candidate = start
    while True:
        state = candidate
        for die in wanted:
            state, value = rng.below(state, 6)
            if value + 1 != die:
                break
        else:
            return candidate
        candidate += 1
