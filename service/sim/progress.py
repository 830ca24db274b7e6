"""The progress bar of the long runs (the arena, the action check), on stderr."""

from __future__ import annotations

import sys
import time

WIDTH = 30


def show(done: int, total: int, started: float, note: str = "") -> None:
    """Redraws the bar: `done` of `total` games since `started` (time.perf_counter), with the
    time left at the pace so far, and `note` (e.g. the failures) after the count."""
    filled = WIDTH * done // max(1, total)
    elapsed = time.perf_counter() - started
    eta = elapsed / done * (total - done) if done else 0.0
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (WIDTH - filled)}] {done}/{total} games"
                     f"{note}, {elapsed:.0f}s elapsed, ~{eta:.0f}s left ")
    sys.stderr.flush()
