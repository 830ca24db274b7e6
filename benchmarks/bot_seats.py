"""The bot's one-seat mode against its whole-game mode, on the same seeded games: four
`python -m aos_client.bot --game ID --token T` processes (one seat each, each following the
game's events stream) against one `python -m aos_client.bot --players 4 --games 1` process that
plays every seat of an identical game. The ratio (four processes' wall time / one process's) is
what one-seat play costs over playing in one process: the polling bot it replaced took ~14× on
the issue's machine (56.9 s against 4 s).

    .venv/bin/python benchmarks/bot_seats.py [--rounds 2] [--map rust_belt] [--seed 7]

Starts its own service (`python -m service`, memory store, rate limits off: every game comes
from one address) on a free port. Each round runs the two modes one after the other on the game
seeded `<seed + round>-0` (the seed the whole-game mode gives its first game, with its seat names),
checks that both end in the same scores, and prints both times and their ratio; then the median.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "client"))
sys.path.insert(0, str(ROOT / "benchmarks" / "http"))

from aos_client import AosClient, MapId, NewGame, NewGamePlayer  # noqa: E402
from run import free_port  # noqa: E402

PLAYERS = 4


def start_service(port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "AOS_RATE_LIMITS": "off", "AOS_METRICS_PORT": "off"}
    env.pop("REDIS_URL", None)
    env.pop("DATABASE_URL", None)
    process = subprocess.Popen([sys.executable, "-m", "service", "--port", str(port)], cwd=ROOT, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            if requests.get(f"http://127.0.0.1:{port}/v1/health", timeout=2).ok:
                return process
        except requests.ConnectionError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("bot_seats: the service did not start")


def bot(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "client")}
    return subprocess.Popen([sys.executable, "-m", "aos_client.bot", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def whole_game(url: str, map_id: str, seed: int) -> tuple[float, str]:
    started = time.perf_counter()
    done = bot("--url", url, "--map", map_id, "--players", str(PLAYERS), "--games", "1", "--seed", str(seed))
    out, err = done.communicate(timeout=1800)
    assert done.returncode == 0, err
    line = out.splitlines()[0]
    return time.perf_counter() - started, line.split("points ", 1)[1]


def one_seat_each(url: str, map_id: MapId, seed: int) -> tuple[float, str]:
    api = AosClient(url)
    names = [NewGamePlayer(name=f"greedy-{i}") for i in range(PLAYERS)]
    game = api.create_game(NewGame(map=map_id, seed=f"{seed}-0", players=names))
    started = time.perf_counter()
    seats = [bot("--url", url, "--game", game.game_id, "--token", s.token, "--seed", str(seed))
             for s in game.seats]
    for process in seats:
        _, err = process.communicate(timeout=1800)
        assert process.returncode == 0, err
    seconds = time.perf_counter() - started
    scores = sorted(api.get_game(game.game_id).scores or [], key=lambda s: s.seat)
    return seconds, " ".join(f"{s.seat}:greedy={'out' if s.points is None else s.points}" for s in scores)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--map", default="rust_belt")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    port = free_port()
    service = start_service(port)
    url = f"http://127.0.0.1:{port}"
    ratios = []
    try:
        print(f"bot_seats: {args.map}, {PLAYERS} greedy seats, service on {url} (rate limits off)")
        for r in range(args.rounds):
            seed = args.seed + r
            base, base_scores = whole_game(url, args.map, seed)
            seats, seat_scores = one_seat_each(url, args.map, seed)
            assert base_scores == seat_scores, (base_scores, seat_scores)  # the same game both ways
            ratios.append(seats / base)
            print(f"  game {seed}-0: one process, every seat {base:.1f} s; four --game processes "
                  f"{seats:.1f} s; ratio {seats / base:.2f} (points {seat_scores})", flush=True)
        print(f"median ratio (four --game processes / one process): {statistics.median(ratios):.2f}")
    finally:
        service.terminate()
        service.wait(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
