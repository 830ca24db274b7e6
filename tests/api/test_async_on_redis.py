"""Asynchronous play on a real Redis, with writers racing: an undo against the next seat's move,
and a seat setting orders against the move that makes it that seat's turn."""

from __future__ import annotations

import threading
import time

from service.store import RedisStore
from tests.api.conftest import Api


def race(*calls, lag: float = 0.0) -> list:  # type: ignore[no-untyped-def]
    """Runs the calls at once, from a barrier, the last `lag` seconds after the others; their
    results in order."""
    barrier = threading.Barrier(len(calls))
    results: list = [None] * len(calls)

    def run(n: int) -> None:
        barrier.wait()
        if n == len(calls) - 1:
            time.sleep(lag)
        results[n] = calls[n]()

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def new_game(api: Api, seed: str) -> tuple[str, list[str], list[int]]:
    game = api.create(seed=seed)
    return game["game_id"], [s["token"] for s in game["seats"]], game["turn_order"]


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def undo_race(one: Api, two: Api, seed: str, lag: float) -> str:
    """Seat a issued shares; a's undo races b's move (sent `lag` seconds later). Which won."""
    gid, tokens, (a, b, _) = new_game(one, seed)
    assert one.move(gid, tokens[a], {"type": "issue_shares", "count": 2}).status_code == 200
    undo, move = race(
        lambda: one.client.post(f"/v1/games/{gid}/undo", headers=auth(tokens[a])),
        lambda: two.move(gid, tokens[b], {"type": "issue_shares", "count": 1}),
        lag=lag,
    )
    history = two.client.get(f"/v1/games/{gid}/history").get_json()
    view = one.view(gid)
    assert view["version"] == len(history) == 2
    if undo.status_code == 200:
        # The undo won: the move was judged again, and it was no longer b's turn.
        assert (move.status_code, move.get_json()["code"]) == (422, "NOT_YOUR_TURN")
        assert history[1]["move"] == {"type": "undo"}
        assert [p["cash"] for p in view["players"]] == [10, 10, 10]
        assert view["active_seat"] == a
        return "undo"
    # The move won: the undo was judged again, and another seat had moved.
    assert move.status_code == 200
    assert (undo.status_code, undo.get_json()["code"]) == (422, "ANOTHER_SEAT_MOVED")
    assert history[1]["seat"] == b and history[1]["move"]["type"] == "issue_shares"
    assert view["players"][a]["cash"] == 20 and view["players"][b]["cash"] == 15
    return "move"


def test_an_undo_racing_the_next_seats_move_has_one_winner(api_on, redis_url: str) -> None:
    one, two = api_on(RedisStore(redis_url)), api_on(RedisStore(redis_url))
    # The undo reads the log and replays the game before it commits, so a move sent at the
    # same moment wins; the later the move comes, the likelier the undo wins. Either way there
    # is one winner, and the loser is judged again against the winner's game.
    winners = [undo_race(one, two, f"undo-race-{n}", lag=n % 4 * 0.002) for n in range(16)]
    assert set(winners) <= {"undo", "move"}, winners


def orders_race(one: Api, two: Api, seed: str) -> None:
    """b sets orders for its shares while a's move makes it b's turn."""
    gid, tokens, (a, b, _) = new_game(one, seed)
    put, move = race(
        lambda: two.client.put(f"/v1/games/{gid}/seats/{b}/orders", headers=auth(tokens[b]),
                               json={"orders": [{"type": "issue_shares", "count": 3}]}),
        lambda: one.move(gid, tokens[a], {"type": "issue_shares", "count": 0}),
    )
    assert put.status_code == move.status_code == 200, (put.get_json(), move.get_json())
    history = one.client.get(f"/v1/games/{gid}/history").get_json()
    # Whichever commit came second saw the other: b's order acted once, in the move's commit
    # (orders first) or in the orders' own (move first).
    assert [(h["seat"], h["move"], h.get("by")) for h in history] == [
        (a, {"type": "issue_shares", "count": 0}, None),
        (b, {"type": "issue_shares", "count": 3}, "orders"),
    ]
    assert len(move.get_json().get("followed_by", [])) + len(put.get_json()["applied"]) == 1
    orders = two.client.get(f"/v1/games/{gid}/seats/{b}/orders", headers=auth(tokens[b]))
    assert orders.get_json()["orders"] == []
    assert one.view(gid)["players"][b]["shares"] == 5


def test_orders_set_while_the_turn_comes_act_exactly_once(api_on, redis_url: str) -> None:
    one, two = api_on(RedisStore(redis_url)), api_on(RedisStore(redis_url))
    for n in range(12):
        orders_race(one, two, f"orders-race-{n}")
