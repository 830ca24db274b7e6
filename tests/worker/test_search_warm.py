"""The search processes start warm: their fork server imported searches.PRELOAD, whose
search_warm played the engine's warm-up games and settled the collector (engine/warm.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[2]

_PROBE = """
import gc, json
from service.worker.searches import SearchPool
pool = SearchPool(1)
try:
    print(json.dumps({"threshold": pool.compute(gc.get_threshold),
                      "frozen": pool.compute(gc.get_freeze_count)}))
finally:
    pool.close()
"""


def search_process(games: str) -> dict:
    done = subprocess.run([sys.executable, "-c", _PROBE], cwd=ROOT, check=True, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "AOS_WARM_UP_GAMES": games})
    return orjson.loads(done.stdout)


def test_search_processes_start_warm_and_settled() -> None:
    warm = search_process("1")
    assert warm["threshold"] == [10_000, 10, 10]
    assert warm["frozen"] > 20_000


def test_no_warm_up_games_leave_the_search_processes_as_they_start() -> None:
    assert search_process("0") == {"threshold": [700, 10, 10], "frozen": 0}
