"""The spectator page in a real browser (Debian's Chromium, driven by Playwright) against
gunicorn on Redis: it shows the moves made so far, then follows the game live from its events
stream, redrawing the board on each move, under its strict Content-Security-Policy."""

from __future__ import annotations

import random

from aos_client import AosClient

LOG_ITEMS = "document.querySelectorAll('#log li').length"
# Predicates as functions: a bare expression would be eval'ed in the page, which its CSP forbids.


def test_the_watch_page_follows_a_game_live(service_url: str, browser) -> None:  # type: ignore[no-untyped-def]
    api = AosClient(service_url)
    game = api.create_game({"map": "rust_belt", "players": [{"name": n} for n in ("Ann", "Bob", "Cat")],
                            "seed": "watch-page"})
    gid, tokens = game.game_id, {s.seat: s.token for s in game.seats}
    rng = random.Random(4)

    def move() -> list:
        view = api.get_game(gid)
        seat = view.active_seat
        choice = rng.choice(api.get_legal_moves(gid, seat).moves)
        return api.apply_move(gid, choice, token=tokens[seat]).events

    for _ in range(3):
        move()

    page = browser.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("response", lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    response = page.goto(f"{service_url}/v1/games/{gid}/watch")
    assert response.status == 200
    assert "script-src 'self'" in response.headers["content-security-policy"]
    page.evaluate("window.violations = []; document.addEventListener('securitypolicyviolation',"
                  " (e) => window.violations.push(e.violatedDirective))")

    # What was played before the page opened, from the history.
    page.wait_for_function(f"() => {LOG_ITEMS} === 3")
    assert page.get_attribute("#board", "src") == "board.svg?v=3"
    # In words, as the service tells each entry.
    first = page.text_content("#log li:first-child")
    assert first.startswith(("Ann issues ", "Bob issues ", "Cat issues ")), first

    # Then live: every move shows up in the log and the board is drawn again for it.
    board_before = page.locator("#board").screenshot()
    built = False
    version = 3
    while not built and version < 60:
        events = move()
        version += 1
        page.wait_for_function(f"() => document.body.dataset.version === '{version}'"
                               f" && {LOG_ITEMS} === {version}")
        page.wait_for_function("() => document.getElementById('board').complete"
                               " && document.getElementById('board').naturalWidth > 0")
        assert page.get_attribute("#board", "src") == f"board.svg?v={version}"
        built = any(e.type == "track_built" for e in events)
    assert built, "no track was built in 60 moves"
    assert page.locator("#board").screenshot() != board_before  # the new track is drawn
    last = page.text_content("#log li:last-child")
    assert any(w in last for w in (" builds ", " adds ", " upgrades ", " redirects ", " rebuilds ")), last
    assert page.text_content("#status").startswith("Round ")

    assert page.evaluate("window.violations") == []
    assert problems == []
    page.close()


def test_the_watch_page_of_an_unknown_game_is_404(service_url: str, browser) -> None:  # type: ignore[no-untyped-def]
    page = browser.new_page()
    assert page.goto(f"{service_url}/v1/games/no-such-game/watch").status == 404
    page.close()
