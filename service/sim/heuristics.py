"""Cheap judgements the search bot makes many times a second: what a position is worth to each
seat (at a rollout's cut-off), and which few of a decision's legal moves are worth searching.

Both read only what a player sees (the game view and the listed moves), never the generator."""

from __future__ import annotations

import math
from collections.abc import Sequence

from service.engine import rules_data as R
from service.engine.contract_types import RulesView
from service.engine.layout import GivenMove
from service.sim.greedy import GreedyPolicy, build_plans, delivery_value, group

PER_INCOME = R.SCORING["per_income"]
PER_SHARE = R.SCORING["per_share"]
PER_SEGMENT = R.SCORING["per_track_segment"]
# How many points apart two seats' estimates are when the leader is about 3 times likelier to
# finish ahead (the logistic's scale): a few deliveries' worth.
SCALE = 6.0
# Cash scores nothing at the end, but early on it is track and locomotives to come. A dollar is
# worth this many points in the first round, falling to none in the last.
CASH_POINTS = 0.25
# A locomotive level in use is worth about one more income to come, early in the game.
LOCO_POINTS = 3.0


def estimate(view: RulesView) -> list[float]:
    """Each seat's final points as the position promises them: the points it would score now
    (income, shares, track in complete links), plus what its cash and its net income over the
    rounds left should still buy, what its locomotive will carry, less 3 points a dollar it is short
    of its next expenses (each costs a dollar of income). An eliminated seat gets -100."""
    segments: dict[int, int] = {}
    for link in view["board"]["links"]:
        if link["owner"] is not None:
            segments[link["owner"]] = segments.get(link["owner"], 0) + link["segments"]
    last = view["last_round"]
    left = max(0, last - view["round"])
    cash_points = CASH_POINTS * left / max(1, last - 1)
    links: dict[int, int] = {}
    for link in view["board"]["links"]:
        if link["owner"] is not None:
            links[link["owner"]] = links.get(link["owner"], 0) + 1
    out = []
    for p in view["players"]:
        if p["eliminated"]:
            out.append(-100.0)
            continue
        seat = p["seat"]
        now = PER_INCOME * p["income"] + PER_SHARE * p["shares"] + PER_SEGMENT * segments.get(seat, 0)
        flow = p["cash"] + left * (p["income"] - p["shares"] - p["locomotive"])
        # A locomotive level is longer deliveries to come, while there are links to use it on.
        engine = LOCO_POINTS * min(p["locomotive"], links.get(seat, 0)) * left / max(1, last - 1)
        # Each dollar short of the next expenses costs a dollar of income (3 points), and below
        # zero income the seat is out.
        short = min(0, p["cash"] + p["income"] - p["shares"] - p["locomotive"])
        out.append(now + cash_points * flow + engine + PER_INCOME * short)
    return out


def final_points(view: RulesView) -> list[float]:
    """The scores of a finished game; an eliminated seat gets -100."""
    points = {s["seat"]: s["points"] for s in view["scores"] or []}
    return [-100.0 if (p := points.get(seat)) is None else float(p) for seat in range(len(view["players"]))]


def rewards(points: Sequence[float]) -> list[float]:
    """What the outcome is worth to each seat, in [0, 1]: close to 1 well ahead of the best of the
    others, 0.5 level with them, close to 0 well behind (a smooth share of first place)."""
    out = []
    for seat, mine in enumerate(points):
        best_other = max((p for s, p in enumerate(points) if s != seat), default=mine)
        out.append(1.0 / (1.0 + math.exp(-(mine - best_other) / SCALE)))
    return out


def candidates(view: RulesView, seat: int, moves: Sequence[GivenMove], greedy: GreedyPolicy,
               width: int = 5) -> list[GivenMove]:
    """The moves worth searching, most promising first, at most `width` of them (all of them when
    there are that few). Greedy's own choice is always first, so the search can only do as well
    as greedy or better at what it looks at."""
    by_type = group(moves)
    if len(moves) <= width and "issue_shares" not in by_type:
        first = greedy.choose_view(view, seat, moves)
        return [first] + [m for m in moves if m is not first]
    first = greedy.choose_view(view, seat, moves)
    picked: list[GivenMove] = [first]

    def add(m: GivenMove | None) -> None:
        if m is not None and len(picked) < width and all(m is not p for p in picked):
            picked.append(m)

    me = view["players"][seat]
    if "issue_shares" in by_type:
        # Greedy's count only: what a share's cash buys shows rounds after a rollout's cut-off,
        # so the estimate would always find a share a loss of 3 points.
        pass
    elif "bid" in by_type or "drop_out" in by_type:
        for kind in ("drop_out", "turn_order_pass"):
            for m in by_type.get(kind, []):
                add(m)
        # The lowest bids only: what turn order is worth shows after the cut-off, what a bid
        # costs at once, so the estimate cannot weigh a high bid.
        for m in sorted(by_type.get("bid", []), key=lambda m: m["amount"])[:2]:
            add(m)
    elif "deliver" in by_type or "upgrade_locomotive" in by_type or "pass" in by_type:
        for m in sorted(by_type.get("deliver", []), key=lambda m: delivery_value(m, seat), reverse=True)[:3]:
            add(m)
        for kind in ("upgrade_locomotive", "pass"):
            for m in by_type.get(kind, [])[:1]:
                add(m)
    elif "build" in by_type or "end_build" in by_type or "urbanize" in by_type:
        expenses = me["shares"] + me["locomotive"]
        for m in by_type.get("end_build", []):
            add(m)
        for _score, m in build_plans(view, seat, by_type, expenses):
            add(m)
    else:
        for m in moves:
            add(m)
    return picked
