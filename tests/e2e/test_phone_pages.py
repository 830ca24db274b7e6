"""The watch page and the play page on a phone (390 × 844 CSS pixels, Debian's Chromium): the
players' panel and the board are drawn at sizes their words can be read at (measured on the
rendered page), and a growing move log never scrolls the board off the screen. Screenshots of
both pages are kept in the test's directory."""

from __future__ import annotations

from pathlib import Path

from aos_client import AosClient

PHONE = {"width": 390, "height": 844}
READABLE_PX = 11.0  # the smallest text a phone reader is asked to read, in CSS pixels


def text_sizes(page, selector: str) -> list[float]:  # type: ignore[no-untyped-def]
    """The rendered height of the glyphs of every text the selector names: CSS font size times
    the scale the element is drawn at (an SVG's own font size shrinks with the picture)."""
    return page.eval_on_selector_all(selector, """els => els.map(e => {
        const size = parseFloat(getComputedStyle(e).fontSize);
        const svg = e.ownerSVGElement;
        if (!svg) return size;
        const box = svg.getBoundingClientRect();
        return parseFloat(e.getAttribute('font-size') || size) * box.width / svg.width.baseVal.value;
    })""")


def image_scale(page) -> float:  # type: ignore[no-untyped-def]
    return page.eval_on_selector("#board", "img => img.getBoundingClientRect().width / img.naturalWidth")


def test_watch_and_play_pages_are_readable_on_a_phone(service_url: str, browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    api = AosClient(service_url)
    game = api.create_game({"map": "rust_belt", "players": [{"name": n} for n in ("Ann", "Bob", "Cat")],
                            "seed": "phone"})
    gid, tokens = game.game_id, {s.seat: s.token for s in game.seats}
    def move() -> None:
        """A quiet move (no shares, no bids, no builds), so the game lasts: the first of them."""
        seat = api.get_game(gid).active_seat
        assert seat is not None
        listed = api.get_legal_moves(gid, seat).moves
        quiet = [m for m in listed if m.type in ("issue_shares", "drop_out", "select_action",
                                                  "end_build", "pass")]
        api.apply_move(gid, quiet[0], token=tokens[seat])

    for _ in range(6):
        move()
    phone = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)

    watch = phone.new_page()
    watch.goto(f"{service_url}/v1/games/{gid}/watch")
    watch.wait_for_function("() => document.querySelectorAll('#log li').length === 6"
                            " && document.getElementById('board').complete")
    # The players as a table of the page's own, in readable type; the board at its own size.
    assert min(text_sizes(watch, "#players td")) >= 14
    assert image_scale(watch) > 0.95  # its 12-13 px panel and 10 px city names stay that size
    # Then the game goes on: the log grows in its own box, and the board stays on the screen.
    for n in range(7, 31):
        move()
        watch.wait_for_function(f"() => document.querySelectorAll('#log li').length === {n}")
    assert watch.evaluate("window.scrollY") == 0
    frame = watch.eval_on_selector("#board-frame", "f => f.getBoundingClientRect().toJSON()")
    assert frame["top"] < PHONE["height"] / 2 and frame["bottom"] <= PHONE["height"]
    assert watch.eval_on_selector("#log", "l => l.scrollHeight > l.clientHeight && l.scrollTop > 0")
    watch.screenshot(path=str(tmp_path / "watch-phone.png"))
    assert watch.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]  # no sideways page

    seat = api.get_game(gid).active_seat
    play = phone.new_page()
    play.goto(f"{service_url}/v1/games/{gid}/play#token={tokens[seat]}")
    play.wait_for_function("() => document.body.dataset.turn === 'mine'"
                           " && document.querySelectorAll('#choices button').length > 0")
    assert min(text_sizes(play, "#players td")) >= 14
    assert min(text_sizes(play, "#choices button")) >= 14
    # The board's own words at the size the SVG gives them: its panel and its city names.
    panel = text_sizes(play, "#board svg text.player-cash, #board svg text.status, #board svg text.deciding")
    assert panel and min(panel) >= READABLE_PX
    assert min(text_sizes(play, "#board svg text.city-name")) >= 6 * 0.95
    assert play.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    play.screenshot(path=str(tmp_path / "play-phone.png"))
    for name in ("watch-phone.png", "play-phone.png"):
        assert (tmp_path / name).stat().st_size > 10_000
    phone.close()
