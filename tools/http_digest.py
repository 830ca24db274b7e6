"""One digest of what the HTTP API answers in ~10 seeded random games: every view, legal-moves
listing, move answer, refused move, dry run, undo, history, record and board, status and body, played
through the app in process (Flask's test client, the memory store).

    python tools/http_digest.py             # prints the digest (and one line per game with -v)
    python tools/http_digest.py --games 5   # fewer games

A change meant to keep the API's behaviour (a move of the HTTP adapter into rooms, a refactor of
the routes) must leave it as it was: record it before, compare after. What differs from run to
run by design is taken out before hashing: the game's id, its tokens and its seed's commitment
(salted at random), and the times (`created_at`, `at`...). tools/play_digest.py does the same
for the engine alone.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import logging
import random
import re
import sys
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from service.api import create_app  # noqa: E402
from service.referee.settings import Settings  # noqa: E402
from service.store import MemoryStore  # noqa: E402

MAPS = ("rust_belt", "madagascar", "holland", "iraq", "berlin")
MAX_MOVES = 3000
TIMES = re.compile(rb'"(created_at|updated_at|at|ts|finished_at|started_at|deadline|expires_at)"'
                   rb':("[^"]*"|[0-9.]+)')


DUMP = None  # a file to write what is hashed to (--dump), to find what differs


class Recorder:
    """Hashes every answer of the app with what varies by design taken out."""

    def __init__(self, client, digest: hashlib._Hash) -> None:  # type: ignore[no-untyped-def]
        self.client = client
        self.digest = digest
        self.dump = DUMP
        self.secrets: list[bytes] = []

    def scrub(self, data: bytes) -> bytes:
        for secret in self.secrets:
            data = data.replace(secret, b"<secret>")
        return TIMES.sub(rb'"\1":"<time>"', data)

    def call(self, method: str, url: str, **kwargs) -> tuple[int, bytes]:  # type: ignore[no-untyped-def]
        response = self.client.open(url, method=method, **kwargs)
        body = response.get_data()
        said = self.scrub(f"{method} {url} {response.status_code}\n".encode()) + self.scrub(body)
        self.digest.update(said)
        if self.dump is not None:
            self.dump.write(said + b"\n")
        return response.status_code, body


def play(client, map_id: str, players: int, seed: str, digest: hashlib._Hash) -> int:  # type: ignore[no-untyped-def]
    chooser = random.Random(seed)
    rec = Recorder(client, digest)
    response = client.post("/v1/games", json={
        "map": map_id, "players": [{"name": f"P{i}"} for i in range(players)], "seed": seed,
    })
    created = response.get_json()
    game_id = created["game_id"]
    tokens = {seat["seat"]: seat["token"] for seat in created["seats"]}
    # The seed's commitment is salted at random; tokens before the id they begin with.
    secrets = [game_id, created.get("admin_token"), created["seed_commitment"], *tokens.values()]
    rec.secrets = sorted((secret.encode() for secret in secrets if secret), key=len, reverse=True)
    digest.update(rec.scrub(response.get_data()))
    game = f"/v1/games/{game_id}"
    moves = 0
    while True:
        _, view_bytes = rec.call("GET", game)
        view = orjson.loads(view_bytes)
        if view["status"] == "finished" or moves >= MAX_MOVES:
            break
        seat = view["active_seat"]
        _, listed = rec.call("GET", f"{game}/legal-moves?seat={seat}")
        options = orjson.loads(listed)["moves"]
        auth = {"Authorization": f"Bearer {tokens[seat]}"}
        if chooser.random() < 0.05:  # a move of another seat's: refused, and nothing changes
            other = (seat + 1) % players
            rec.call("POST", f"{game}/moves", json={"type": "pass"},
                     headers={"Authorization": f"Bearer {tokens[other]}"})
        move = chooser.choice(options)
        if chooser.random() < 0.1:
            rec.call("POST", f"{game}/moves/validate", json=move, headers=auth)
        rec.call("POST", f"{game}/moves", json=move, headers=auth)
        moves += 1
        if chooser.random() < 0.03:  # taken back at once: allowed or refused, both are answers
            rec.call("POST", f"{game}/undo", headers=auth)
    for tail in ("history", "record", "board.svg", "seats"):
        rec.call("GET", f"{game}/{tail}")
    return moves


def digest_client():  # type: ignore[no-untyped-def]
    """The app on a memory store, without the rate limits the digest's own requests would hit."""
    settings = dataclasses.replace(Settings.from_env(), rate_limits=False, warm_up_games=0)
    return create_app(MemoryStore(), settings).test_client()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=10, help="games in all (spread over the maps)")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per game")
    parser.add_argument("--dump", type=Path, help="write what is hashed to this file")
    args = parser.parse_args(argv)
    global DUMP
    DUMP = args.dump.open("wb") if args.dump else None
    logging.disable(logging.CRITICAL)
    client = digest_client()
    total = hashlib.sha256()
    for n in range(args.games):
        map_id = MAPS[n % len(MAPS)]
        players = 3 + (n // len(MAPS)) % 2
        seed = f"http-digest-{n}"
        one = hashlib.sha256()
        moves = play(client, map_id, players, seed, one)
        total.update(one.digest())
        if args.verbose:
            print(f"{seed:15} {map_id:11} {players}p {moves:5} moves {one.hexdigest()[:16]}")
    print(total.hexdigest())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
