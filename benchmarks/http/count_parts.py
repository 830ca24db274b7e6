"""Where a POST move's instructions go, part by part: count_move's run with the move's parts
(the store's load and commit, the judging, the log entry, the view, the authentication, the
answer's body) each counted on its own under callgrind. Each part is called from inside its own
rarely used C function (itertools' starmap, takewhile, ...), and callgrind collects only inside
those, so the parts must not nest.

    .venv/bin/python -m benchmarks.http.count_parts [--games 1] [--view | --floor]

--floor counts the floor's two store calls instead (its HMGET and its compare-and-set script,
bench_app.py), so that the move's load and commit can be read against what the floor pays for
the same round trips: the rest of the move's excess over the floor is its own work.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.http.callgrind import inclusive, installed, run_counted

INNER = "AOS_COUNT_PARTS_INNER"


def _through(kind: str, f: Callable) -> Callable:
    """`f`, called from inside the C function that `kind` names."""

    @functools.wraps(f)
    def counted(*args: Any, **kwargs: Any) -> Any:
        box: list = []
        run = lambda *_: box.append(f(*args, **kwargs))  # noqa: E731
        if kind == "starmap_next":
            next(itertools.starmap(run, [()]))
        elif kind == "takewhile_next":
            next(itertools.takewhile(lambda _: run() or True, [0]))
        elif kind == "dropwhile_next":
            next(itertools.dropwhile(run, [0]))
        elif kind == "filterfalse_next":
            next(itertools.filterfalse(run, [0]))
        elif kind == "accumulate_next":
            list(itertools.accumulate([0, 0], run))
        return box[0]

    return counted


def _count_parts(view: bool) -> None:
    """The parts of NAMES (VIEW_NAMES with `view`), each wrapped to be called from inside its C
    function."""
    if view:
        from service.engine import view as views

        board = views._BoardJson
        board.tracks_and_links = _through("starmap_next", board.tracks_and_links)  # type: ignore[method-assign]
        board.cities_and_towns = _through("dropwhile_next", board.cities_and_towns)  # type: ignore[method-assign]
        views._game_view = _through("filterfalse_next", views._game_view)
        return
    from service.referee import games, timeline
    from service.store.redis_store import RedisStore

    RedisStore.load = _through("starmap_next", RedisStore.load)  # type: ignore[method-assign]
    RedisStore.commit = _through("accumulate_next", RedisStore.commit)  # type: ignore[method-assign]
    timeline.apply_entry = _through("takewhile_next", timeline.apply_entry)
    games.log_entry = _through("dropwhile_next", games.log_entry)
    games.clocked_view_bytes = _through("filterfalse_next", games.clocked_view_bytes)


NAMES = {
    "load (RedisStore.load)": "starmap_next",
    "judging (timeline.apply_entry)": "takewhile_next",
    "log entry (games.log_entry)": "dropwhile_next",
    "view (games.clocked_view_bytes)": "filterfalse_next",
    "commit (RedisStore.commit)": "accumulate_next",
}


FLOOR_NAMES = {
    "floor: read (HMGET)": "starmap_next",
    "floor: compare-and-set (its script)": "accumulate_next",
}


def _count_floor() -> None:
    """The floor's HMGET and its script's call, each wrapped to be called from inside its C
    function (the move's store calls go through neither)."""
    import redis
    from redis.commands.core import Script

    redis.Redis.hmget = _through("starmap_next", redis.Redis.hmget)  # type: ignore[method-assign]
    Script.__call__ = _through("accumulate_next", Script.__call__)  # type: ignore[method-assign]


VIEW_NAMES = {
    "view: tracks and links (tracks_and_links)": "starmap_next",
    "view: cities and towns (cities_and_towns)": "dropwhile_next",
    "view: the rest (view._game_view)": "filterfalse_next",
}


def count_inside(games: int, counts: Path, view: bool, floor: bool) -> None:
    from benchmarks.http.profile_move import bench

    with bench(games) as ready:
        if floor:
            _count_floor()
            for _ in ready.requests:
                ready.post_floor()
        else:
            _count_parts(view)
            for _ in ready.post_moves():
                pass
        counts.write_text(str(len(ready.requests)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--view", action="store_true", help="the view's parts instead")
    which.add_argument("--floor", action="store_true",
                       help="the floor's store calls instead, as many requests as moves")
    args = parser.parse_args(argv)
    if os.environ.get(INNER):
        count_inside(args.games, Path(os.environ[INNER]), args.view, args.floor)
        return 0
    if not installed():
        print("needs valgrind (apt-get install valgrind)", file=sys.stderr)
        return 2
    names = VIEW_NAMES if args.view else FLOOR_NAMES if args.floor else NAMES
    flags = ["--view"] if args.view else ["--floor"] if args.floor else []
    annotated, n = run_counted("benchmarks.http.count_parts", ["--games", str(args.games), *flags],
                               INNER, list(names.values()))
    for name, function in names.items():
        try:
            count = inclusive(annotated, function) / n
        except RuntimeError:
            count = 0
        print(f"  {name:34} {count / 1e3:8.1f} k instructions {'a request' if args.floor else 'a move'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
