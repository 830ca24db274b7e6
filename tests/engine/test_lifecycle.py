"""The round's one lifecycle (service/engine/lifecycle.py): one table orders the steps, a game
only ever rests in a phase with decisions, each phase takes only its own move types, and a
phase's record exists exactly while that phase is open (docs/rules-decisions.md: the order of
the round)."""

from __future__ import annotations

import random

import orjson
import pytest

from service.engine import game, lifecycle
from service.engine.errors import IllegalMove
from service.engine.playout import play_random_game
from service.engine.variants import rules_for

RECORDS = {"auction": "auction", "build": "build", "move_goods": "move_goods",
           "production": "production"}


def test_next_is_one_cycle_through_every_step_and_orders_the_deciding_phases():
    order, step = [], "issue_shares"
    for _ in range(len(lifecycle.STEPS)):
        order.append(step)
        step = lifecycle.NEXT[step]
    assert step == "issue_shares"
    assert sorted(order) == sorted(lifecycle.STEPS) == sorted(lifecycle.NEXT)
    assert [s for s in order if s in lifecycle.DECIDING] == list(lifecycle.DECIDING)
    assert order == ["issue_shares", "auction", "select_action", "build", "move_goods",
                     "operations", "production", "growth", "next_round"]


def test_every_move_type_belongs_to_one_phase_or_one_map():
    owners = [t for module in lifecycle.DECIDING.values() for t in module.MOVE_TYPES]
    assert len(owners) == len(set(owners))
    maps = {t for m in game.MAP_IDS for t in rules_for(m).extra_build_move_types()}
    assert set(owners) | maps == game.ALL_MOVE_TYPES
    assert "remove_wall" in maps and "remove_wall" not in owners


@pytest.mark.parametrize(("map_id", "players"), [("rust_belt", 4), ("madagascar", 4),
                                                  ("holland", 3), ("iraq", 4), ("berlin", 3)])
def test_a_game_rests_only_in_deciding_phases_with_their_records_and_move_types(map_id, players):
    rules = rules_for(map_id)
    seen: set[str] = set()

    def check(before, seat, move, options, state, events):
        phase = state["phase"]
        seen.add(before["phase"])
        assert phase in lifecycle.DECIDING or phase == "finished"
        assert (game.active_seat(state) is None) == (phase == "finished")
        for key, owner in RECORDS.items():
            assert (state[key] is not None) == (phase == owner), (key, phase)
        own = set(lifecycle.DECIDING[before["phase"]].MOVE_TYPES)
        if before["phase"] == "build":
            own |= set(rules.extra_build_move_types())
        assert {m["type"] for m in options} <= own
        other = sorted(game.ALL_MOVE_TYPES - own)[len(seen) % (len(game.ALL_MOVE_TYPES) - len(own))]
        with pytest.raises(IllegalMove) as info:
            game.apply(before, seat, {"type": other})
        assert info.value.code == "WRONG_PHASE"

    final, _ = play_random_game(map_id, players, f"lifecycle-{map_id}", random.Random(7),
                                on_move=check, cash=300)
    assert game.is_finished(final) and final["round"] == final["last_round"]
    assert seen >= set(lifecycle.DECIDING) - ({"production"} if map_id == "madagascar" else set())


def test_a_move_played_in_place_changes_the_state_given_and_ends_where_a_copy_would():
    # game.apply(in_place=True) is the request path's and the replays' (they own the state they
    # play on): the same game, move by move, must end in the same state either way, and the
    # state given is the one returned; without it, the state given stays as it was.
    moves: list[tuple[int, dict]] = []
    final, _ = play_random_game("rust_belt", 3, "in-place", random.Random(7), cash=60,
                                on_move=lambda _, seat, move, *rest: moves.append((seat, move)))
    copied = owned = game.new_game("rust_belt", ["P0", "P1", "P2"], "in-place")
    for seated in owned["players"]:
        seated["cash"] = 60
    for seat, move in moves:
        before = orjson.dumps(copied)
        copied, copied_events = game.apply(copied, seat, move)
        assert orjson.dumps(orjson.loads(before)) == before  # the copy's input untouched
        given = owned
        owned, owned_events = game.apply(owned, seat, move, in_place=True)
        assert owned is given
        assert owned_events == copied_events
    assert orjson.dumps(owned) == orjson.dumps(copied) == orjson.dumps(final)
    assert game.is_finished(owned) and len(moves) > 150  # a whole game, every phase


def test_a_move_refused_in_place_is_refused_as_with_a_copy():
    state = game.new_game("rust_belt", ["Ann", "Bob", "Cat"], seed="refused")
    seat, too_many = game.active_seat(state), {"type": "issue_shares", "count": 14}
    with pytest.raises(IllegalMove) as copied:
        game.apply(state, seat, too_many)
    with pytest.raises(IllegalMove) as owned:
        game.apply(orjson.loads(orjson.dumps(state)), seat, too_many, in_place=True)
    assert owned.value.code == copied.value.code == "SHARE_LIMIT"
