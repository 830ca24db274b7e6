"""Importing a record costs work in proportion to what is right about it: the cheap checks (the
header, the seed commitment, the move count) come before any move is read, and each move is
read only when it is replayed. The work is counted, not timed: the moves the schema loads and
the moves the engine applies."""

from __future__ import annotations

import pytest

from service.api.checks import shapes as schemas
from service.api.checks.shapes import MAX_RECORD_MOVES
from service.engine import game as engine
from service.store import MemoryStore
from tests.api.test_hostile import assert_problem

# A move of about 430 bytes: 2,000 of them make a record of about 0.86 MB (the limit is 1 MiB).
FILLER = {"seat": 0, "move": {"type": "deliver", "from": {"q": 1, "r": 2}, "color": "red",
                              "links": [f"link-{i:02d}-" + "x" * 16 for i in range(12)]}}


@pytest.fixture
def counted(monkeypatch) -> dict[str, int]:
    counts = {"loaded": 0, "applied": 0}
    load_move, apply = schemas.load_move, engine.apply

    def counting_load(*args, **kwargs):  # type: ignore[no-untyped-def]
        counts["loaded"] += 1
        return load_move(*args, **kwargs)

    def counting_apply(*args, **kwargs):  # type: ignore[no-untyped-def]
        counts["applied"] += 1
        return apply(*args, **kwargs)

    monkeypatch.setattr(schemas, "load_move", counting_load)
    monkeypatch.setattr(engine, "apply", counting_apply)
    return counts


@pytest.fixture
def big(api_on) -> tuple:
    api = api_on(MemoryStore(), rate_limits=False)
    created = api.create(seed="big")
    record = api.client.get(f"/v1/games/{created['game_id']}/record").get_json()
    record = {**record, "seed": "big", "moves": [FILLER] * MAX_RECORD_MOVES}
    return api, record


def post_record(api, record: dict):
    return api.client.post("/v1/games", json={"record": record})


def test_the_bound_is_the_contracts(openapi) -> None:
    schema = openapi.spec / "components" / "schemas" / "RecordInput" / "properties" / "moves"
    assert schema["maxItems"] == MAX_RECORD_MOVES == 2000


@pytest.mark.parametrize(
    "change, status, code",
    [
        ({"seed_commitment": "0" * 64}, 422, "SEED_COMMITMENT_MISMATCH"),
        ({"rules_version": "aos-rules/0"}, 422, "RULES_VERSION_MISMATCH"),
        ({"format": "aos-record/9"}, 400, "VALIDATION_ERROR"),
        ({"players": [{"name": "\x00"}] * 3}, 400, "VALIDATION_ERROR"),
        ({"moves": [FILLER] * (MAX_RECORD_MOVES + 1)}, 400, "VALIDATION_ERROR"),
    ],
)
def test_a_bad_big_record_is_refused_before_any_move_is_read(big, counted, change, status, code) -> None:
    api, record = big
    assert_problem(post_record(api, {**record, **change}), status, code)
    assert counted == {"loaded": 0, "applied": 0}


def test_a_big_record_failing_at_move_0_reads_and_replays_one_move(big, counted) -> None:
    api, record = big
    body = assert_problem(post_record(api, record), 422)
    assert body["index"] == 0 and body["code"] != "VALIDATION_ERROR"
    assert counted == {"loaded": 1, "applied": 1}


def test_a_malformed_move_deep_in_a_record_is_400_at_its_index(api_on, counted) -> None:
    api = api_on(MemoryStore(), rate_limits=False)
    played = api.create(seed="deep")
    api.play(played, 8)
    record = api.client.get(f"/v1/games/{played['game_id']}/record").get_json()
    record["seed"] = "deep"
    record["moves"][5] = {"seat": 0, "move": {"type": "bid", "amount": "lots"}}
    counted.update(loaded=0, applied=0)
    body = assert_problem(post_record(api, record), 400, "VALIDATION_ERROR")
    assert body["errors"] == {"record": {"moves": {"5": {"move": {"amount": ["Not a valid integer."]}}}}}
    assert counted["applied"] == 5 and counted["loaded"] == 6


def test_a_lower_bound_can_be_set(api_on) -> None:
    api = api_on(MemoryStore(), rate_limits=False, max_record_moves=3)
    played = api.create(seed="short")
    api.play(played, 4)
    record = api.client.get(f"/v1/games/{played['game_id']}/record").get_json()
    body = assert_problem(post_record(api, {**record, "seed": "short"}), 400, "RECORD_TOO_LONG")
    assert body["max_moves"] == 3
