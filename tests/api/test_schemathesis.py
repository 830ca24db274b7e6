"""schemathesis explores the whole API in process: no 500, no response outside the contract.

Bounded and deterministic (derandomized Hypothesis, a fixed number of examples per operation).
Half the cases are aimed at a real game with a real seat token, so the deep paths (legal
moves, applying, validating) are explored too, not only the 404 of a made-up id.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
import schemathesis
import schemathesis.pytest._test_builder as _test_builder
from hypothesis import HealthCheck, settings
from schemathesis.generation.hypothesis.builder import HypothesisTestMode
from schemathesis.specs.openapi.checks import allow_header_conformance, positive_data_acceptance

from service.api import create_app
from service.referee.settings import Settings
from service.store import MemoryStore

# Rate limits are off here: schemathesis sends hundreds of writes a second (test_rate_limits.py);
# event streams and long-polls of the real game would wait for moves nobody makes: bounded here.
app = create_app(store=MemoryStore(), settings=Settings(
    rate_limits=False, events_heartbeat=0.05, events_lifetime=0.2, long_poll_max=1))
# schemathesis sends made-up tokens by the hundred, from one address: the cap on refused tokens
# per address (admission.py, tested in tests/scale/test_admission.py) is lifted like the rate limits.
_admission = app.wsgi_app.app  # type: ignore[attr-defined]  # TrustedProxies(Admission(...))
_admission.limits = dataclasses.replace(_admission.limits, auth_failures=10**9)
schema = schemathesis.openapi.from_wsgi("/v1/openapi.yaml", app)

# schemathesis builds each operation's Hypothesis test (its coverage cases and the contract's
# examples, worked out ahead) when the test is collected, and every xdist worker collects all 82:
# ~9 CPU-s a worker, 4 times over, for tests that each run once. Here a test is collected as a
# stand-in and built, by the same function with the same arguments, just before it runs (below).
_build_operation_test = _test_builder.build_operation_test


def _built_when_run(**arguments: Any) -> Callable[[], None]:
    def stand_in() -> None:
        raise AssertionError("the schemathesis test was not built before it ran")

    stand_in.build = lambda: _build(arguments)  # type: ignore[attr-defined]
    return stand_in


def _build(arguments: dict[str, Any]) -> Callable[[], None]:
    """The operation's test as schemathesis builds it, but for test_api_on_a_real_game on an
    operation without a game in its path: aim_at_the_real_game leaves its cases as generated, so
    the cases of its examples and coverage phases (worked out from the contract alone, the same
    for both tests) are the very requests test_api_as_generated sends. There only its fuzzing
    phase runs (its own Hypothesis seed: other cases than test_api_as_generated's, up to
    FUZZ_EXAMPLES). POST /v1/games and /v1/games/bulk: 1,219 and 1,236 cases -> FUZZ_EXAMPLES
    each; the 14 such operations: 2,884 -> 287 when it was 40 (the cases left out are sent by
    test_api_as_generated)."""
    if arguments["test_func"].__name__ != "test_api_on_a_real_game" or \
            "{game_id}" in arguments["operation"].path:
        return _build_operation_test(**arguments)
    every_mode = _test_builder.enabled_modes
    _test_builder.enabled_modes = lambda phases: [  # type: ignore[assignment]
        mode for mode in every_mode(phases) if mode is HypothesisTestMode.FUZZING]
    try:
        return _build_operation_test(**arguments)
    finally:
        _test_builder.enabled_modes = every_mode


_test_builder.build_operation_test = _built_when_run

# Cases a test's fuzzing phase makes up per operation, on top of its examples' and coverage's (the
# contract's edges and wrong types, all of them sent). 40 cost the suite 67 CPU-s, an eighth of it,
# 20 some 15 s less: most of the cost is Hypothesis making the cases, not the service answering.
FUZZ_EXAMPLES = 20


@pytest.fixture(autouse=True)
def _build_the_test(request: pytest.FixtureRequest) -> None:
    """The item's stand-in replaced by the operation's Hypothesis test, as schemathesis would have
    built it at collection (its hooks and Hypothesis's read the test from the item as it runs)."""
    build = getattr(request.node.obj, "build", None)
    if build is not None:
        request.node.obj = build()

_client = app.test_client()
GAME = _client.post(
    "/v1/games",
    json={"map": "rust_belt", "players": [{"name": n} for n in "abc"], "seed": "fuzz"},
).get_json()


def aim_at_the_real_game(case) -> None:  # type: ignore[no-untyped-def]
    if case.path_parameters and "game_id" in case.path_parameters:
        # Assigned, not changed in place: schemathesis then judges the case again as sent (a
        # case made invalid by its game id is valid once aimed at the real game).
        case.path_parameters = {**case.path_parameters, "game_id": GAME["game_id"]}
        # Swap a generated token for the real one (the path's seat's, for a seat's orders, else
        # the active seat's); a case without one stays without.
        if case.method in ("POST", "PUT", "DELETE", "GET") and "Authorization" in (case.headers or {}):
            seat = case.path_parameters.get("seat")
            if not isinstance(seat, int) or not 0 <= seat < len(GAME["seats"]):
                seat = _client.get(f"/v1/games/{GAME['game_id']}").get_json()["active_seat"] or 0
            token = GAME["seats"][seat]["token"]
            case.headers = {**(case.headers or {}), "Authorization": f"Bearer {token}"}


@schema.parametrize()
@settings(
    max_examples=FUZZ_EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_api_as_generated(case) -> None:  # type: ignore[no-untyped-def]
    # Rules refuse many schema-valid requests (an illegal move, a bad player count, a stale
    # If-Match): 422 and 412 are right answers to well-formed data, so this one check is off.
    case.call_and_validate(excluded_checks=excluded(case))


@schema.parametrize()
@settings(
    max_examples=FUZZ_EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_api_on_a_real_game(case) -> None:  # type: ignore[no-untyped-def]
    aim_at_the_real_game(case)
    case.call_and_validate(excluded_checks=excluded(case))


def excluded(case) -> list:  # type: ignore[no-untyped-def]
    # `/v1/games/bulk` also matches the template `/v1/games/{game_id}`, so an OPTIONS of it is
    # answered with the methods of both (`bulk` is then a game id no game has: 404). That one
    # check is off for that one path; tests/api/test_tenants.py holds the path to its contract.
    if case.path == "/v1/games/bulk":
        return [positive_data_acceptance, allow_header_conformance]
    return [positive_data_acceptance]
