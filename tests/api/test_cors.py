"""CORS: a page on another origin calls the API from a real browser (headless Chromium), with the
preflights the browser sends for the headers the contract uses, and reads the headers it needs."""

from __future__ import annotations

import pytest
import requests

from service.api import create_app
from service.api.plumbing.cors import ALLOWED_HEADERS, EXPOSED_HEADERS, origins_from_env
from service.store import MemoryStore
from tests.contract import parsed_contract

PAGE = b"<!doctype html><html><head><title>frontend</title></head><body>a frontend</body></html>"


def frontend(environ, start_response):  # type: ignore[no-untyped-def]
    """The second origin: serves a blank page from which the tests call the API."""
    start_response("200 OK", [("Content-Type", "text/html; charset=utf-8")])
    return [PAGE]


class Recorder:
    """Wraps the API and notes the method and path of each request, preflights included."""

    def __init__(self, app) -> None:  # type: ignore[no-untyped-def]
        self.app = app
        self.seen: list[tuple[str, str, str]] = []

    def __call__(self, environ, start_response):  # type: ignore[no-untyped-def]
        asked = environ.get("HTTP_ACCESS_CONTROL_REQUEST_HEADERS", "")
        self.seen.append((environ["REQUEST_METHOD"], environ["PATH_INFO"], asked))
        return self.app(environ, start_response)


def api_server(live_server, monkeypatch: pytest.MonkeyPatch, origins: str | None = None):
    if origins is None:
        monkeypatch.delenv("AOS_CORS_ORIGINS", raising=False)
    else:
        monkeypatch.setenv("AOS_CORS_ORIGINS", origins)
    recorder = Recorder(create_app(store=MemoryStore()))
    return live_server(recorder), recorder


CREATE_AND_MOVE = """async (api) => {
  const created = await fetch(api + "/v1/games", {
    method: "POST",
    headers: {"Content-Type": "application/json", "Idempotency-Key": "cors-test-create-0001"},
    body: JSON.stringify({map: "rust_belt", seed: "cors", players: [{name: "A"}, {name: "B"}, {name: "C"}]}),
  });
  const game = await created.json();
  const seat = game.active_seat;
  const move = await fetch(api + "/v1/games/" + game.game_id + "/moves", {
    method: "POST",
    headers: {"Content-Type": "application/json", "Authorization": "Bearer " + game.seats[seat].token,
              "If-Match": '"0"', "Idempotency-Key": "cors-test-2"},
    body: JSON.stringify({type: "issue_shares", count: 1}),
  });
  const stale = await fetch(api + "/v1/games/" + game.game_id + "/moves", {
    method: "POST",
    headers: {"Content-Type": "application/json", "Authorization": "Bearer " + game.seats[seat].token,
              "If-Match": '"0"'},
    body: JSON.stringify({type: "issue_shares", count: 1}),
  });
  const polled = await fetch(api + "/v1/games/" + game.game_id, {headers: {"If-None-Match": '"1"'}});
  return {
    created: created.status, location: created.headers.get("Location"), etag: created.headers.get("ETag"),
    requestId: created.headers.get("X-Request-Id"), game: game.game_id,
    moved: move.status, moveEtag: move.headers.get("ETag"), events: (await move.json()).events.length,
    stale: stale.status, staleCode: (await stale.json()).code, polled: polled.status,
  };
}"""


def test_a_page_on_another_origin_creates_a_game_and_moves(browser, live_server, monkeypatch):
    api, recorder = api_server(live_server, monkeypatch)
    page_origin = live_server(frontend)
    assert api != page_origin  # two ports of 127.0.0.1: two origins
    page = browser.new_page()
    try:
        page.goto(page_origin + "/")
        result = page.evaluate(CREATE_AND_MOVE, api)
    finally:
        page.close()
    assert result["created"] == 201
    assert result["location"] == f"/v1/games/{result['game']}"
    assert result["etag"] == '"0"' and result["requestId"]
    assert result["moved"] == 200 and result["moveEtag"] == '"1"' and result["events"] >= 1
    assert result["stale"] == 412 and result["staleCode"] == "VERSION_MISMATCH"
    assert result["polled"] == 304
    # The browser asked before each non-simple request, naming the headers it was about to send.
    preflights = [(path, asked) for method, path, asked in recorder.seen if method == "OPTIONS"]
    assert ("/v1/games", "content-type,idempotency-key") in preflights
    assert any(path.endswith("/moves") and "authorization" in asked and "if-match" in asked
               for path, asked in preflights)


def test_an_origin_not_listed_is_refused_by_the_browser(browser, live_server, monkeypatch):
    api, recorder = api_server(live_server, monkeypatch, origins="https://play.example.com")
    page_origin = live_server(frontend)
    page = browser.new_page()
    try:
        page.goto(page_origin + "/")
        outcome = page.evaluate(
            "async (api) => { try { await fetch(api + '/v1/maps'); return 'read'; }"
            " catch (e) { return e.name; } }",
            api,
        )
    finally:
        page.close()
    assert outcome == "TypeError"  # the browser withholds the answer from the script
    assert ("GET", "/v1/maps", "") in recorder.seen  # the request went; its answer was refused


def test_preflight_answers_every_header_and_method_the_contract_uses(live_server, monkeypatch):
    api, _ = api_server(live_server, monkeypatch)
    asked = ", ".join(h.lower() for h in ALLOWED_HEADERS)
    response = requests.options(
        f"{api}/v1/games/abc/moves",
        headers={
            "Origin": "http://localhost:5173",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": asked,
        },
        timeout=10,
    )
    assert response.status_code == 200
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    allowed = {h.strip().lower() for h in response.headers["Access-Control-Allow-Headers"].split(",")}
    assert allowed == {h.lower() for h in ALLOWED_HEADERS}
    assert {"authorization", "if-match", "if-none-match", "idempotency-key", "prefer",
            "last-event-id", "content-type"} <= allowed
    assert "POST" in response.headers["Access-Control-Allow-Methods"]
    assert int(response.headers["Access-Control-Max-Age"]) > 0
    assert "Access-Control-Allow-Credentials" not in response.headers  # bearer tokens, no cookies
    got = requests.get(f"{api}/v1/maps", headers={"Origin": "http://localhost:5173"}, timeout=10)
    exposed = {h.strip() for h in got.headers["Access-Control-Expose-Headers"].split(",")}
    assert exposed == set(EXPOSED_HEADERS)
    assert {"ETag", "Location", "X-Request-Id", "Retry-After", "RateLimit", "RateLimit-Policy"} <= exposed


def test_listed_origins_are_echoed_and_others_get_no_cors_headers(live_server, monkeypatch):
    api, _ = api_server(live_server, monkeypatch, origins="https://play.example.com, http://localhost:5173")
    for origin in ("https://play.example.com", "http://localhost:5173"):
        got = requests.get(f"{api}/v1/maps", headers={"Origin": origin}, timeout=10)
        assert got.headers["Access-Control-Allow-Origin"] == origin
        assert "Origin" in got.headers["Vary"]
    other = requests.get(f"{api}/v1/maps", headers={"Origin": "https://evil.example"}, timeout=10)
    assert other.status_code == 200 and "Access-Control-Allow-Origin" not in other.headers


def test_origins_setting():
    assert origins_from_env({}) == ["*"]
    assert origins_from_env({"AOS_CORS_ORIGINS": " https://a.example ,http://b:1 "}) == [
        "https://a.example",
        "http://b:1",
    ]
    assert origins_from_env({"AOS_CORS_ORIGINS": ""}) == []


def test_preflight_allows_every_method_the_contract_uses(live_server, monkeypatch):
    contract = parsed_contract()
    used = {m.upper() for item in contract["paths"].values() for m in item
            if m in ("get", "post", "put", "delete", "patch")}
    assert {"PUT", "DELETE"} <= used  # orders are set with PUT, webhooks deleted with DELETE
    api, _ = api_server(live_server, monkeypatch)
    for method, path in (("PUT", "/v1/games/abc/seats/0/orders"), ("DELETE", "/v1/games/abc/webhooks/h")):
        response = requests.options(f"{api}{path}", timeout=10, headers={
            "Origin": "http://localhost:5173", "Access-Control-Request-Method": method,
            "Access-Control-Request-Headers": "authorization, content-type"})
        assert response.status_code == 200
        allowed = {m.strip() for m in response.headers["Access-Control-Allow-Methods"].split(",")}
        assert used <= allowed, (method, allowed)
