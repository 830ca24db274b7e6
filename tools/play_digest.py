"""One digest of what the rules do in ~30 seeded random games: every state, every legal-moves
listing, every view and every event, over the 5 maps, funded and not, with resignations.

    python tools/play_digest.py            # prints the digest (and one line per game with -v)
    python tools/play_digest.py --games 10 # fewer games per run, for a quick look

A change meant to keep behaviour (a move of code, a refactor of a lifecycle) must leave the
digest as it was: record it before, compare after. The games are fixed by their seeds; the random
player draws from a generator of its own, so the same seeds play the same games in every run.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from service.engine import game  # noqa: E402
from service.engine.playout import RandomPlayer  # noqa: E402

MAPS = ("rust_belt", "madagascar", "holland", "iraq", "berlin")
FUNDED_CASH = 80  # with it random play lasts every round; without, most players go bankrupt
RESIGN_CHANCE = 0.004  # per move: a random seat still in the game resigns, in whatever phase
MAX_MOVES = 20000


def dump(obj: object) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)


def play(map_id: str, players: int, seed: str, funded: bool, digest: hashlib._Hash) -> int:
    """Plays one game into `digest`; returns the moves made (resignations included)."""
    chooser = random.Random(seed)
    state = game.new_game(map_id, [f"P{i}" for i in range(players)], seed)
    if funded:
        for seated in state["players"]:
            seated["cash"] = FUNDED_CASH
    digest.update(dump(state))
    player = RandomPlayer(chooser)
    moves = 0
    while not game.is_finished(state):
        if chooser.random() < RESIGN_CHANCE:
            seat = chooser.choice([p["seat"] for p in game.view(state)["players"]
                                   if not state["players"][p["seat"]]["eliminated"]])
            move: dict = {"type": game.RESIGN}
        else:
            active = game.active_seat(state)
            assert active is not None  # someone decides in every phase but the end
            seat = active
            options = game.legal_moves(state, seat)
            digest.update(dump(options))
            move = player.choose(state, seat, options)
        state, events = game.play(state, seat, move)
        moves += 1
        digest.update(dump([seat, move, events]))
        digest.update(dump(state))
        digest.update(dump(game.view(state)))
        if moves >= MAX_MOVES:
            raise RuntimeError(f"game {seed} did not end in {MAX_MOVES} moves")
    return moves


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=30, help="games in all (spread over the maps)")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per game")
    args = parser.parse_args(argv)
    total = hashlib.sha256()
    for n in range(args.games):
        map_id = MAPS[n % len(MAPS)]
        players = 3 + (n // len(MAPS)) % 2
        funded = (n // (2 * len(MAPS))) % 2 == 0
        seed = f"digest-{n}"
        one = hashlib.sha256()
        moves = play(map_id, players, seed, funded, one)
        total.update(one.digest())
        if args.verbose:
            print(f"{seed:10} {map_id:11} {players}p {'funded' if funded else 'plain ':6} "
                  f"{moves:5} moves {one.hexdigest()[:16]}")
    print(total.hexdigest())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
