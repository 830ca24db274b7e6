"""Final scoring: 3 per income, -3 per share, 1 per track segment in the player's complete links.
Cash scores nothing and breaks no tie; eliminated players rank last with no points."""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.engine import rules_data as R
from service.engine.layout import Event, Score, State

if TYPE_CHECKING:
    from service.engine.variants.base import Rules


def end_game(state: State, rules: Rules, events: list[Event]) -> None:
    """Ends the game now: the phase becomes "finished", nobody decides, the scores are final."""
    state["phase"] = "finished"
    state["queue"] = []
    scores = state["scores"] = score(state, rules)
    events.append({"type": "game_finished", "scores": scores})


def track_points(state: State, rules: Rules) -> dict[int, int]:
    points: dict[int, int] = {}
    for link in rules.network(state).links():
        if link.owner is not None:
            points[link.owner] = points.get(link.owner, 0) + len(link.pieces)
    return points


def score(state: State, rules: Rules) -> list[Score]:
    track = track_points(state, rules)
    s = R.SCORING
    parts: list[tuple[int, int, int] | None] = []  # (income, share, track points) per seat
    for seat, player in enumerate(state["players"]):
        if player["eliminated"]:
            parts.append(None)
            continue
        parts.append((s["per_income"] * player["income"], s["per_share"] * player["shares"],
                      s["per_track_segment"] * track.get(seat, 0)))
    survivors = sorted((sum(p) for p in parts if p is not None), reverse=True)
    rows: list[Score] = []
    for seat, p in enumerate(parts):
        if p is None:
            rows.append({"seat": seat, "points": None, "income_points": None, "share_points": None,
                         "track_points": None, "rank": len(survivors) + 1})
        else:
            rows.append({"seat": seat, "points": sum(p), "income_points": p[0], "share_points": p[1],
                         "track_points": p[2], "rank": survivors.index(sum(p)) + 1})
    return rows
