"""Collect income, pay expenses, eliminate the bankrupt, reduce income. No decisions."""

from __future__ import annotations

from service.engine import rules_data as R
from service.engine.network import drop_owner
from service.engine.state import active_players


def collect_income(state: dict, events: list) -> None:
    paid = {}
    for seat in active_players(state):
        player = state["players"][seat]
        player["cash"] += player["income"]
        paid[str(seat)] = player["income"]
    events.append({"type": "income_collected", "income": paid})


def pay_expenses(state: dict, events: list) -> None:
    """$1 per share and per locomotive level; what cash cannot cover comes off income."""
    report = []
    for seat in active_players(state):
        player = state["players"][seat]
        due = player["shares"] + player["loco"]
        paid = min(due, player["cash"])
        player["cash"] -= paid
        shortfall = due - paid
        player["income"] -= shortfall
        report.append({"seat": seat, "due": due, "paid": paid, "shortfall": shortfall})
    events.append({"type": "expenses_paid", "expenses": report})


def eliminate_bankrupt(state: dict, rules, events: list) -> None:
    """A player whose income is below 0 after expenses leaves the game; their track stays,
    unowned."""
    for seat in active_players(state):
        player = state["players"][seat]
        if player["income"] >= 0:
            continue
        player["eliminated"] = True
        drop_owner(state, seat)
        events.append({"type": "player_eliminated", "seat": seat, "income": player["income"]})


def reduce_income(state: dict, events: list) -> None:
    changes = []
    for seat in active_players(state):
        player = state["players"][seat]
        cut = R.income_reduction(player["income"])
        player["income"] -= cut
        changes.append({"seat": seat, "reduction": cut, "income": player["income"]})
    events.append({"type": "income_reduced", "reductions": changes})
