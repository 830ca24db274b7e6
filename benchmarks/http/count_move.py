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
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

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


def inclusive(annotated: str, function: str) -> int:
    for line in annotated.splitlines():
        if re.search(rf":{function} \[", line):
            return int(line.split()[0].replace(",", ""))
    raise RuntimeError(f"callgrind counted nothing in {function}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2, help="whole games of moves to post")
    args = parser.parse_args(argv)
    if os.environ.get(INNER):
        count_inside(args.games, Path(os.environ[INNER]))
        return 0
    if shutil.which("valgrind") is None or shutil.which("callgrind_annotate") is None:
        print("needs valgrind (apt-get install valgrind)", file=sys.stderr)
        return 2
    workdir = Path(tempfile.mkdtemp(prefix="aos-count-"))
    try:
        out, counts = workdir / "callgrind.out", workdir / "count"
        toggles = [f"--toggle-collect={name}" for name in TOGGLES.values()]
        print(f"posting {args.games} games' moves and as many floor requests under callgrind ...",
              flush=True)
        subprocess.run(
            ["valgrind", "--tool=callgrind", "--collect-atstart=no", *toggles,
             f"--callgrind-out-file={out}", sys.executable, "-m", "benchmarks.http.count_move",
             "--games", str(args.games)],
            env={**os.environ, INNER: str(counts)}, check=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        annotated = subprocess.run(["callgrind_annotate", "--inclusive=yes", str(out)],
                                   capture_output=True, text=True, check=True).stdout
        n = int(counts.read_text())
        move, floor = (inclusive(annotated, name) / n for name in TOGGLES.values())
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"{n} POST moves and {n} floor requests, in process (instructions of the Python "
          f"process; Redis's and the network's not counted)")
    print(f"  POST move   {move / 1e6:7.3f} M instructions")
    print(f"  floor       {floor / 1e6:7.3f} M instructions")
    print(f"  move / floor  {move / floor:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
