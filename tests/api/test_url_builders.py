"""tests/conftest.py compiles each URL rule's builders once per process and binds them to the same
rule of every app the tests build: each app still builds its own URLs, from its own rules."""

from __future__ import annotations

from flask import Flask

from service.api import create_app
from service.referee.settings import Settings
from service.store import MemoryStore


def _rule(app: Flask, endpoint_part: str):  # type: ignore[no-untyped-def]
    return next(r for r in app.url_map.iter_rules() if "<game_id>" in r.rule and endpoint_part in r.rule)


def test_two_apps_share_the_compiled_builders_and_build_their_own_urls() -> None:
    apps = [create_app(store=MemoryStore(), settings=Settings(warm_up_games=0)) for _ in range(2)]
    first, second = (_rule(app, "/history") for app in apps)
    assert first is not second and first.rule == second.rule
    assert first._build.__func__ is second._build.__func__  # compiled once
    assert first._build.__self__ is first and second._build.__self__ is second
    for app in apps:
        with app.test_request_context():
            adapter = app.url_map.bind("localhost")
            assert adapter.build(first.endpoint, {"game_id": "g 1"}) == "/v1/games/g%201/history"
            assert adapter.build(first.endpoint, {"game_id": "x", "q": "1"}) == \
                "/v1/games/x/history?q=1"
