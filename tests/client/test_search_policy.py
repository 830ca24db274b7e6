"""The bot's `--policy search`: the service's search bot over HTTP, through hints. The service runs
behind a real HTTP server on the memory store, with the worker's hint job in a thread beside it."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator

import pytest
from aos_client import AosClient
from aos_client.bot import GreedyPolicy, SearchPolicy, play_game, policy_class
from client_test_servers import free_port
from werkzeug.serving import make_server

from service.api import create_app
from service.referee.settings import Settings
from service.store import MemoryStore
from service.worker.hints import HintJob
from service.worker.searches import SearchPool


def serve(settings: Settings) -> Iterator[str]:
    app = create_app(store=MemoryStore(), settings=settings)
    server = make_server("127.0.0.1", free_port(), app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    pool = SearchPool(1)
    job = HintJob(app.extensions["aos.games"], pool)
    stop = threading.Event()

    def work() -> None:
        while not stop.is_set():
            if not job.run_once():
                stop.wait(0.01)

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    yield f"http://127.0.0.1:{server.server_port}"
    stop.set()
    worker.join(5)
    pool.close()
    server.shutdown()


@pytest.fixture
def hinting_url() -> Iterator[str]:
    yield from serve(Settings(hint_default_ms=40, hint_max_ms=40, rate_limit_hints="1000/minute",
                              warm_up_games=0))


@pytest.fixture
def hintless_url() -> Iterator[str]:
    yield from serve(Settings(hints=False, warm_up_games=0))


def test_search_is_a_policy_by_name() -> None:
    assert policy_class("search") is SearchPolicy


def test_the_search_policy_plays_a_whole_game_on_the_services_hints(hinting_url: str) -> None:
    searcher = SearchPolicy(random.Random(1))
    searcher.budget_ms = 40
    with AosClient(hinting_url) as api:
        others = [GreedyPolicy(random.Random(2)), GreedyPolicy(random.Random(3))]
        result = play_game(api, "rust_belt", [searcher, *others], seed="search-policy")
    assert result.view.status == "finished"
    assert searcher.hints >= 10 and searcher.fallbacks == 0, (searcher.hints, searcher.fallbacks)


def test_without_hints_the_search_policy_plays_greedys_moves(hintless_url: str) -> None:
    searcher = SearchPolicy(random.Random(1))
    greedy = GreedyPolicy(random.Random(1))
    with AosClient(hintless_url) as api:
        created = api.create_game({"map": "rust_belt", "players": [{"name": n} for n in ("A", "B", "C")],
                                   "seed": "no-hints"})
        view = created.game
        seat = view.active_seat
        searcher.bind(api, view.game_id, next(s.token for s in created.seats if s.seat == seat))
        moves = api.get_legal_moves(view.game_id, seat).moves
        detail = api.get_map(view.map)
        searcher.map_detail = greedy.map_detail = detail
        assert len(moves) > 1
        assert searcher.choose(view, seat, moves) == greedy.choose(view, seat, moves)
    assert (searcher.hints, searcher.fallbacks) == (0, 1)
