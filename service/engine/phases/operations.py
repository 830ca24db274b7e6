"""Collect income, pay expenses, eliminate the bankrupt, reduce income. No decisions.

The game ends here when one player or none is left after expenses, or after the income
reduction of the last round."""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.engine import rules_data as R
from service.engine.contract_types import ExpensesPaidEventExpense, IncomeReducedEventReduction
from service.engine.layout import Event, State
from service.engine.network import drop_owner
from service.engine.phases.scoring import end_game
from service.engine.state import active_players

if TYPE_CHECKING:
    from service.engine.variants.base import Rules


def start(state: State, rules: Rules, events: list[Event]) -> None:
    collect_income(state, events)
    pay_expenses(state, events)
    eliminate_bankrupt(state, rules, events)
    if len(active_players(state)) <= 1:
        end_game(state, rules, events)
        return
    last = state["round"] == state["last_round"]
    if last:
        rules.before_income_reduction(state, events)
    reduce_income(state, events)
    if last:
        end_game(state, rules, events)


def finish(state: State, rules: Rules, events: list[Event]) -> None:
    """Nothing to settle: every step took effect at once."""


def collect_income(state: State, events: list[Event]) -> None:
    paid: dict[str, int] = {}
    for seat in active_players(state):
        player = state["players"][seat]
        player["cash"] += player["income"]
        paid[str(seat)] = player["income"]
    events.append({"type": "income_collected", "income": paid})


def pay_expenses(state: State, events: list[Event]) -> None:
    """$1 per share and per locomotive level; what cash cannot cover comes off income."""
    report: list[ExpensesPaidEventExpense] = []
    for seat in active_players(state):
        player = state["players"][seat]
        due = player["shares"] + player["loco"]
        paid = min(due, player["cash"])
        player["cash"] -= paid
        shortfall = due - paid
        player["income"] -= shortfall
        report.append({"seat": seat, "due": due, "paid": paid, "shortfall": shortfall})
    events.append({"type": "expenses_paid", "expenses": report})


def eliminate_bankrupt(state: State, rules: Rules, events: list[Event]) -> None:
    """A player whose income is below 0 after expenses leaves the game; their track stays,
    unowned."""
    for seat in active_players(state):
        player = state["players"][seat]
        if player["income"] >= 0:
            continue
        player["eliminated"] = True
        drop_owner(state, seat)
        events.append({"type": "player_eliminated", "seat": seat, "income": player["income"]})


def reduce_income(state: State, events: list[Event]) -> None:
    changes: list[IncomeReducedEventReduction] = []
    for seat in active_players(state):
        player = state["players"][seat]
        cut = R.income_reduction(player["income"])
        player["income"] -= cut
        changes.append({"seat": seat, "reduction": cut, "income": player["income"]})
    events.append({"type": "income_reduced", "reductions": changes})
