"""What a change makes (service/webhooks/events.py), what the clock plays (service/worker/
defaults.py), and a worker without AOS_WEBHOOKS_ALLOW_PRIVATE refusing a private receiver."""

from __future__ import annotations

import time

import orjson

from service.engine import game
from service.store import MemoryStore
from service.webhooks import events
from service.worker.config import WorkerSettings
from service.worker.defaults import default_move
from service.worker.webhooks import WebhookDeliveries, WebhookOutbox

HOOKS = [
    {
        "id": "hook_a",
        "seat": 0,
        "events": ["turn", "move", "finished"],
        "url": "http://127.0.0.1:9/",
        "secret": "whsec_" + "A" * 44,
    },
    {
        "id": "hook_b",
        "seat": 1,
        "events": ["finished"],
        "url": "http://127.0.0.1:9/",
        "secret": "whsec_" + "B" * 44,
    },
]


def entry(index: int, seat: int, events_: list, by: str | None = None) -> dict:
    e = {
        "index": index,
        "seat": seat,
        "move": {"type": "pass"},
        "events": events_,
        "version": index + 1,
        "at": "2030-01-01T00:00:00.000Z",
        "text": f"P{seat} moves no goods this round",
    }
    return {**e, "by": by} if by else e


def test_a_change_makes_a_move_per_version_a_finished_and_a_turn_for_the_seat_now_deciding() -> None:
    finished = {"type": "game_finished", "scores": [{"seat": 0, "points": 3}]}
    entries = [entry(4, 1, []), entry(5, 2, [finished])]
    view = {"version": 6, "active_seat": 0, "phase": "build", "round": 2, "deadline": None}
    planned = events.plan("g", 6, entries, HOOKS, view)
    assert [(p.hook, p.event, p.message_id) for p in planned] == [
        ("hook_a", "move", "msg_hook_a_5_move"),
        ("hook_a", "move", "msg_hook_a_6_move"),
        ("hook_a", "finished", "msg_hook_a_6_finished"),
        ("hook_b", "finished", "msg_hook_b_6_finished"),
        ("hook_a", "turn", "msg_hook_a_6_turn"),
    ]
    # The move delivery is the history entry, its words included.
    move = orjson.loads(planned[0].payload)["data"]
    assert move["text"] == "P1 moves no goods this round" and move["game_id"] == "g"
    turn = orjson.loads(planned[-1].payload)
    assert turn == {
        "type": "turn",
        "timestamp": "2030-01-01T00:00:00.000Z",
        "data": {"game_id": "g", "version": 6, "seat": 0, "phase": "build", "round": 2, "deadline": None},
    }
    # The seat goes on deciding after its own move: no turn; after its clock's move: a turn.
    assert not [p for p in events.plan("g", 6, [entry(5, 0, [])], HOOKS, view) if p.event == "turn"]
    assert [p.event for p in events.plan("g", 6, [entry(5, 0, [], by="clock")], HOOKS, view)] == [
        "move",
        "turn",
    ]
    # The game has moved on since: the turn has passed and is not announced.
    assert [p.event for p in events.plan("g", 6, [entry(5, 1, [])], HOOKS, {**view, "version": 7})] == [
        "move"
    ]


def test_the_default_moves_are_the_cheapest_legal_ones() -> None:
    state = game.new_game("rust_belt", ["a", "b", "c"], "defaults")
    seat = game.active_seat(state)
    assert default_move(state, seat) == {"type": "issue_shares", "count": 0}
    assert default_move(state, (seat + 1) % 3) is None  # not its decision
    for _ in range(3):
        state, _ = game.apply(state, game.active_seat(state), {"type": "issue_shares", "count": 0})
    assert state["phase"] == "auction"
    assert default_move(state, game.active_seat(state)) == {"type": "drop_out"}
    while state["phase"] == "auction":
        state, _ = game.apply(state, game.active_seat(state), {"type": "drop_out"})
    assert default_move(state, game.active_seat(state)) == {"type": "select_action", "action": "first_move"}
    state, _ = game.apply(state, game.active_seat(state), {"type": "select_action", "action": "first_move"})
    assert default_move(state, game.active_seat(state)) == {"type": "select_action", "action": "first_build"}
    while state["phase"] == "select_action":
        state, _ = game.apply(state, game.active_seat(state), default_move(state, game.active_seat(state)))
    assert default_move(state, game.active_seat(state)) == {"type": "end_build"}
    while state["phase"] == "build":
        state, _ = game.apply(state, game.active_seat(state), {"type": "end_build"})
    assert default_move(state, game.active_seat(state)) == {"type": "pass"}


def test_a_worker_without_the_setting_refuses_a_private_receiver_and_retries_later() -> None:
    store = MemoryStore()
    store.create(
        "g", state=b"{}", meta=orjson.dumps({"tokens": [], "webhooks": HOOKS[:1]}), view=b"{}", ttl=60
    )
    store.commit("g", expected_version=0, ttl=60, entries=[orjson.dumps(entry(0, 1, []))])
    assert WebhookOutbox(store, "w").run_once() == 2  # the create, the move
    assert store.delivery_backlog(1e12)[0] == 1
    deliveries = WebhookDeliveries(store, WorkerSettings(retry_schedule=(60,)), private_ok=False)
    assert deliveries.run_once() == 1
    deliveries.close()
    queued, due = store.delivery_backlog(time.time())
    assert (queued, due) == (1, 0)  # refused (127.0.0.1), so failed: queued again for a minute on
    [job] = [orjson.loads(d.job) for d in store.claim_deliveries(1e12, 2e12)]
    assert job["attempt"] == 1 and job["hook"] == "hook_a"
