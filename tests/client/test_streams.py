"""The client's live updates over real HTTP: `events()` yields typed events in order and resumes
by itself (a stream closed early, a connection cut mid-stream) without a gap or a repeat;
`wait()` long-polls; the bot plays from the stream."""

from __future__ import annotations

import json
import random
import socket
import threading
import time
from collections.abc import Iterator

import pytest
import requests
from aos_client import AosClient, GameEvent, NotFound
from aos_client.bot import GreedyPolicy, RandomPolicy, play_seats
from client_test_servers import free_port
from werkzeug.serving import make_server

from service.api import create_app
from service.referee.settings import Settings
from service.store import MemoryStore


@pytest.fixture
def short_streams() -> Iterator[str]:
    """The service with streams that close after 0.3 s (so clients must resume all the time)."""
    app = create_app(store=MemoryStore(), settings=Settings(events_heartbeat=0.1, events_lifetime=0.3))
    server = make_server("127.0.0.1", free_port(), app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(10)


def new_game(api: AosClient, seed: str):  # type: ignore[no-untyped-def]
    return api.create_game({"map": "rust_belt", "players": [{"name": n} for n in "abc"], "seed": seed})


def random_moves(api: AosClient, game, count: int, rng: random.Random, pause: float = 0.0) -> list[int]:  # type: ignore[no-untyped-def]
    tokens = {s.seat: s.token for s in game.seats}
    view, versions = game, []
    for _ in range(count):
        if view.active_seat is None:
            break
        move = rng.choice(api.get_legal_moves(game.game_id, view.active_seat).moves)
        view = api.apply_move(game.game_id, move, token=tokens[view.active_seat]).game
        versions.append(view.version)
        time.sleep(pause)
    return versions


def test_events_are_typed_in_order_and_end_with_the_game(live_url: str) -> None:
    api = AosClient(live_url)
    game = new_game(api, "client-events")
    random_moves(api, game, 1000, random.Random(5))
    final = api.get_game(game.game_id)
    events = list(api.events(game.game_id))  # the game is over: the iterator ends by itself
    assert all(isinstance(e, GameEvent) for e in events)
    assert [e.version for e in events] == list(range(1, final.version + 1))
    assert events[-1].game.to_dict() == final.to_dict()
    history = api.get_history(game.game_id)
    assert [e.move.to_dict() for e in events] == [h.move.to_dict() for h in history]
    assert [e.version for e in api.events(game.game_id, after=final.version - 3)] == [
        final.version - 2, final.version - 1, final.version]
    assert list(api.events(game.game_id, after=final.version)) == []  # 204: nothing after the end
    with pytest.raises(NotFound):
        next(api.events("no-such-game"))


def test_events_resume_across_streams_the_service_closes(short_streams: str) -> None:
    api = AosClient(short_streams)
    game = new_game(api, "client-resume")
    asked: list[str | None] = []
    watcher = AosClient(short_streams)
    watcher.session.hooks["response"].append(
        lambda r, *a, **k: asked.append(r.request.headers.get("Last-Event-ID")))
    got: list[int] = []

    def follow() -> None:
        for event in watcher.events(game.game_id):
            got.append(event.version)
            if len(got) == 20:
                return

    thread = threading.Thread(target=follow)
    thread.start()
    made = random_moves(api, game, 20, random.Random(8), pause=0.1)  # 2 s: several streams
    thread.join(20)
    assert got == made == list(range(1, 21))
    assert len(asked) >= 4, asked  # it reconnected, each time from the last event it had
    assert asked[0] is None and all(a is not None for a in asked[1:])
    assert [int(a) for a in asked[1:]] == sorted(int(a) for a in asked[1:])


class CutServer:
    """Serves two NDJSON streams by hand: the first cut off mid-way (no chunked terminator, the
    socket closed), the second from the Last-Event-ID it is asked for."""

    def __init__(self, events: list[bytes]) -> None:
        self.events = events
        self.asked: list[str | None] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        for connection in range(2):
            sock, _ = self.listener.accept()
            with sock:
                request = b""
                while b"\r\n\r\n" not in request:
                    request += sock.recv(4096)
                lines = request.decode().split("\r\n")[1:]
                headers = dict(line.split(": ", 1) for line in lines if ": " in line)
                after = headers.get("Last-Event-ID")
                self.asked.append(after)
                sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\n"
                             b"Transfer-Encoding: chunked\r\n\r\n")
                start = int(after or 0)
                send = self.events[start:start + 2] if connection == 0 else self.events[start:]
                for line in [b"\n", *send]:
                    sock.sendall(b"%x\r\n%b\r\n" % (len(line), line))
                if connection == 1:
                    sock.sendall(b"0\r\n\r\n")
                # connection 0: closed here, mid-stream, as a dying server or proxy would


def test_events_resume_after_a_connection_cut_mid_stream(live_url: str) -> None:
    api = AosClient(live_url)
    game = new_game(api, "client-cut")
    random_moves(api, game, 1000, random.Random(5))
    final = api.get_game(game.game_id)
    lines = [json.dumps(e.to_dict()).encode() + b"\n" for e in api.events(game.game_id)]
    server = CutServer(lines)
    got = [e.version for e in AosClient(server.url, backoff=0.01).events(game.game_id)]
    assert got == list(range(1, final.version + 1))
    assert server.asked == [None, "2"]


def test_wait_returns_the_view_once_the_game_moves_or_none(live_url: str) -> None:
    api = AosClient(live_url)
    game = new_game(api, "client-wait")
    assert api.wait(game.game_id, 0, timeout=1) is None
    assert api.last_response.status_code == 304
    timer = threading.Timer(0.3, random_moves, args=(api, game, 1, random.Random(1)))
    timer.start()
    view = api.wait(game.game_id, 0, timeout=20)
    timer.join()
    assert view is not None and view.version == 1
    assert api.wait(game.game_id, 0, timeout=5).version == 1  # already past: at once


def test_the_bot_plays_its_seats_from_the_stream_beside_another_player(live_url: str) -> None:
    api = AosClient(live_url)
    game = new_game(api, "client-bot")
    tokens = {s.seat: s.token for s in game.seats}
    paths: list[str] = []
    bot_api = AosClient(live_url)
    bot_api.session.hooks["response"].append(lambda r, *a, **k: paths.append(r.request.path_url))

    def someone_else() -> None:
        # Seat 2 is played by another client, who only reacts to the stream too.
        other = AosClient(live_url)
        rng = random.Random(3)
        for event in other.events(game.game_id):
            if event.game.active_seat == 2:
                move = rng.choice(other.get_legal_moves(game.game_id, 2).moves)
                other.apply_move(game.game_id, move, token=tokens[2], if_match=event.version)

    other = threading.Thread(target=someone_else, daemon=True)
    other.start()
    policies = {0: GreedyPolicy(random.Random(1)), 1: RandomPolicy(random.Random(2))}
    view, moves = play_seats(bot_api, game.game_id, policies, {0: tokens[0], 1: tokens[1]})
    other.join(30)
    assert view.status == "finished"
    history = api.get_history(game.game_id)
    assert moves == sum(1 for h in history if h.seat in (0, 1)) > 0
    assert any(h.seat == 2 for h in history)
    # It never polled the game: one read of the view at the start, then the stream.
    assert paths.count(f"/v1/games/{game.game_id}") == 1
    assert sum(p.startswith(f"/v1/games/{game.game_id}/events") for p in paths) >= 1


def test_events_raise_after_the_retries_when_the_service_is_gone() -> None:
    api = AosClient(f"http://127.0.0.1:{free_port()}", backoff=0.01)
    with pytest.raises(requests.ConnectionError):
        next(api.events("any", retries=2))
