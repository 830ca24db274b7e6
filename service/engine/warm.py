"""Filling the engine's kept geometry before the first request asks for it.

The build listing keeps what a shape does on a hex per distinct surrounding (build_shapes.py).
A fresh process knows none: its first build turns work out a few dozen surroundings each, a
listing two to four times slower than a warm one. `warm_up` plays a few random games on every
map, in process, so that a server's workers meet their first players with the common
surroundings already worked out. It is deterministic (fixed seeds) and done once per process.
"""

from __future__ import annotations

import random
import time

from service.engine.game import MAP_IDS
from service.engine.playout import play_random_game

_warmed = False


def warm_up(games_per_map: int = 1) -> float:
    """Plays `games_per_map` random 4-player games on every map, each player funded so that
    the games last every round; returns the seconds it took (0 when this process is warm)."""
    global _warmed
    if _warmed or games_per_map <= 0:
        return 0.0
    started = time.perf_counter()
    for map_id in MAP_IDS:
        chooser = random.Random(map_id)
        for n in range(games_per_map):
            play_random_game(map_id, 4, f"warm-up-{n}", chooser, cash=300)
    _warmed = True
    return time.perf_counter() - started
