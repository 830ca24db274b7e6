"""Turn clocks: the `clock: {turn_seconds}` option of a game, and the deadline of each decision.

The clock is the service's option, not the rules': the engine never sees it. It lives in the
game's metadata (`meta["clock"]`), and the record carries it among its options so that a replayed
record gets the same clock.

Each decision's deadline is the time of the commit that made it + turn_seconds. That one number
is written three ways by the same commit: the log entry's `at` (the commit time, ms), the clock
set's score (unix seconds, for the worker) and the view's `deadline` (RFC 3339, ms). So the view
of any past version can be made again exactly from its log entry.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from service.engine.contract_types import Clock
from service.engine.layout import State

OPTION = "clock"
MIN_TURN_SECONDS = 1
MAX_TURN_SECONDS = 30 * 24 * 3600  # an idle game expires after 30 days anyway


def now_ms() -> int:
    return time.time_ns() // 1_000_000


# The last second rfc3339 wrote, and its text: the commits of one second share it.
_last_second: tuple[int, str] = (0, "1970-01-01T00:00:00")


def rfc3339(ms: int) -> str:
    """`2024-05-01T12:00:00.123Z`: RFC 3339, UTC, milliseconds."""
    global _last_second
    seconds, millis = divmod(ms, 1000)
    last = _last_second  # one read: another thread may replace it meanwhile, never half of it
    if last[0] != seconds:
        # time's strftime: half the cost of datetime's, and every log entry has a time.
        last = _last_second = (seconds, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)))
    return f"{last[1]}.{millis:03d}Z"


def parse_ms(text: str) -> int:
    """The milliseconds of an `rfc3339` time, exactly."""
    whole = datetime.strptime(text[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    return int(whole.timestamp()) * 1000 + int(text[20:23])


def split_options(options: dict | None) -> tuple[dict, dict | None]:
    """A game's options as sent: (the map options, for the engine; the clock or None)."""
    options = dict(options or {})
    clock = options.pop(OPTION, None)
    return options, clock


def with_clock(options: dict, clock: dict | None) -> dict:
    """The options a record shows: the map's, and the clock if the game has one."""
    return {**options, OPTION: public(clock)} if clock else options


def of_meta(meta: dict) -> dict | None:
    """The game's clock as its metadata holds it: {turn_seconds, created_ms}, or None."""
    return meta.get(OPTION)


def in_meta(clock: dict | None, created_ms: int) -> dict:
    """What the game's metadata keeps of its clock: the turn time and when the game began (the
    deadline of a decision at version 0 counts from it)."""
    return {} if not clock else {OPTION: {"turn_seconds": clock["turn_seconds"], "created_ms": created_ms}}


def public(clock: dict | None) -> Clock | None:
    return None if not clock else {"turn_seconds": clock["turn_seconds"]}


def deadline_ms(clock: dict | None, state: State, since_ms: int) -> int | None:
    """When the decision of the game in `state` runs out, if the game has a clock and someone
    must decide; `since_ms` is the commit time of the version (the game's creation for 0)."""
    if not clock or not state["queue"] or state["phase"] == "finished":
        return None
    return since_ms + clock["turn_seconds"] * 1000


def deadline_seconds(ms: int | None) -> float | None:
    """The clock set's score: unix seconds."""
    return None if ms is None else ms / 1000


def deadline_text(ms: int | None) -> str | None:
    return None if ms is None else rfc3339(ms)


def since_ms(clock: dict | None, last_entry: dict | None) -> int:
    """The commit time of a version: its log entry's `at`, or the game's creation for 0."""
    if last_entry is not None:
        return parse_ms(last_entry["at"])
    return clock["created_ms"] if clock else 0
