"""The build listing works out a surrounding's accepted shapes once per class of edge statuses
(build_shapes.py, "the shapes a hex may take, for the listing"; docs/engine.md): every status of
a class must give the same accepted shapes, with the same geometry, as its representative."""

from __future__ import annotations

import random

from service.engine import tiles as T
from service.engine.phases import build_shapes as S

STATUSES = ("off", "closed", "city", "free", "own", "unowned", "stranded", "opponent")


def surroundings(rng: random.Random, count: int):
    shapes = [frozenset()] + list(T.TRACK_SHAPES)
    for _ in range(count):
        old = rng.choice(shapes) if rng.random() < .6 else frozenset()
        turnable = frozenset(t for t in old if rng.random() < .7)
        status = tuple(rng.choice(STATUSES) for _ in range(6))
        yield old, turnable, status, rng.random() < .7


def test_every_status_of_a_class_accepts_the_shapes_of_its_representative() -> None:
    rng = random.Random(10)
    compared = accepted = 0
    for old, turnable, status, owns in surroundings(rng, 4000):
        representative = S._class_of(status)
        assert S.track_options(old, turnable, status, owns) == S.track_options(
            old, turnable, representative, owns), (old, turnable, status, owns)
        compared += 1
        accepted += len(S.track_options(old, turnable, status, owns))
    assert compared == 4000 and accepted > 4000  # the draws reach shapes that are accepted


def test_every_status_of_a_class_gives_a_town_the_exits_of_its_representative() -> None:
    rng = random.Random(11)
    accepted = 0
    for _ in range(4000):
        old = frozenset(e for e in range(6) if rng.random() < .3)
        status = tuple(rng.choice(STATUSES) for _ in range(6))
        mine, owns = rng.random() < .5, rng.random() < .7
        got = S.town_options(old, mine, status, owns)
        assert got == S.town_options(old, mine, S._class_of(status), owns), (old, status)
        accepted += len(got)
    assert accepted > 2000


def test_a_class_is_read_through_the_rules_own_sets() -> None:
    """own and unowned, off and closed are one class each; a city, free, stranded unowned track
    and an opponent's track end are classes of their own (a first tile needs a city; stranded
    track joins but anchors nothing; a redirect reads an opponent)."""
    assert {s: S._class_of((s,) * 6)[0] for s in STATUSES} == {
        "off": "off", "closed": "off", "city": "city", "free": "free", "own": "own",
        "unowned": "own", "stranded": "stranded", "opponent": "opponent"}
    for s in STATUSES:
        c = S._class_of((s,) * 6)[0]
        assert (s in S.ANCHORS, s in S.OPEN, s in S.BARRED) == (
            c in S.ANCHORS, c in S.OPEN, c in S.BARRED)


def test_a_surroundings_options_are_every_shape_its_geometry_accepts() -> None:
    """track_options and town_options judge only candidates (their masks leave out what the
    geometry refuses for whose track is turned or a builder's first tile) and keep each
    candidate's geometry by the statuses it reads: what they list must be every shape that
    track_geometry / town_geometry accepts there, with its geometry, whatever surroundings were
    met before."""
    rng = random.Random(12)
    order = {tracks: i for i, tracks in enumerate(T.TRACK_SHAPES)}

    def accepted(judge, shapes, *args):
        out = []
        for shape in shapes:
            try:
                out.append((shape, judge(shape, *args)))
            except S.Refusal:
                continue
        return out

    listed = 0
    for old, turnable, status, owns in surroundings(rng, 3000):
        got = S.track_options(old, turnable, status, owns)
        want = accepted(S.track_geometry, T.TRACK_SHAPES, old, turnable, status, owns)
        assert sorted(got, key=lambda o: order[o[0]]) == want, (old, turnable, status, owns)
        listed += len(got)
    for _ in range(3000):
        old_exits = frozenset(e for e in range(6) if rng.random() < .3)
        status = tuple(rng.choice(STATUSES) for _ in range(6))
        mine, owns = rng.random() < .5, rng.random() < .7
        got_towns = S.town_options(old_exits, mine, status, owns)
        assert list(got_towns) == accepted(S.town_geometry, T.TOWN_SHAPES, old_exits, mine,
                                           status, owns), (old_exits, mine, status, owns)
        listed += len(got_towns)
    assert listed > 5000
