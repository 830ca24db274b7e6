"""A game's versions, read from its log: which moves are in effect at each version, and the
engine state at any version.

Every version of a game is one log entry. Most entries are moves; some take moves back (an
undo, an agreed takeback) and some only record something about the game (a takeback proposed or
answered). Versions only go forward, so taking a move back is a new version whose state equals an
earlier one. The engine is deterministic, so the state at any version is the game's first state
(made again from its seed) with the moves in effect at that version replayed, byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

import orjson

from service.engine import game
from service.engine.contract_types import TakebackView
from service.engine.layout import Event, GivenMove, State

# Entries that take moves back: "undo" the last move in effect, "takeback" to the moves in
# effect at an earlier version (`move.to_version`).
UNDO: Final = "undo"
TAKEBACK: Final = "takeback"
# A seat leaves the game (engine `resign`): a move of the game, made by its own route, not
# `POST …/moves`. Its entry is replayed like any move.
RESIGN = game.RESIGN
# Entries that change no state: they record something about the game, not a move of it. A seat
# proposes a takeback; each seat it asks accepts (the last acceptance is the "takeback" entry
# itself) or declines; the proposer may withdraw it (cancelled).
TAKEBACK_PROPOSED: Final = "takeback_proposed"
TAKEBACK_ACCEPTED: Final = "takeback_accepted"
TAKEBACK_DECLINED: Final = "takeback_declined"
TAKEBACK_CANCELLED: Final = "takeback_cancelled"
RECORD_ONLY: frozenset[str] = frozenset(
    {TAKEBACK_PROPOSED, TAKEBACK_ACCEPTED, TAKEBACK_DECLINED, TAKEBACK_CANCELLED}
)
# At least the most entries a pending proposal spans: the proposal and the acceptances of all
# but the last of the (at most five) seats it asks. The log's last TAKEBACK_SPAN entries say
# whether one is pending.
TAKEBACK_SPAN = 6


@dataclass(frozen=True, slots=True)
class _Node:
    """A persistent list of the entries in effect: each version points at its own list, and
    lists share their common start, so the lists of every version cost one node per move."""

    index: int
    parent: _Node | None


def entries_of(log: Iterable[bytes]) -> list[dict]:
    return [orjson.loads(raw) for raw in log]


def move_type(entry: dict) -> str:
    return entry["move"]["type"]


def is_move(entry: dict) -> bool:
    """Whether the entry is a move of the game (it changes the state by itself)."""
    kind = move_type(entry)
    return kind not in RECORD_ONLY and kind not in (UNDO, TAKEBACK)


def in_effect(entries: Sequence[dict], version: int | None = None) -> list[dict]:
    """The move entries in effect at `version` (the last by default), in the order they were
    made: every move, less those an undo or a takeback took back."""
    version = len(entries) if version is None else version
    heads: list[_Node | None] = [None]  # heads[v]: the moves in effect at version v
    for entry in entries[:version]:
        head = heads[-1]
        kind = move_type(entry)
        if kind == UNDO:
            head = head.parent if head is not None else None
        elif kind == TAKEBACK:
            head = heads[entry["move"]["to_version"]]
        elif is_move(entry):
            head = _Node(entry["index"], head)
        heads.append(head)
    chosen = []
    node = heads[version]
    while node is not None:
        chosen.append(entries[node.index])
        node = node.parent
    return chosen[::-1]


def pending_takeback(entries: Sequence[dict]) -> TakebackView | None:
    """The takeback proposed and not settled after the last of `entries` (the log up to the
    version in question, or only its last TAKEBACK_SPAN entries), as the view shows it:
    {to_version, by, waiting: [seat]}; or None. A proposal stays pending only while nothing but
    acceptances follow it: any move, undo, takeback, decline or withdrawal ends it."""
    accepted: set[int] = set()
    for entry in reversed(entries):
        kind = move_type(entry)
        if kind == TAKEBACK_ACCEPTED:
            accepted.add(entry["seat"])
            continue
        if kind != TAKEBACK_PROPOSED:
            return None
        proposal = next(e for e in entry["events"] if e["type"] == TAKEBACK_PROPOSED)
        return {"to_version": entry["move"]["to_version"], "by": entry["seat"],
                "waiting": [s for s in proposal["asked"] if s not in accepted]}
    return None


def genesis(state: State) -> State:
    """The game's first state, made again from what any of its states holds."""
    return game.new_game(state["map"], [p["name"] for p in state["players"]], state["seed"],
                         state["options"], seed_given=state["seed_given"])


def apply_entry(state: State, seat: int, move: GivenMove, *,
                in_place: bool = False) -> tuple[State, list[Event]]:
    """One move of a log or a record, applied to the state: the engine's apply, or its resign
    (`in_place`: on the state itself, which the caller owns; see game.apply)."""
    return game.play(state, seat, move, in_place=in_place)


def state_at(any_state: State, entries: Sequence[dict], version: int) -> State:
    """The engine state at `version`, from the game's seed and the moves in effect then."""
    state = genesis(any_state)
    for entry in in_effect(entries, version):
        state, _ = apply_entry(state, entry["seat"], entry["move"], in_place=True)
    return state
