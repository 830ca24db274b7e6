"""A game at the table over the API, for the tests of asynchronous play: each seat's token, the
requests of undo, takeback and orders, and the engine state as the store holds it (to check
what the service did against the numbers, and to let the engine's RandomPlayer choose)."""

from __future__ import annotations

import random
from collections.abc import Callable

import orjson
from werkzeug.test import TestResponse

from service.engine import game
from service.engine.playout import RandomPlayer
from tests.api.conftest import Api


class Table:
    def __init__(self, api: Api, players: int = 3, seed: str = "async", **create: object) -> None:
        self.api = api
        created = api.create(players, seed, **create)
        self.id: str = created["game_id"]
        self.tokens = [s["token"] for s in created["seats"]]
        self.seed = seed
        self.player = RandomPlayer(random.Random(seed))

    # -- reading ----------------------------------------------------------------------------------

    @property
    def games(self):  # type: ignore[no-untyped-def]
        return self.api.app.extensions["aos.games"]

    def state_bytes(self) -> bytes:
        return self.games.store.load(self.id).state

    def state(self) -> dict:
        return orjson.loads(self.state_bytes())

    def meta(self) -> dict:
        return orjson.loads(self.games.store.load(self.id).meta)

    def view(self) -> dict:
        return self.api.view(self.id)

    def version(self) -> int:
        return self.view()["version"]

    def active(self) -> int:
        return self.view()["active_seat"]

    def history(self) -> list[dict]:
        response = self.api.client.get(f"/v1/games/{self.id}/history")
        assert response.status_code == 200
        return response.get_json()

    def record(self) -> dict:
        response = self.api.client.get(f"/v1/games/{self.id}/record")
        assert response.status_code == 200
        return response.get_json()

    def legal(self, seat: int) -> list[dict]:
        # The engine's listing on the stored state: what GET …/legal-moves answers (tested in
        # test_games), without checking a long listing against the contract at every move.
        return game.legal_moves(self.state(), seat)

    # -- writing ----------------------------------------------------------------------------------

    def headers(self, seat: int, **extra: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[seat]}",
                **{k.replace("_", "-"): v for k, v in extra.items()}}

    def post(self, path: str, seat: int, body: object = None, **headers: str) -> TestResponse:
        kwargs = {} if body is None else {"json": body}
        return self.api.client.post(f"/v1/games/{self.id}/{path}", headers=self.headers(seat, **headers),
                                    **kwargs)

    def move(self, seat: int, move: dict, **headers: str) -> TestResponse:
        return self.post("moves", seat, move, **headers)

    def moved(self, seat: int, move: dict) -> dict:
        response = self.move(seat, move)
        assert response.status_code == 200, response.get_json()
        return response.get_json()

    def undo(self, seat: int, **headers: str) -> TestResponse:
        return self.post("undo", seat, **headers)

    def propose(self, seat: int, to_version: int, **headers: str) -> TestResponse:
        return self.post("takeback", seat, {"to_version": to_version}, **headers)

    def accept(self, seat: int) -> TestResponse:
        return self.post("takeback/accept", seat)

    def decline(self, seat: int) -> TestResponse:
        return self.post("takeback/decline", seat)

    def orders_url(self, seat: int) -> str:
        return f"/v1/games/{self.id}/seats/{seat}/orders"

    def put_orders(self, seat: int, orders: list[dict], **headers: str) -> TestResponse:
        return self.api.client.put(self.orders_url(seat), json={"orders": orders},
                                   headers=self.headers(seat, **headers))

    def set_orders(self, seat: int, orders: list[dict]) -> dict:
        response = self.put_orders(seat, orders)
        assert response.status_code == 200, response.get_json()
        return response.get_json()

    def orders(self, seat: int) -> list[dict]:
        response = self.api.client.get(self.orders_url(seat), headers=self.headers(seat))
        assert response.status_code == 200, response.get_json()
        return response.get_json()["orders"]

    # -- playing ----------------------------------------------------------------------------------

    def choose(self, seat: int) -> dict:
        return self.player.choose(self.state(), seat, self.legal(seat))

    def play(self, seat: int, move: dict) -> None:
        """A move through the service's move path, bar HTTP: for getting a game to where a
        test starts (checking every answer of a long game against the contract takes long)."""
        self.games.apply(self.id, seat, move, if_match=None, idempotency_key=None,
                         stored=self.games.load(self.id))

    def play_until(self, done: Callable[[dict, int, list[dict]], bool],
                   limit: int = 400) -> tuple[int, list[dict]]:
        """Random moves until `done(state, seat, legal moves)` holds for the seat to decide;
        returns that seat and its legal moves."""
        for _ in range(limit):
            state = self.state()
            seat = game.active_seat(state)
            assert seat is not None, "the game ended first"
            legal = game.legal_moves(state, seat)
            if done(state, seat, legal):
                return seat, legal
            self.play(seat, self.player.choose(state, seat, legal))
        raise AssertionError(f"not reached in {limit} moves")

    def play_to_end(self, limit: int = 2000) -> None:
        for _ in range(limit):
            state = self.state()
            seat = game.active_seat(state)
            if seat is None:
                return
            self.play(seat, self.player.choose(state, seat, game.legal_moves(state, seat)))
        raise AssertionError(f"not finished in {limit} moves")

    def play_to_phase(self, phase: str) -> int:
        seat, _ = self.play_until(lambda state, seat, legal: state["phase"] == phase)
        return seat


def untold(events: list[dict]) -> list[dict]:
    """Events without their words, each of which must have some (for comparing the facts)."""
    assert all(isinstance(e.get("text"), str) and e["text"] for e in events), events
    return [{k: v for k, v in e.items() if k != "text"} for e in events]
