"""legal_moves lists every delivery that apply accepts, and only those.

On move-goods turns taken from random games on every map (with the locomotive raised, so routes
are long), every chain of up to three complete links (each sharing a stop with the one before)
that leaves a cube source, for every colour there, is judged by the check apply uses, and so is
a sample of link sequences that do not; the accepted ones must be exactly the listed
deliveries."""

from __future__ import annotations

import itertools
import random

import pytest

from service.engine import game
from service.engine.errors import IllegalMove
from service.engine.hexgrid import as_dict, parse_key
from service.engine.phases.move_goods import LinkGraph, check_delivery
from service.engine.variants import rules_for
from tests.engine.board import funded_decisions


def move_turns(map_id: str, seed: int, wanted: int) -> list[tuple[dict, int]]:
    """Move-goods decisions from round 3 on, spread over one funded random game."""
    found = [(s, seat) for s, seat in funded_decisions(map_id, 3, seed, "move_goods", f"d{seed}")
             if s["round"] >= 3]
    step = max(1, len(found) // wanted)
    return found[::step][:wanted]


def chains(links: dict, route: list[str]):
    """`route` and every chain of up to three links going on from it through a shared stop."""
    yield route
    if len(route) < 3:
        for nxt in sorted(links):
            if nxt not in route and set(links[nxt].stops) & set(links[route[-1]].stops):
                yield from chains(links, [*route, nxt])


def candidate_routes(links: dict, start, chooser: random.Random):
    ids = sorted(links)
    for first in ids:
        if start in links[first].stops:
            yield from chains(links, [first])
    yield from itertools.islice(itertools.permutations(ids, 2), 0, None, 97)
    for _ in range(20):
        yield chooser.sample(ids, min(len(ids), chooser.randint(1, 3)))


def accepted_deliveries(state: dict, seat: int, rules) -> tuple[set, int]:
    """The deliveries apply's check accepts among the candidates, and how many were judged."""
    links = LinkGraph(state, rules).by_id
    chooser = random.Random(0)
    accepted, judged = set(), 0
    for k, colours in rules.cube_sources(state).items():
        start = parse_key(k)
        if rules.delivery_first_steps(state, start, []) is not None:
            continue  # a windmill's cube names a direction too: the Holland tests cover it
        for colour in sorted(set(colours)):
            for route in candidate_routes(links, start, chooser):
                judged += 1
                move = {"type": "deliver", "from": as_dict(start), "color": colour,
                        "links": list(route)}
                try:
                    check_delivery(state, rules, seat, move)
                except IllegalMove:
                    continue
                accepted.add((*start, colour, tuple(route)))
    return accepted, judged


@pytest.mark.parametrize("map_id", ["rust_belt", "madagascar", "holland", "iraq", "berlin"])
def test_every_delivery_apply_accepts_is_listed_and_back(map_id: str) -> None:
    rules = rules_for(map_id)
    checked = deliverable = 0
    for state, seat in move_turns(map_id, seed=3, wanted=4):
        state["players"][seat]["loco"] = 3
        listed = {(m["from"]["q"], m["from"]["r"], m["color"], tuple(m["links"]))
                  for m in game.legal_moves(state, seat)
                  if m["type"] == "deliver" and "toward" not in m}
        accepted, judged = accepted_deliveries(state, seat, rules)
        assert accepted == listed
        checked, deliverable = checked + judged, deliverable + len(accepted)
    assert checked > 1000 and deliverable > 0, (checked, deliverable)
