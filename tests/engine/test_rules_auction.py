"""Determine Player Order (docs/rules-decisions.md base 2 and 20): bids, drop-outs, the Turn Order
pass, the new turn order and what each place pays."""

from __future__ import annotations

from service.engine import game

from .helpers import events_of, game_at, illegal, play, play_events

DROP = {"type": "drop_out"}
PASS = {"type": "turn_order_pass"}


def bid(amount: int) -> dict:
    return {"type": "bid", "amount": amount}


def run(state: dict, script: list[tuple[int, dict]]) -> tuple[dict, list[dict]]:
    """Plays (seat, move) pairs, checking each seat is the one the engine asks."""
    events: list[dict] = []
    for seat, move in script:
        assert game.active_seat(state) == seat, (seat, move, state["queue"])
        state, evs = play_events(state, seat, move)
        events.extend(evs)
    return state, events


def paid(events: list[dict]) -> dict[int, int]:
    [done] = events_of(events, "turn_order_set")
    return {p["seat"]: p["paid"] for p in done["payments"]}


def cash(state: dict) -> list[int]:
    return [p["cash"] for p in state["players"]]


# -- payments by player count -------------------------------------------------------------------

def test_auction_payments_three_players_first_two_full_last_nothing():
    state = game_at("auction", 3)
    state, events = run(state, [(0, bid(1)), (1, bid(2)), (2, bid(3)), (0, DROP), (1, bid(4)),
                                (2, DROP)])
    assert state["turn_order"] == [1, 2, 0]
    assert paid(events) == {1: 4, 2: 3, 0: 0}
    assert cash(state) == [10, 6, 7]


def test_auction_payments_four_players_third_pays_half_rounded_up():
    state = game_at("auction", 4)
    state, events = run(state, [(0, bid(1)), (1, bid(3)), (2, bid(5)), (3, bid(7)), (0, DROP),
                                (1, DROP), (2, bid(8)), (3, DROP)])
    assert state["turn_order"] == [2, 3, 1, 0]
    assert paid(events) == {2: 8, 3: 7, 1: 2, 0: 0}
    assert cash(state) == [10, 8, 2, 3]


def test_auction_payments_five_players_half_of_odd_bid_rounds_up():
    state = game_at("auction", 5)
    state, events = run(state, [(0, bid(1)), (1, bid(2)), (2, bid(5)), (3, DROP), (4, bid(6)),
                                (0, bid(7)), (1, DROP), (2, DROP), (4, bid(9)), (0, DROP)])
    assert state["turn_order"] == [4, 0, 2, 1, 3]
    assert paid(events) == {4: 9, 0: 7, 2: 3, 1: 1, 3: 0}
    assert cash(state) == [3, 9, 7, 10, 1]


def test_auction_payments_six_players_never_bid_pays_nothing():
    state = game_at("auction", 6)
    state, events = run(state, [(0, bid(1)), (1, bid(2)), (2, DROP), (3, bid(3)), (4, DROP),
                                (5, bid(5)), (0, DROP), (1, bid(7)), (3, DROP), (5, bid(8)),
                                (1, DROP)])
    assert state["turn_order"] == [5, 1, 3, 0, 4, 2]
    # 5th place (seat 4) never bid: pays 0 although only the last place pays nothing by rule
    assert paid(events) == {5: 8, 1: 7, 3: 2, 0: 1, 4: 0, 2: 0}
    assert cash(state) == [9, 3, 10, 8, 10, 2]


def test_auction_first_dropout_pays_nothing_even_with_a_bid():
    state = game_at("auction", 3)
    state, events = run(state, [(0, bid(5)), (1, bid(6)), (2, bid(7)), (0, DROP), (1, DROP)])
    assert state["turn_order"] == [2, 1, 0]
    assert paid(events) == {2: 7, 1: 6, 0: 0}
    assert cash(state) == [10, 4, 3]


def test_auction_winner_without_any_bid_pays_nothing():
    state = game_at("auction", 3, turn_order=[1, 2, 0])
    state, events = run(state, [(1, DROP), (2, DROP)])
    assert state["turn_order"] == [0, 2, 1]
    assert paid(events) == {0: 0, 2: 0, 1: 0}
    assert cash(state) == [10, 10, 10]


# -- the new turn order -------------------------------------------------------------------------

def test_auction_new_order_winner_first_first_dropout_last():
    state = game_at("auction", 4, turn_order=[3, 1, 0, 2])
    state, _ = run(state, [(3, DROP), (1, bid(1)), (0, DROP), (2, bid(2)), (1, DROP)])
    assert state["turn_order"] == [2, 1, 0, 3]
    assert state["phase"] == "select_action"
    assert state["queue"] == [2, 1, 0, 3]


def test_auction_starts_with_the_current_first_player():
    state = game_at("auction", 4, turn_order=[2, 0, 3, 1])
    assert state["queue"] == [2]
    state, _ = run(state, [(2, bid(1)), (0, bid(2)), (3, DROP), (1, bid(3)), (2, DROP)])
    assert game.active_seat(state) == 0


def test_auction_dropout_event_names_the_place_taken():
    state = game_at("auction", 4)
    _, events = run(state, [(0, DROP), (1, DROP)])
    assert [(e["seat"], e["place"]) for e in events_of(events, "dropped_out")] == [(0, 4), (1, 3)]


# -- bids ---------------------------------------------------------------------------------------

def test_auction_bid_minimum_one_dollar():
    state = game_at("auction")
    with illegal("BID_TOO_LOW") as info:
        game.apply(state, 0, bid(0))
    assert info.value.extra["minimum"] == 1
    assert play(state, 0, bid(1))["auction"]["high_bid"] == 1


def test_auction_bid_must_be_above_the_high_bid():
    state = play(game_at("auction"), 0, bid(4))
    with illegal("BID_TOO_LOW"):
        game.apply(state, 1, bid(4))
    with illegal("BID_TOO_LOW"):
        game.apply(state, 1, bid(3))
    after = play(state, 1, bid(5))
    assert (after["auction"]["high_bid"], after["auction"]["high_bidder"]) == (5, 1)


def test_auction_bid_not_above_cash():
    state = game_at("auction", seats={0: {"cash": 7}})
    with illegal("BID_ABOVE_CASH") as info:
        game.apply(state, 0, bid(8))
    assert (info.value.extra["need"], info.value.extra["have"]) == (8, 7)
    assert play(state, 0, bid(7))["auction"]["high_bid"] == 7


def test_auction_legal_bids_run_from_high_bid_plus_one_to_cash():
    state = game_at("auction", seats={1: {"cash": 9}})
    state = play(state, 0, bid(4))
    moves = game.legal_moves(state, 1)
    assert moves == [DROP] + [bid(n) for n in range(5, 10)]


def test_auction_player_who_cannot_raise_may_only_drop_out():
    state = game_at("auction", seats={1: {"cash": 4}})
    state = play(state, 0, bid(4))
    assert game.legal_moves(state, 1) == [DROP]
    with illegal("BID_ABOVE_CASH"):
        game.apply(state, 1, bid(5))


def test_auction_bid_amount_must_be_an_integer():
    state = game_at("auction")
    with illegal("BAD_MOVE"):
        game.apply(state, 0, {"type": "bid", "amount": "3"})
    with illegal("BAD_MOVE"):
        game.apply(state, 0, {"type": "bid"})


def test_auction_a_player_bids_only_their_own_cash_after_shares():
    """Cash raised by issuing shares in this round is there to bid with."""
    state = game_at("issue_shares")
    state = play(state, 0, {"type": "issue_shares", "count": 2})
    state = play(state, 1, {"type": "issue_shares", "count": 0})
    state = play(state, 2, {"type": "issue_shares", "count": 0})
    assert state["phase"] == "auction"
    assert game.legal_moves(state, 0)[-1] == bid(20)


def test_auction_high_bidder_is_skipped():
    state = game_at("auction", 4, pass_holder=3)
    state, _ = run(state, [(0, bid(1)), (1, DROP), (2, bid(2)), (3, PASS), (0, DROP)])
    # seat 2 comes next in the order but holds the high bid: seat 3 bids instead
    assert state["auction"]["high_bidder"] == 2
    assert game.active_seat(state) == 3


# -- the Turn Order pass ------------------------------------------------------------------------

def test_auction_turn_order_pass_only_for_the_holder():
    state = game_at("auction", 4, pass_holder=2)
    assert PASS not in game.legal_moves(state, 0)
    with illegal("TURN_ORDER_PASS_UNAVAILABLE"):
        game.apply(state, 0, PASS)
    state = play(state, 0, bid(1))
    state = play(state, 1, bid(2))
    assert PASS in game.legal_moves(state, 2)


def test_auction_turn_order_pass_unavailable_without_a_holder():
    state = game_at("auction", 3, pass_holder=None)
    for seat in (0, 1, 2):
        assert game.active_seat(state) == seat
        assert PASS not in game.legal_moves(state, seat)
        with illegal("TURN_ORDER_PASS_UNAVAILABLE"):
            game.apply(state, seat, PASS)
        state = play(state, seat, bid(seat + 1))


def test_auction_turn_order_pass_once():
    state = game_at("auction", 4, pass_holder=1)
    state, _ = run(state, [(0, bid(1)), (1, PASS), (2, bid(2)), (3, bid(3)), (0, bid(4))])
    assert game.active_seat(state) == 1
    assert PASS not in game.legal_moves(state, 1)
    with illegal("TURN_ORDER_PASS_UNAVAILABLE"):
        game.apply(state, 1, PASS)


def test_auction_turn_order_pass_not_with_two_bidders_left():
    state = game_at("auction", 3, pass_holder=2)
    state, _ = run(state, [(0, bid(1)), (1, DROP)])
    assert game.active_seat(state) == 2
    assert PASS not in game.legal_moves(state, 2)
    with illegal("TURN_ORDER_PASS_UNAVAILABLE"):
        game.apply(state, 2, PASS)


def test_auction_turn_order_pass_passer_stays_in():
    state = game_at("auction", 4, pass_holder=1)
    state, events = run(state, [(0, bid(2)), (1, PASS)])
    assert events_of(events, "turn_order_pass") == [{"type": "turn_order_pass", "seat": 1}]
    assert state["auction"]["in"] == [0, 1, 2, 3]
    assert state["auction"]["dropped"] == []
    assert game.active_seat(state) == 2
    state, events = run(state, [(2, DROP), (3, DROP), (1, bid(3)), (0, DROP)])
    assert state["turn_order"] == [1, 0, 3, 2]
    assert paid(events) == {1: 3, 0: 2, 3: 0, 2: 0}


def test_auction_full_auction_with_turn_order_pass_mid_auction_exact_payments():
    state = game_at("auction", 5, pass_holder=2, seats={s: {"cash": 20} for s in range(5)})
    state, events = run(state, [
        (0, bid(2)), (1, bid(3)),
        (2, PASS),                      # holder passes without dropping out
        (3, bid(5)), (4, DROP),         # first out: 5th, never bid
        (0, DROP),                      # 4th: half of 2 = 1
        (1, bid(6)), (2, bid(7)),       # the passer bids later
        (3, DROP),                      # 3rd: half of 5 rounded up = 3
        (1, DROP),                      # 2nd: full bid 6
    ])
    assert state["turn_order"] == [2, 1, 3, 0, 4]
    assert paid(events) == {2: 7, 1: 6, 3: 3, 0: 1, 4: 0}
    assert cash(state) == [19, 14, 13, 17, 20]
    assert state["phase"] == "select_action"


def test_auction_two_players_left_first_dropout_pays_nothing():
    """With two players left (after eliminations) the first to drop out is also last: they pay
    nothing, as the first dropout always does; the winner pays the full bid."""
    state = game_at("auction", 4, seats={2: {"eliminated": True}, 3: {"eliminated": True}})
    assert state["auction"]["order"] == [0, 1]
    state, events = run(state, [(0, bid(3)), (1, bid(4)), (0, DROP)])
    assert paid(events) == {1: 4, 0: 0}
    assert state["turn_order"][:2] == [1, 0]
    assert cash(state)[:2] == [10, 6]
