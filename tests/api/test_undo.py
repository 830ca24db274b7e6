"""Undo: a seat takes back its own last move while no other seat has moved since and the move
revealed no random outcome. The undo is a new version whose state is the state before the move,
byte for byte; the history keeps both; the record replays the moves in effect."""

from __future__ import annotations

from service.engine import game
from tests.api.tables import Table


def without_version(view: dict) -> dict:
    return {k: v for k, v in view.items() if k != "version"}


def hex_key(h: dict) -> str:
    return f"{h['q']},{h['r']}"


def test_undo_of_a_build_gives_back_the_cash_and_the_hex(api) -> None:
    table = Table(api, seed="async")
    seat = table.play_to_phase("build")
    build = next(m for m in table.legal(seat) if m["type"] == "build")
    before, view_before = table.state_bytes(), table.view()
    cash = view_before["players"][seat]["cash"]
    tiles_left = view_before["build"]["tiles_left"]
    assert hex_key(build["hex"]) not in table.state()["track"]

    built = table.moved(seat, build)
    assert built["game"]["players"][seat]["cash"] == cash - build["cost"]
    assert built["game"]["build"]["tiles_left"] == tiles_left - 1
    assert hex_key(build["hex"]) in table.state()["track"]

    response = table.undo(seat)
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["version"] == view_before["version"] + 2
    name = body["game"]["players"][seat]["name"]
    assert body["events"] == [{"type": "move_undone", "seat": seat, "version": built["version"],
                               "move": {k: v for k, v in build.items() if k not in ("cost", "text")},
                               "text": f"{name} takes back the move of version {built['version']}"}]
    assert table.state_bytes() == before  # byte for byte the state before the build
    after = body["game"]
    assert after["players"][seat]["cash"] == cash
    assert after["build"] == view_before["build"] and after["build"]["tiles_left"] == tiles_left
    assert hex_key(build["hex"]) not in table.state()["track"]
    assert (after["phase"], after["active_seat"]) == ("build", seat)
    assert without_version(after) == without_version(view_before)
    assert response.headers["ETag"] == f'"{body["version"]}"'


def test_undo_of_a_delivery_gives_back_the_income_and_the_cube(api) -> None:
    table = Table(api, seed="async-5")
    seat, legal = table.play_until(lambda state, seat, legal: state["phase"] == "move_goods"
                                   and any(m["type"] == "deliver" for m in legal))
    deliver = next(m for m in legal if m["type"] == "deliver")
    before, view_before = table.state_bytes(), table.view()
    start = hex_key(deliver["from"])
    cubes = table.state()["cubes"][start]
    incomes = [p["income"] for p in view_before["players"]]

    moved = table.moved(seat, deliver)["game"]
    gained = {int(s): n for s, n in deliver["income"].items()}
    assert [p["income"] for p in moved["players"]] == [
        incomes[s] + gained.get(s, 0) for s in range(3)]
    assert sum(gained.values()) >= 1
    assert len(table.state()["cubes"][start]) == len(cubes) - 1

    response = table.undo(seat)
    assert response.status_code == 200, response.get_json()
    assert table.state_bytes() == before
    after = response.get_json()["game"]
    assert [p["income"] for p in after["players"]] == incomes
    assert table.state()["cubes"][start] == cubes
    assert after["move_goods"] == view_before["move_goods"]
    assert without_version(after) == without_version(view_before)


def test_undo_of_the_last_drop_out_gives_back_the_payments_the_order_and_the_phase(api) -> None:
    table = Table(api, seed="async")
    # The auction's last decision: two bidders left, one of them the high bidder.
    seat, _ = table.play_until(lambda state, seat, legal: state["phase"] == "auction"
                               and len(state["auction"]["in"]) == 2
                               and state["auction"]["high_bidder"] is not None)
    view_before, before = table.view(), table.state_bytes()
    ended = table.moved(seat, {"type": "drop_out"})
    set_order = next(e for e in ended["events"] if e["type"] == "turn_order_set")
    paid = {p["seat"]: p["paid"] for p in set_order["payments"]}
    assert sum(paid.values()) > 0
    assert ended["game"]["phase"] == "select_action"
    assert [p["cash"] for p in ended["game"]["players"]] == [
        p["cash"] - paid[p["seat"]] for p in view_before["players"]]
    assert ended["game"]["turn_order"] == set_order["order"]

    response = table.undo(seat)
    assert response.status_code == 200, response.get_json()
    after = response.get_json()["game"]
    assert table.state_bytes() == before
    assert [p["cash"] for p in after["players"]] == [p["cash"] for p in view_before["players"]]
    assert after["turn_order"] == view_before["turn_order"]
    assert (after["phase"], after["active_seat"]) == ("auction", seat)
    assert after["auction"] == view_before["auction"]


def test_undo_is_refused_once_another_seat_moved_until_that_seat_undoes(api) -> None:
    table = Table(api)
    first = table.active()
    table.moved(first, {"type": "issue_shares", "count": 2})
    second = table.active()
    table.moved(second, {"type": "issue_shares", "count": 1})
    snapshot = api.snapshot(table.id)

    refused = table.undo(first)
    assert refused.status_code == 422
    problem = refused.get_json()
    assert (problem["code"], problem["seat"], problem["since"]) == ("ANOTHER_SEAT_MOVED", second, 2)
    assert api.snapshot(table.id) == snapshot

    assert table.undo(second).status_code == 200
    undone = table.undo(first)
    assert undone.status_code == 200, undone.get_json()
    view = undone.get_json()["game"]
    assert [(p["cash"], p["shares"]) for p in view["players"]] == [(10, 2)] * 3
    assert view["active_seat"] == first and view["version"] == 4
    assert [h["move"]["type"] for h in table.history()] == ["issue_shares", "issue_shares", "undo", "undo"]
    assert table.record()["moves"] == []
    assert table.undo(first).get_json()["code"] == "NOTHING_TO_UNDO"


def test_a_seat_undoes_its_moves_one_at_a_time(api) -> None:
    table = Table(api, seed="async")
    seat = table.play_to_phase("build")
    states = [table.state_bytes()]
    for _ in range(2):
        build = next(m for m in table.legal(seat) if m["type"] == "build")
        table.moved(seat, build)
        states.append(table.state_bytes())
    assert table.undo(seat).status_code == 200
    assert table.state_bytes() == states[1]
    assert table.undo(seat).status_code == 200
    assert table.state_bytes() == states[0]


def test_undo_is_refused_after_a_random_outcome(api) -> None:
    table = Table(api, seed="async")

    def reveals(state: dict, seat: int, legal: list[dict]) -> bool:
        return any(game.apply(state, seat, m)[0]["rng"] != state["rng"] for m in legal[:4])

    seat, legal = table.play_until(reveals)
    state = table.state()
    move = next(m for m in legal[:4] if game.apply(state, seat, m)[0]["rng"] != state["rng"])
    made = table.moved(seat, move)
    kinds = {e["type"] for e in made["events"]}
    assert kinds & {"production", "dice_rolled", "goods_grown", "round_started"}, kinds
    snapshot = api.snapshot(table.id)
    refused = table.undo(seat)
    assert refused.status_code == 422
    assert (refused.get_json()["code"], refused.get_json()["since"]) == (
        "RANDOM_OUTCOME_REVEALED", made["version"])
    assert api.snapshot(table.id) == snapshot


def test_nothing_to_undo_at_the_start_and_nothing_after_the_end(api) -> None:
    table = Table(api, seed="async")
    assert table.undo(0).get_json()["code"] == "NOTHING_TO_UNDO"
    table.play_to_end()
    assert table.view()["status"] == "finished"
    last = table.history()[-1]["seat"]
    refused = table.undo(last)
    assert (refused.status_code, refused.get_json()["code"]) == (422, "GAME_FINISHED")


def test_undo_obeys_if_match_and_idempotency_key(api) -> None:
    table = Table(api)
    seat = table.active()
    table.moved(seat, {"type": "issue_shares", "count": 3})
    stale = table.undo(seat, If_Match='"0"')
    assert (stale.status_code, stale.get_json()["version"]) == (412, 1)
    first = table.undo(seat, If_Match='"1"', Idempotency_Key="undo-key-1")
    again = table.undo(seat, Idempotency_Key="undo-key-1")
    assert first.status_code == again.status_code == 200
    assert first.get_data() == again.get_data()
    assert len(table.history()) == 2
    reused = table.move(seat, {"type": "issue_shares", "count": 0}, Idempotency_Key="undo-key-1")
    assert (reused.status_code, reused.get_json()["code"]) == (422, "IDEMPOTENCY_KEY_REUSED")


def test_undo_needs_the_seats_token(api) -> None:
    table, other = Table(api), Table(api, seed="other")
    table.moved(table.active(), {"type": "issue_shares", "count": 1})
    assert api.client.post(f"/v1/games/{table.id}/undo").status_code == 401
    wrong = api.client.post(f"/v1/games/{table.id}/undo",
                            headers={"Authorization": f"Bearer {other.tokens[0]}"})
    assert (wrong.status_code, wrong.get_json()["code"]) == (403, "TOKEN_OTHER_GAME")
    junk = table.post("undo", table.history()[0]["seat"], {"seat": 1})
    assert (junk.status_code, junk.get_json()["code"]) == (400, "VALIDATION_ERROR")
    assert len(table.history()) == 1


def test_the_record_replays_the_moves_in_effect(api) -> None:
    table = Table(api, seed="async")
    seat = table.play_to_phase("build")
    build = next(m for m in table.legal(seat) if m["type"] == "build")
    table.moved(seat, build)
    assert table.undo(seat).status_code == 200
    history, record = table.history(), table.record()
    assert len(history) == table.version()
    assert len(record["moves"]) == len(history) - 2
    assert [m["move"] for m in record["moves"]] == [h["move"] for h in history[:-2]]
    replayed = api.client.post("/v1/games", json={"record": {**record, "seed": table.seed}})
    assert replayed.status_code == 201, replayed.get_json()
    mine, theirs = table.view(), replayed.get_json()
    for view in (mine, theirs):
        for key in ("game_id", "version", "seats", "admin_token"):
            view.pop(key, None)
    assert mine == theirs
    assert table.state_bytes() == table.games.store.load(replayed.get_json()["game_id"]).state


def test_if_match_compares_strongly_on_every_write_of_a_seat(api) -> None:
    """RFC 9110 13.1.1: a weak tag never matches If-Match, even naming the current version; undo,
    takeback, orders and resign answer 412 like moves do, and nothing changes."""
    table = Table(api)
    seat = table.active()
    table.moved(seat, {"type": "issue_shares", "count": 3})
    weak = {"If_Match": 'W/"1"'}
    for response in (table.undo(seat, **weak), table.propose(seat, 0, **weak),
                     table.put_orders(seat, [], **weak), table.post("resign", seat, None, **weak)):
        assert (response.status_code, response.get_json()["code"]) == (412, "VERSION_MISMATCH"), (
            response.get_json())
    assert len(table.history()) == 1 and table.orders(seat) == []
    assert table.undo(seat, If_Match='W/"1", "1"').status_code == 200  # a strong tag among them
