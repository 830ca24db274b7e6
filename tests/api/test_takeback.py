"""Takeback with consent: any seat proposes going back to an earlier version; every other seat
whose moves it would take back must accept; it applies on the last acceptance, never across a
random outcome; a move, an undo, a decline or a withdrawal ends it. The view shows the proposal,
at any version alike."""

from __future__ import annotations

import orjson

from service.engine import game
from tests.api.tables import Table, untold


def shares_round(table: Table) -> tuple[list[int], list[bytes]]:
    """The first two seats issue 2 and 1 shares: (the turn order, the states at v0, v1, v2)."""
    order = table.view()["turn_order"]
    states = [table.state_bytes()]
    for seat, count in zip(order[:2], (2, 1), strict=True):
        table.moved(seat, {"type": "issue_shares", "count": count})
        states.append(table.state_bytes())
    return order, states


def code(response) -> str:  # type: ignore[no-untyped-def]
    assert response.status_code == 422, response.get_json()
    return response.get_json()["code"]


def test_a_takeback_needs_every_seat_whose_moves_it_takes_back(api) -> None:
    table = Table(api)
    (a, b, c), states = shares_round(table)
    assert [p["cash"] for p in table.view()["players"]] == [10 + 10 * (s == a) + 5 * (s == b)
                                                           for s in range(3)]

    proposed = table.propose(c, 0)
    assert proposed.status_code == 200, proposed.get_json()
    body = proposed.get_json()
    assert body["version"] == 3
    assert body["game"]["takeback"] == {"to_version": 0, "by": c, "waiting": sorted([a, b])}
    assert untold(body["events"]) == [{"type": "takeback_proposed", "seat": c, "to_version": 0,
                               "asked": sorted([a, b]), "versions": [1, 2]}]
    assert table.state_bytes() == states[2]  # a proposal changes nothing yet

    first = table.accept(a)
    assert first.status_code == 200
    assert first.get_json()["game"]["takeback"] == {"to_version": 0, "by": c, "waiting": [b]}
    assert table.state_bytes() == states[2]
    assert code(table.accept(a)) == "NOT_ASKED"  # once is enough

    last = table.accept(b)
    assert last.status_code == 200, last.get_json()
    applied = last.get_json()
    assert applied["version"] == 5
    assert untold(applied["events"]) == [
        {"type": "takeback_accepted", "seat": b, "waiting": []},
        {"type": "taken_back", "to_version": 0, "proposed_by": c, "versions": [1, 2]},
    ]
    assert table.state_bytes() == states[0]
    view = applied["game"]
    assert view["takeback"] is None
    assert [(p["cash"], p["shares"]) for p in view["players"]] == [(10, 2)] * 3
    assert view["active_seat"] == a and view["phase"] == "issue_shares"
    history = table.history()
    assert [(h["seat"], h["move"]) for h in history[2:]] == [
        (c, {"type": "takeback_proposed", "to_version": 0}),
        (a, {"type": "takeback_accepted", "to_version": 0}),
        (b, {"type": "takeback", "to_version": 0}),
    ]
    assert table.record()["moves"] == []


def test_the_proposer_is_not_asked_about_its_own_moves(api) -> None:
    table = Table(api)
    (a, b, c), states = shares_round(table)
    proposed = table.propose(a, 0).get_json()
    assert proposed["game"]["takeback"] == {"to_version": 0, "by": a, "waiting": [b]}
    assert code(table.accept(a)) == "NOT_ASKED"
    assert code(table.accept(c)) == "NOT_ASKED"
    assert table.accept(b).status_code == 200
    assert table.state_bytes() == states[0]


def test_taking_back_only_ones_own_moves_applies_at_once(api) -> None:
    table = Table(api, seed="async")
    seat = table.play_to_phase("build")
    start, before = table.version(), table.state_bytes()
    for _ in range(2):
        table.moved(seat, next(m for m in table.legal(seat) if m["type"] == "build"))
    response = table.propose(seat, start)
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert untold(body["events"]) == [{"type": "taken_back", "to_version": start, "proposed_by": seat,
                               "versions": [start + 1, start + 2]}]
    assert body["game"]["takeback"] is None and body["version"] == start + 3
    assert table.history()[-1]["move"] == {"type": "takeback", "to_version": start}
    assert table.state_bytes() == before


def test_any_move_ends_a_pending_proposal(api) -> None:
    table = Table(api)
    a, b, c = table.view()["turn_order"]
    table.moved(a, {"type": "issue_shares", "count": 2})
    assert table.propose(b, 0).get_json()["game"]["takeback"]["waiting"] == [a]
    moved = table.moved(b, {"type": "issue_shares", "count": 0})
    assert moved["game"]["takeback"] is None
    assert code(table.accept(a)) == "NO_TAKEBACK_PENDING"
    assert [p["cash"] for p in table.view()["players"]][a] == 20


def test_an_undo_ends_a_pending_proposal(api) -> None:
    table = Table(api)
    (a, b, c), states = shares_round(table)
    assert table.propose(b, 0).status_code == 200
    undone = table.undo(b)
    assert undone.status_code == 200, undone.get_json()
    assert undone.get_json()["game"]["takeback"] is None
    assert table.state_bytes() == states[1]
    assert code(table.accept(a)) == "NO_TAKEBACK_PENDING"


def test_a_decline_or_a_withdrawal_ends_it_and_changes_nothing(api) -> None:
    table = Table(api)
    (a, b, c), states = shares_round(table)
    assert table.propose(c, 0).status_code == 200
    assert table.accept(a).status_code == 200
    declined = table.decline(b)
    assert declined.status_code == 200
    assert untold(declined.get_json()["events"]) == [
        {"type": "takeback_declined", "seat": b, "to_version": 0}]
    assert declined.get_json()["game"]["takeback"] is None
    assert table.state_bytes() == states[2]
    assert code(table.decline(b)) == "NO_TAKEBACK_PENDING"

    assert table.propose(c, 1).get_json()["game"]["takeback"] == {"to_version": 1, "by": c, "waiting": [b]}
    assert code(table.decline(a)) == "NOT_ASKED"
    withdrawn = table.decline(c)
    assert untold(withdrawn.get_json()["events"]) == [
        {"type": "takeback_cancelled", "seat": c, "to_version": 1}]
    assert table.state_bytes() == states[2]
    assert [h["move"]["type"] for h in table.history()] == [
        "issue_shares", "issue_shares", "takeback_proposed", "takeback_accepted",
        "takeback_declined", "takeback_proposed", "takeback_cancelled"]
    assert len(table.record()["moves"]) == 2


def test_proposals_that_are_refused(api) -> None:
    table = Table(api)
    (a, b, c), _ = shares_round(table)
    assert code(table.propose(a, 2)) == "NOT_AN_EARLIER_VERSION"
    assert code(table.propose(a, 7)) == "NOT_AN_EARLIER_VERSION"
    assert table.propose(a, 1).status_code == 200
    assert code(table.propose(c, 0)) == "TAKEBACK_PENDING"
    assert table.decline(a).status_code == 200  # withdrawn, at version 4
    assert code(table.propose(a, 3)) == "NOTHING_TO_TAKE_BACK"  # nothing moved after v2
    assert table.undo(b).status_code == 200  # version 5: b's move of version 2 is taken back
    assert code(table.propose(a, 2)) == "VERSION_TAKEN_BACK"  # version 2 had b's move
    assert code(table.propose(a, 5)) == "NOT_AN_EARLIER_VERSION"
    bad = table.propose(a, -1)
    assert (bad.status_code, bad.get_json()["code"]) == (400, "VALIDATION_ERROR")


def test_a_takeback_never_crosses_a_random_outcome(api) -> None:
    table = Table(api, seed="async")

    def reveals(state: dict, seat: int, legal: list[dict]) -> bool:
        return any(game.apply(state, seat, m)[0]["rng"] != state["rng"] for m in legal[:4])

    seat, legal = table.play_until(reveals)
    state = table.state()
    before = table.version()
    table.moved(seat, next(m for m in legal[:4] if game.apply(state, seat, m)[0]["rng"] != state["rng"]))
    snapshot = api.snapshot(table.id)
    for proposer in range(3):
        assert code(table.propose(proposer, before)) == "RANDOM_OUTCOME_REVEALED"
        assert code(table.propose(proposer, before - 1)) == "RANDOM_OUTCOME_REVEALED"
    assert api.snapshot(table.id) == snapshot


def test_the_view_at_every_version_shows_the_proposal_as_it_was(api) -> None:
    table = Table(api)
    a, b, c = table.view()["turn_order"]
    views = {0: table.view()}

    def keep(response) -> None:  # type: ignore[no-untyped-def]
        assert response.status_code == 200, response.get_json()
        body = response.get_json()
        views[body["version"]] = body["game"]

    keep(table.move(a, {"type": "issue_shares", "count": 2}))
    keep(table.move(b, {"type": "issue_shares", "count": 1}))
    keep(table.propose(c, 0))
    keep(table.accept(a))
    keep(table.decline(b))
    keep(table.propose(c, 1))
    keep(table.move(c, {"type": "issue_shares", "count": 3}))
    keep(table.propose(a, 1))
    keep(table.accept(b))
    keep(table.accept(c))
    assert sorted(views) == list(range(11))
    assert views[3]["takeback"] == {"to_version": 0, "by": c, "waiting": sorted([a, b])}
    assert views[4]["takeback"] == {"to_version": 0, "by": c, "waiting": [b]}
    assert views[6]["takeback"] == {"to_version": 1, "by": c, "waiting": [b]}
    assert views[7]["takeback"] is None and views[7]["phase"] == "auction"
    assert views[8]["takeback"] == {"to_version": 1, "by": a, "waiting": sorted([b, c])}
    assert views[9]["takeback"] == {"to_version": 1, "by": a, "waiting": [c]}
    assert views[10]["takeback"] is None
    assert views[10]["players"] == views[1]["players"]
    for version, view in views.items():
        assert orjson.loads(table.games.view_at(table.id, version)) == view, version


def test_takeback_requests_obey_if_match_and_idempotency_key(api) -> None:
    table = Table(api)
    (a, b, c), states = shares_round(table)
    stale = table.propose(c, 0, If_Match='"1"')
    assert (stale.status_code, stale.get_json()["version"]) == (412, 2)
    first = table.propose(c, 0, If_Match='"2"', Idempotency_Key="tb-1")
    again = table.propose(c, 0, Idempotency_Key="tb-1")
    assert first.get_data() == again.get_data()
    assert code(table.propose(c, 1, Idempotency_Key="tb-1")) == "IDEMPOTENCY_KEY_REUSED"
    one = table.post("takeback/accept", a, Idempotency_Key="tb-2")
    two = table.post("takeback/accept", a, Idempotency_Key="tb-2")
    assert one.status_code == two.status_code == 200 and one.get_data() == two.get_data()
    assert table.version() == 4
    assert table.accept(b).status_code == 200
    assert table.state_bytes() == states[0]


def test_a_seat_proposes_a_bounded_number_of_takebacks_and_undoes_a_bounded_number_of_moves(
    api, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from service.referee import takeback, undo
    from tests.api.tables import Table

    monkeypatch.setattr(takeback, "MAX_PROPOSALS_PER_SEAT", 3)
    monkeypatch.setattr(undo, "MAX_UNDOS_PER_SEAT", 2)
    table = Table(api)
    a, b, c = table.view()["turn_order"]
    table.play(a, {"type": "issue_shares", "count": 0})
    table.play(b, {"type": "issue_shares", "count": 0})
    for _ in range(3):  # b asks a to take back, then withdraws: two versions each time
        assert table.propose(b, 0).status_code == 200
        assert table.decline(b).status_code == 200
    version = table.version()
    refused = table.propose(b, 0)
    assert refused.status_code == 422 and refused.get_json()["code"] == "TAKEBACK_LIMIT"
    assert table.version() == version  # the refusal wrote nothing
    # Undo: the seat's own last move, twice; the third is refused.
    for _ in range(2):
        assert table.undo(b).status_code == 200
        table.play(b, {"type": "issue_shares", "count": 0})
    refused = table.undo(b)
    assert refused.status_code == 422 and refused.get_json()["code"] == "UNDO_LIMIT"
