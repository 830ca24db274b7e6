"""The worker as it runs: real `python -m service.worker` processes on a real Redis, the API on
the same Redis, webhooks received by an HTTP server of the test's own."""

from __future__ import annotations

import time

from service.engine import game as engine
from service.engine import lifecycle

PHASES = tuple(lifecycle.DECIDING)  # every phase with decisions
DISPLAY = tuple(f"{side}-{n}" for side in ("light", "dark") for n in range(1, 7)) + tuple("ABCDEFGH")


def first_empty_squares(display: dict, need: int) -> list[str]:
    """The columns of the first `need` empty squares, reading the display as a player does."""
    columns = []
    for column in DISPLAY:
        columns += [column] * sum(1 for square in display.get(column, []) if square is None)
    return sorted(columns[:need])


def cheap_move(view: dict) -> dict:
    """Our own quick moves between the clock's: the game flows, and someone takes Production."""
    phase = view["phase"]
    if phase == "select_action":
        available = view["actions"]["available"]
        action = "production" if "production" in available else available[0]
        return {"type": "select_action", "action": action}
    return {
        "issue_shares": {"type": "issue_shares", "count": 0},
        "auction": {"type": "drop_out"},
        "build": {"type": "end_build"},
        "move_goods": {"type": "pass"},
    }[phase]


def test_a_one_second_clock_makes_the_default_move_in_every_phase(api, start_worker) -> None:
    start_worker()
    created = api.create(clock={"turn_seconds": 1})
    game_id = created["game_id"]
    # The first decision's deadline: the game's creation + 1 s.
    assert created["clock"] == {"turn_seconds": 1} and created["deadline"] is not None
    clocked: dict[str, tuple[dict, dict]] = {}  # phase -> (the view before, the clock's entry)
    deadline = time.monotonic() + 90
    while len(clocked) < len(PHASES):
        assert time.monotonic() < deadline, f"clocked only {sorted(clocked)}"
        view = api.view(game_id)
        phase = view["phase"]
        if phase not in clocked:
            while api.view(game_id)["version"] == view["version"]:
                time.sleep(0.05)
            entry = api.history(game_id)[view["version"]]
            assert entry["by"] == "clock", entry
            clocked[phase] = (view, entry)
            continue
        response = api.client.post(
            f"/v1/games/{game_id}/moves",
            json=cheap_move(view),
            headers={
                "Authorization": f"Bearer {created['seats'][view['active_seat']]['token']}",
                "If-Match": f'"{view["version"]}"',
            },
        )
        assert response.status_code in (200, 412), response.get_json()  # 412: the clock came first

    history = api.history(game_id)
    for phase, (before, entry) in clocked.items():
        seat = before["active_seat"]
        assert entry["seat"] == seat
        # The view's deadline is the commit time of its version + 1 s, and the clock kept it.
        made_at = history[before["version"] - 1]["at"] if before["version"] else None
        if made_at is not None:
            assert before["deadline"] == api_time(ms(made_at) + 1000)
        assert ms(entry["at"]) >= ms(before["deadline"])
        move = entry["move"]
        if phase == "issue_shares":
            assert move == {"type": "issue_shares", "count": 0}
            issued = {k: v for k, v in entry["events"][0].items() if k != "text"}  # facts apart from words
            assert issued == {"type": "shares_issued", "seat": seat, "count": 0, "cash": 0}
            assert entry["events"][0]["text"]
        elif phase == "auction":
            assert move == {"type": "drop_out"}
        elif phase == "select_action":
            order = [a for a in engine.action_ids() if a in before["actions"]["available"]]
            assert move == {"type": "select_action", "action": order[0]}
        elif phase == "build":
            assert move == {"type": "end_build"}
        elif phase == "move_goods":
            assert move == {"type": "pass"}
        else:
            need = len(move["placements"])
            assert need == min(len(before["production"]["drawn"]), 2)
            assert sorted(p["column"] for p in move["placements"]) == first_empty_squares(
                before["goods_display"], need
            )
            drawn = list(before["production"]["drawn"])
            for placement in move["placements"]:
                drawn.remove(placement["color"])  # each placed cube is one of those drawn


def ms(text: str) -> int:
    from service.referee.clocks import parse_ms

    return parse_ms(text)


def api_time(value: int) -> str:
    from service.referee.clocks import rfc3339

    return rfc3339(value)


def test_webhooks_arrive_signed_and_are_retried_after_a_500(api, start_worker, receiver) -> None:
    receiver.answer = lambda _id, attempt: (500, 0.0) if attempt == 1 else (200, 0.0)
    worker = start_worker(AOS_WEBHOOKS_RETRY_SCHEDULE="0.3,0.3")
    game = api.create()
    order = game["turn_order"]
    hooks = {}
    for seat, events in ((order[1], ["turn", "move"]), (order[2], ["move"])):
        hook = api.register(game, seat, receiver.url(f"s{seat}"), events)
        receiver.secrets[f"s{seat}"] = hook["secret"]
        hooks[seat] = hook
    turn = f"msg_{hooks[order[1]]['id']}_1_turn"  # seat order[1] decides after version 1
    api.move(game, {"type": "issue_shares", "count": 0})
    # A turn is announced while it is still the seat's: the next move waits for it.
    receiver.wait_for(lambda: turn in receiver.ids())
    api.move(game, {"type": "issue_shares", "count": 0})
    expected = {f"msg_{hooks[s]['id']}_{v}_move" for s in hooks for v in (1, 2)} | {turn}
    receiver.wait_for(lambda: all(receiver.ids().count(i) >= 2 for i in expected))
    time.sleep(0.5)  # anything more (a third attempt, a stray delivery) would arrive by now
    assert sorted(set(receiver.ids())) == sorted(expected)
    assert all(receiver.ids().count(i) == 2 for i in expected)  # a 500, then one retry
    assert all(r["valid"] for r in receiver.received)
    history = api.history(game["game_id"])
    for record in receiver.received:
        payload = record["body"]
        if payload["type"] == "move":
            entry = history[payload["data"]["version"] - 1]
            assert payload["data"] == {"game_id": game["game_id"], **entry}
            assert payload["timestamp"] == entry["at"]
        else:
            assert payload["data"] == {
                "game_id": game["game_id"],
                "version": 1,
                "seat": order[1],
                "phase": "issue_shares",
                "round": 1,
                "deadline": None,
            }
    assert worker.metric("aos_webhook_deliveries_total", outcome="failed") == len(expected)
    assert worker.metric("aos_webhook_deliveries_total", outcome="delivered") == len(expected)


def test_a_worker_killed_mid_delivery_loses_nothing(api, start_worker, receiver) -> None:
    settings = {
        "AOS_WEBHOOKS_TIMEOUT_SECONDS": "1",
        "AOS_WEBHOOKS_LEASE_SECONDS": "5.5",
        "AOS_WORKER_CLAIM_IDLE_MS": "1000",
    }
    stalled: list[str] = []

    def answer(delivery_id: str, attempt: int) -> tuple[int, float]:
        if not stalled:
            stalled.append(delivery_id)
            return 200, 0.8  # the worker is killed while it waits for this answer
        return 200, 0.0

    receiver.answer = answer
    first = start_worker(**settings)
    game = api.create()
    hook = api.register(game, 0, receiver.url("s0"), ["move"])
    receiver.secrets["s0"] = hook["secret"]
    for _ in range(3):
        api.move(game, {"type": "issue_shares", "count": 0})
    receiver.wait_for(lambda: len(stalled) == 1)
    first.kill()
    start_worker(**settings)
    expected = {f"msg_{hook['id']}_{v}_move" for v in (1, 2, 3)}
    receiver.wait_for(
        lambda: expected <= set(receiver.ids()) and receiver.ids().count(stalled[0]) >= 2, timeout=30
    )
    assert set(receiver.ids()) == expected  # none lost, nothing else
    bodies = {}
    for record in receiver.received:  # a repeat is the same delivery: same id, same body
        assert record["valid"]
        assert bodies.setdefault(record["id"], record["body"]) == record["body"]


def test_two_workers_share_the_work_without_doubling_it(api, start_worker, receiver) -> None:
    receiver.answer = lambda _id, _n: (200, 0.15)
    workers = [start_worker(AOS_WEBHOOKS_CONCURRENCY="3") for _ in range(2)]
    games = [api.create() for _ in range(4)]
    expected = set()
    for n, game in enumerate(games):
        hook = api.register(game, 0, receiver.url(f"g{n}"), ["move"])
        receiver.secrets[f"g{n}"] = hook["secret"]
        expected |= {f"msg_{hook['id']}_{v}_move" for v in (1, 2, 3)}
    clocked = [api.create(clock={"turn_seconds": 1}) for _ in range(4)]
    for game in games:
        for _ in range(3):
            api.move(game, {"type": "issue_shares", "count": 0})
    receiver.wait_for(lambda: expected <= set(receiver.ids()))
    time.sleep(3.5)  # the clocks fire meanwhile: each decision's once, a second after the last
    ids = receiver.ids()
    assert sorted(ids) == sorted(expected)  # every delivery once: none doubled
    delivered = [w.metric("aos_webhook_deliveries_total", outcome="delivered") for w in workers]
    assert sum(delivered) == len(expected) and all(d > 0 for d in delivered), delivered
    for _ in range(20):  # the clocks go on firing: count them between two equal readings
        entries = [e for g in clocked for e in api.history(g["game_id"])]
        applied = [w.metric("aos_clock_moves_total", outcome="applied") for w in workers]
        if len(entries) == sum(len(api.history(g["game_id"])) for g in clocked):
            break
    assert sum(applied) == len(entries) >= 8, (applied, len(entries))
    assert all(e["by"] == "clock" for e in entries)
    for g in clocked:
        history = api.history(g["game_id"])
        for before, after in zip(history, history[1:], strict=False):
            # A clock fires only once its decision's deadline (its commit + 1 s) has passed.
            assert ms(after["at"]) - ms(before["at"]) >= 1000
