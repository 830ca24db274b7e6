"""A game as a sequence of actions and chance outcomes: what OpenSpiel, PettingZoo and Gymnasium
drive, above the engine's facade.

A SimState holds an engine state that it never changes (game.apply returns a new one), so a
clone shares it and costs a few attributes. Chance is explicit: every draw of the game (growth
dice, the Production draw, shuffles, a map's own draws) is asked of the caller through the
engine's chooser (rng.choosing), so the engine's own generator is never read. A player's move
that reaches a draw leaves the state at a chance node; each outcome applied replays the move
from the state before it with the outcomes chosen so far, until no draw is left to choose.

The engine state of a SimState made from a real game has its seed and generator blanked: a
simulation can reveal nothing of the real game's future draws.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.engine import game
from service.engine.layout import GivenMove, State
from service.sim.actions import ActionSpace, action_space

CHANCE = -1  # OpenSpiel's kChancePlayerId
TERMINAL = -4  # OpenSpiel's kTerminalPlayerId
MAX_CHANCE_OUTCOMES = 6  # a die's faces; five colours; a shuffle of up to six seats; a pick of two


class NoSuchAction(ValueError):
    """An action id that is not legal in this state."""


@dataclass(frozen=True)
class Pending:
    """A move waiting for its chance outcomes: replayed from `before` with `chosen`."""

    before: State
    seat: int
    move: GivenMove
    chosen: tuple[int, ...]
    draw: game.Draw  # the draw to choose now


@dataclass
class Listing:
    """The legal actions of one decision, worked out once and shared by clones."""

    moves: dict[int, GivenMove]  # id -> the listed move, for the moves that are one action
    paths: dict[tuple[int, ...], GivenMove]  # a delivery's steps -> the listed delivery
    next_steps: dict[tuple[int, ...], list[int]]  # a delivery's steps so far -> the next ones


def blank_secrets(state: State) -> State:
    """A copy of an engine state without its seed and generator (nothing a simulation may read)."""
    out = dict(state)
    out["seed"], out["rng"] = "", 0
    return out  # type: ignore[return-value]


class SimState:
    __slots__ = ("space", "engine", "pending", "partial", "_listing", "history")

    def __init__(self, space: ActionSpace, engine: State, pending: Pending | None = None,
                 partial: tuple[int, ...] = (), history: tuple[int, ...] = ()) -> None:
        self.space, self.engine, self.pending, self.partial = space, engine, pending, partial
        self.history = history
        self._listing: Listing | None = None

    @classmethod
    def new(cls, map_id: str, players: int, setup_seed: str = "setup", max_rounds: int | None = None,
            cash: int | None = None, options: dict | None = None) -> SimState:
        """A new game whose setup (turn order, display, cities) the seed decides; everything
        random after it is a chance node. `max_rounds` ends it early, `cash` funds every seat,
        `options` are the map's game options."""
        engine = game.new_game(map_id, [f"P{i}" for i in range(players)], setup_seed, options)
        if max_rounds is not None:
            engine["last_round"] = min(engine["last_round"], max_rounds)
        if cash is not None:
            for p in engine["players"]:
                p["cash"] = cash
        return cls(action_space(map_id, players), blank_secrets(engine))

    @classmethod
    def from_game(cls, engine: State) -> SimState:
        """A simulation of a game at this state (its secrets blanked)."""
        return cls(action_space(engine["map"], len(engine["players"])), blank_secrets(engine))

    def clone(self) -> SimState:
        copy = SimState(self.space, self.engine, self.pending, self.partial, self.history)
        copy._listing = self._listing
        return copy

    def __deepcopy__(self, memo: dict) -> SimState:
        return self.clone()  # what it shares is never changed

    # -- who decides ---------------------------------------------------------------------

    def is_terminal(self) -> bool:
        return self.pending is None and game.is_finished(self.engine)

    def is_chance_node(self) -> bool:
        return self.pending is not None

    def current_player(self) -> int:
        if self.pending is not None:
            return CHANCE
        seat = game.active_seat(self.engine)
        return TERMINAL if seat is None else seat

    def returns(self) -> list[float]:
        """At the end, 1 for first place down to -1 for last (ties share a place); else 0."""
        n = len(self.engine["players"])
        if not self.is_terminal() or not self.engine["scores"]:
            return [0.0] * n
        return [1.0 - 2.0 * (s["rank"] - 1) / (n - 1) for s in self.engine["scores"]]

    # -- chance --------------------------------------------------------------------------

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The outcomes of the draw to choose now, with their probabilities."""
        if self.pending is None:
            return []
        weights = self.pending.draw.weights
        total = sum(weights)
        return [(i, w / total) for i, w in enumerate(weights) if w > 0]

    # -- decisions -----------------------------------------------------------------------

    def listing(self) -> Listing:
        if self._listing is None:
            self._listing = self._list()
        return self._listing

    def _list(self) -> Listing:
        seat = game.active_seat(self.engine)
        moves: dict[int, GivenMove] = {}
        deliveries = []
        for move in ([] if seat is None else game.legal_moves(self.engine, seat)):
            if move["type"] == "deliver":
                deliveries.append(move)
            else:
                moves[self.space.encode(move)] = move
        paths: dict[tuple[int, ...], GivenMove] = {}
        next_steps: dict[tuple[int, ...], list[int]] = {}
        if deliveries:
            for path, move in zip(self.space.delivery_paths(self.engine, deliveries), deliveries,
                                  strict=True):
                assert path not in paths, f"two deliveries share the steps {path}"
                paths[path] = move
            for path in paths:
                for i in range(len(path)):
                    steps = next_steps.setdefault(path[:i], [])
                    if path[i] not in steps:
                        steps.append(path[i])
            stop = self.space.stop
            for path in paths:  # a route that could also go on past its city ends by choice
                if path in next_steps:
                    next_steps[path].append(stop)
            for steps in next_steps.values():
                steps.sort()
        return Listing(moves, paths, next_steps)

    def legal_actions(self) -> list[int]:
        if self.pending is not None:
            return [i for i, _ in self.chance_outcomes()]
        listing = self.listing()
        if self.partial:
            return listing.next_steps[self.partial]
        return sorted([*listing.moves, *listing.next_steps.get((), ())])

    def legal_moves_by_action(self) -> dict[int, GivenMove | None]:
        """Each legal action with the move it makes now (None for a delivery step that does not
        finish its delivery)."""
        return {a: self.decode(a) for a in self.legal_actions()}

    def actions_of(self, move: GivenMove) -> list[int]:
        """The actions that make this legal move from here: one id, or a delivery's steps."""
        if move["type"] != "deliver":
            return [self.space.encode(move)]
        path = self.space.delivery_paths(self.engine, [move])[0]
        return [*path, self.space.stop] if path in self.listing().next_steps else list(path)

    def decode(self, action: int) -> GivenMove | None:
        """The listed move this action makes now, or None for a delivery step that leaves the
        route unfinished; NoSuchAction when it is not legal here."""
        if self.pending is not None:
            raise NoSuchAction("a chance node: apply an outcome")
        listing = self.listing()
        if not self.partial and action in listing.moves:
            return listing.moves[action]
        if action not in listing.next_steps.get(self.partial, ()):
            raise NoSuchAction(f"action {action} ({self.space.describe(action)}) is not legal now")
        if action == self.space.stop:
            return listing.paths[self.partial]
        steps = (*self.partial, action)
        if steps in listing.paths and steps not in listing.next_steps:
            return listing.paths[steps]
        return None

    def apply_action(self, action: int) -> None:
        """Plays one action (or, at a chance node, one outcome) on this state in place."""
        self.history = (*self.history, action)
        pending = self.pending
        if pending is not None:
            if action not in dict(self.chance_outcomes()):
                raise NoSuchAction(f"no outcome {action} of this {pending.draw.kind} draw")
            self._play(pending.before, pending.seat, pending.move, (*pending.chosen, action))
            return
        move = self.decode(action)
        if move is None:
            self.partial = (*self.partial, action)
            return
        seat = game.active_seat(self.engine)
        assert seat is not None
        self._play(self.engine, seat, move, ())

    def apply_move(self, seat: int, move: GivenMove) -> None:
        """Plays an engine move as it is (IllegalMove as apply raises it), chance nodes after."""
        if self.pending is not None or self.partial:
            raise NoSuchAction("not at a decision")
        self._play(self.engine, seat, move, ())

    def _play(self, before: State, seat: int, move: GivenMove, chosen: tuple[int, ...]) -> None:
        script = iter(chosen)

        def choose(draw: game.Draw) -> int:
            i = next(script, None)
            if i is None:
                raise game.RandomStep(draw)
            return i

        try:
            with game.choosing(choose):
                after, _ = game.apply(before, seat, move)
        except game.RandomStep as step:
            assert step.draw is not None
            self.pending = Pending(before, seat, move, chosen, step.draw)
            self.partial = ()
            self._listing = None
            return
        self.engine, self.pending, self.partial, self._listing = after, None, (), None

    # -- names ---------------------------------------------------------------------------

    def action_to_string(self, action: int) -> str:
        if self.pending is not None:
            draw = self.pending.draw
            return f"{draw.kind} {draw.labels[action]}"
        return self.space.describe(action)

    def __str__(self) -> str:
        from service.sim.observation import describe

        return describe(self, None)


# -- the names, as functions -------------------------------------------------------------

def num_distinct_actions(map_id: str, players: int) -> int:
    return action_space(map_id, players).num_distinct_actions


def encode(move: GivenMove, state: SimState) -> int:
    """The id of a move that is one action (a delivery: state.actions_of(move), its steps)."""
    return state.space.encode(move)


def decode(action: int, state: SimState) -> GivenMove | None:
    """The listed move the action makes in this state (None: a delivery step, unfinished)."""
    return state.decode(action)


def legal_mask(state: SimState) -> list[bool]:
    """One flag per action id: whether it is legal now."""
    mask = [False] * state.space.num_distinct_actions
    for a in state.legal_actions():
        mask[a] = True
    return mask
