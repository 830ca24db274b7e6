"""Filling the engine's kept geometry before the first request asks for it, then settling the
garbage collector.

The build listing keeps what a shape does on a hex per distinct surrounding (build_shapes.py).
A fresh process knows none: its first build turns work out a few dozen surroundings each, a
listing two to four times slower than a warm one. `warm_up` plays a few random games on every
map, in process, so that a server's workers meet their first players with the common
surroundings already worked out. It is deterministic (fixed seeds) and done once per process.

A listing or a move makes thousands of small containers. With the collector's defaults (a
young collection every 700, a full one every hundred) a listing of a build turn meets a young
collection nearly every time and, now and then, a full one over every object the process holds
(the modules, the kept geometry): a pause of several milliseconds, the p99 of the listing.
So after the warm-up `settle_collector` freezes what the process holds by then (gc.freeze: it
is never scanned again; it is still freed when nothing refers to it) and collects the young
generation less often (GC_THRESHOLDS). Cycles are rare in the engine's plain dicts and lists,
so fewer collections cost no memory worth counting. benchmarks/sim.py measures both.
"""

from __future__ import annotations

import gc
import random
import time

from service.engine import words
from service.engine.game import MAP_IDS, view_to_write
from service.engine.layout import GivenMove, State
from service.engine.phases import build
from service.engine.places import places
from service.engine.playout import play_random_game
from service.engine.variants import rules_for

# (young, middle, old): a young collection every 10,000 container allocations (700 by default).
GC_THRESHOLDS = (10_000, 10, 10)

_warmed = False


def warm_up(games_per_map: int = 1, settle: bool = True) -> float:
    """Plays `games_per_map` random 4-player games on every map, each player funded so that
    the games last every round, then (unless `settle` is false: benchmarks/sim.py compares)
    settles the collector; returns the seconds it took (0 when this process is warm, or asked
    for no game: then the collector is left as it is)."""
    global _warmed
    if _warmed or games_per_map <= 0:
        return 0.0
    started = time.perf_counter()
    for map_id in MAP_IDS:
        _warm_map(map_id, games_per_map)
    if settle:
        settle_collector()
    _warmed = True
    return time.perf_counter() - started


def _warm_map(map_id: str, games: int) -> None:
    chooser = random.Random(map_id)
    budgets = build.short_budgets(rules_for(map_id))

    def word_build_turn(before: State, seat: int, move: GivenMove, *_: object) -> None:
        # Each build turn's listing in words keeps the builds of its hexes' situations
        # (words.ListedBuilds): the empty hexes' are common to most games of the map, so a
        # worker's first listings of another game find many of them made. Every turn's, not one:
        # +0.15 CPU-s of the warm-up for the five maps (0.88 -> 1.03 s), a first listing of a
        # game's build turn 9-10 % fewer instructions (benchmarks/http's games and others).
        if move["type"] == "build":
            words.listing(before, seat)
            # And as a player short of cash would see it (the warm-up's have plenty): a
            # listing keeps its empty hexes' builds per budget, and the first listings of a
            # player left with a few dollars otherwise make them all (some 40 a budget): +0.08
            # CPU-s of the warm-up (0.81 -> 0.89 s), a fresh worker's cold listings 2.9 %
            # fewer instructions (benchmarks/http's games).
            for cash in budgets:
                players = list(before["players"])
                players[seat] = {**players[seat], "cash": cash}
                words.listing({**before, "players": players}, seat)

    for n in range(games):
        final, _ = play_random_game(map_id, 4, f"warm-up-{n}", chooser, cash=300,
                                    on_move=word_build_turn)
    # The map's hex labels (places.py: 20-40 ms a map, from the whole map's geometry) and the
    # view's pieces, which the first move and the first listing would pay otherwise.
    places(map_id)
    view_to_write(final)


def settle_collector() -> None:
    """Moves every object the process holds now out of the collector's sight and makes young
    collections rarer (see the module's note). Once per process, after its warm-up."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
