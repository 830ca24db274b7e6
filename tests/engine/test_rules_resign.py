"""A seat resigns (issue 16.5): out of the game as if eliminated, in any phase, at any moment.

Rule texts: docs/rules-decisions.md decision 1 (elimination; one player or none left ends the game at once),
docs/rules-decisions.md decision 25 (what a resignation does to the step in progress)."""

from __future__ import annotations

import random

import orjson
import pytest

from service.engine import game
from service.engine import rules_data as R
from service.engine.playout import RandomPlayer
from service.engine.state import active_players, cubes_in_play
from tests.engine.board import build_move as build
from tests.engine.board import owner_of
from tests.engine.helpers import PHASES, decider, events_of, finish_phase, game_at, illegal, play, skip_to


def test_the_deciding_seat_resigns_in_issue_shares_and_the_next_seat_decides() -> None:
    state = game_at("issue_shares", 4, turn_order=[2, 0, 3, 1])
    before = orjson.dumps(state)
    after, events = game.resign(state, 2)
    assert orjson.dumps(state) == before, "resign changed its input"
    assert events == [{"type": "player_resigned", "seat": 2},
                      {"type": "player_eliminated", "seat": 2, "income": 0}]
    assert after["players"][2]["eliminated"] is True
    assert after["players"][2]["cash"] == 10 and after["players"][2]["shares"] == 2  # unchanged
    assert game.active_seat(after) == 0 and after["queue"] == [0, 3, 1]
    assert game.view(after)["turn_order"] == [0, 3, 1]


def test_a_seat_resigns_out_of_turn_and_the_decider_stays() -> None:
    state = game_at("issue_shares", 4, turn_order=[2, 0, 3, 1])
    after, _ = game.resign(state, 3)
    assert game.active_seat(after) == 2 and after["queue"] == [2, 0, 1]


def test_a_resigned_seat_makes_no_move_and_is_listed_none() -> None:
    state, _ = game.resign(game_at("issue_shares", 3), 1)
    state = play(state, 0, {"type": "issue_shares", "count": 0})
    assert game.active_seat(state) == 2
    assert game.legal_moves(state, 1) == []
    with illegal("PLAYER_ELIMINATED"):
        play(state, 1, {"type": "issue_shares", "count": 0})
    with illegal("PLAYER_ELIMINATED"):
        game.resign(state, 1)


def test_resigning_needs_a_seat_of_a_game_not_over() -> None:
    state = game_at("issue_shares", 3)
    for seat in (3, -1, True, "0"):
        with illegal("BAD_MOVE"):
            game.resign(state, seat)  # type: ignore[arg-type]
    state, _ = game.resign(state, 0)
    state, _ = game.resign(state, 1)
    assert game.is_finished(state)
    with illegal("GAME_FINISHED"):
        game.resign(state, 2)


# -- the auction ---------------------------------------------------------------------------------

def test_the_high_bidder_resigns_and_the_high_bid_is_the_highest_standing_again() -> None:
    state = game_at("auction", 4, turn_order=[2, 0, 3, 1])
    state = play(state, 2, {"type": "bid", "amount": 3})
    state = play(state, 0, {"type": "bid", "amount": 5})
    assert decider(state) == 3
    state, _ = game.resign(state, 0)
    a = state["auction"]
    assert (a["high_bidder"], a["high_bid"]) == (2, 3) and a["in"] == [2, 3, 1]
    assert decider(state) == 3  # still seat 3's decision
    with illegal("BID_TOO_LOW"):
        play(state, 3, {"type": "bid", "amount": 3})
    state = play(state, 3, {"type": "drop_out"})  # the last of the three places left
    state, events = game.apply(state, 1, {"type": "drop_out"})
    # Seat 2 wins with its $3 and pays it; seat 1 is 2nd with no bid; seat 3 last pays nothing;
    # seat 0 has no place and pays nothing: its $5 bid was withdrawn.
    [order] = events_of(events, "turn_order_set")
    assert order["order"] == [2, 1, 3]
    assert [p["paid"] for p in order["payments"]] == [3, 0, 0]
    assert state["turn_order"] == [2, 1, 3, 0]
    assert game.view(state)["turn_order"] == [2, 1, 3]
    assert [p["cash"] for p in state["players"]] == [10, 10, 7, 10]


def test_the_deciding_bidder_resigns_and_the_turn_passes_on() -> None:
    state = game_at("auction", 4, turn_order=[2, 0, 3, 1])
    state = play(state, 2, {"type": "bid", "amount": 3})
    assert decider(state) == 0
    state, _ = game.resign(state, 0)
    assert decider(state) == 3 and state["auction"]["high_bidder"] == 2


def test_a_resignation_that_leaves_one_bidder_ends_the_auction() -> None:
    state = game_at("auction", 3, turn_order=[0, 1, 2])
    state = play(state, 0, {"type": "bid", "amount": 2})
    state = play(state, 1, {"type": "drop_out"})  # last place
    state = play(state, 2, {"type": "bid", "amount": 4})
    state, events = game.resign(state, 0)
    [order] = events_of(events, "turn_order_set")
    assert order["order"] == [2, 1]
    assert order["payments"] == [{"seat": 2, "place": 1, "bid": 4, "paid": 4},
                                 {"seat": 1, "place": 2, "bid": 0, "paid": 0}]
    assert state["phase"] == "select_action" and decider(state) == 2
    assert state["turn_order"] == [2, 1, 0]


def test_the_active_seat_is_never_the_high_bidder_after_a_resignation() -> None:
    # Seat 0 bids 2, seat 1 bids 3, seat 2 uses the Turn Order pass: seat 0 decides. Seat 1
    # resigns: seat 0's $2 is the high bid again, so seat 0 is skipped and seat 3 decides.
    state = game_at("auction", 4, turn_order=[0, 1, 2, 3], pass_holder=2)
    state = play(state, 0, {"type": "bid", "amount": 2})
    state = play(state, 1, {"type": "bid", "amount": 3})
    state = play(state, 2, {"type": "turn_order_pass"})
    state = play(state, 3, {"type": "drop_out"})
    assert decider(state) == 0
    state, _ = game.resign(state, 1)
    assert state["auction"]["high_bidder"] == 0 and decider(state) == 2


# -- build, move goods, production ---------------------------------------------------------------

def test_the_builder_resigns_mid_turn_the_track_stays_unowned_and_the_next_turn_opens() -> None:
    state = game_at("build", 3, actions={"first_build": 0}, seats={0: {"cash": 50}})
    state = play(state, 0, build((8, 11), [[2, 5]]))
    assert owner_of(state, (8, 11)) == [0] and state["players"][0]["cash"] == 48
    state, _ = game.resign(state, 0)
    assert owner_of(state, (8, 11)) == [None] and state["tiles"]["8,11"]
    assert state["build"]["seat"] == 1 and state["build"]["tiles_left"] == 3
    assert state["players"][0]["cash"] == 48


def test_the_last_mover_of_the_first_round_resigns_and_the_second_round_opens() -> None:
    state = game_at("move_goods", 3)
    state = play(state, 0, {"type": "pass"})
    state = play(state, 1, {"type": "pass"})
    state, events = game.resign(state, 2)
    assert state["phase"] == "move_goods" and state["move_goods"]["round"] == 2
    assert state["queue"] == [0, 1]
    state = play(state, 0, {"type": "pass"})
    state, events = game.apply(state, 1, {"type": "pass"})
    # Expenses and income for the two left only.
    assert [e["seat"] for e in events_of(events, "expenses_paid")[0]["expenses"]] == [0, 1]


def test_the_production_holder_resigns_while_placing_and_the_cubes_go_back() -> None:
    state = game_at("move_goods", 3, actions={"production": 1})
    for cube in state["display"]["light-1"]:  # room for the two cubes: back into the bag
        state["bag"][cube] += 1
    state["display"]["light-1"] = [None, None, None]
    state = finish_phase(state)
    assert state["phase"] == "production" and decider(state) == 1
    drawn = list(state["production"]["drawn"])
    assert len(drawn) == 2
    bag = sum(state["bag"].values())
    state, events = game.resign(state, 1)
    [production] = events_of(events, "production")
    assert production["placements"] == [] and sorted(production["returned"]) == sorted(drawn)
    assert events_of(events, "dice_rolled"), "the dice are rolled: the round goes on"
    assert state["round"] == 2 and state["phase"] == "issue_shares"
    assert sum(state["bag"].values()) == bag + 2


# -- the end -------------------------------------------------------------------------------------

def test_two_of_three_resign_and_the_game_ends_with_them_last() -> None:
    state = game_at("build", 3, actions={"first_build": 2}, seats={2: {"income": 4, "shares": 3}})
    state, first = game.resign(state, 0)
    assert not game.is_finished(state)
    assert state["build"]["seat"] == 2  # seat 0 resigned out of turn: seat 2 still builds
    state, events = game.resign(state, 2)
    assert game.is_finished(state) and state["queue"] == [] and state["build"] is None
    [finished] = events_of(events, "game_finished")
    ranks = {r["seat"]: (r["points"], r["rank"]) for r in finished["scores"]}
    # Seat 1: 3 x 0 income - 3 x 2 shares = -6, first; the resigned rank 2nd (last), no points.
    assert ranks == {0: (None, 2), 1: (-6, 1), 2: (None, 2)}


def test_a_resigned_player_ranks_last_when_the_game_runs_to_its_end() -> None:
    state = game_at("issue_shares", 4, seats={s: {"income": 10} for s in range(4)})
    state, _ = game.resign(state, 1)
    state = skip_to(state, "finished")
    assert game.is_finished(state)
    scores = {r["seat"]: r for r in state["scores"]}
    assert scores[1]["points"] is None
    assert scores[1]["rank"] == max(r["rank"] for r in state["scores"])
    assert all(scores[s]["rank"] < scores[1]["rank"] for s in (0, 2, 3) if scores[s]["points"] is not None)


def test_the_game_ends_while_production_waits_and_the_drawn_cubes_go_back() -> None:
    state = game_at("move_goods", 3, actions={"production": 1})
    for cube in state["display"]["light-1"]:
        state["bag"][cube] += 1
    state["display"]["light-1"] = [None, None, None]
    state = finish_phase(state)
    bag = sum(state["bag"].values())
    state, _ = game.resign(state, 0)
    state, events = game.resign(state, 2)  # seat 1 is left, placing its cubes: the game ends
    assert game.is_finished(state) and state["production"] is None
    assert sum(state["bag"].values()) == bag + 2
    assert events_of(events, "dice_rolled") == []


def test_the_holder_resigns_while_placing_and_ends_the_game_and_the_cubes_go_back_once() -> None:
    # The holder's own leaving returns the drawn cubes; the phase's finish, as the game ends,
    # must not return them a second time (it did: 98 cubes after this resignation).
    state = production_waiting()
    state, _ = game.resign(state, 0)
    drawn = list(state["production"]["drawn"])
    bag = sum(state["bag"].values())
    assert len(drawn) == 2 and bag + cubes_in_play(state) == 96
    state, events = game.resign(state, 1)
    assert game.is_finished(state) and state["production"] is None
    [production] = events_of(events, "production")
    assert sorted(production["returned"]) == sorted(drawn)
    assert sum(state["bag"].values()) == bag + 2
    assert sum(state["bag"].values()) + cubes_in_play(state) == 96


def production_waiting() -> dict:
    """Three seats in production, holder seat 1 with two cubes drawn and room to place them."""
    state = game_at("move_goods", 3, actions={"production": 1})
    for cube in state["display"]["light-1"]:
        state["bag"][cube] += 1
    state["display"]["light-1"] = [None, None, None]
    state = finish_phase(state)
    assert state["phase"] == "production" and decider(state) == 1
    return state


def standing_in(phase: str) -> dict:
    """Three seats in `phase`, someone to decide."""
    if phase == "production":
        return production_waiting()
    return game_at(phase, 3, actions={"first_build": 0}, seats={0: {"cash": 50}})


@pytest.mark.parametrize("phase", PHASES)
@pytest.mark.parametrize("who", ["decider", "other"])
@pytest.mark.parametrize("ends", [False, True], ids=["goes_on", "ends"])
def test_every_cube_is_accounted_for_before_and_after_a_resignation(phase: str, who: str, ends: bool) -> None:
    state = standing_in(phase)
    assert sum(R.CUBE_COUNTS.values()) == 96
    deciding = decider(state)
    others = [s for s in active_players(state) if s != deciding]
    if ends:  # one of the others leaves first, out of turn: the next resignation ends the game
        state, _ = game.resign(state, others.pop())
        assert decider(state) == deciding and state["phase"] == phase
    seat = deciding if who == "decider" else others[0]
    drawn = len(state["production"]["drawn"]) if phase == "production" else 0
    bag = sum(state["bag"].values())
    assert bag + cubes_in_play(state) == 96
    after, events = game.resign(state, seat)
    assert game.is_finished(after) == ends
    assert sum(after["bag"].values()) + cubes_in_play(after) == 96
    # Only drawn cubes that were never placed go back, once: when the holder leaves, or the game
    # ends while the holder still has to place them.
    returned = drawn if (who == "decider" or ends) else 0
    assert [len(e["returned"]) for e in events_of(events, "production")] == ([drawn] if returned else [])
    if not events_of(events, "production_drawn"):  # no new draw in the round that follows
        assert sum(after["bag"].values()) == bag + returned


@pytest.mark.parametrize(("map_id", "players"), [("rust_belt", 5), ("madagascar", 4), ("iraq", 4),
                                                  ("berlin", 5), ("holland", 4)])
@pytest.mark.parametrize("seed", range(3))
def test_random_games_with_resignations_at_random_moments_play_on_and_replay(
        map_id: str, players: int, seed: int) -> None:
    chooser = random.Random(seed)
    state = game.new_game(map_id, [f"P{i}" for i in range(players)], f"resign-{seed}")
    for p in state["players"]:
        p["cash"] = 100
    start, record = state, []
    total = sum(R.CUBE_COUNTS.values())
    player = RandomPlayer(chooser)
    for _ in range(3000):
        if game.is_finished(state):
            break
        if chooser.random() < 0.02:  # someone resigns: the decider or anyone still in
            seat = chooser.choice(active_players(state))
            state, events = game.resign(state, seat)
            record.append((seat, None))
        else:
            seat = decider(state)
            assert not state["players"][seat]["eliminated"]
            options = game.legal_moves(state, seat)
            assert options, f"seat {seat} must decide in {state['phase']} but has no legal move"
            move = player.choose(state, seat, options)
            state, events = game.apply(state, seat, move)
            record.append((seat, move))
        assert sum(state["bag"].values()) + cubes_in_play(state) == total
    assert game.is_finished(state)
    survivors = [s for s in state["scores"] if s["points"] is not None]
    out = [s for s in state["scores"] if s["points"] is None]
    assert all(s["rank"] == len(survivors) + 1 for s in out)
    replayed = start
    for seat, move in record:
        replayed = game.resign(replayed, seat)[0] if move is None else game.apply(replayed, seat, move)[0]
    assert orjson.dumps(replayed) == orjson.dumps(state)


def test_a_record_with_resignations_replays_through_the_facade() -> None:
    state = game.new_game("rust_belt", ["Ann", "Bob", "Cat"], "record")
    moves = []
    for _ in range(4):
        seat = decider(state)
        move = game.legal_moves(state, seat)[0]
        state = play(state, seat, move)
        moves.append({"seat": seat, "move": move})
    for seat in (2, 0):
        state, _ = game.resign(state, seat)
        moves.append({"seat": seat, "move": {"type": "resign"}})
    assert game.is_finished(state)
    assert orjson.dumps(game.replay(game.record_header(state), moves)) == orjson.dumps(state)
    with illegal("GAME_FINISHED") as info:
        game.replay(game.record_header(state), [*moves, {"seat": 1, "move": {"type": "resign"}}])
    assert info.value.extra["index"] == 6
