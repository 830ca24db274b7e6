"""Takeback with consent: a seat proposes going back to an earlier version; every other seat
whose moves that would take back must accept; the last acceptance applies it.

Every step is a version of its own (timeline.RECORD_ONLY entries, which change no state), so
the pending proposal is read from the log, at any version alike. It is refused across a random
outcome (the seeded generator moved since that version), and any move or undo ends it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from service.engine.contract_types import TakebackView, TakenBackEvent, TimelineMove
from service.engine.layout import Event, State

from . import timeline
from .undo import RANDOM_OUTCOME_REVEALED, check_not_finished, refused, revealed_random_outcome

TAKEBACK_PENDING = "TAKEBACK_PENDING"
NOT_AN_EARLIER_VERSION = "NOT_AN_EARLIER_VERSION"
VERSION_TAKEN_BACK = "VERSION_TAKEN_BACK"
NOTHING_TO_TAKE_BACK = "NOTHING_TO_TAKE_BACK"
NO_TAKEBACK_PENDING = "NO_TAKEBACK_PENDING"
NOT_ASKED = "NOT_ASKED"
TAKEBACK_LIMIT = "TAKEBACK_LIMIT"
# Takebacks one seat may propose in a game: each proposal and its answer are versions, pushed to
# every watcher (propose and cancel, over and over, grew a game by 800 versions in 5 s).
MAX_PROPOSALS_PER_SEAT = 30


@dataclass(frozen=True)
class Rewind:
    """Going back to `to_version`: the state it had, and the moves it takes back."""

    to_version: int
    state: State
    taken: list[dict]  # the log entries of the moves it takes back, in order

    def asked(self, proposer: int) -> list[int]:
        """The seats whose consent it needs: those whose moves it takes back, bar the proposer."""
        return sorted({e["seat"] for e in self.taken} - {proposer})

    def versions(self) -> list[int]:
        return [e["version"] for e in self.taken]


@dataclass(frozen=True)
class Step:
    """One takeback entry to write: its move and events, and the state after it (None: the
    state stays) with the proposal the view shows then."""

    move: TimelineMove
    events: list[Event]
    state: State | None
    pending: TakebackView | None


def rewind(state: State, entries: Sequence[dict], to_version: int) -> Rewind:
    current = len(entries)
    if not 0 <= to_version < current:
        raise refused(NOT_AN_EARLIER_VERSION,
                      f"to_version must be an earlier version, 0 to {current - 1}", version=current)
    now = timeline.in_effect(entries)
    then = timeline.in_effect(entries, to_version)
    if [e["index"] for e in now[:len(then)]] != [e["index"] for e in then]:
        raise refused(VERSION_TAKEN_BACK,
                      f"version {to_version} had moves that have been taken back since; "
                      "going there would bring them back")
    if len(then) == len(now):
        raise refused(NOTHING_TO_TAKE_BACK, f"no move in effect was made after version {to_version}")
    back = timeline.state_at(state, entries, to_version)
    if revealed_random_outcome(back, state):
        raise refused(RANDOM_OUTCOME_REVEALED,
                      f"a random outcome was revealed after version {to_version}")
    return Rewind(to_version, back, now[len(then):])


def taken_back(plan: Rewind, proposer: int) -> TakenBackEvent:
    return {"type": "taken_back", "to_version": plan.to_version, "proposed_by": proposer,
            "versions": plan.versions()}


def propose(state: State, entries: Sequence[dict], seat: int, to_version: int) -> Step:
    """A proposal by `seat`; applied at once when it takes back only the seat's own moves."""
    check_not_finished(state)
    made = sum(1 for e in entries if e.get("seat") == seat
               and e["move"]["type"] in (timeline.TAKEBACK_PROPOSED, timeline.TAKEBACK))
    if made >= MAX_PROPOSALS_PER_SEAT:
        raise refused(TAKEBACK_LIMIT, f"seat {seat} has proposed {made} takebacks in this game, "
                      f"the most a seat may ({MAX_PROPOSALS_PER_SEAT})")
    if timeline.pending_takeback(entries[-timeline.TAKEBACK_SPAN:]) is not None:
        raise refused(TAKEBACK_PENDING, "a takeback is pending: it must be answered first")
    plan = rewind(state, entries, to_version)
    asked = plan.asked(seat)
    if not asked:
        return Step({"type": timeline.TAKEBACK, "to_version": to_version},
                    [taken_back(plan, seat)], plan.state, None)
    event: Event = {"type": timeline.TAKEBACK_PROPOSED, "seat": seat, "to_version": to_version,
                    "asked": asked, "versions": plan.versions()}
    return Step({"type": timeline.TAKEBACK_PROPOSED, "to_version": to_version}, [event], None,
                {"to_version": to_version, "by": seat, "waiting": asked})


def pending_for(entries: Sequence[dict]) -> TakebackView:
    pending = timeline.pending_takeback(entries[-timeline.TAKEBACK_SPAN:])
    if pending is None:
        raise refused(NO_TAKEBACK_PENDING, "no takeback is pending")
    return pending


def accept(state: State, entries: Sequence[dict], seat: int) -> Step:
    """`seat`'s acceptance; the last one takes the game back."""
    pending = pending_for(entries)
    if seat not in pending["waiting"]:
        raise refused(NOT_ASKED, f"the pending takeback waits for seats {pending['waiting']}, "
                      f"not seat {seat}", waiting=pending["waiting"])
    to_version = pending["to_version"]
    waiting = [s for s in pending["waiting"] if s != seat]
    accepted: Event = {"type": timeline.TAKEBACK_ACCEPTED, "seat": seat, "waiting": waiting}
    if waiting:
        return Step({"type": timeline.TAKEBACK_ACCEPTED, "to_version": to_version}, [accepted],
                    None, {**pending, "waiting": waiting})
    # Nothing moved since the proposal (a move or an undo would have ended it), so what was
    # checked then holds: the moves in effect are the same.
    now = timeline.in_effect(entries)
    then = len(timeline.in_effect(entries, to_version))
    plan = Rewind(to_version, timeline.state_at(state, entries, to_version), now[then:])
    return Step({"type": timeline.TAKEBACK, "to_version": to_version},
                [accepted, taken_back(plan, pending["by"])], plan.state, None)


def decline(entries: Sequence[dict], seat: int) -> Step:
    """`seat`'s refusal, or the proposer's withdrawal: either ends the proposal."""
    pending = pending_for(entries)
    to_version = pending["to_version"]
    if seat == pending["by"]:
        return Step({"type": timeline.TAKEBACK_CANCELLED, "to_version": to_version},
                    [{"type": timeline.TAKEBACK_CANCELLED, "seat": seat, "to_version": to_version}],
                    None, None)
    if seat in pending["waiting"]:
        return Step({"type": timeline.TAKEBACK_DECLINED, "to_version": to_version},
                    [{"type": timeline.TAKEBACK_DECLINED, "seat": seat, "to_version": to_version}],
                    None, None)
    raise refused(NOT_ASKED, f"the pending takeback waits for seats {pending['waiting']}, "
                  f"not seat {seat}", waiting=pending["waiting"])
