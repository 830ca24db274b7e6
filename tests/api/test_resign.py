"""`POST /v1/games/{id}/resign` (issue 16.5): the token's seat is out as if eliminated, through the
same compare-and-set as a move: a version with its log entry, If-Match, Idempotency-Key, undo,
history, the record and its import."""

from __future__ import annotations

from tests.api.tables import untold


def resign(api, game_id: str, token: str | None, **headers: str):  # type: ignore[no-untyped-def]
    headers = {k.replace("_", "-"): v for k, v in headers.items()}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return api.client.post(f"/v1/games/{game_id}/resign", headers=headers)


def test_a_seat_resigns_and_the_game_goes_on_without_it(api) -> None:
    game = api.create(players=4, seed="resign")
    gid, order = game["game_id"], game["turn_order"]
    first, second = order[0], order[1]
    response = resign(api, gid, game["seats"][first]["token"])
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert response.headers["ETag"] == '"1"' and body["version"] == 1
    assert untold(body["events"]) == [{"type": "player_resigned", "seat": first},
                              {"type": "player_eliminated", "seat": first, "income": 0}]
    view = body["game"]
    assert view["players"][first]["eliminated"] is True
    assert view["players"][first]["cash"] == 10  # cash unchanged
    assert view["turn_order"] == order[1:] and view["active_seat"] == second
    moved = api.move(gid, game["seats"][first]["token"], {"type": "issue_shares", "count": 0})
    assert moved.status_code == 422 and moved.get_json()["code"] == "PLAYER_ELIMINATED"
    assert api.legal(gid, first) == []
    [entry] = api.client.get(f"/v1/games/{gid}/history").get_json()
    assert entry["move"] == {"type": "resign"} and entry["seat"] == first
    assert entry["events"] == body["events"]


def test_a_resignation_is_refused_without_the_seats_token_and_changes_nothing(api) -> None:
    game = api.create(seed="resign")
    other = api.create(seed="resign")
    gid = game["game_id"]
    before = api.snapshot(gid)
    assert resign(api, gid, None).get_json()["code"] == "TOKEN_MISSING"
    assert resign(api, gid, other["seats"][0]["token"]).get_json()["code"] == "TOKEN_OTHER_GAME"
    assert resign(api, gid, gid + ".0.forged").get_json()["code"] == "TOKEN_INVALID"
    bad_body = api.client.post(f"/v1/games/{gid}/resign", json={"seat": 1},
                               headers={"Authorization": f"Bearer {game['seats'][0]['token']}"})
    assert bad_body.status_code == 400 and bad_body.get_json()["code"] == "VALIDATION_ERROR"
    assert api.snapshot(gid) == before
    assert resign(api, gid, game["seats"][0]["token"]).status_code == 200
    again = resign(api, gid, game["seats"][0]["token"])
    assert again.status_code == 422 and again.get_json()["code"] == "PLAYER_ELIMINATED"


def test_if_match_and_idempotency_key_work_as_on_moves(api) -> None:
    game = api.create(seed="resign")
    gid, token = game["game_id"], game["seats"][1]["token"]
    stale = resign(api, gid, token, If_Match='"3"')
    assert stale.status_code == 412 and stale.get_json()["code"] == "VERSION_MISMATCH"
    unquoted = resign(api, gid, token, If_Match="0")
    assert unquoted.status_code == 400 and unquoted.get_json()["code"] == "BAD_ETAG"
    weak = resign(api, gid, token, If_Match='W/"0"')
    assert weak.status_code == 412  # If-Match compares strongly
    first = resign(api, gid, token, If_Match='"0"', Idempotency_Key="resign-1")
    retry = resign(api, gid, token, If_Match='"0"', Idempotency_Key="resign-1")
    assert first.status_code == retry.status_code == 200
    assert first.get_json() == retry.get_json()
    assert api.view(gid)["version"] == 1


def test_two_of_three_resign_the_game_ends_and_its_record_replays(api) -> None:
    game = api.create(seed="resign-end")
    gid = game["game_id"]
    api.play(game, 4)  # some moves first, so the record holds both kinds
    view = api.view(gid)
    active = view["active_seat"]
    out = [s for s in range(3) if s != active]
    assert resign(api, gid, game["seats"][out[0]]["token"]).status_code == 200
    last = resign(api, gid, game["seats"][out[1]]["token"]).get_json()
    assert last["game"]["status"] == "finished" and last["game"]["active_seat"] is None
    finished = [e for e in last["events"] if e["type"] == "game_finished"]
    assert len(finished) == 1
    ranks = {r["seat"]: (r["points"] is None, r["rank"]) for r in last["game"]["scores"]}
    assert ranks == {active: (False, 1), out[0]: (True, 2), out[1]: (True, 2)}

    record = api.client.get(f"/v1/games/{gid}/record").get_json()
    assert [m["move"] for m in record["moves"][-2:]] == [{"type": "resign"}] * 2
    assert "seed" in record
    imported = api.client.post("/v1/games", json={"record": record})
    assert imported.status_code == 201, imported.get_json()
    copy = imported.get_json()
    assert copy["status"] == "finished" and copy["scores"] == last["game"]["scores"]
    assert copy["players"] == last["game"]["players"]


def test_a_record_with_a_resignation_that_is_not_legal_fails_at_its_index(api) -> None:
    game = api.create(seed="resign-end")
    gid = game["game_id"]
    for seat in (0, 1):
        assert resign(api, gid, game["seats"][seat]["token"]).status_code == 200
    record = api.client.get(f"/v1/games/{gid}/record").get_json()
    record["moves"].append({"seat": 0, "move": {"type": "resign"}})
    refused = api.client.post("/v1/games", json={"record": record})
    assert refused.status_code == 422 and refused.get_json()["code"] == "GAME_FINISHED"
    assert refused.get_json()["index"] == 2


def test_a_seat_undoes_its_resignation_while_nobody_has_moved_since(api) -> None:
    game = api.create(seed="resign")
    gid, seat = game["game_id"], game["turn_order"][1]
    token = game["seats"][seat]["token"]
    before = api.view(gid)
    assert resign(api, gid, token).status_code == 200
    undone = api.client.post(f"/v1/games/{gid}/undo", headers={"Authorization": f"Bearer {token}"})
    assert undone.status_code == 200, undone.get_json()
    after = undone.get_json()["game"]
    assert after["players"] == before["players"] and after["turn_order"] == before["turn_order"]
    assert after["version"] == 2
    record = api.client.get(f"/v1/games/{gid}/record").get_json()
    assert record["moves"] == []


def test_the_board_tells_of_the_resignation(api) -> None:
    game = api.create(seed="resign")
    gid = game["game_id"]
    assert resign(api, gid, game["seats"][2]["token"]).status_code == 200
    svg = api.client.get(f"/v1/games/{gid}/board.svg").get_data(as_text=True)
    assert "Cugnot resigns." in svg  # the history entry's own words
