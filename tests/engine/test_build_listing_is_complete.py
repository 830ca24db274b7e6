"""legal_moves lists every build that apply accepts, not just the ones near where it looks.

The build listing only tries shapes on hexes where track could connect; this checks that
nothing is missed: on build turns taken from random games on every map, every shape on every
hex of the map is judged by the same check apply uses, and the ones it accepts must be exactly
the listed ones."""

from __future__ import annotations

import pytest

from service.engine import game, tiles
from service.engine.errors import IllegalMove
from service.engine.phases.build import plan_build
from service.engine.variants import rules_for
from tests.engine.board import funded_decisions


def build_turns(map_id: str, seed: int, wanted: int) -> list[tuple[dict, int]]:
    """Build decisions with a tile left, spread over one funded random game."""
    found = [(s, seat) for s, seat in funded_decisions(map_id, 3 if map_id == "holland" else 4, seed,
                                                       "build", f"x{seed}") if s["build"]["tiles_left"] > 0]
    step = max(1, len(found) // wanted)
    return found[::step][:wanted]


def shape_key(h, tracks, exits) -> tuple:
    return (h, tuple(sorted(tracks)) if tracks else ("town", *sorted(exits)))


@pytest.mark.parametrize("map_id", ["rust_belt", "madagascar", "holland", "iraq", "berlin"])
def test_every_build_apply_accepts_is_listed_and_back(map_id: str) -> None:
    rules = rules_for(map_id)
    checked = accepted = 0
    for state, seat in build_turns(map_id, seed=5, wanted=6):
        listed = {
            shape_key((m["hex"]["q"], m["hex"]["r"]),
                      [tuple(t) for t in m.get("tracks", [])], m.get("town_exits"))
            for m in game.legal_moves(state, seat) if m["type"] == "build"
        }
        net = rules.network(state)
        judged = set()
        for h in rules.map.terrain:
            shapes = ([(None, e) for e in tiles.TOWN_SHAPES] if h in net.towns
                      else [(t, None) for t in tiles.TRACK_SHAPES])
            for tracks, exits in shapes:
                checked += 1
                try:
                    plan_build(state, rules, net, seat, h, tracks, exits)
                except IllegalMove:
                    continue
                judged.add(shape_key(h, tracks, exits))
        assert judged == listed
        accepted += len(judged)
    assert checked > 10_000 and accepted > 100
