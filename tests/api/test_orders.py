"""Programmed orders: each kind acts at the seat's right decision, in the commit of the move that
made it the seat's turn, chaining through the seats after it; an order that is not legal is
dropped and the seat decides by hand; orders are private to their seat."""

from __future__ import annotations

import pytest

from tests.api.tables import Table, untold


def by_orders(entries: list[dict]) -> list[tuple[int, dict]]:
    assert all(e["by"] == "orders" for e in entries)
    return [(e["seat"], e["move"]) for e in entries]


def watch(table: Table) -> list[int]:
    """The versions the store announces, one per commit that makes versions."""
    seen: list[int] = []
    table.games.store.add_listener(lambda game_id, version: seen.append(version))
    return seen


def to_select_action(table: Table) -> list[int]:
    """No shares; an auction that the first seat wins for $1 while the others drop out: the
    new turn order (the winner, then the others in reverse order of dropping out)."""
    a, b, c = table.view()["turn_order"]
    for seat in (a, b, c):
        table.play(seat, {"type": "issue_shares", "count": 0})
    table.play(a, {"type": "bid", "amount": 1})
    table.play(b, {"type": "drop_out"})
    table.play(c, {"type": "drop_out"})
    view = table.view()
    assert view["phase"] == "select_action" and view["turn_order"] == [a, c, b]
    return view["turn_order"]


def test_issue_shares_orders_chain_through_the_seats_in_one_commit(api) -> None:
    table = Table(api)
    a, b, c = table.view()["turn_order"]
    assert table.set_orders(b, [{"type": "issue_shares", "count": 3}])["applied"] == []
    table.set_orders(c, [{"type": "issue_shares", "count": 0}])
    commits = watch(table)

    body = table.moved(a, {"type": "issue_shares", "count": 2})
    assert commits == [3]  # the move and both orders: one commit
    assert body["version"] == 3
    assert by_orders(body["followed_by"]) == [(b, {"type": "issue_shares", "count": 3}),
                                              (c, {"type": "issue_shares", "count": 0})]
    assert [e["index"] for e in body["followed_by"]] == [1, 2]
    assert untold(body["followed_by"][0]["events"]) == [
        {"type": "shares_issued", "seat": b, "count": 3, "cash": 15}]
    players = body["game"]["players"]
    assert [(players[s]["cash"], players[s]["shares"]) for s in (a, b, c)] == [(20, 4), (25, 5), (10, 2)]
    assert body["game"]["phase"] == "auction" and body["game"]["active_seat"] == a
    history = table.history()
    assert [h.get("by") for h in history] == [None, "orders", "orders"]
    assert table.orders(b) == table.orders(c) == []


def test_a_repeated_move_answers_with_the_moves_its_orders_made(api) -> None:
    table = Table(api)
    a, b, c = table.view()["turn_order"]
    table.set_orders(b, [{"type": "issue_shares", "count": 1}])
    first = table.move(a, {"type": "issue_shares", "count": 0}, Idempotency_Key="chain-1")
    table.set_orders(a, [{"type": "drop_out"}])  # for a's next decision, not this one
    again = table.move(a, {"type": "issue_shares", "count": 0}, Idempotency_Key="chain-1")
    assert first.status_code == again.status_code == 200
    assert first.get_data() == again.get_data()
    assert len(first.get_json()["followed_by"]) == 1 and table.version() == 2
    assert again.headers["ETag"] == '"2"'


def test_bid_up_to_bids_the_lowest_bid_until_its_limit_then_drops_out(api) -> None:
    table = Table(api)
    a, b, c = table.view()["turn_order"]
    for seat in (a, b, c):
        table.play(seat, {"type": "issue_shares", "count": 0})
    table.set_orders(b, [{"type": "bid_up_to", "max": 3}])
    table.set_orders(c, [{"type": "bid_up_to", "max": 5}])

    first = table.moved(a, {"type": "bid", "amount": 1})
    assert by_orders(first["followed_by"]) == [(b, {"type": "bid", "amount": 2}),
                                               (c, {"type": "bid", "amount": 3})]
    assert first["game"]["auction"]["high_bid"] == 3 and first["game"]["active_seat"] == a
    assert table.orders(b) == [{"type": "bid_up_to", "max": 3}]  # it stands through the auction

    second = table.moved(a, {"type": "bid", "amount": 4})
    assert by_orders(second["followed_by"]) == [(b, {"type": "drop_out"}),
                                                (c, {"type": "bid", "amount": 5})]
    assert table.orders(b) == []
    assert table.orders(c) == [{"type": "bid_up_to", "max": 5}]

    last = table.moved(a, {"type": "drop_out"})
    payments = next(e for e in last["events"] if e["type"] == "turn_order_set")["payments"]
    assert payments == [{"seat": c, "place": 1, "bid": 5, "paid": 5},
                        {"seat": a, "place": 2, "bid": 4, "paid": 4},
                        {"seat": b, "place": 3, "bid": 2, "paid": 0}]
    assert [last["game"]["players"][s]["cash"] for s in (a, b, c)] == [6, 10, 5]
    assert table.orders(c) == []  # its auction is over: used up, not kept for the next one


def test_drop_out_at_once(api) -> None:
    table = Table(api)
    a, b, c = table.view()["turn_order"]
    for seat in (a, b, c):
        table.play(seat, {"type": "issue_shares", "count": 0})
    table.set_orders(b, [{"type": "drop_out"}])
    body = table.moved(a, {"type": "bid", "amount": 1})
    assert by_orders(body["followed_by"]) == [(b, {"type": "drop_out"})]
    assert body["game"]["auction"]["in"] == [a, c] and body["game"]["active_seat"] == c


def test_select_action_takes_the_first_free_action_of_the_list(api) -> None:
    table = Table(api)
    first, second, third = to_select_action(table)
    table.set_orders(second, [{"type": "select_action", "actions": ["first_build", "engineer"]}])
    table.set_orders(third, [{"type": "select_action",
                              "actions": ["first_build", "engineer", "locomotive"]}])
    body = table.moved(first, {"type": "select_action", "action": "first_build"})
    assert by_orders(body["followed_by"]) == [
        (second, {"type": "select_action", "action": "engineer"}),
        (third, {"type": "select_action", "action": "locomotive"}),
    ]
    players = body["game"]["players"]
    assert [players[s]["action"] for s in (first, second, third)] == ["first_build", "engineer", "locomotive"]
    assert players[third]["locomotive"] == 2  # the Locomotive action upgrades at once
    assert body["game"]["phase"] == "build"


def test_end_build_ends_the_build_turn_at_once(api) -> None:
    table = Table(api)
    first, second, third = to_select_action(table)
    table.play(first, {"type": "select_action", "action": "first_build"})
    table.play(second, {"type": "select_action", "action": "engineer"})
    table.play(third, {"type": "select_action", "action": "locomotive"})
    assert table.view()["build"]["seat"] == first
    table.set_orders(second, [{"type": "end_build"}])
    cash = table.view()["players"][second]["cash"]
    body = table.moved(first, {"type": "end_build"})
    assert by_orders(body["followed_by"]) == [(second, {"type": "end_build"})]
    assert body["game"]["players"][second]["cash"] == cash
    assert not any(t["owner"] == second for h in body["game"]["board"]["tracks"] for t in h["tracks"])
    assert body["game"]["build"]["seat"] == third == body["game"]["active_seat"]


def test_upgrade_and_pass_in_move_goods(api) -> None:
    table = Table(api)
    first, second, third = to_select_action(table)
    table.play(first, {"type": "select_action", "action": "first_build"})
    table.play(second, {"type": "select_action", "action": "engineer"})
    table.play(third, {"type": "select_action", "action": "turn_order"})
    table.set_orders(second, [{"type": "pass"}, {"type": "upgrade_locomotive"}])
    table.set_orders(third, [{"type": "upgrade_locomotive"}, {"type": "pass"}])
    for seat in (first, second, third):
        table.play(seat, {"type": "end_build"})
    view = table.view()
    assert view["phase"] == "move_goods" and view["active_seat"] == first
    assert table.orders(second) == [{"type": "pass"}, {"type": "upgrade_locomotive"}]

    round_one = table.moved(first, {"type": "pass"})
    assert by_orders(round_one["followed_by"]) == [(second, {"type": "pass"}),
                                                   (third, {"type": "upgrade_locomotive"})]
    players = round_one["game"]["players"]
    assert [players[s]["locomotive"] for s in (first, second, third)] == [1, 1, 2]
    assert round_one["game"]["move_goods"] == {"round": 2, "locomotive_upgraded": [third]}

    round_two = table.moved(first, {"type": "pass"})
    assert by_orders(round_two["followed_by"]) == [(second, {"type": "upgrade_locomotive"}),
                                                   (third, {"type": "pass"})]
    players = round_two["game"]["players"]
    assert [players[s]["locomotive"] for s in (first, second, third)] == [1, 2, 2]
    assert table.orders(second) == table.orders(third) == []


def test_an_order_that_is_not_legal_is_dropped_and_the_seat_decides(api) -> None:
    table = Table(api)
    a, b, c = table.view()["turn_order"]
    # 2 shares issued at the start, 15 at most: 14 more is not a legal move.
    table.set_orders(b, [{"type": "issue_shares", "count": 14}, {"type": "drop_out"}])
    table.set_orders(c, [{"type": "issue_shares", "count": 1}])
    body = table.moved(a, {"type": "issue_shares", "count": 0})
    assert "followed_by" not in body and body["version"] == 1
    assert body["game"]["active_seat"] == b
    assert table.orders(b) == [{"type": "drop_out"}]  # the bad one went; the rest stand
    chained = table.moved(b, {"type": "issue_shares", "count": 1})
    assert by_orders(chained["followed_by"]) == [(c, {"type": "issue_shares", "count": 1})]

    other = Table(api, seed="third")
    first, second, third = to_select_action(other)
    other.set_orders(second, [{"type": "select_action", "actions": ["first_build"]}])
    body = other.moved(first, {"type": "select_action", "action": "first_build"})
    assert "followed_by" not in body and body["game"]["active_seat"] == second
    assert other.orders(second) == []


def test_orders_set_on_ones_own_turn_act_at_once(api) -> None:
    table = Table(api)
    a, b, c = table.view()["turn_order"]
    table.set_orders(b, [{"type": "issue_shares", "count": 1}])
    commits = watch(table)
    first = table.put_orders(a, [{"type": "issue_shares", "count": 2}, {"type": "drop_out"}],
                             Idempotency_Key="orders-1")
    assert first.status_code == 200, first.get_json()
    body = first.get_json()
    assert body["version"] == 2 and first.headers["ETag"] == '"2"'
    assert body["orders"] == [{"type": "drop_out"}]
    assert [(e["seat"], e["move"], e["by"]) for e in body["applied"]] == [
        (a, {"type": "issue_shares", "count": 2}, "orders"),
        (b, {"type": "issue_shares", "count": 1}, "orders")]
    assert commits == [2]
    again = table.put_orders(a, [{"type": "issue_shares", "count": 2}, {"type": "drop_out"}],
                             Idempotency_Key="orders-1")
    assert again.get_data() == first.get_data()
    assert table.version() == 2 and commits == [2]
    assert table.orders(a) == [{"type": "drop_out"}]
    assert table.view()["players"][a]["cash"] == 20
    stale = table.put_orders(a, [], If_Match='"1"')
    assert (stale.status_code, stale.get_json()["code"]) == (412, "VERSION_MISMATCH")
    assert table.orders(a) == [{"type": "drop_out"}]


def test_orders_are_private_to_their_seat(api) -> None:
    table = Table(api)
    a, b, c = table.view()["turn_order"]
    commits = watch(table)
    before = api.snapshot(table.id)
    etag = api.client.get(f"/v1/games/{table.id}").headers["ETag"]
    response = table.put_orders(b, [{"type": "bid_up_to", "max": 7}])
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-store"
    assert response.get_json() == {"seat": b, "orders": [{"type": "bid_up_to", "max": 7}],
                                   "version": 0, "applied": []}
    # Nothing public changed: no version, no notice to watchers, the same view and history.
    assert api.snapshot(table.id) == before and commits == []
    assert api.client.get(f"/v1/games/{table.id}").headers["ETag"] == etag
    assert b"bid_up_to" not in b"".join(before)
    assert table.meta()["orders"] == {str(b): [{"type": "bid_up_to", "max": 7}]}

    url = table.orders_url(b)
    assert api.client.get(url).status_code == 401
    other = api.client.get(url, headers=table.headers(c))
    assert (other.status_code, other.get_json()["code"]) == (403, "SEAT_MISMATCH")
    assert api.client.put(url, json={"orders": []}, headers=table.headers(a)).status_code == 403
    assert api.client.delete(url, headers=table.headers(c)).status_code == 403
    foreign = Table(api, seed="foreign")
    wrong = api.client.get(url, headers={"Authorization": f"Bearer {foreign.tokens[b]}"})
    assert (wrong.status_code, wrong.get_json()["code"]) == (403, "TOKEN_OTHER_GAME")
    assert table.orders(b) == [{"type": "bid_up_to", "max": 7}]
    read = api.client.get(url, headers=table.headers(b))
    assert read.headers["Cache-Control"] == "no-store"


def test_orders_do_not_act_after_an_undo(api) -> None:
    table = Table(api)
    a, b, c = table.view()["turn_order"]
    table.set_orders(b, [{"type": "issue_shares", "count": 1}, {"type": "issue_shares", "count": 4}])
    body = table.moved(a, {"type": "issue_shares", "count": 0})
    assert by_orders(body["followed_by"]) == [(b, {"type": "issue_shares", "count": 1})]
    refused = table.undo(a)
    assert (refused.status_code, refused.get_json()["code"]) == (422, "ANOTHER_SEAT_MOVED")
    undone = table.undo(b)  # a move b's orders made is b's own
    assert undone.status_code == 200, undone.get_json()
    view = undone.get_json()["game"]
    assert view["active_seat"] == b and view["players"][b]["shares"] == 2
    assert table.orders(b) == [{"type": "issue_shares", "count": 4}]  # stands, did not act
    assert "followed_by" not in undone.get_json()
    table.moved(b, {"type": "issue_shares", "count": 2})
    assert table.view()["players"][b]["shares"] == 4


def test_delete_clears_the_orders(api) -> None:
    table = Table(api)
    a, b, c = table.view()["turn_order"]
    table.set_orders(b, [{"type": "issue_shares", "count": 1}])
    cleared = api.client.delete(table.orders_url(b), headers=table.headers(b))
    assert cleared.status_code == 200 and cleared.get_json() == {"seat": b, "orders": []}
    assert table.orders(b) == [] and "orders" not in table.meta()
    assert api.client.delete(table.orders_url(b), headers=table.headers(b)).status_code == 200
    body = table.moved(a, {"type": "issue_shares", "count": 0})
    assert "followed_by" not in body and body["game"]["active_seat"] == b


@pytest.mark.parametrize("orders", [
    [{"type": "bid", "amount": 3}],
    [{"type": "issue_shares", "count": 16}],
    [{"type": "issue_shares"}],
    [{"type": "bid_up_to", "max": 3, "extra": 1}],
    [{"type": "select_action", "actions": []}],
    [{"type": "select_action", "actions": ["engineer", "engineer"]}],
    [{"type": "select_action", "actions": ["nonsense"]}],
    [{"type": "pass"}] * 17,
    "pass",
])
def test_bad_orders_are_refused_and_change_nothing(api, orders: object) -> None:
    table = Table(api)
    seat = table.view()["turn_order"][1]
    response = api.client.put(table.orders_url(seat), json={"orders": orders}, headers=table.headers(seat))
    assert (response.status_code, response.get_json()["code"]) == (400, "VALIDATION_ERROR")
    assert table.orders(seat) == []
    extra = api.client.put(table.orders_url(seat), json={"orders": [], "more": 1},
                           headers=table.headers(seat))
    assert extra.status_code == 400
    bad_seat = api.client.get(f"/v1/games/{table.id}/seats/9/orders", headers=table.headers(seat))
    assert (bad_seat.status_code, bad_seat.get_json()["code"]) == (400, "BAD_SEAT")


def test_no_orders_for_a_finished_game(api) -> None:
    table = Table(api, seed="async")
    table.play_to_end()
    response = table.put_orders(0, [{"type": "pass"}])
    assert (response.status_code, response.get_json()["code"]) == (422, "GAME_FINISHED")
