"""The random player judges whether a build finishes a link by tracing the network as the build
would leave it, instead of applying the build. That answer must be the engine's own: here every
listed build on the player's frontier is applied, and the links counted after it are compared
with the player's tracing (so every such build is also held to apply as listed)."""

from __future__ import annotations

import random

import pytest

from service.engine import game
from service.engine.playout import (
    complete_links_by_hex,
    frontier,
    link_count,
    links_through,
    pieces_after,
    play_random_game,
)
from service.engine.variants import rules_for


@pytest.mark.parametrize("map_id", ["rust_belt", "madagascar", "holland", "iraq", "berlin"])
def test_traced_links_match_applied_builds(map_id: str) -> None:
    checked = finished = 0

    def compare(before: dict, seat: int, move: dict, options: list, *_: object) -> None:
        nonlocal checked, finished
        if before["phase"] != "build":
            return
        net = rules_for(map_id).network(before)
        ends, links_at, links = frontier(before, seat, net), complete_links_by_hex(net), link_count(before)
        for m in options:
            if m["type"] != "build" or (m["hex"]["q"], m["hex"]["r"]) not in ends:
                continue
            h = (m["hex"]["q"], m["hex"]["r"])
            after, _ = game.apply(before, seat, m)
            applied = link_count(after) - links
            traced = links_through(net, h, pieces_after(h, m)) - links_at.get(h, 0)
            assert traced == applied, (m, traced, applied)
            checked += 1
            finished += applied > 0

    for g in range(2):
        play_random_game(map_id, 4, f"trace-{g}", random.Random(g), on_move=compare, cash=300)
    assert checked > 100 and finished > 5, (checked, finished)
