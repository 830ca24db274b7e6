"""The command that checks the action ids over many random games (service/sim/check_actions.py):
it spreads games over the maps and player counts, finds a broken id, names the game and decision
to reproduce, and exits 1 then."""

from __future__ import annotations

import pytest

from service.sim import check_actions
from service.sim.check_actions import check_game, main, specs
from service.sim.checks import CheckFailed, check_decision
from service.sim.state import SimState


def test_games_are_spread_over_the_maps_and_their_player_counts():
    games = specs(40, ["rust_belt", "holland"], (3, 6), "7", 1)
    rust = [g.players for g in games if g.map_id == "rust_belt"]
    holland = [(g.players, g.options) for g in games if g.map_id == "holland"]
    assert rust == [3, 4, 5, 6] * 5
    assert [p for p, _ in holland] == [3, 4] * 10  # Holland takes 3-4 players
    assert sum(bool(o) for _, o in holland) == 10  # half of them with windmills
    assert games[9].seed == "check-7-9"


def test_a_run_checks_every_decision_and_exits_0(capsys):
    assert main(["--games", "5", "--seed", "t", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "games: 5\n" in out and "failures: 0" in out
    for map_id in ("rust_belt", "madagascar", "holland", "iraq", "berlin"):
        assert f"  {map_id}: 1 games, 3 players" in out


def test_a_game_replays_alone_as_in_the_run():
    spec = specs(3, ["madagascar"], (4, 4), "r", 1)[2]
    first, again = check_game(spec), check_game(spec)
    assert first.failure is None and first.decisions > 100 and first.moves_checked > 1000
    assert first.delivery_decisions > 0 and first.walked == first.delivery_decisions
    assert (again.decisions, again.moves_checked, again.rounds) == \
        (first.decisions, first.moves_checked, first.rounds)
    fewer = check_game(specs(3, ["madagascar"], (4, 4), "r", 1000)[2])
    assert fewer.walked <= 1 and fewer.decisions == first.decisions


def broken_decode(decode):
    """A decode that answers another move for a bid: what the checks must catch."""
    def wrong(self, action):
        move = decode(self, action)
        if move is not None and move["type"] == "bid":
            return {**move, "amount": move["amount"] + 1}
        return move
    return wrong


def test_a_broken_id_is_a_failure_with_its_game_and_decision(monkeypatch, capsys):
    monkeypatch.setattr(SimState, "decode", broken_decode(SimState.decode))
    state = SimState.new("rust_belt", 3, "b")
    while state.engine["phase"] != "auction" or state.is_chance_node():
        check_decision(state)
        state.apply_action(state.legal_actions()[0])
    with pytest.raises(CheckFailed, match=r"decodes to .*'amount': 2.*not the listed"):
        check_decision(state)
    assert main(["--games", "2", "--maps", "rust_belt", "--players", "3", "--seed", "b",
                 "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "failures: 2" in out
    assert "game 1 (seed check-b-1, rust_belt, 3 players) at decision " in out
    assert "reproduce: python -m service.sim.check_actions --seed b --game 1" in out


def test_a_crash_is_a_failure_too(monkeypatch):
    def crash(state, rnd):
        raise KeyError("boom")
    monkeypatch.setattr(check_actions, "RESIGN_CHANCE", 1.0)
    monkeypatch.setattr(check_actions, "resign", crash)
    result = check_game(specs(1, ["berlin"], (3, 3), "c", 1)[0])
    assert result.failure is not None and result.failure.decision == 1
    assert result.failure.message == "KeyError: 'boom'"
