"""A cold build-turn GET legal-moves against a GET view, in instructions, not seconds: issue 27's
"a cold build-turn listing costs at most twice a view, as the service sees it", counted so that
the figure is the same whatever else the machine is doing.

The HTTP benchmark's "cold listings" (run.py): every build turn of its three games, each a game
imported from its record up to that turn, so that nobody has listed it and its legal moves are
worked out on the request. Its "GET view" is the view of its mid-game game (round 3 or later, a
build turn). Both here through the benchmark's app in process (profile_move.bench: the real
service on a private redis-server, Flask's whole WSGI stack, without gunicorn or the network),
warmed up as a worker is (create_app's warm_up). The games are played in another process
(run.played_apart), so that this one, like a fresh worker, has met none of their surroundings
before it imports and lists them; --played lists every build turn of them first, as a worker
that served the HTTP benchmark's client play of the same games has. run.py's cold stream lands
on either kind of worker, by which of its three takes the connection. Under valgrind's
callgrind only the measured requests are counted: each listing is asked from inside
operator.call, each view from inside functools.reduce, and callgrind collects only inside those
two C functions (count_move.py's pattern). The set-up runs uninstrumented
(--instr-atstart=no; callgrind_control switches the instrumentation on before the measured
requests), which keeps the imports' replays quick.
With --split, the listing's body (legal.body: the engine's listing and its JSON) is worked out
from inside itertools.starmap too, whose inclusive count says how much of a request it is, and
Flask's full_dispatch_request from inside itertools.dropwhile for a listing, takewhile for a
view: what the service's access log times (its duration runs from a before_request hook to an
after_request one), without the WSGI layers around it and the test client's work, which a view
pays as much as a listing (run.py's "service" ratio is of those durations). The wrappers add a
few thousand instructions to each request.

    .venv/bin/python -m benchmarks.http.count_cold [--seeds 3] [--split] [--played]

It runs itself again under valgrind (Debian's valgrind package; a few minutes).
"""

from __future__ import annotations

import argparse
import copy
import functools
import itertools
import operator
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.http.callgrind import inclusive, installed, run_counted

INNER = "AOS_COUNT_COLD_INNER"
TOGGLES = {"listing": "_operator_call", "view": "functools_reduce"}
BODY = "starmap_next"  # legal.body's, with --split
DISPATCH = {"listing": "dropwhile_next", "view": "takewhile_next"}  # full_dispatch_request's


def count_inside(seeds: int, counts: Path, split: bool, played: bool) -> None:
    """Under callgrind: the set-up uninstrumented, then each cold listing and as many views."""
    from benchmarks.http.profile_move import bench
    from benchmarks.http.run import played_apart
    from service.engine import game
    from service.referee import legal

    if split:
        import flask

        body = legal.body
        legal.body = lambda *args: next(itertools.starmap(body, [args]))  # type: ignore[assignment]
        dispatch = flask.Flask.full_dispatch_request

        def counted(app: flask.Flask) -> flask.Response:
            out: list = []
            inside = (itertools.dropwhile if "/legal-moves" in flask.request.path
                      else itertools.takewhile)
            next(inside(lambda _: out.append(dispatch(app)), [0]), None)
            return out[0]

        flask.Flask.full_dispatch_request = counted  # type: ignore[method-assign]

    # Played in another process: this one, like a server's worker, has met none of the games'
    # surroundings when it lists them cold (unless --played lists them first).
    scripts = played_apart([f"bench-{n}" for n in range(seeds)])
    with bench(1, scripts) as ready:
        http = ready.http

        def imported(seed: str, upto: int) -> str:
            played = scripts[seed][:upto]
            record = {**game.record_header(played[0][0]), "seed": seed,
                      "moves": [{"seat": seat, "move": move} for _, seat, move in played]}
            created = http.post("/v1/games", json={"record": record})
            assert created.status_code == 201, created.data
            return created.get_json()["game_id"]

        # run.py's mid-game game: bench-0 at its first build turn of round 3 or later with a build.
        mid_script = scripts["bench-0"]
        cut = next(i for i, (before, seat, _) in enumerate(mid_script)
                   if before["phase"] == "build" and before["round"] >= 3
                   and any(m["type"] == "build" for m in game.legal_moves(before, seat)))
        mid_id, mid_seat = imported("bench-0", cut), mid_script[cut][1]
        view_path = f"/v1/games/{mid_id}"
        cold = [(f"/v1/games/{imported(seed, i)}/legal-moves?seat={seat}")
                for seed, script in scripts.items()
                for i, (before, seat, _) in enumerate(script) if before["phase"] == "build"]

        def get(path: str) -> None:
            response = http.get(path)
            assert response.status_code == 200, response.data

        # The two paths warm, as a server's are after its first requests (another seat's
        # listing: no build listing, nothing of the cold turns' kept).
        for _ in range(20):
            get(view_path)
            get(f"/v1/games/{mid_id}/legal-moves?seat={(mid_seat + 1) % 4}")
        if played:
            # As run.py's worker that served the client's play of these games (listing each
            # turn ahead) has them: every situation of their hexes kept (words.ListedBuilds).
            for script in scripts.values():
                for i, (before, seat, _) in enumerate(script):
                    if before["phase"] == "build":
                        legal.body(copy.deepcopy(before), seat, i)
        subprocess.run(["callgrind_control", "--instr=on", str(os.getpid())], check=True,
                       stdout=subprocess.DEVNULL)
        for path in cold:
            operator.call(get, path)
        for _ in cold:
            functools.reduce(lambda _, __: get(view_path), [None], None)
        counts.write_text(str(len(cold)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3,
                        help="games whose build turns are listed cold (run.py's: 3)")
    parser.add_argument("--split", action="store_true",
                        help="also count the listing's body (legal.body) apart")
    parser.add_argument("--played", action="store_true",
                        help="the process has listed the same games' build turns before (as a "
                             "worker that served run.py's client play has), not only warmed up")
    parser.add_argument("--keep", type=Path, default=None,
                        help="keep callgrind's output here (for callgrind_annotate)")
    args = parser.parse_args(argv)
    if os.environ.get(INNER):
        count_inside(args.seeds, Path(os.environ[INNER]), args.split, args.played)
        return 0
    if not installed():
        print("needs valgrind (apt-get install valgrind)", file=sys.stderr)
        return 2
    print(f"listing {args.seeds} games' build turns cold and as many views under "
          f"callgrind ...", flush=True)
    annotated, n = run_counted(
        "benchmarks.http.count_cold", ["--seeds", str(args.seeds), *(["--split"] if args.split else []),
                                       *(["--played"] if args.played else [])],
        INNER, list(TOGGLES.values()), instrument_from_start=False, keep=args.keep)
    listing, view = (inclusive(annotated, name) / n for name in TOGGLES.values())
    body = inclusive(annotated, BODY) / n if args.split else None
    dispatched = ({name: inclusive(annotated, f) / n for name, f in DISPATCH.items()}
                  if args.split else None)
    print(f"{n} cold build-turn GET legal-moves and {n} GET view, in process (instructions of "
          f"the Python process; Redis's and the network's not counted)")
    print(f"  GET legal-moves, cold  {listing / 1e6:7.3f} M instructions")
    if body is not None:
        print(f"    of which legal.body  {body / 1e6:7.3f} M (the listing and its JSON)")
    print(f"  GET view               {view / 1e6:7.3f} M instructions")
    print(f"  listing / view  {listing / view:.3f}")
    if dispatched is not None:
        print(f"  inside Flask's full_dispatch_request (what the access log times): "
              f"GET legal-moves {dispatched['listing'] / 1e6:.3f} M, GET view "
              f"{dispatched['view'] / 1e6:.3f} M, {dispatched['listing'] / dispatched['view']:.3f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
