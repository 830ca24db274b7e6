"""Metrics, request ids and JSON logs: what an operator sees of every request."""

from __future__ import annotations

import importlib
import json
import logging
import os
import pkgutil
import re
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from service import engine
from service.api import create_app
from service.engine import native
from service.observability import logs, metrics
from service.referee.settings import Settings
from service.store import CommitResult, MemoryStore, Outcome, RedisStore

ROOT = Path(__file__).resolve().parents[2]


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def access_lines(err: str) -> list[dict]:
    return [line for line in map(json.loads, err.splitlines()) if line.get("log") == "access"]


@pytest.fixture(autouse=True)
def info_level():
    """Each test starts at LOG_LEVEL info and leaves it there (the level is process-wide)."""
    logs.configure("info")
    yield
    logs.configure("info")


def test_metrics_expose_every_documented_family(api) -> None:
    data, content_type = metrics.exposition()
    assert content_type.startswith("text/plain")
    text = data.decode()
    for family in (
        "aos_http_requests_total",
        "aos_http_request_duration_seconds",
        "aos_moves_applied_total",
        "aos_illegal_moves_total",
        "aos_store_errors_total",
        "aos_store_retries_total",
        "aos_games_created_total",
        "aos_engine_processes",
    ):
        assert f"# HELP {family} " in text, family


def test_every_metric_family_is_in_the_deploy_guide(api) -> None:
    # deploy/README.md's tables (section 8, the API's; section 13, the worker's) say what each
    # family means and when to alert: one the service exposes and the guide does not name is
    # a number nobody can read. Every module of the service imported, so that every family is
    # registered, whichever tests ran before in this process.
    for module in pkgutil.walk_packages([str(ROOT / "service")], "service."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    guide = (ROOT / "deploy" / "README.md").read_text()
    first_cells = re.findall(r"^\| ([^|]*`aos_[^|]*)\|", guide, re.MULTILINE)  # a row may name two
    documented = {name for cell in first_cells for name in re.findall(r"`(aos_[a-z_]+)`", cell)}
    documented |= {name.removesuffix("_total") for name in documented}
    families = {family.name for family in REGISTRY.collect() if family.name.startswith("aos_")}
    assert len(families) > 25  # the API's, the worker's and the archive's
    assert sorted(families - documented) == []


def test_the_process_says_how_its_engine_runs_the_build_listing(api) -> None:
    # What the import found (native.guard), which the suite asserts is the compiled build
    # (tests/engine/test_native.py); a pod of plain-Python processes shows in its label.
    assert native.status() == engine.NATIVE
    assert sample("aos_engine_processes", native=engine.NATIVE) == 1.0
    assert sum(sample("aos_engine_processes", native=other)
               for other in ("compiled", "stale", "off", "absent") if other != engine.NATIVE) == 0.0


def test_requests_are_counted_by_url_rule_and_timed(api) -> None:
    rule = "/v1/games/<game_id>"
    before = sample("aos_http_requests_total", route=rule, method="GET", status="404")
    timed = sample("aos_http_request_duration_seconds_count", route=rule, method="GET")
    unmatched = sample("aos_http_requests_total", route="unmatched", method="GET", status="404")
    for n in range(3):
        assert api.client.get(f"/v1/games/nope{n}").status_code == 404
    assert api.client.get("/no/such/path").status_code == 404
    assert sample("aos_http_requests_total", route=rule, method="GET", status="404") == before + 3
    assert sample("aos_http_request_duration_seconds_count", route=rule, method="GET") == timed + 3
    assert sample("aos_http_requests_total", route="unmatched", method="GET", status="404") == unmatched + 1
    text = metrics.exposition()[0].decode()
    assert "nope1" not in text  # raw paths never become labels


def test_games_moves_and_illegal_moves_are_counted(api) -> None:
    created = sample("aos_games_created_total", map="rust_belt")
    game = api.create()
    assert sample("aos_games_created_total", map="rust_belt") == created + 1
    gid, seat = game["game_id"], game["active_seat"]
    move = api.legal(gid, seat)[0]
    applied = sample("aos_moves_applied_total", map="rust_belt", type=move["type"])
    assert api.move(gid, game["seats"][seat]["token"], move).status_code == 200
    assert sample("aos_moves_applied_total", map="rust_belt", type=move["type"]) == applied + 1
    # The seat that just moved is no longer the one to decide: the rule says so, with its code.
    refused = api.move(gid, game["seats"][seat]["token"], move)
    assert refused.status_code == 422
    code = refused.get_json()["code"]
    assert sample("aos_illegal_moves_total", code=code) >= 1


class ConflictOnce(MemoryStore):
    """Reports one version conflict, as if another writer had got in first."""

    def __init__(self) -> None:
        super().__init__()
        self.conflicted = False

    def commit(self, game_id: str, **kwargs) -> CommitResult:  # type: ignore[override]
        if not self.conflicted:
            self.conflicted = True
            return CommitResult(Outcome.CONFLICT, kwargs["expected_version"])
        return super().commit(game_id, **kwargs)


def test_a_move_judged_again_after_a_conflict_counts_as_a_retry(api_on) -> None:
    api = api_on(ConflictOnce())
    game = api.create()
    before = sample("aos_store_retries_total", op="commit", reason="version_conflict")
    seat = game["active_seat"]
    response = api.move(game["game_id"], game["seats"][seat]["token"], api.legal(game["game_id"], seat)[0])
    assert response.status_code == 200
    assert sample("aos_store_retries_total", op="commit", reason="version_conflict") == before + 1


def test_store_failures_are_counted_logged_and_answered_503(api_on, capsys) -> None:
    from tests.conftest import free_port

    store = RedisStore(f"redis://127.0.0.1:{free_port()}/0", connect_timeout=0.2, retries=1)
    api = api_on(store)
    before = sample("aos_store_errors_total", op="ping", kind="connection")
    response = api.client.get("/v1/ready", headers={"X-Request-Id": "probe-1"})
    assert response.status_code == 503
    assert response.headers["X-Request-Id"] == "probe-1"
    assert sample("aos_store_errors_total", op="ping", kind="connection") == before + 1
    events = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    failure = next(e for e in events if e.get("event") == "store_error")
    assert failure["level"] == "warning"
    assert failure["op"] == "ping" and failure["kind"] == "connection"
    assert failure["request_id"] == "probe-1"


def test_a_valid_request_id_is_echoed(api) -> None:
    for rid in ("abc", "0f8fad5b-d9cb-469f-a165-70867728950e", "a" * 128, "trace/1+2=3@x:y.z_w"):
        assert api.client.get("/v1/health", headers={"X-Request-Id": rid}).headers["X-Request-Id"] == rid


@pytest.mark.parametrize("sent", ["", "a" * 129, "has space", "quote\"", "ünïcode", "a\tb"])
def test_a_bad_request_id_is_replaced(api, sent: str) -> None:
    response = api.client.get("/v1/health", headers={"X-Request-Id": sent})
    echoed = response.headers["X-Request-Id"]
    assert echoed != sent and len(echoed) == 32 and int(echoed, 16) >= 0


def test_every_response_has_a_request_id_errors_included(api) -> None:
    game = api.create()
    responses = [
        api.client.get("/v1/health"),
        api.client.post("/v1/games", data=b"{", content_type="application/json"),  # 400
        api.client.post(f"/v1/games/{game['game_id']}/moves", json={"type": "pass"}),  # 401
        api.client.get("/v1/games/nope"),  # 404
        api.client.delete("/v1/health"),  # 405
        api.client.get("/no/such/path"),  # 404 outside the contract
        api.client.get(f"/v1/games/{game['game_id']}", headers={"If-None-Match": '"0"'}),  # 304
    ]
    ids = [r.headers.get("X-Request-Id") for r in responses]
    assert all(ids), [(r.status_code, r.headers) for r in responses]
    assert len(set(ids)) == len(ids)  # a new one for each request


def test_an_unhandled_error_still_gets_a_request_id(monkeypatch, capsys) -> None:
    # Not through the contract check: a 500 is never in the contract.
    app = create_app(store=MemoryStore(), settings=Settings())

    def bug(*_args: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(app.extensions["aos.games"], "view", bug)
    response = app.test_client().get("/v1/games/abc", headers={"X-Request-Id": "bug-1"})
    assert response.status_code == 500
    assert response.headers["X-Request-Id"] == "bug-1"
    events = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    (error,) = [e for e in events if e["level"] == "error"]
    assert error["request_id"] == "bug-1" and "RuntimeError: a bug" in error["exc"]


def test_one_json_access_line_per_request(api, capsys) -> None:
    game = api.create()
    capsys.readouterr()
    gid = game["game_id"]
    api.client.get(f"/v1/games/{gid}", headers={"X-Request-Id": "rid-42", "User-Agent": "bot/1"})
    api.client.get("/v1/maps")
    lines = access_lines(capsys.readouterr().err)
    assert len(lines) == 2
    line = lines[0]
    assert line["method"] == "GET"
    assert line["route"] == "/v1/games/<game_id>"
    assert line["path"] == f"/v1/games/{gid}"
    assert line["status"] == 200
    assert line["duration_ms"] >= 0
    assert line["game_id"] == gid
    assert line["request_id"] == "rid-42"
    assert line["user_agent"] == "bot/1"
    assert line["level"] == "info" and line["ts"].endswith("+00:00")
    assert line["pid"] == os.getpid()  # the process that served it
    assert "game_id" not in lines[1] and len(lines[1]["request_id"]) == 32


def test_the_created_game_id_is_logged(api, capsys) -> None:
    game = api.create()
    (line,) = access_lines(capsys.readouterr().err)
    assert line["route"] == "/v1/games" and line["status"] == 201
    assert line["game_id"] == game["game_id"]


def test_log_level_comes_from_the_environment(openapi, violations, monkeypatch, capsys) -> None:
    from tests.api.conftest import Api, make_app

    monkeypatch.setenv("LOG_LEVEL", "warning")
    api = Api(make_app(openapi, violations, MemoryStore()))
    api.client.get("/v1/health")
    assert access_lines(capsys.readouterr().err) == []
    assert logging.getLogger("service").getEffectiveLevel() == logging.WARNING
    monkeypatch.setenv("LOG_LEVEL", "loud")
    with pytest.raises(ValueError, match="LOG_LEVEL"):
        make_app(openapi, violations, MemoryStore())


def test_the_api_does_not_serve_metrics(api) -> None:
    # They are on a port of their own (service/serving.py), for the platform's scraper only.
    assert api.client.get("/metrics").status_code == 404
