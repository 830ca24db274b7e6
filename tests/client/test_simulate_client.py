"""The generated client's `simulate` (POST /v1/games/{id}/simulate) over real HTTP: typed request
and answer, and each refusal as its exception with its code."""

from __future__ import annotations

import pytest
import requests
from aos_client import (
    AosClient,
    BadRequest,
    IllegalMove,
    IssueSharesMove,
    NewGame,
    NewGamePlayer,
    PayloadTooLarge,
    RecordMove,
    SimulateRequest,
    SimulateResult,
)


def test_simulate_answers_a_typed_result_and_changes_nothing(live_url: str) -> None:
    api = AosClient(live_url, retries=0)
    game = api.create_game(NewGame(map="rust_belt", players=[NewGamePlayer(name=n) for n in "ABC"],
                                   seed="client-simulate"))
    seat = game.active_seat
    assert seat is not None
    request = SimulateRequest(moves=[RecordMove(seat=seat, move=IssueSharesMove(count=2))], random="stop")
    result = api.simulate(game.game_id, request)
    assert isinstance(result, SimulateResult)
    assert result.from_version == 0 and result.stops_at is None and result.game.version == 1
    assert result.steps[0].seat == seat and result.steps[0].move.type == "issue_shares"
    assert [e.type for e in result.steps[0].events] == ["shares_issued"]
    assert result.game.players[seat].cash == 20 and result.game.players[seat].shares == 4
    raw = requests.post(f"{live_url}/v1/games/{game.game_id}/simulate", json=request.to_dict(),
                        timeout=10).json()
    assert SimulateResult.from_dict(raw).to_dict() == raw
    assert api.get_game(game.game_id).version == 0  # nothing written

    sampled = api.simulate(game.game_id, {"moves": [], "random": "sample", "seed": "s"})
    assert sampled.seed == "s" and sampled.steps == []


def test_simulate_refusals_are_typed(live_url: str) -> None:
    api = AosClient(live_url, retries=0)
    game = api.create_game(NewGame(map="rust_belt", players=[NewGamePlayer(name=n) for n in "ABC"],
                                   seed="client-simulate"))
    seat = game.active_seat
    assert seat is not None
    step = {"seat": seat, "move": {"type": "issue_shares", "count": 0}}
    with pytest.raises(PayloadTooLarge) as cap:
        api.simulate(game.game_id, {"moves": [step] * 51})
    assert cap.value.code == "SIMULATE_MOVES_CAP" and cap.value.get("max_moves") == 50
    with pytest.raises(IllegalMove) as illegal:
        api.simulate(game.game_id, {"moves": [step, step]})
    assert illegal.value.code == "NOT_YOUR_TURN" and illegal.value.get("index") == 1
    with pytest.raises(BadRequest) as bad:
        api.simulate(game.game_id, {"moves": [], "from_version": 1})
    assert bad.value.code == "BAD_FROM_VERSION" and bad.value.get("version") == 0
