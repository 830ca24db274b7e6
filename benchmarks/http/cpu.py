"""Where a load run's CPU went, by process: the service's workers, Redis and the load generator.

A run on two cores is bound by CPU time, so a request's throughput against the floor's is the
inverse of its CPU per request against the floor's, summed over every process that serves it:
this says which process a difference is in. CPU time, unlike a latency, does not grow when the
processes wait for a core.

Read from Linux's /proc for the workers (the children of gunicorn's master), from Redis's own
INFO for Redis, and from this process's reaped children (getrusage) for the load generator,
whose processes run() forks and joins. Elsewhere than on Linux there is no /proc: `snapshot`
returns None and the run prints no CPU.

Redis's time is also read by command (`commands`, from INFO commandstats): which of a request's
commands its Redis CPU went to, a script's own time and the commands it calls.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import redis

PROC = Path("/proc")


@dataclass(frozen=True)
class Cpu:
    """CPU seconds (user and system) so far of each part, summed over its processes."""

    workers: float
    redis: float
    load: float

    def __sub__(self, other: Cpu) -> Cpu:
        return Cpu(self.workers - other.workers, self.redis - other.redis, self.load - other.load)

    def __add__(self, other: Cpu) -> Cpu:
        return Cpu(self.workers + other.workers, self.redis + other.redis, self.load + other.load)

    def scaled(self, factor: float) -> Cpu:
        return Cpu(self.workers * factor, self.redis * factor, self.load * factor)

    def per_request_us(self, requests: int) -> Cpu:
        """Each part's CPU per request, in microseconds."""
        return self.scaled(1e6 / max(requests, 1))

    @property
    def total(self) -> float:
        return self.workers + self.redis + self.load


def process_seconds(pid: int) -> float:
    """The user and system CPU seconds of a live process (0.0 if it is gone)."""
    try:
        fields = (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return 0.0
    # After the command's closing parenthesis: state is field 0, utime 11 and stime 12.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    """The pids of a process's children, found by their parent pid."""
    found = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
            continue
        if ppid == pid:
            found.append(int(entry.name))
    return found


def snapshot(master: int, store: redis.Redis) -> Cpu | None:
    """The CPU so far of gunicorn's workers (the children of `master`, and the master), of the
    Redis server `store` talks to, and of this process's children that have ended (the load
    generator's processes, once joined). A worker that ends between two snapshots takes its
    time with it; the benchmark's workers live the whole run."""
    if not (PROC / "self" / "stat").exists():
        return None
    workers = sum(process_seconds(pid) for pid in [master, *children(master)])
    info = store.info("cpu")
    load = resource.getrusage(resource.RUSAGE_CHILDREN)
    return Cpu(workers, float(info["used_cpu_user"]) + float(info["used_cpu_sys"]),
               load.ru_utime + load.ru_stime)


# The snapshots' own: not any request's.
_OWN_COMMANDS = frozenset({"info"})
Commands = Mapping[str, tuple[int, int]]


def commands(store: redis.Redis) -> dict[str, tuple[int, int]]:
    """Redis's calls and microseconds so far, by command (INFO commandstats). A script's time
    (`evalsha`) includes that of the commands it calls, which are counted under their own names
    too."""
    return {name.removeprefix("cmdstat_"): (int(stats["calls"]), int(stats["usec"]))
            for name, stats in store.info("commandstats").items()}


def command_split(before: Commands, after: Commands, requests: int) -> list[tuple[str, float, float]]:
    """The commands Redis ran between two `commands` readings: (name, calls a request, µs a
    request), the dearest first."""
    split, per = [], max(requests, 1)
    for name, (calls, usec) in after.items():
        calls_before, usec_before = before.get(name, (0, 0))
        if calls > calls_before and name not in _OWN_COMMANDS:
            split.append((name, (calls - calls_before) / per, (usec - usec_before) / per))
    return sorted(split, key=lambda row: -row[2])
