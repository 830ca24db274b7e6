"""Every rule error carries the fields errors.CODE_FIELDS lists for its code (issue 16.3), as
raised: whole funded random games on every map, with their near-miss moves and the listings'
own checks, are watched raise by raise."""

from __future__ import annotations

import pytest

from service.engine import game
from service.engine.errors import CODE_FIELDS, SOMETIMES_FIELDS, IllegalMove
from tests.engine.test_random_play import play_checked

MAPS = [("rust_belt", 4), ("madagascar", 4), ("iraq", 4), ("berlin", 4), ("holland", 3)]


@pytest.fixture
def raised(monkeypatch: pytest.MonkeyPatch) -> list[IllegalMove]:
    seen: list[IllegalMove] = []
    init = IllegalMove.__init__

    def watched(self: IllegalMove, code: str, detail: str | None = None, **extra: object) -> None:
        init(self, code, detail, **extra)
        seen.append(self)

    monkeypatch.setattr(IllegalMove, "__init__", watched)
    return seen


def funded_game(map_id: str, players: int) -> None:
    # The game seed only picks a game whose near misses reach the codes checked below.
    start = game.new_game(map_id, [f"P{i}" for i in range(players)], "fields-1")
    for p in start["players"]:
        p["cash"] = 300
    play_checked(players, 1, start=start)


def check(errors: list[IllegalMove]) -> set[str]:
    for e in errors:
        always = set(CODE_FIELDS.get(e.code, ()))
        allowed = always | set(SOMETIMES_FIELDS.get(e.code, {}))
        assert always <= set(e.extra), f"{e.code} lacks {sorted(always - set(e.extra))}: {e.detail}"
        assert set(e.extra) <= allowed, f"{e.code} carries unlisted {sorted(set(e.extra) - allowed)}"
        if "hex" in e.extra or "city" in e.extra:
            where = e.extra.get("hex", e.extra.get("city"))
            assert isinstance(where, dict) and set(where) == {"q", "r"}, where
    return {e.code for e in errors}


@pytest.mark.parametrize(("map_id", "players"), MAPS)
def test_every_rule_error_of_a_whole_game_carries_its_fields(raised, map_id: str, players: int) -> None:
    funded_game(map_id, players)
    codes = check(raised)
    # The near misses reach the codes that point at something: the check is not vacuous.
    assert {"BID_TOO_LOW", "OFF_MAP", "NO_SUCH_LINK"} <= codes, sorted(codes)


def test_the_fields_hold_what_they_name(raised) -> None:
    state = game.new_game("rust_belt", ["A", "B", "C"], "fields")
    seat = game.active_seat(state)
    verdict = game.validate(state, seat, {"type": "issue_shares", "count": 14})
    assert verdict["code"] == "SHARE_LIMIT" and (verdict["amount"], verdict["have"], verdict["limit"]) == (
        14, 2, 15)
    check(raised)
