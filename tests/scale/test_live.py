"""Live updates across processes: gunicorn instances (gevent workers, deploy/gunicorn.conf.py) on
one real Redis, the watcher on one instance and the mover on the other."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import orjson
import pytest
import requests
from aos_client import AosClient

from tests.scale.conftest import Service
from tests.scale.http_play import TIMEOUT, HttpGame


@pytest.fixture(scope="module")
def two(redis_server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Service]]:
    """Two instances on one Redis, for the whole module."""
    workdir = tmp_path_factory.mktemp("live")
    started = []
    try:
        for _ in range(2):
            service = Service(workdir, redis_server.url)
            service.env["AOS_EVENTS_HEARTBEAT"] = "0.5"
            started.append(service)
            service.start()
        yield started
    finally:
        for service in started:
            service.stop()


class Collector:
    """Follows a game's events through the client, in a thread of its own."""

    def __init__(self, url: str, game_id: str) -> None:
        self.events: list = []
        self.error: Exception | None = None
        self.connections = 0  # streams opened: 1 unless one was cut and resumed
        self.thread = threading.Thread(target=self._run, args=(url, game_id), daemon=True)
        self.thread.start()

    def _run(self, url: str, game_id: str) -> None:
        try:
            with AosClient(url) as api:
                api.session.hooks["response"].append(self._opened)
                for event in api.events(game_id, retries=0):
                    self.events.append(event)
        except requests.RequestException as exc:  # the service stopped at the end of the test
            self.error = exc

    def _opened(self, response: requests.Response, *args: object, **kwargs: object) -> None:
        self.connections += 1

    def wait_for(self, count: int, seconds: float = 20) -> list:
        deadline = time.monotonic() + seconds
        while len(self.events) < count:
            assert self.error is None, self.error
            assert time.monotonic() < deadline, f"{len(self.events)} of {count} events came"
            time.sleep(0.01)
        return self.events


def sse_ids(url: str, game_id: str, count: int) -> list[tuple[str, dict]]:
    """The first `count` events of a raw SSE stream: (id, data)."""
    got = []
    with requests.get(f"{url}/v1/games/{game_id}/events", headers={"Accept": "text/event-stream"},
                      stream=True, timeout=TIMEOUT) as response:
        assert response.status_code == 200
        assert response.headers["Content-Type"] == "text/event-stream"
        frame: dict[str, str] = {}
        for line in response.iter_lines(decode_unicode=True):
            if line:
                name, _, value = line.partition(": ")
                frame[name] = value
            elif "data" in frame:
                got.append((frame["id"], orjson.loads(frame["data"])))
                if len(got) == count:
                    return got
                frame = {}
            else:
                frame = {}
    raise AssertionError(f"the stream ended after {len(got)} events")


def test_a_watcher_on_one_instance_sees_the_moves_made_through_the_other(two) -> None:
    watcher, mover = two
    played = HttpGame(mover.url, seed="live-two")
    collector = Collector(watcher.url, played.game_id)
    time.sleep(0.5)  # the stream is open: what follows is live, not read back
    for _ in range(12):
        played.step(mover.url)
    events = collector.wait_for(12)
    assert [e.version for e in events] == list(range(1, 13))
    history = requests.get(f"{mover.url}/v1/games/{played.game_id}/history", timeout=TIMEOUT).json()
    view = requests.get(f"{mover.url}/v1/games/{played.game_id}", timeout=TIMEOUT).json()
    for event, entry in zip(events, history, strict=True):
        data = event.to_dict()
        assert {k: v for k, v in data.items() if k != "game"} == entry
    assert events[-1].game.to_dict() == view
    # The same events again over raw SSE on the watcher's instance, ids equal to versions.
    assert [(i, d["version"]) for i, d in sse_ids(watcher.url, played.game_id, 12)] == [
        (str(v), v) for v in range(1, 13)]


def test_a_long_poll_on_one_instance_wakes_on_a_move_through_the_other(two) -> None:
    waiter, mover = two
    played = HttpGame(mover.url, seed="live-poll")
    # The move comes after the long-poll has looked for its client a few times (every
    # GONE_CHECK_SECONDS): a look that waited for the client parked the poll until the client's
    # own timeout, 40 s (the regression of c2786fd).
    threading.Timer(1.5, played.step, args=(mover.url,)).start()
    started = time.monotonic()
    view = AosClient(waiter.url).wait(played.game_id, 0, timeout=30)
    assert view is not None and view.version == 1
    assert time.monotonic() - started < 10
    # And a 304 when nothing moves within the wait.
    response = requests.get(f"{waiter.url}/v1/games/{played.game_id}", timeout=TIMEOUT,
                            headers={"If-None-Match": '"1"', "Prefer": "wait=1"})
    assert response.status_code == 304 and response.headers["Preference-Applied"] == "wait=1"
