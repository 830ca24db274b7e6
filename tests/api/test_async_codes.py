"""The refusal codes of asynchronous play: the ones the code raises are the ones openapi.yaml
lists, docs/async-play.md explains, and some test checks."""

from __future__ import annotations

from pathlib import Path

from service.referee import takeback, undo
from tests.contract import parsed_contract

ROOT = Path(__file__).resolve().parents[2]
RESPONSES = ("UndoRefused", "TakebackRefused", "TakebackAnswerRefused", "OrdersRefused")


def listed_codes() -> dict[str, set[str]]:
    responses = parsed_contract()["components"]["responses"]
    codes = {}
    for name in RESPONSES:
        schema = responses[name]["content"]["application/problem+json"]["schema"]
        codes[name] = set(schema["allOf"][1]["properties"]["code"]["enum"])
    return codes


def raised_codes(module: object) -> set[str]:
    return {v for k, v in vars(module).items() if k.isupper() and isinstance(v, str)}


def test_the_codes_raised_are_the_codes_listed() -> None:
    listed = listed_codes()
    reused = {"IDEMPOTENCY_KEY_REUSED"}
    assert listed["UndoRefused"] - reused == raised_codes(undo)
    proposal = {"TAKEBACK_PENDING", "NOT_AN_EARLIER_VERSION", "VERSION_TAKEN_BACK",
                "NOTHING_TO_TAKE_BACK", "TAKEBACK_LIMIT"}
    answer = {"NO_TAKEBACK_PENDING", "NOT_ASKED"}
    assert raised_codes(takeback) - raised_codes(undo) == proposal | answer
    assert listed["TakebackRefused"] - reused == proposal | {"RANDOM_OUTCOME_REVEALED", "GAME_FINISHED"}
    assert listed["TakebackAnswerRefused"] - reused == answer
    assert listed["OrdersRefused"] - reused == {"GAME_FINISHED"}


def test_every_code_is_explained_and_checked_by_some_test() -> None:
    page = (ROOT / "docs" / "async-play.md").read_text()
    tests = "\n".join(p.read_text() for p in (ROOT / "tests" / "api").glob("test_*.py")
                      if p.name != "test_async_codes.py")
    codes = set().union(*listed_codes().values())
    assert [c for c in codes if f"`{c}`" not in page and c != "IDEMPOTENCY_KEY_REUSED"] == []
    assert [c for c in codes if f'"{c}"' not in tests] == []
