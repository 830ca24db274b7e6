"""Final scoring: 3 per income, -3 per share, 1 per track segment in the player's complete links.
Cash scores nothing and breaks no tie; eliminated players rank last with no points."""

from __future__ import annotations

from service.engine import rules_data as R


def track_points(state: dict, rules) -> dict[int, int]:
    points: dict[int, int] = {}
    for link in rules.network(state).links():
        if link.owner is not None:
            points[link.owner] = points.get(link.owner, 0) + len(link.pieces)
    return points


def score(state: dict, rules) -> list[dict]:
    track = track_points(state, rules)
    s = R.SCORING
    rows = []
    for seat, player in enumerate(state["players"]):
        if player["eliminated"]:
            rows.append({"seat": seat, "points": None, "income_points": None,
                         "share_points": None, "track_points": None})
            continue
        income = s["per_income"] * player["income"]
        shares = s["per_share"] * player["shares"]
        tracks = s["per_track_segment"] * track.get(seat, 0)
        rows.append({"seat": seat, "points": income + shares + tracks, "income_points": income,
                     "share_points": shares, "track_points": tracks})
    survivors = sorted((r["points"] for r in rows if r["points"] is not None), reverse=True)
    for r in rows:
        if r["points"] is None:
            r["rank"] = len(survivors) + 1
        else:
            r["rank"] = survivors.index(r["points"]) + 1
    return rows
