"""The play page in a real browser (Debian's Chromium, driven by Playwright) against gunicorn on
Redis: four pages, one per seat, each with its token in the URL fragment, play a seeded game to
its end by clicking: the listed moves in words, a hex clicked to narrow them, a build previewed on
the board before it is posted, a rule error pointed at on the board. The token never travels in a
URL, and the pages keep to their strict Content-Security-Policy."""

from __future__ import annotations

import time

from aos_client import AosClient

NAMES = ("Ann", "Bob", "Cat", "Dan")
CHOICES = "#choices button"
# Predicates as functions: a bare expression would be eval'ed in the page, which its CSP forbids.
LISTED = "els => els.map(e => ({index: e.dataset.index, type: e.dataset.type, count: e.dataset.count,"\
         " q: e.dataset.q, r: e.dataset.r, text: e.textContent}))"


def pick(listed: list[dict], seat: int, cash: int) -> dict:
    """A short game with a winner: Ann (seat 0) issues a share whenever she is short, the others
    never do, and nobody bids, builds or delivers (Ann builds once, by hand, below): the others
    go bankrupt in round 4 and Ann wins."""
    def rank(m: dict) -> tuple[int, int]:
        if m["type"] == "issue_shares":
            want = 1 if seat == 0 and cash < 6 else 0
            return (0, abs(int(m["count"]) - want))
        order = {"drop_out": 1, "turn_order_pass": 2, "end_build": 1, "pass": 1, "select_action": 3}
        return (order.get(m["type"], 9), int(m["index"]))
    return min(listed, key=rank)


def test_four_seats_play_a_seeded_game_to_the_end_by_clicking(service_url: str, browser) -> None:  # type: ignore[no-untyped-def]
    api = AosClient(service_url)
    game = api.create_game({"map": "rust_belt", "players": [{"name": n} for n in NAMES], "seed": "play-page"})
    gid, tokens = game.game_id, {s.seat: s.token for s in game.seats}

    # A context per seat, as four players on four machines: one context shares one connection
    # pool (Chromium's six connections a host), which the four pages' event streams would fill.
    contexts = [browser.new_context() for _ in range(4)]
    urls: list[str] = []
    problems: list[str] = []
    pages = {}
    for seat in range(4):
        page = contexts[seat].new_page()
        page.on("request", lambda r: urls.append(r.url))
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        response = page.goto(f"{service_url}/v1/games/{gid}/play#token={tokens[seat]}")
        assert response.status == 200
        assert "script-src 'self'" in response.headers["content-security-policy"]
        page.evaluate("window.violations = []; document.addEventListener('securitypolicyviolation',"
                      " (e) => window.violations.push(e.violatedDirective))")
        pages[seat] = page
    for seat, page in pages.items():
        page.wait_for_function("() => document.body.dataset.version === '0'")
        assert page.text_content("#seat").startswith(f"You play {NAMES[seat]}.")
        assert "#token" not in page.url  # out of the address bar once read

    built = refused = False
    moves = 0
    view = api.get_game(gid)
    while view.status != "finished":
        seat = view.active_seat
        assert seat is not None
        page = pages[seat]
        page.wait_for_function(f"() => document.body.dataset.version === '{view.version}'"
                               f" && document.body.dataset.turn === 'mine'"
                               f" && document.querySelectorAll('{CHOICES}').length > 0")
        if moves == 0:  # whose decision it is, on every page
            assert page.text_content("#status").endswith(f"your decision, {NAMES[seat]}")
            other = pages[(seat + 1) % 4]
            assert other.text_content("#status").endswith(f"{NAMES[seat]} to play")
            assert other.query_selector(CHOICES) is None
        listed = page.eval_on_selector_all(CHOICES, LISTED)
        assert all(m["text"].startswith(NAMES[seat]) for m in listed), listed[:3]
        if view.phase == "build" and seat == 0 and not refused:
            # A hex where nothing can be built: the rule's answer, ringed on the board.
            page.click('polygon.hex[data-q="9"][data-r="8"]')  # Lake Michigan
            page.wait_for_selector("#error:not([hidden])")
            assert page.query_selector('.error-mark circle[data-q="9"][data-r="8"]') is not None
            assert "Nothing to build" in page.text_content("#error")
            refused = True
        if view.phase == "build" and seat == 0 and not built:
            # A hex clicked narrows the moves to those there; the build is drawn before it is posted.
            builds = [m for m in listed if m["type"] == "build"]
            build = min(builds, key=lambda m: int(m["text"].split("$")[-1]))
            page.click(f'polygon.hex[data-q="{build["q"]}"][data-r="{build["r"]}"]')
            narrowed = page.eval_on_selector_all(CHOICES, LISTED)
            assert 0 < len(narrowed) < len(listed)
            assert {(m["q"], m["r"]) for m in narrowed} == {(build["q"], build["r"])}
            page.click(f'{CHOICES}[data-index="{build["index"]}"]')
            assert page.query_selector(f'g.preview[data-q="{build["q"]}"][data-r="{build["r"]}"] path')
            assert page.text_content("#chosen") == build["text"] + "?"
            page.click("#play")
            built = True
        else:
            choice = pick(listed, seat, view.players[seat].cash)
            page.click(f'{CHOICES}[data-index="{choice["index"]}"]')
            page.click("#play")
        moves += 1
        deadline = time.monotonic() + 10
        while api.get_game(gid).version == view.version and time.monotonic() < deadline:
            time.sleep(0.02)
        view = api.get_game(gid)
        assert moves < 200
    assert built and refused

    # The end, on every page: the winner and the ranks.
    assert view.scores is not None and view.scores[0].rank == 1
    for page in pages.values():
        page.wait_for_function("() => document.body.dataset.status === 'finished'")
        assert page.text_content("#status").startswith("Game over: Ann won with ")
        assert page.text_content("#players tbody tr:first-child td").startswith("1. Ann")
        assert page.evaluate("window.violations") == []
    history = api.get_history(gid)
    assert any(e.move.type == "build" and e.seat == 0 for e in history)
    # The tokens went in headers only.
    assert not [u for u in urls if any(t in u for t in tokens.values())]
    assert problems == [], problems
    for context in contexts:
        context.close()


def test_a_token_pasted_in_seats_the_page(service_url: str, browser) -> None:  # type: ignore[no-untyped-def]
    api = AosClient(service_url)
    game = api.create_game({"map": "rust_belt", "players": [{"name": n} for n in NAMES[:3]],
                            "seed": "play-page-paste"})
    seat = game.active_seat
    page = browser.new_page()
    page.goto(f"{service_url}/v1/games/{game.game_id}/play")
    page.wait_for_selector("#token-form:not([hidden])")
    page.fill("#token-input", "not-a-token")
    page.click("#token-form button")
    assert "Not a seat token of this game" in page.text_content("#error")
    page.fill("#token-input", next(s.token for s in game.seats if s.seat == seat))
    page.click("#token-form button")
    page.wait_for_function(f"() => document.querySelectorAll('{CHOICES}').length > 0")
    assert page.text_content("#seat").startswith(f"You play {NAMES[seat]}.")
    assert page.is_hidden("#token-form")
    page.close()
