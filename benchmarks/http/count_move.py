"""A POST move against the floor in instructions, not seconds: the ratio this benchmark prints
is the same run after run, whatever else the machine is doing, so a change of a few per cent
shows where timings (run.py, profile_move.py) drown it in noise.

The benchmark's app in process (profile_move.bench: the real service and the floor endpoint on a
private redis-server, through Flask's whole WSGI stack, without gunicorn or the network). Under
valgrind's callgrind, only the measured requests are counted: each move is posted from inside
operator.call, each floor request from inside functools.reduce, and callgrind collects only
inside those two C functions. What Redis does is not counted (its own process), nor is the
network and gunicorn's parsing, which a move and the floor pay alike.

    .venv/bin/python -m benchmarks.http.count_move [--games 2]

It runs itself again under valgrind (Debian's valgrind package; about two minutes for two games).
"""

from __future__ import annotations

import argparse
import functools
import operator
import os
import sys
from pathlib import Path

from benchmarks.http.callgrind import inclusive, installed, run_counted

INNER = "AOS_COUNT_MOVE_INNER"
TOGGLES = {"move": "_operator_call", "floor": "functools_reduce"}


def count_inside(games: int, counts: Path) -> None:
    """Under callgrind: the set-up uncounted, then each move and as many floor requests."""
    from benchmarks.http.profile_move import bench

    with bench(games) as ready:
        for _ in range(50):  # the floor's code paths warm, as the moves' are by the creates
            ready.post_floor()
        moves = ready.post_moves()
        for _ in ready.requests:
            operator.call(next, moves)
        for _ in ready.requests:
            functools.reduce(lambda _, __: ready.post_floor(), [None], None)
        counts.write_text(str(len(ready.requests)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2, help="whole games of moves to post")
    args = parser.parse_args(argv)
    if os.environ.get(INNER):
        count_inside(args.games, Path(os.environ[INNER]))
        return 0
    if not installed():
        print("needs valgrind (apt-get install valgrind)", file=sys.stderr)
        return 2
    print(f"posting {args.games} games' moves and as many floor requests under callgrind ...",
          flush=True)
    annotated, n = run_counted("benchmarks.http.count_move", ["--games", str(args.games)], INNER,
                               list(TOGGLES.values()))
    move, floor = (inclusive(annotated, name) / n for name in TOGGLES.values())
    print(f"{n} POST moves and {n} floor requests, in process (instructions of the Python "
          f"process; Redis's and the network's not counted)")
    print(f"  POST move   {move / 1e6:7.3f} M instructions")
    print(f"  floor       {floor / 1e6:7.3f} M instructions")
    print(f"  move / floor  {move / floor:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
