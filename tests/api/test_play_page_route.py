"""GET /v1/games/{id}/play: the page, its script and style, served by the service alone."""

from __future__ import annotations


def test_the_play_page_and_its_assets(api) -> None:  # type: ignore[no-untyped-def]
    game = api.create()
    page = api.client.get(f"/v1/games/{game['game_id']}/play")
    assert page.status_code == 200 and page.mimetype == "text/html"
    policy = page.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "connect-src 'self'" in policy and "default-src 'none'" in policy
    html = page.get_data(as_text=True)
    assert game["game_id"] in html and "../../play.js" in html and "../../play.css" in html
    assert "<script>" not in html and "style=" not in html  # nothing inline for the policy to refuse
    # The page never holds a token: the seat's comes from the fragment or is pasted in.
    assert all(s["token"] not in html for s in game["seats"])
    script = api.client.get("/v1/play.js")
    assert script.status_code == 200 and script.mimetype == "text/javascript"
    body = script.get_data(as_text=True)
    assert "Authorization" in body and "If-Match" in body and "Idempotency-Key" in body
    assert "location.hash" in body and "?token" not in body
    assert api.client.get("/v1/play.css").mimetype == "text/css"
    missing = api.client.get("/v1/games/no-such-game/play")
    assert missing.status_code == 404 and missing.get_json()["code"] == "GAME_NOT_FOUND"
