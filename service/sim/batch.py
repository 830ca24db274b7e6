"""Many games at once, for the long runs (the arena, the action check): on the machine's
cores, with a progress bar on stderr."""

from __future__ import annotations

import multiprocessing
import sys
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")
WIDTH = 30


def run_all(work: Callable[[T], R], items: Sequence[T], workers: int, show_progress: bool = True,
            note: Callable[[list[R]], str] | None = None) -> list[R]:
    """`work` of every item, in `workers` forked processes (in this one for 1), in the order
    they finish; the bar says, after its count, `note` of the results so far."""
    started = time.perf_counter()
    results: list[R] = []
    pool = multiprocessing.get_context("fork").Pool(workers) if workers > 1 else None
    try:
        for result in pool.imap_unordered(work, items) if pool is not None else map(work, items):
            results.append(result)
            if show_progress:
                show(len(results), len(items), started, note(results) if note else "")
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    if show_progress:
        sys.stderr.write("\n")
    return results


def show(done: int, total: int, started: float, note: str = "") -> None:
    """Redraws the bar: `done` of `total` games since `started` (time.perf_counter), with the
    time left at the pace so far, and `note` after the count."""
    filled = WIDTH * done // max(1, total)
    elapsed = time.perf_counter() - started
    eta = elapsed / done * (total - done) if done else 0.0
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (WIDTH - filled)}] {done}/{total} games"
                     f"{note}, {elapsed:.0f}s elapsed, ~{eta:.0f}s left ")
    sys.stderr.flush()
