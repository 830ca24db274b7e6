"""Where the worker's searches run: a few threads that do a search's reading and writing (the
store), each handing the search itself to a process of its own.

The search is CPU work for up to its budget: in a process apart it holds neither this process's
interpreter lock (the worker's job loop, its webhook deliveries and its /healthz go on at full
speed) nor, with the memory store, the API's (`python -m service` runs the jobs in a thread of
the API's process). The processes come from a fork server that has the engine and the search
loaded already, so a search starts in milliseconds. The threads bound how many searches run at
once (AOS_SEARCH_THREADS); there are as many processes.
"""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import os
import random
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from service.engine import game
from service.engine.layout import GivenMove, State
from service.sim import levels
from service.sim.search import Budget, search

log = logging.getLogger(__name__)

T = TypeVar("T")
# The fork server imports these once; search_warm warms the engine up there (and settles the
# collector), so every search process forked from it starts warm (engine/warm.py).
PRELOAD = ["service.engine.game", "service.sim.levels", "service.sim.search", "service.worker.searches",
           "service.worker.search_warm"]


def bot_move(state: State, seat: int, level: int, moves_made: int, time_ms: float) -> GivenMove:
    """The move a computer seat of `level` makes (service/sim/levels.py), at most `time_ms`."""
    return levels.choose(state, seat, game.legal_moves(state, seat), level, moves_made, time_ms=time_ms)


def hint_moves(state: State, seat: int, version: int, budget_ms: float,
               top: int) -> list[tuple[GivenMove, float, int]]:
    """The `top` moves of the search at `budget_ms`: (move, value, visits), best first. Seeded by
    the position, as a computer seat's search is."""
    rng = random.Random(f"{state['seed_commitment']}:{version}:{seat}:hint")
    analysis = search(state, seat, Budget(time_ms=budget_ms), rng, game.legal_moves(state, seat))
    return [(r.move, r.value, r.visits) for r in analysis.moves[:top]]


def _exit_with_parent() -> None:
    """A search process's first act: exit when the process that asked for it is gone. Without
    it a worker killed mid-search (SIGKILL: no shutdown) would leave its search processes, and
    the fork server they keep open, waiting forever for searches nobody will send."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(0)

    threading.Thread(target=watch, name="aos-search-parent", daemon=True).start()


def _context() -> Any:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


class SearchPool:
    """The worker's search threads and processes, shared by computer seats and hints."""

    def __init__(self, threads: int, *, processes: bool = True) -> None:
        self.threads = threads
        self.pool = ThreadPoolExecutor(threads, thread_name_prefix="aos-search")
        self.in_flight: set[Future] = set()
        self._lock = threading.Lock()
        self._processes = processes
        self._cpu: ProcessPoolExecutor | None = None

    def free(self) -> int:
        with self._lock:
            self.in_flight = {f for f in self.in_flight if not f.done()}
            return self.threads - len(self.in_flight)

    def submit(self, work: Callable[[], None]) -> None:
        """Runs `work` (a search's reading, searching and writing) in a search thread."""
        future = self.pool.submit(work)
        with self._lock:
            self.in_flight.add(future)

    def compute(self, function: Callable[..., T], *args: Any) -> T:
        """`function(*args)` in a search process (from a search thread: it waits for it)."""
        if not self._processes:
            return function(*args)
        for attempt in (1, 2):
            executor = self._executor()
            try:
                return executor.submit(function, *args).result()
            except BrokenProcessPool:
                # A process died (killed, out of memory): a new pool, and the search once more.
                with self._lock:
                    if self._cpu is executor:
                        self._cpu = None
                if attempt == 2:
                    raise
                log.warning("a search process died; starting new ones")
        raise AssertionError("unreachable")

    def _executor(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._cpu is None:
                self._cpu = ProcessPoolExecutor(self.threads, mp_context=_context(),
                                                initializer=_exit_with_parent)
            return self._cpu

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            cpu, self._cpu = self._cpu, None
        if cpu is not None:
            # A search cut off is taken again by a worker once its lease runs out.
            cpu.shutdown(wait=False, cancel_futures=True)
