"""Random play over HTTP with undo, takeback and programmed orders mixed in. A referee follows
every version of the history with the engine and a timeline of its own (a move applies, an undo
goes back to the state before the last move in effect, a takeback to the state of its version),
predicts each undo's and each proposal's answer, and checks after every request: the stored
state is the referee's byte for byte, the invariants hold (96 cubes, no negative cash), and at
the end the record replays to the same final scores."""

from __future__ import annotations

import random

import orjson
import pytest

from service.api import create_app
from service.engine import game
from service.engine.playout import RandomPlayer
from service.engine.state import cubes_in_play
from service.referee.settings import Settings
from service.store import MemoryStore
from tests.engine.test_random_play import TOTAL_CUBES

NAMES = ["Ada", "Brunel", "Cugnot", "Daimler", "Ericsson", "Fairlie"]
TAKEBACK_STEPS = {"takeback_proposed", "takeback_accepted", "takeback_declined", "takeback_cancelled"}
MAX_REQUESTS = 1500


class Referee:
    """The game's versions as the referee works them out from the history."""

    def __init__(self, first: bytes) -> None:
        self.states = [first]  # the state at each version
        self.chains: list[tuple[int, ...]] = [()]  # the versions of the moves in effect
        self.seats: dict[int, int] = {}  # the seat of each move's version
        self.entries: list[dict] = []

    @property
    def version(self) -> int:
        return len(self.states) - 1

    def state(self, version: int | None = None) -> dict:
        return orjson.loads(self.states[self.version if version is None else version])

    def follow(self, entry: dict) -> None:
        version = entry["version"]
        assert version == self.version + 1
        kind = entry["move"]["type"]
        chain = self.chains[-1]
        if kind == "undo":
            last = chain[-1]
            assert self.chains[last - 1] == chain[:-1]
            state, chain = self.states[last - 1], chain[:-1]
        elif kind == "takeback":
            to = entry["move"]["to_version"]
            state, chain = self.states[to], self.chains[to]
        elif kind in TAKEBACK_STEPS:
            state = self.states[-1]
        else:
            before = self.state()
            after, events = game.apply(before, entry["seat"], entry["move"])
            # The service words every event (`text`); the facts are the rest.
            assert events == [{k: v for k, v in e.items() if k != "text"} for e in entry["events"]]
            assert all(e["text"] for e in entry["events"])
            check_invariants(after)
            state, chain = orjson.dumps(after), (*chain, version)
            self.seats[version] = entry["seat"]
        self.states.append(state)
        self.chains.append(chain)
        self.entries.append(entry)

    def undo_answer(self, seat: int) -> str:
        """The code the service must answer an undo of `seat` with ("" for an undo)."""
        if game.is_finished(self.state()):
            return "GAME_FINISHED"
        chain = self.chains[-1]
        own = [v for v in chain if self.seats[v] == seat]
        if not own:
            return "NOTHING_TO_UNDO"
        if own[-1] != chain[-1]:
            return "ANOTHER_SEAT_MOVED"
        if self.state(own[-1] - 1)["rng"] != self.state()["rng"]:
            return "RANDOM_OUTCOME_REVEALED"
        return ""

    def proposal_answer(self, to_version: int, pending: bool) -> str:
        if game.is_finished(self.state()):
            return "GAME_FINISHED"
        if pending:
            return "TAKEBACK_PENDING"
        now, then = self.chains[-1], self.chains[to_version]
        if now[:len(then)] != then:
            return "VERSION_TAKEN_BACK"
        if now == then:
            return "NOTHING_TO_TAKE_BACK"
        if self.state(to_version)["rng"] != self.state()["rng"]:
            return "RANDOM_OUTCOME_REVEALED"
        return ""

    def asked(self, to_version: int, proposer: int) -> list[int]:
        taken = self.chains[-1][len(self.chains[to_version]):]
        return sorted({self.seats[v] for v in taken} - {proposer})


def check_invariants(state: dict) -> None:
    assert cubes_in_play(state) + sum(state["bag"].values()) == TOTAL_CUBES
    assert all(n >= 0 for n in state["bag"].values())
    assert all(p["cash"] >= 0 for p in state["players"])


def random_orders(rng: random.Random) -> list[dict]:
    makers = [
        lambda: {"type": "issue_shares", "count": rng.randint(0, 3)},
        lambda: {"type": "bid_up_to", "max": rng.randint(0, 8)},
        lambda: {"type": "drop_out"},
        lambda: {"type": "select_action", "actions": rng.sample(game.action_ids()[:7], rng.randint(1, 3))},
        lambda: {"type": "end_build"},
        lambda: {"type": "upgrade_locomotive"},
        lambda: {"type": "pass"},
    ]
    return [rng.choice(makers)() for _ in range(rng.randint(0, 3))]


class Play:
    def __init__(self, map_id: str, players: int, seed: int) -> None:
        self.store = MemoryStore()
        self.client = create_app(store=self.store, settings=Settings(rate_limits=False)).test_client()
        self.rng = random.Random(seed)
        self.player = RandomPlayer(random.Random(seed))
        self.seed = f"async-random-{seed}"
        created = self.client.post("/v1/games", json={
            "map": map_id, "players": [{"name": n} for n in NAMES[:players]], "seed": self.seed})
        assert created.status_code == 201
        self.id = created.get_json()["game_id"]
        self.tokens = [s["token"] for s in created.get_json()["seats"]]
        self.players = players
        self.referee = Referee(self.store.load(self.id).state)
        self.pending: dict | None = None
        self.counts = {"undo": 0, "takeback": 0, "orders": 0, "by_orders": 0}

    def post(self, path: str, seat: int, body: object = None):  # type: ignore[no-untyped-def]
        kwargs = {} if body is None else {"json": body}
        return self.client.post(f"/v1/games/{self.id}/{path}",
                                headers={"Authorization": f"Bearer {self.tokens[seat]}"}, **kwargs)

    def catch_up(self) -> dict:
        """Follows the new versions; checks the stored state and returns the view."""
        stored = self.store.load(self.id, with_view=True)
        for raw in self.store.history(self.id, self.referee.version, stored.version):
            entry = orjson.loads(raw)
            self.referee.follow(entry)
            self.counts["by_orders"] += entry.get("by") == "orders"
        assert stored.state == self.referee.states[-1]
        view = orjson.loads(stored.view)
        self.pending = view["takeback"]
        return view

    def undo(self, seat: int) -> None:
        expected = self.referee.undo_answer(seat)
        response = self.post("undo", seat)
        if expected:
            assert (response.status_code, response.get_json()["code"]) == (422, expected)
        else:
            assert response.status_code == 200, response.get_json()
            self.counts["undo"] += 1

    def propose(self, seat: int) -> None:
        if self.referee.version == 0:
            return
        to_version = self.rng.randrange(max(0, self.referee.version - 6), self.referee.version)
        expected = self.referee.proposal_answer(to_version, self.pending is not None)
        asked = [] if expected else self.referee.asked(to_version, seat)
        response = self.post("takeback", seat, {"to_version": to_version})
        if expected:
            assert (response.status_code, response.get_json()["code"]) == (422, expected)
            return
        assert response.status_code == 200, response.get_json()
        body = response.get_json()
        if not asked:
            assert body["game"]["takeback"] is None
            self.counts["takeback"] += 1
        else:
            assert body["game"]["takeback"] == {"to_version": to_version, "by": seat, "waiting": asked}

    def answer(self) -> None:
        waiting = self.pending["waiting"]
        seat = self.rng.choice(waiting)
        accept = self.rng.random() < 0.8
        response = self.post("takeback/accept" if accept else "takeback/decline", seat)
        assert response.status_code == 200, response.get_json()
        if accept and waiting == [seat]:
            self.counts["takeback"] += 1
            assert response.get_json()["game"]["takeback"] is None

    def set_orders(self, seat: int) -> None:
        orders = random_orders(self.rng)
        response = self.client.put(f"/v1/games/{self.id}/seats/{seat}/orders",
                                   json={"orders": orders},
                                   headers={"Authorization": f"Bearer {self.tokens[seat]}"})
        assert response.status_code == 200, response.get_json()
        self.counts["orders"] += 1

    def move(self, seat: int) -> None:
        state = self.referee.state()
        move = self.player.choose(state, seat, game.legal_moves(state, seat))
        response = self.post("moves", seat, move)
        assert response.status_code == 200, response.get_json()

    def run(self) -> dict:
        view = self.catch_up()
        for _ in range(MAX_REQUESTS):
            if view["status"] == "finished":
                break
            roll, seat = self.rng.random(), self.rng.randrange(self.players)
            if self.pending is not None and roll < 0.6:
                self.answer()
            elif roll < 0.12:
                self.undo(self.referee.seats[self.referee.chains[-1][-1]]
                          if self.referee.chains[-1] and roll < 0.09 else seat)
            elif roll < 0.17:
                self.propose(seat)
            elif roll < 0.25:
                self.set_orders(seat)
            else:
                self.move(view["active_seat"])
            view = self.catch_up()
        assert view["status"] == "finished", f"not finished in {MAX_REQUESTS} requests"
        return view


@pytest.mark.parametrize(("map_id", "players", "seed"), [
    ("rust_belt", 3, 1), ("rust_belt", 4, 2), ("rust_belt", 5, 3), ("madagascar", 4, 4)])
def test_random_play_with_undo_takeback_and_orders(map_id: str, players: int, seed: int) -> None:
    play = Play(map_id, players, seed)
    final = play.run()
    assert play.counts["undo"] and play.counts["takeback"] and play.counts["by_orders"], play.counts
    referee = play.referee

    # The views at past versions are the referee's states (sampled).
    for version in play.rng.sample(range(referee.version + 1), 12):
        view = orjson.loads(play.client.get(f"/v1/games/{play.id}").get_data()) \
            if version == referee.version else orjson.loads(
                play.client.application.extensions["aos.games"].view_at(play.id, version))
        api_only = ("game_id", "version", "takeback", "clock", "deadline")
        assert {k: v for k, v in view.items() if k not in api_only} == \
            orjson.loads(orjson.dumps(game.view(referee.state(version))))

    # The record is the moves in effect, and it replays to the same final scores.
    record = play.client.get(f"/v1/games/{play.id}/record").get_json()
    moves_in_effect = [referee.entries[v - 1] for v in referee.chains[-1]]
    assert record["moves"] == [{"seat": e["seat"], "move": e["move"]} for e in moves_in_effect]
    assert record["seed"] == play.seed
    replayed = play.client.post("/v1/games", json={"record": record})
    assert replayed.status_code == 201, replayed.get_json()
    assert replayed.get_json()["scores"] == final["scores"] and final["scores"] is not None
    history = play.client.get(f"/v1/games/{play.id}/history").get_json()
    assert len(history) == final["version"] > len(record["moves"])
