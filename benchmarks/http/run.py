"""HTTP load benchmark: GET view, GET legal-moves (mid-game build turn) and POST move, each as
throughput and p50/p99 and as a ratio to the floor measured in the same run (a bare endpoint
doing the same Redis read-modify-write of a state of the same size; see bench_app.py), and each
one's CPU per request in the service's workers, in Redis and in the load generator (cpu.py),
and Redis's time by command: where a difference in throughput comes from.

Then, over one connection, a client that plays whole games as a real one does: it asks each
turn's legal moves once, right after the move that made the turn, then posts its move. Its
legal-moves are compared with a GET view, and its POST move with the floor, both over one
connection, as ratios of p50s from the same run. Last, the legal moves of build turns that
nobody has listed (games imported from their records up to that turn): what a first reader
pays when nothing was worked out ahead, against the view of the same game asked beside it
(before it in every other pair, after it in the rest: whichever reads a game first pays for
its first read).

    .venv/bin/python -m benchmarks.http.run [--worker-class gevent] [--connections 16] [--seconds 10]

Starts its own redis-server (no persistence) and gunicorn on free ports, with the deploy's
worker model by default (deploy/gunicorn.conf.py: gevent, a worker a core and one more), and
the engine's build listing compiled as the deploys have it (built first if need be: built_engine;
AOS_NATIVE=off measures the plain engine).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import itertools
import math
import multiprocessing
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

from load import Result, run  # noqa: E402

from benchmarks.http import cpu  # noqa: E402
from benchmarks.http.private_redis import private_redis  # noqa: E402
from service.engine import game, native  # noqa: E402
from service.engine.playout import play_random_game  # noqa: E402

HOST = "127.0.0.1"
PLAYERS = 4
PLAY_SECONDS = 120  # a bound on the one-connection runs that play to their end (~10 s each)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def wait_for(url: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} never answered")


def call(port: int, method: str, path: str, body: object = None, token: str | None = None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else orjson.dumps(body)
    request = urllib.request.Request(f"http://{HOST}:{port}{path}", data=data, method=method, headers=headers)
    with urllib.request.urlopen(request, timeout=30) as response:
        return orjson.loads(response.read())


def played_game(seed: str) -> list[tuple[dict, int, dict]]:
    """A whole game of the engine's random player: (state before, seat, move) per move."""
    moves: list[tuple[dict, int, dict]] = []
    play_random_game(
        "rust_belt",
        PLAYERS,
        seed,
        random.Random(seed),
        on_move=lambda before, seat, move, *_: moves.append((before, seat, move)),
    )
    return moves


def played_apart(seeds: Sequence[str]) -> dict[str, list[tuple[dict, int, dict]]]:
    """played_game of each seed, worked out in a fresh interpreter (multiprocessing's spawn),
    so that the process measuring cold listings keeps none of the surroundings and situations
    that playing the games fills (build_shapes, words): its first listings of them pay what a
    fresh worker's pay."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return dict(zip(seeds, pool.map(played_game, seeds), strict=True))


def imported_game(port: int, seed: str, played: list[tuple[dict, int, dict]]) -> dict:
    """A game made from its record: the game of `seed` after the moves `played`."""
    record = {**game.record_header(played[0][0]), "seed": seed,
              "moves": [{"seat": seat, "move": move} for _, seat, move in played]}
    return call(port, "POST", "/v1/games", {"record": record})


def built_engine(served: Path) -> str:
    """The native.status of the engine of the tree `served`, once its build listing is compiled
    as the service's deploys have it (scripts/bootstrap.sh, the image) if it is not yet and can
    be: a set-up that made the venv its own way measures the service as deployed all the same.
    AOS_NATIVE=off measures the plain engine."""
    engine = served / "service" / "engine"
    script = served / "scripts" / "build_native.py"
    if native.status(engine) not in ("compiled", "off") and script.exists():
        print("compiling the engine's build listing (scripts/build_native.py) ...", flush=True)
        done = subprocess.run([sys.executable, str(script), "--if-stale"], capture_output=True,
                              text=True, env={**os.environ, "PYTHONPATH": str(served)})
        if done.returncode != 0:
            print(f"  not compiled: {(done.stderr.strip().splitlines() or ['?'])[-1]}", flush=True)
    return native.status(engine)


# More moves a second than any server this runs on posts: the games a move run makes ready.
MOVES_PER_SECOND_BOUND = 5000


def games_enough(seconds: float, connections: int, moves_per_game: int) -> int:
    """Whole games a connection needs so as not to run out of moves within `seconds`, when all
    `connections` together post at most MOVES_PER_SECOND_BOUND moves a second."""
    per_connection = seconds * MOVES_PER_SECOND_BOUND / connections
    return math.ceil(per_connection / moves_per_game) + 1


def create_game(port: int, seed: str) -> dict:
    body = {"map": "rust_belt", "players": [{"name": f"P{i}"} for i in range(PLAYERS)]}
    return call(port, "POST", "/v1/games", {**body, "seed": seed})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker-class", choices=("gevent", "sync"), default="gevent",
                        help="gevent: the deploy default (deploy/gunicorn.conf.py)")
    parser.add_argument("--workers", type=int, default=None,
                        help="default: the deploy's for gevent (a core each and one more), "
                             "2 a core and one more for sync")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--processes", type=int, default=2, help="load-generator processes")
    parser.add_argument("--service-tree", default=None,
                        help="serve `service` from this directory instead (e.g. an older "
                             "revision: git archive REV service | tar -x -C DIR)")
    args = parser.parse_args(argv)
    cores = os.cpu_count() or 1
    if args.workers is None:
        args.workers = cores + 1 if args.worker_class == "gevent" else 2 * cores + 1

    print("preparing games with the engine's random player ...", flush=True)
    seeds = [f"bench-{n}" for n in range(3)]
    scripts = {seed: played_game(seed) for seed in seeds}
    mid_seed = seeds[0]
    cut = next(
        i
        for i, (before, seat, _) in enumerate(scripts[mid_seed])
        if before["phase"] == "build"
        and before["round"] >= 3
        and any(m["type"] == "build" for m in game.legal_moves(before, seat))
    )
    mid_state, mid_seat, _ = scripts[mid_seed][cut]

    workdir = Path(tempfile.mkdtemp(prefix="aos-bench-"))
    redis_port, api_port = free_port(), free_port()
    # The rate limits are off: the run creates ~100 games and plays them flat out from one address,
    # which is what they are there to stop.
    env = {**os.environ, "REDIS_URL": f"redis://{HOST}:{redis_port}/0", "AOS_RATE_LIMITS": "off",
           # All its load comes from one address: no caps per address (service/admission.py).
           "AOS_MAX_REQUESTS_PER_ADDRESS": "100000", "AOS_MAX_WAITS_PER_ADDRESS": "100000"}
    print("limits off for the benchmark's own load: AOS_RATE_LIMITS=off", flush=True)
    # Always named first: gunicorn runs from benchmarks/http, and without it `service` would be
    # whatever tree the virtualenv's editable install points at, not necessarily this one.
    served = Path(args.service_tree or HERE.parents[1]).resolve()
    env["PYTHONPATH"] = os.pathsep.join([str(served), env.get("PYTHONPATH", "")])
    engine = built_engine(served)
    print(f"serving the service of {served}; its engine "
          f"{'compiled by mypyc' if engine == 'compiled' else f'as plain Python ({engine})'}",
          flush=True)
    api_proc = None
    stack = contextlib.ExitStack()
    try:
        r = stack.enter_context(private_redis(HOST, redis_port, str(workdir)))
        api_proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "--workers",
                str(args.workers),
                "--worker-class",
                f"service.serving.{args.worker_class.capitalize()}Worker",
                "--bind",
                f"{HOST}:{api_port}",
                "--chdir",
                str(HERE),
                "--log-level",
                "warning",
                "bench_app:create_bench_app()",
            ],
            env=env,
            # The service logs a JSON line per request, as in production (so every endpoint and
            # the floor pay for it alike); the lines go to a file, not over the figures.
            stdout=(workdir / "service.log").open("wb"),
            stderr=subprocess.STDOUT,
            # `python -m` puts its working directory first on sys.path, before PYTHONPATH: run
            # from the served tree, or a run from a checkout serves the checkout's `service`.
            cwd=served,
        )
        wait_for(f"http://{HOST}:{api_port}/v1/health", seconds=180)  # a loaded machine: warm-ups

        # The mid-game game, at a build turn of round 3 or later.
        mid = create_game(api_port, mid_seed)
        tokens = [s["token"] for s in mid["seats"]]
        for _, seat, move in scripts[mid_seed][:cut]:
            call(api_port, "POST", f"/v1/games/{mid['game_id']}/moves", move, tokens[seat])
        view = call(api_port, "GET", f"/v1/games/{mid['game_id']}")
        assert view["phase"] == "build" and view["active_seat"] == mid_seat
        state_bytes = orjson.dumps(mid_state)
        view_bytes = orjson.dumps(view)
        legal = call(api_port, "GET", f"/v1/games/{mid['game_id']}/legal-moves?seat={mid_seat}")
        floor_blob = orjson.dumps({"state": mid_state, "view": view})
        for i in range(args.connections):
            r.hset(f"bench:floor:{{{i}}}", mapping={"version": 0, "state": floor_blob})
        print(
            f"mid-game state: round {view['round']}, {view['phase']} turn of seat {mid_seat}, "
            f"{len(view['board']['links'])} links, {len(legal['moves'])} legal moves; "
            f"state {len(state_bytes)} B + view {len(view_bytes)} B; floor state "
            f"{len(floor_blob)} B",
            flush=True,
        )

        # Games for the move run: each connection plays whole games' moves in order, and has
        # enough of them for the whole run (a connection that runs out stops, and the run's
        # req/s with it: the load, not the server).
        per_connection = games_enough(args.seconds, args.connections,
                                      min(len(script) for script in scripts.values()))
        move_games: dict[int, list[tuple[dict, list]]] = {}
        seed_cycle = itertools.cycle(seeds)
        for i in range(args.connections):
            move_games[i] = []
            for _ in range(per_connection):
                seed = next(seed_cycle)
                move_games[i].append((create_game(api_port, seed), scripts[seed]))

        def tagged(tag: str | None):
            """Headers naming each request `<tag>-<n>` (for access_by_tag), or none."""
            numbers = itertools.count()
            return lambda: {"X-Request-Id": f"{tag}-{next(numbers)}"} if tag else {}

        def floor_plan(i: int, tag: str | None = None):
            headers = tagged(tag)
            return lambda last: ("POST", f"/bench/floor/{i}", b"", headers())

        def view_plan(i: int, tag: str | None = None):
            headers = tagged(tag)
            return lambda last: ("GET", f"/v1/games/{mid['game_id']}", None, headers())

        legal_path = f"/v1/games/{mid['game_id']}/legal-moves?seat={mid_seat}"

        def legal_plan(i: int):
            return lambda last: ("GET", legal_path, None, {})

        def move_plan(i: int):
            requests = (
                (
                    "POST",
                    f"/v1/games/{created['game_id']}/moves",
                    orjson.dumps(move),
                    {
                        "Content-Type": "application/json",
                        "Authorization": f"Bearer {created['seats'][seat]['token']}",
                    },
                )
                for created, script in move_games[i]
                for _, seat, move in script
            )
            return lambda last: next(requests, None)

        # Games for the one-connection client: whole games, legal moves asked once per turn.
        client_games = [(create_game(api_port, seed), scripts[seed]) for seed in seeds]
        # Games at a build turn that nobody has listed: each imported from its record up to that
        # turn, so its legal moves are worked out on the request, as a first reader's are.
        cold_games = [(imported_game(api_port, seed, scripts[seed][:i]), seat)
                      for seed in seeds
                      for i, (before, seat, _) in enumerate(scripts[seed])
                      if before["phase"] == "build"]

        def cold_plan(i: int):
            numbers = itertools.count()

            def pair(n: int, created: dict, seat: int) -> list[tuple]:
                listing = ("GET", f"/v1/games/{created['game_id']}/legal-moves?seat={seat}", None,
                           {"X-Request-Id": f"cold-{next(numbers)}"},
                           "legal-moves, build turn, cold")
                # The baseline in the same stream of requests: that game's view. The first of
                # the two to read a game nobody has read since its import pays for it (Redis's
                # and the worker's caches: some 10-20 µs of the service's time, a tenth of the
                # ratio), so each goes first in every other pair.
                view = ("GET", f"/v1/games/{created['game_id']}", None,
                        {"X-Request-Id": f"coldview-{next(numbers)}"}, "GET view, among cold")
                return [listing, view] if n % 2 == 0 else [view, listing]

            requests = iter([request for n, (created, seat) in enumerate(cold_games)
                             for request in pair(n, created, seat)])
            return lambda last: next(requests, None)

        def client_plan(i: int):
            # Each request's X-Request-Id names its label, so that the service's own time for
            # it can be read back from its access log (access_by_tag).
            numbers = itertools.count()
            requests = (
                request
                for created, script in client_games
                for before, seat, move in script
                for request in (
                    ("GET", f"/v1/games/{created['game_id']}/legal-moves?seat={seat}", None,
                     {"X-Request-Id": f"{'build' if before['phase'] == 'build' else 'other'}-"
                                      f"{next(numbers)}"},
                     "legal-moves, build turn" if before["phase"] == "build" else
                     "legal-moves, other turn"),
                    # The baselines in the same stream of requests, each turn: the game's view
                    # and the floor, so that each ratio compares requests made alike (a loop of
                    # one identical request finds every cache warm for it).
                    ("GET", f"/v1/games/{created['game_id']}", None,
                     {"X-Request-Id": f"playview-{next(numbers)}"}, "GET view, in play"),
                    ("POST", "/bench/floor/0", b"",
                     {"X-Request-Id": f"playfloor-{next(numbers)}"}, "floor, in play"),
                    ("POST", f"/v1/games/{created['game_id']}/moves", orjson.dumps(move),
                     {"Content-Type": "application/json", "X-Request-Id": f"move-{next(numbers)}",
                      "Authorization": f"Bearer {created['seats'][seat]['token']}"}, "POST move"),
                )
            )
            return lambda last: next(requests, None)

        results: list[Result] = []
        cpus: list[cpu.Cpu | None] = []  # each run's CPU by process (cpu.py), None without /proc
        commands: list[list[tuple[str, float, float]]] = []  # each run's Redis time by command
        for name, factory in (
            ("floor (Redis RMW)", floor_plan),
            ("GET view", view_plan),
            ("GET legal-moves", legal_plan),
            ("POST move", move_plan),
            ("floor (Redis RMW)", floor_plan),
        ):
            before, commands_before = cpu.snapshot(api_proc.pid, r), cpu.commands(r)
            result = run(
                name,
                HOST,
                api_port,
                factory,
                connections=args.connections,
                seconds=args.seconds,
                processes=args.processes,
            )
            after, commands_after = cpu.snapshot(api_proc.pid, r), cpu.commands(r)
            results.append(result)
            cpus.append(None if before is None or after is None else after - before)
            commands.append(cpu.command_split(commands_before, commands_after, result.requests))
            print(
                f"  {name:<20} {result.rps:8.0f} req/s  p50 {result.p50_ms:6.1f} ms  "
                f"p99 {result.p99_ms:6.1f} ms  statuses {result.statuses}",
                flush=True,
            )
            if result.ran_dry:
                print(f"  warning: {result.ran_dry} of {args.connections} connections ran out of "
                      f"requests before {args.seconds:.0f} s: {name}'s req/s is too low",
                      flush=True)
        one: dict[str, Result] = {}
        floor_tagged = functools.partial(floor_plan, tag="floor")
        for name, factory, whole in (("floor (Redis RMW)", floor_tagged, False),
                                     ("GET view", functools.partial(view_plan, tag="view"), False),
                                     ("client play", client_plan, True),
                                     ("cold listings", cold_plan, True),
                                     ("floor again", floor_tagged, False)):
            # The client's games and the cold turns are played to their end, however long.
            one[name] = run(name, HOST, api_port, factory, connections=1,
                            seconds=PLAY_SECONDS if whole else args.seconds, processes=1)
            rate = (f"{one[name].requests:6d} req  " if whole
                    else f"{one[name].rps:6.0f} req/s")
            print(f"  1 connection: {name:<18} {rate}  "
                  f"p50 {one[name].p50_ms:5.2f} ms  p99 {one[name].p99_ms:5.2f} ms  "
                  f"statuses {one[name].statuses}", flush=True)
        api_proc.terminate()
        api_proc.wait(30)
        logged = access_by_tag(workdir / "service.log")
        # The service's own duration of each, and the workers (pids) that served them.
        server = {tag: [e["duration_ms"] for e in entries] for tag, entries in logged.items()}
        served_by = {tag: {e["pid"] for e in entries if "pid" in e} for tag, entries in logged.items()}
    finally:
        if api_proc is not None and api_proc.poll() is None:
            api_proc.terminate()
            api_proc.wait(30)
        stack.close()
        shutil.rmtree(workdir, ignore_errors=True)

    print(f"\nmachine load (1, 5, 15 min): {' '.join(f'{x:.1f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} cores: compare the ratios, not the absolute figures")
    floor = (results[0].rps + results[-1].rps) / 2
    print(
        f"\n{args.workers} gunicorn {args.worker_class} workers, {args.connections} connections, "
        f"{args.seconds:.0f} s each; floor = mean of the two floor runs = {floor:.0f} req/s"
    )
    print(f"{'endpoint':<20} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'vs floor':>9}")
    for result in results[1:-1]:
        print(
            f"{result.name:<20} {result.rps:8.0f} {result.p50_ms:8.1f} {result.p99_ms:8.1f} "
            f"{result.rps / floor:8.0%}"
        )
    print_cpu(results, cpus)
    print_commands(results, commands)
    play = one["client play"]
    play.labelled.update(one["cold listings"].labelled)
    floor_one = (one["floor (Redis RMW)"].p50_ms + one["floor again"].p50_ms) / 2
    view_one = one["GET view"].p50_ms
    print("\none connection, a client playing whole games (legal moves asked once per turn, "
          "after the move that made it; then the game's view and the floor, the baselines in "
          "the same stream; then its move), then build turns nobody listed (cold), each "
          "with its game's view, before it and after it in turn. p50 / p99 ms, and p50 as a "
          "ratio to the baseline asked in the same stream and to the baseline's own loop; then "
          "the same of the service's own "
          "p50 (its access log's duration: the app, without gunicorn's parsing and writing or "
          "the network):")
    for label, tag, in_stream, base_name, loop_base, loop_tag in (
            ("legal-moves, build turn", "build", "GET view, in play", "GET view", view_one, "view"),
            ("legal-moves, other turn", "other", "GET view, in play", "GET view", view_one, "view"),
            ("legal-moves, build turn, cold", "cold", "GET view, among cold", "GET view", view_one,
             "view"),
            ("POST move", "move", "floor, in play", "floor", floor_one, "floor")):
        if label in play.labelled and in_stream in play.labelled:
            p50, base = play.label_p(label, .5), play.label_p(in_stream, .5)
            stream_tag = {"GET view, in play": "playview", "GET view, among cold": "coldview",
                          "floor, in play": "playfloor"}[in_stream]
            own = median(server.get(tag))
            own_base, own_loop = median(server.get(stream_tag)), median(server.get(loop_tag))
            print(f"  {label:<29} n={len(play.labelled[label]):5d}  {p50:6.2f} / "
                  f"{play.label_p(label, .99):6.2f}  = {p50 / base:4.2f}x {base_name} "
                  f"({base:.2f} ms; {p50 / loop_base:4.2f}x its loop's {loop_base:.2f}); "
                  f"service {own:.2f} ms = {own / own_base:4.2f}x ({own_base:.2f} ms; "
                  f"{own / own_loop:4.2f}x its loop's {own_loop:.2f})")
    # Which worker listed the cold turns: the one that served the client's play has listed
    # the same games' turns (words.ListedBuilds keeps their hexes' situations); another has
    # only its warm-up's. run.py's one connection lands on either, and the figure with it.
    cold, played = served_by.get("cold", set()), served_by.get("build", set())
    if cold:
        kind = ("the one that served the client's play (it has listed these games' turns)"
                if cold == played else "not the one that served the client's play")
        print(f"  the cold listings were served by worker {', '.join(map(str, sorted(cold)))}: {kind}")
    return 0


def print_cpu(results: list[Result], cpus: list[cpu.Cpu | None]) -> None:
    """Each run's CPU per request by process (cpu.py), the floor's the mean of its two runs'
    per request: where a request's cost against the floor's is, in the workers (the app, and
    gunicorn's parsing and writing), in Redis, or in the load generator (alike for all)."""
    if any(c is None for c in cpus):
        return
    per = [c.per_request_us(result.requests) for result, c in zip(results, cpus, strict=True)
           if c is not None]
    floor = (per[0] + per[-1]).scaled(0.5)
    print("\nCPU per request, us of user + system time (the workers' from /proc, Redis's from "
          "its INFO, the load generator's from its processes' rusage):")
    print(f"{'':<20} {'workers':>8} {'redis':>6} {'load':>6} {'total':>6} {'vs floor':>9}")
    for name, each in (("floor (mean of two)", floor),
                       *((result.name, p) for result, p in zip(results[1:-1], per[1:-1], strict=True))):
        print(f"{name:<20} {each.workers:8.0f} {each.redis:6.0f} {each.load:6.0f} "
              f"{each.total:6.0f} {each.total / floor.total:8.2f}x")


def print_commands(results: list[Result], commands: list[list[tuple[str, float, float]]],
                   shown: int = 8) -> None:
    """Each run's Redis time by command, µs a request (cpu.command_split), its dearest `shown`:
    which of a request's commands its Redis CPU went to. A script's (evalsha) includes the
    commands it calls, which are listed under their own names too."""
    print("\nRedis's time by command, us a request (calls a request); a script's (evalsha) "
          "includes the commands it calls, listed under their own names too:")
    for result, split in zip(results, commands, strict=True):
        # Not those called for fewer than one request in a hundred: the script's load, PINGs.
        each = [(name, calls, usec) for name, calls, usec in split if calls >= 0.01]
        parts = ", ".join(f"{name} {usec:.1f} ({calls:.2g})" for name, calls, usec in each[:shown])
        print(f"  {result.name:<20} {parts}")


def access_by_tag(log: Path) -> dict[str, list[dict]]:
    """The access log's entries of the requests whose X-Request-Id is `<tag>-<n>`, by tag."""
    out: dict[str, list[dict]] = {}
    for line in log.read_bytes().splitlines():
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        tag, _, n = str(entry.get("request_id", "")).rpartition("-")
        if entry.get("log") == "access" and tag and n.isdigit():
            out.setdefault(tag, []).append(entry)
    return out


def median(values: list[float] | None) -> float:
    return statistics.median(values) if values else float("nan")


if __name__ == "__main__":
    sys.exit(main())
