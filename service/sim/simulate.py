"""What-if: a sequence of moves played on a copy of a game, for POST /v1/games/{id}/simulate.

Nothing is written and nothing of the real game's future is read: the state is copied with its
seed and generator blanked (state.blank_secrets), and every draw goes through the engine's
chooser (rng.choosing), never the game's own generator. A random step is handled by the mode
the caller picks:

- "stop": the run stops at the first draw, as validate does; that step's events are those
  before the draw, and `stops_at` is "random";
- "sample": every draw is sampled from a generator seeded by the caller's `seed` alone (a
  SplitMix64 of its own, seeded from "aos-simulate:" + seed), independent of the game's seed;
- "expect": the run stops at the first draw, like "stop", and `expect` lists that draw's
  outcomes with their probabilities (at most MAX_OUTCOMES of them, the likeliest first).

Caps: at most MAX_MOVES moves, and at most MAX_CPU_SECONDS of CPU time per request (checked
after each move); past one, SimulationCap names it.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass

from service.engine import game, rng, words
from service.engine.errors import IllegalMove
from service.engine.layout import Event, GivenMove, State
from service.sim.state import blank_secrets

MODES = ("stop", "sample", "expect")
MAX_MOVES = 50
MAX_CPU_SECONDS = 0.5
MAX_OUTCOMES = 16
SEED_DOMAIN = "aos-simulate:"


class SimulationCap(Exception):
    """A request past one of the caps: `code` names it."""

    def __init__(self, code: str, detail: str, limit: float) -> None:
        super().__init__(detail)
        self.code, self.detail, self.limit = code, detail, limit


class IllegalStep(Exception):
    """Step `index` is not legal: `error` says which rule it breaks."""

    def __init__(self, index: int, error: IllegalMove) -> None:
        super().__init__(f"step {index}: {error}")
        self.index, self.error = index, error


@dataclass
class Outcome:
    steps: list[dict]
    stops_at: str | None
    state: State  # after the last step played whole
    expect: dict | None
    seed: str | None  # the sample mode's seed (the caller's, or one chosen for them)


class Sampler:
    """Draws weighted by the draw's own weights from a generator seeded by the caller alone."""

    def __init__(self, seed: str) -> None:
        self.state = rng.seed_state(SEED_DOMAIN + seed)

    def __call__(self, draw: game.Draw) -> int:
        self.state, pick = rng.below(self.state, sum(draw.weights))
        for i, w in enumerate(draw.weights):
            if pick < w:
                return i
            pick -= w
        raise AssertionError("a pick below the weights' sum falls in one of them")


def _refuse(draw: game.Draw) -> int:
    raise game.RandomStep(draw)


def _step(state: State, seat: int, move: GivenMove, events: list[Event]) -> dict:
    """One step of the answer, in words as a history entry is (engine/words.py): the step's
    `text`, and each event's."""
    teller = words.Teller.of(state)
    teller.events(events)
    return {"seat": seat, "move": move, "events": events, "text": teller.entry(seat, move, events)}


def _check_body(moves: object, mode: object, seed: object, max_moves: int) -> None:
    if mode not in MODES:
        raise ValueError(f"random is one of {', '.join(MODES)}")
    if seed is not None and (not isinstance(seed, str) or not 0 < len(seed) <= 200):
        raise ValueError("seed is a string of 1 to 200 characters")
    if not isinstance(moves, list):
        raise ValueError("moves is a list of {seat, move}")
    if len(moves) > max_moves:
        raise SimulationCap("SIMULATE_MOVES_CAP", f"at most {max_moves} moves a request", max_moves)
    for i, step in enumerate(moves):
        if (not isinstance(step, dict) or set(step) != {"seat", "move"}
                or not isinstance(step["seat"], int) or isinstance(step["seat"], bool)
                or not isinstance(step["move"], dict)):
            raise ValueError(f"moves[{i}] is {{seat: int, move: GivenMove}}")


def simulate(engine: State, moves: list, mode: str = "stop", seed: str | None = None,
             cpu_seconds: float | None = None, max_moves: int = MAX_MOVES) -> Outcome:
    """Plays `moves` from `engine` on a copy. Raises ValueError for a malformed request,
    SimulationCap past a cap, IllegalStep for a move that is not legal (with its index).
    `cpu_seconds` is MAX_CPU_SECONDS unless given."""
    _check_body(moves, mode, seed, max_moves)
    cpu_seconds = MAX_CPU_SECONDS if cpu_seconds is None else cpu_seconds
    started = time.thread_time()
    state = blank_secrets(engine)
    if mode == "sample" and seed is None:
        seed = secrets.token_hex(8)
    chooser = Sampler(seed) if mode == "sample" else _refuse  # type: ignore[arg-type]
    steps: list[dict] = []
    for i, step in enumerate(moves):
        seat, move = step["seat"], step["move"]
        try:
            with game.choosing(chooser):
                after, events = game.play(state, seat, move)
        except IllegalMove as e:
            raise IllegalStep(i, e) from e
        except game.RandomStep as e:
            assert e.draw is not None
            steps.append(_step(state, seat, move, _effects(state, seat, move)))
            expect = _expectation(e.draw) if mode == "expect" else None
            return Outcome(steps, "random", state, expect, None)
        steps.append(_step(state, seat, move, events))
        state = after
        if time.thread_time() - started > cpu_seconds:
            raise SimulationCap("SIMULATE_CPU_CAP",
                                f"the moves took more than {cpu_seconds:g} s of CPU time", cpu_seconds)
    return Outcome(steps, None, state, None, seed if mode == "sample" else None)


def _effects(state: State, seat: int, move: GivenMove) -> list[Event]:
    """The step's events before its first draw (validate's dry run, which draws nothing)."""
    verdict = game.validate(state, seat, move)
    return list(verdict.get("effects", []) if verdict["legal"] else [])


def _expectation(draw: game.Draw) -> dict:
    total = sum(draw.weights)
    outcomes = sorted(((w / total, label) for w, label in zip(draw.weights, draw.labels, strict=True)
                       if w > 0), key=lambda pl: -pl[0])
    return {"kind": draw.kind,
            "outcomes": [{"outcome": label, "probability": p} for p, label in outcomes[:MAX_OUTCOMES]],
            "complete": len(outcomes) <= MAX_OUTCOMES}
