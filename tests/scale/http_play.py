"""Whole games played over HTTP by the engine's RandomPlayer, with the engine alongside as a
referee: it mirrors every committed move, so each response's view can be checked against it."""

from __future__ import annotations

import random
from itertools import cycle

import orjson
import requests

from service.engine import game
from service.engine.playout import RandomPlayer

NAMES = ["Ada", "Brunel", "Cugnot", "Daimler"]
MAX_MOVES = 3000
TIMEOUT = 10


def as_json(value: object) -> object:
    return orjson.loads(orjson.dumps(value))


class HttpGame:
    def __init__(self, base_url: str, seed: str, players: int = 3, map_id: str = "rust_belt") -> None:
        names = NAMES[:players]
        body = {"map": map_id, "players": [{"name": n} for n in names], "seed": seed}
        response = requests.post(f"{base_url}/v1/games", json=body, timeout=TIMEOUT)
        assert response.status_code == 201, response.text
        created = response.json()
        self.game_id: str = created["game_id"]
        self.tokens = [s["token"] for s in created["seats"]]
        self.version = 0
        self.state = game.new_game(map_id, names, seed)
        self.player = RandomPlayer(random.Random(seed))

    @property
    def finished(self) -> bool:
        return game.is_finished(self.state)

    def step(self, base_url: str) -> None:
        """One move through the service at `base_url`, checked against the referee."""
        url = f"{base_url}/v1/games/{self.game_id}"
        seat = game.active_seat(self.state)
        legal = requests.get(f"{url}/legal-moves", params={"seat": seat}, timeout=TIMEOUT)
        assert legal.status_code == 200, legal.text
        assert legal.json()["version"] == self.version  # nothing lost, nothing extra
        move = self.player.choose(self.state, seat, legal.json()["moves"])
        response = requests.post(
            f"{url}/moves",
            json=move,
            headers={"Authorization": f"Bearer {self.tokens[seat]}", "If-Match": f'"{self.version}"'},
            timeout=TIMEOUT,
        )
        assert response.status_code == 200, response.text
        # The listing's words (`text`) are for people; the move is the rest, as the service applies it.
        self.state, _ = game.apply(self.state, seat, {k: v for k, v in move.items() if k != "text"})
        self.version += 1
        body = response.json()
        assert body["version"] == self.version
        # The API adds what only it knows: the id, the version, the clock and its deadline, and a
        # pending takeback.
        served = {k: v for k, v in body["game"].items()
                  if k not in ("game_id", "version", "clock", "deadline", "takeback")}
        assert served == as_json(game.view(self.state))

    def play(self, base_urls: list[str], moves: int = MAX_MOVES) -> None:
        """Up to `moves` moves (to the end by default), each through the next of `base_urls`."""
        urls = cycle(base_urls)
        for _ in range(moves):
            if self.finished:
                return
            self.step(next(urls))
        assert moves < MAX_MOVES or self.finished, f"{self.game_id} did not end in {MAX_MOVES} moves"

    def snapshot(self, base_url: str) -> tuple[int, bytes, bytes]:
        """(version, view, history) as the service has them."""
        url = f"{base_url}/v1/games/{self.game_id}"
        view = requests.get(url, timeout=TIMEOUT)
        history = requests.get(f"{url}/history", timeout=TIMEOUT)
        assert view.status_code == history.status_code == 200
        return view.json()["version"], view.content, history.content
