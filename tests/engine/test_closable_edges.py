"""The build listing asks a map's edge_closed hook only about closable_edges (a map's data): so
every edge the hook closes must be among them. Checked on every hex and edge of the maps that
close edges, in a state where the most edges are closed (Berlin: every disc standing; Iraq: no
Engineer, no track)."""

from __future__ import annotations

import pytest

from service.engine import game
from service.engine.variants import rules_for


@pytest.mark.parametrize("map_id", ["berlin", "iraq"])
def test_every_edge_the_hook_closes_is_closable(map_id: str) -> None:
    state = game.new_game(map_id, ["A", "B", "C"], "closable")
    rules = rules_for(map_id)
    closed = 0
    for h in rules.map.terrain:
        for edge in range(6):
            if rules.edge_closed(state, 0, h, edge):
                closed += 1
                assert edge in rules.closable_edges(h), (h, edge)
    assert closed > 0  # the check is not vacuous (27 edges on Berlin here, 18 on Iraq)
