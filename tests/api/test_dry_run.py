"""`moves/validate` never shows a random outcome before its move is made (issue 11, defect 4):
the dry run stops at the first random step, says so, and the real move rolls as it would have."""

from __future__ import annotations

from tests.api.tables import untold

SIMPLE = {"issue_shares": {"type": "issue_shares", "count": 0}, "auction": {"type": "drop_out"},
          "build": {"type": "end_build"}, "move_goods": {"type": "pass"}}
RANDOM_EVENTS = {"dice_rolled", "goods_grown", "production_drawn"}


def to_last_pass(api, seed: str) -> tuple[dict, dict]:  # type: ignore[no-untyped-def]
    """A game on `seed` played with the simplest moves to its first move goods' last pass."""
    game = api.create(seed=seed)
    gid = game["game_id"]
    view = api.view(gid)
    passes = 0
    while passes < 5:  # three seats pass twice: the sixth pass is the last
        seat = view["active_seat"]
        passes += view["phase"] == "move_goods"
        move = SIMPLE.get(view["phase"]) or api.legal(gid, seat)[0]
        response = api.move(gid, game["seats"][seat]["token"], move)
        assert response.status_code == 200, response.get_json()
        view = response.get_json()["game"]
    return game, view


def test_validating_the_last_pass_shows_no_dice_and_the_real_pass_rolls_the_same(api) -> None:
    game, view = to_last_pass(api, "dry-run")
    gid, seat = game["game_id"], view["active_seat"]
    before = api.snapshot(gid)
    # No token: anyone may ask, so the answer must hold nothing the move has not yet made.
    response = api.client.post(f"/v1/games/{gid}/moves/validate", json={"type": "pass", "seat": seat})
    assert response.status_code == 200
    verdict = response.get_json()
    assert verdict["legal"] is True and verdict["stops_at"] == "random"
    kinds = [e["type"] for e in verdict["effects"]]
    assert not RANDOM_EVENTS & set(kinds) and "income_collected" in kinds
    assert b"dice" not in response.get_data() and b"goods_grown" not in response.get_data()
    assert api.snapshot(gid) == before

    real = api.move(gid, game["seats"][seat]["token"], {"type": "pass"}).get_json()["events"]
    twin, twin_view = to_last_pass(api, "dry-run")  # the same seed, never validated
    alone = api.move(twin["game_id"], twin["seats"][twin_view["active_seat"]]["token"],
                     {"type": "pass"}).get_json()["events"]
    assert real == alone
    dice = [e for e in real if e["type"] == "dice_rolled"]
    assert [len(e["dice"]) for e in dice] == [3, 3]  # one die per player, light then dark
    rolled = next(i for i, e in enumerate(real) if e["type"] in RANDOM_EVENTS)
    assert verdict["effects"] == real[:rolled]


def test_a_move_with_nothing_random_gets_all_its_effects_and_no_stops_at(api) -> None:
    game = api.create(seed="dry-run")
    gid, seat = game["game_id"], game["active_seat"]
    verdict = api.client.post(f"/v1/games/{gid}/moves/validate",
                              json={"type": "issue_shares", "count": 1, "seat": seat}).get_json()
    assert "stops_at" not in verdict
    assert untold(verdict["effects"]) == [{"type": "shares_issued", "seat": seat, "count": 1, "cash": 5}]
