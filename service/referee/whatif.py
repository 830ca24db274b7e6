"""What-if (POST /v1/games/{id}/simulate): moves played on a copy of a game, from its current
version or an earlier one, answered step by step with the view after the last. Nothing is
written.

The play itself is service/sim/simulate.py's: it copies the state with its seed and generator
blanked and draws only from the caller's mode (stop, or the caller's own seed, or the list of a
draw's outcomes), so no answer tells the real game's next draw. This module bounds the request
by the service's settings, finds the state to start from and turns the sim's refusals into the
core's codes.

The view after the last step is the one the game would show had those moves been applied now:
its version is the start's plus the moves played whole (a step stopped at its first random step
is not played), its deadline counts from now, and a takeback proposed at the start is over once
a move is played. Programmed orders are not carried out: only the caller's moves are played.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import orjson

from service.engine.layout import State
from service.sim import simulate as sim

from .errors import GameError
from .settings import Settings

MOVES_CAP = "SIMULATE_MOVES_CAP"
CPU_CAP = "SIMULATE_CPU_CAP"
BAD_FROM_VERSION = "BAD_FROM_VERSION"
MODES = sim.MODES


@dataclass(frozen=True)
class Question:
    """A what-if as the contract's body holds it (already checked for form by the API)."""

    moves: Sequence[dict]  # [{seat, move}]
    from_version: int | None = None
    random: str = "stop"
    seed: str | None = None


@dataclass(frozen=True)
class Answer:
    """The steps (with their events, in words), where the run stopped, what `expect` lists, the
    sample mode's seed, and how many steps were played whole (the view's version is the
    start's plus these)."""

    body: dict
    state: State
    played: int


def check_count(count: int, settings: Settings) -> None:
    """Refuses a request with more moves than one plays, before any of them is read."""
    if count > settings.simulate_max_moves:
        limit = settings.simulate_max_moves
        raise GameError(MOVES_CAP, f"a simulation plays at most {limit} moves, not {count}", max_moves=limit)


def start_version(from_version: int | None, version: int) -> int:
    """The version to play from: the current one unless an earlier one of the game is named."""
    if from_version is None:
        return version
    if not 0 <= from_version <= version:
        raise GameError(BAD_FROM_VERSION,
                        f"from_version is a version of this game, 0 to {version}, not {from_version}",
                        version=version)
    return from_version


def play(state: State, question: Question, settings: Settings) -> Answer:
    """Plays the question's moves from `state` (the game's, never changed)."""
    check_count(len(question.moves), settings)
    try:
        out = sim.simulate(state, list(question.moves), question.random, question.seed,
                           cpu_seconds=settings.simulate_cpu_ms / 1000,
                           max_moves=settings.simulate_max_moves)
    except sim.SimulationCap as cap:
        if cap.code == CPU_CAP:
            raise GameError(CPU_CAP, cap.detail, cpu_ms=settings.simulate_cpu_ms) from None
        raise GameError(MOVES_CAP, cap.detail, max_moves=settings.simulate_max_moves) from None
    except sim.IllegalStep as bad:
        error = bad.error
        raise GameError(error.code, f"step {bad.index}: {error.detail}",
                        **{**error.extra, "index": bad.index}) from None
    except ValueError as exc:  # the API checks the body's form first: this is a defect's net
        raise GameError("VALIDATION_ERROR", str(exc)) from None
    body: dict = {"steps": out.steps, "stops_at": out.stops_at}
    if out.expect is not None:
        body["expect"] = out.expect
    if out.seed is not None:
        body["seed"] = out.seed
    played = len(out.steps) - (1 if out.stops_at else 0)
    return Answer(body, out.state, played)


def answer_bytes(answer: Answer, start: int, view: bytes) -> bytes:
    """The answer's body: {from_version, steps, stops_at, game, expect?, seed?}."""
    body = {"from_version": start, **answer.body}
    raw = orjson.dumps(body)
    # The view is already bytes (made as the store makes a version's): spliced in, not parsed.
    return raw[:-1] + b',"game":' + view + b"}"
