"""engine/warm.py: a fresh process meets its first build turns with the common surroundings
already worked out (docs/engine.md, "Speed: the build listing")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson

from service.referee.settings import Settings

ROOT = Path(__file__).resolve().parents[2]

# Lists every build turn of three seeded games in a fresh process, after warm_up(N), and reports
# how many surroundings those listings had to work out for themselves.
_PROBE = """
import json, random, sys
from service.engine import game, warm
from service.engine.phases import build_shapes as S
from service.engine.playout import play_random_game

turns = []
for seed in ("probe-0", "probe-1", "probe-2"):
    play_random_game("rust_belt", 4, seed, random.Random(seed),
                     on_move=lambda before, seat, *_: turns.append((before, seat))
                     if before["phase"] == "build" else None)
S.track_listing.cache_clear(); S._track_listing.cache_clear(); S.track_options.cache_clear()
S.town_listing.cache_clear(); S._town_listing.cache_clear(); S.town_options.cache_clear()
warm._warmed = False
took = warm.warm_up(int(sys.argv[1]))
again = warm.warm_up(int(sys.argv[1]))
known = S.track_options.cache_info().currsize
for state, seat in turns:
    game.legal_moves(state, seat)
from service.engine import words
kept = sum(len(k) for _, k in words._KEPT_BUILDS.values())
print(json.dumps({"took": took, "again": again, "known": known, "turns": len(turns),
                  "new": S.track_options.cache_info().currsize - known, "kept": kept,
                  "bound": words._BUILDS_KEPT}))
"""


def probe(games: int) -> dict:
    done = subprocess.run([sys.executable, "-c", _PROBE, str(games)], cwd=ROOT, check=True,
                          capture_output=True, text=True)
    return orjson.loads(done.stdout)


def test_warm_up_works_out_the_common_surroundings_once_per_process() -> None:
    cold, warm = probe(0), probe(1)
    assert cold["took"] == 0 and cold["known"] == 0
    assert warm["took"] > 0 and warm["again"] == 0  # once per process
    assert warm["known"] > 500  # surroundings of every map's games
    assert cold["turns"] == warm["turns"] > 50
    # The build turns of games it never saw meet well under half as many new surroundings.
    assert warm["new"] * 2 < cold["new"], (warm, cold)


def test_the_default_warm_up_meets_more_surroundings_and_keeps_its_situations_whole() -> None:
    """Four games a map (the default) against one: the build turns of games it never saw meet
    under half as many new surroundings (35 against 81 on the probe's three games), and the
    situations it keeps (words.ListedBuilds: 26,259 after the default) fit under the bound,
    so that none is dropped before the worker's first player comes."""
    one, default = probe(1), probe(Settings().warm_up_games)
    assert default["known"] > one["known"] * 2
    assert default["new"] * 2 < one["new"], (default, one)
    assert 20_000 < default["kept"] < default["bound"], default


def test_the_app_warms_up_as_the_environment_says() -> None:
    assert Settings().warm_up_games == 4
    assert Settings.from_env({"AOS_WARM_UP_GAMES": "0"}).warm_up_games == 0
    assert Settings.from_env({"AOS_WARM_UP_GAMES": "3"}).warm_up_games == 3
    assert Settings.from_env({}).warm_up_games == 4


# The collector after warm_up(N, settle) in a fresh process: thresholds and how many objects
# are frozen.
_COLLECTOR = """
import gc, json, sys
from service.engine import warm
before = gc.get_threshold()
warm.warm_up(int(sys.argv[1]), settle=sys.argv[2] == "settle")
print(json.dumps({"before": before, "after": gc.get_threshold(), "frozen": gc.get_freeze_count()}))
"""


def collector_after(games: int, settle: str) -> dict:
    done = subprocess.run([sys.executable, "-c", _COLLECTOR, str(games), settle], cwd=ROOT,
                          check=True, capture_output=True, text=True)
    return orjson.loads(done.stdout)


def test_warm_up_settles_the_collector_only_when_it_warms() -> None:
    settled = collector_after(1, "settle")
    assert settled["before"] == [700, 10, 10]
    assert settled["after"] == [10_000, 10, 10]
    assert settled["frozen"] > 20_000  # the modules and the kept geometry
    assert collector_after(1, "no") == {"before": [700, 10, 10], "after": [700, 10, 10], "frozen": 0}
    assert collector_after(0, "settle") == {"before": [700, 10, 10], "after": [700, 10, 10], "frozen": 0}


# What the first move's words and view need of each map, after warm_up(N) in a fresh process.
_WORDS = """
import json, sys
from service.engine import game, places, view, warm, words
warm.warm_up(int(sys.argv[1]))
print(json.dumps({"places": places.places.cache_info().currsize, "boards": sorted(view._BOARDS),
                  "hexes": [len(known) for _, known in words._hex_pieces.kept.values()]}))
"""


def test_warm_up_fills_each_map_s_labels_view_pieces_and_worded_hexes() -> None:
    # Without them a worker's first move on a map spent 20-40 ms labelling the map's hexes.
    def after(games: int) -> dict:
        done = subprocess.run([sys.executable, "-c", _WORDS, str(games)], cwd=ROOT, check=True,
                              capture_output=True, text=True)
        return orjson.loads(done.stdout)

    from service.engine.game import MAP_IDS

    warm = after(1)
    assert warm["places"] == len(MAP_IDS) and warm["boards"] == sorted(MAP_IDS)
    assert len(warm["hexes"]) == len(MAP_IDS) and min(warm["hexes"]) > 0
    assert after(0) == {"places": 0, "boards": [], "hexes": []}
