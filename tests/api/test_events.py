"""The events stream in process: every version as an event in order (id = version), both
framings, resume from every point of a whole game, undo and takeback entries, heartbeats, the
end of a stream, its errors, and one read of the store per notice for every watcher of a game."""

from __future__ import annotations

import queue
import random
import threading
import time

import orjson
import pytest
from openapi_schema_validator import OAS31Validator

from service.referee import timeline
from service.referee.games import log_entry, render_at
from service.store import MemoryStore, RedisStore
from tests.contract import parsed_contract

SPEC = parsed_contract()
EVENT_SCHEMA = OAS31Validator({"$ref": "#/components/schemas/GameEvent", "components": SPEC["components"]})
FAST = {"events_heartbeat": 0.1}  # heartbeats every 0.1 s: idle streams show them at once


def check_event(event: dict) -> dict:
    """An event as the contract has it (the stream's body is not checked by the contract hook)."""
    errors = sorted(EVENT_SCHEMA.iter_errors(event), key=str)
    assert not errors, errors[0]
    return event


def parse_sse(data: bytes) -> list[dict]:
    """SSE frames as dicts of their fields; a comment frame is {"comment": text}."""
    frames = []
    for block in data.decode().split("\n\n"):
        if not block:
            continue
        frame: dict = {}
        for line in block.split("\n"):
            if line.startswith(":"):
                frame["comment"] = line[1:].strip()
            else:
                name, _, value = line.partition(": ")
                frame[name] = value
        frames.append(frame)
    return frames


class Reader:
    """Reads a streamed response in a thread of its own, chunk by chunk (each chunk one frame),
    until told to stop (it notices at the next heartbeat) or the stream ends."""

    def __init__(self, response) -> None:  # type: ignore[no-untyped-def]
        self.response = response
        self.chunks: queue.Queue[bytes | None] = queue.Queue()
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            for chunk in self.response.response:
                self.chunks.put(chunk)
                if self._stop.is_set():
                    break
        finally:
            self.response.close()
            self.chunks.put(None)

    def next(self, timeout: float = 5.0) -> bytes | None:
        return self.chunks.get(timeout=timeout)

    def events(self, n: int, timeout: float = 5.0) -> list[bytes]:
        """The next n chunks that are not heartbeats."""
        got: list[bytes] = []
        deadline = time.monotonic() + timeout
        while len(got) < n:
            chunk = self.chunks.get(timeout=max(0.01, deadline - time.monotonic()))
            assert chunk is not None, f"the stream ended after {len(got)} of {n} events"
            if chunk.strip() and not chunk.startswith((b":", b"retry:")):
                got.append(chunk)
        return got

    def stop(self) -> None:
        self._stop.set()
        self.thread.join(10)
        assert not self.thread.is_alive()


def open_stream(api, gid: str, accept: str = "text/event-stream", **headers: str):  # type: ignore[no-untyped-def]
    query = headers.pop("query", None)
    url = f"/v1/games/{gid}/events" + (f"?{query}" if query else "")
    response = api.client.get(url, headers={"Accept": accept, **headers}, buffered=False)
    return response


def history(api, gid: str) -> list[dict]:  # type: ignore[no-untyped-def]
    return api.client.get(f"/v1/games/{gid}/history").get_json()


def play_to_the_end(api, game: dict, seed: int = 5) -> dict:  # type: ignore[no-untyped-def]
    view = api.play(game, 2000, random.Random(seed))
    assert view["status"] == "finished"
    return view


# -- order, framing, contents -----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_live_events_come_in_order_with_ids_equal_to_versions(api_on, kind: str, request) -> None:  # type: ignore[no-untyped-def]
    store = MemoryStore() if kind == "memory" else RedisStore(request.getfixturevalue("redis_url"))
    api = api_on(store, **FAST)
    request.addfinalizer(api.app.extensions["aos.live"].hub.close)  # its reader of Redis
    game = api.create(seed="live-order")
    gid, tokens = game["game_id"], [s["token"] for s in game["seats"]]
    response = open_stream(api, gid)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/event-stream"
    assert response.headers["Cache-Control"] == "no-store"
    reader = Reader(response)
    assert reader.next() == b"retry: 2000\n\n"  # sent at once: the client sees the stream is open

    rng, view, answers = random.Random(2), game, []
    for _ in range(8):
        seat = view["active_seat"]
        answer = api.move(gid, tokens[seat], rng.choice(api.legal(gid, seat))).get_json()
        answers.append(answer)
        view = answer["game"]
    frames = [parse_sse(chunk)[0] for chunk in reader.events(8)]
    reader.stop()

    entries = history(api, gid)
    assert [f["id"] for f in frames] == [str(v) for v in range(1, 9)]
    for frame, answer, entry in zip(frames, answers, entries, strict=True):
        assert frame["event"] == "move"
        event = check_event(orjson.loads(frame["data"]))
        # The version's history entry, plus the view the move answered with.
        assert event["game"] == answer["game"]
        assert {k: v for k, v in event.items() if k != "game"} == entry
        assert event["version"] == int(frame["id"]) == event["game"]["version"]


def test_ndjson_framing_and_heartbeats(api_on) -> None:
    api = api_on(MemoryStore(), **FAST)
    game = api.create(seed="ndjson")
    gid, tokens = game["game_id"], [s["token"] for s in game["seats"]]
    response = open_stream(api, gid, accept="application/x-ndjson")
    assert response.headers["Content-Type"] == "application/x-ndjson"
    reader = Reader(response)
    assert [reader.next(), reader.next(), reader.next()] == [b"\n", b"\n", b"\n"]  # idle: heartbeats
    seat = game["active_seat"]
    api.move(gid, tokens[seat], api.legal(gid, seat)[0])
    [line] = reader.events(1)
    reader.stop()
    assert line.endswith(b"}\n") and line.count(b"\n") == 1
    event = check_event(orjson.loads(line))
    assert event["version"] == 1 and event["seat"] == seat


def test_sse_heartbeats_are_comment_lines(api_on) -> None:
    api = api_on(MemoryStore(), **FAST)
    gid = api.create(seed="beat")["game_id"]
    reader = Reader(open_stream(api, gid))
    assert reader.next() == b"retry: 2000\n\n"
    assert reader.next() == b": heartbeat\n\n"
    reader.stop()


def test_sse_is_the_default_framing(api_on) -> None:
    api = api_on(MemoryStore(), **FAST)
    gid = api.create(seed="default")["game_id"]
    for accept in ("*/*", "application/json", "text/event-stream, application/x-ndjson;q=0.5"):
        response = open_stream(api, gid, accept=accept)
        assert response.headers["Content-Type"] == "text/event-stream", accept
        response.close()
    response = open_stream(api, gid, accept="application/x-ndjson, text/event-stream;q=0.1")
    assert response.headers["Content-Type"] == "application/x-ndjson"
    response.close()


# -- resume ----------------------------------------------------------------------------------------


def expected_events(api, gid: str) -> list[dict]:  # type: ignore[no-untyped-def]
    """Every version's event, made the slow way: the history entry and view_at (a replay from
    the seed for each version), so that nothing is shared with the stream's own replay."""
    games = api.app.extensions["aos.games"]
    return [entry | {"game": orjson.loads(games.view_at(gid, entry["version"]))}
            for entry in history(api, gid)]


def test_resume_from_every_point_of_a_whole_game_gives_exactly_the_missing_events(api_on) -> None:
    api = api_on(MemoryStore(), **FAST)
    game = api.create(seed="resume")
    gid = game["game_id"]
    final = play_to_the_end(api, game)
    expected = expected_events(api, gid)
    last = final["version"]
    assert len(expected) == last > 20, last
    assert expected[-1]["game"] == final

    for after in range(last):
        # Both ways of naming the resume point; Last-Event-ID wins over ?after=.
        query, headers = (("after=0", {"Last-Event-ID": str(after)}) if after % 2
                          else (f"after={after}", {}))
        response = api.client.get(f"/v1/games/{gid}/events?{query}", headers=headers)
        assert response.status_code == 200
        frames = [f for f in parse_sse(response.get_data()) if "data" in f]
        got = [orjson.loads(f["data"]) for f in frames]
        if after == 0:
            for event in got:
                check_event(event)
        assert [int(f["id"]) for f in frames] == list(range(after + 1, last + 1)), after
        assert got == expected[after:], f"resume after {after}"
    # Nothing after the end: 204, which also stops an EventSource from reconnecting.
    assert open_stream(api, gid, query=f"after={last}").status_code == 204
    assert open_stream(api, gid, **{"Last-Event-ID": str(last)}).status_code == 204


def test_a_stream_ends_after_the_event_that_finishes_the_game(api_on) -> None:
    api = api_on(MemoryStore(), **FAST)
    game = api.create(seed="ending")
    gid, tokens = game["game_id"], [s["token"] for s in game["seats"]]
    rng, view = random.Random(5), game
    while True:  # play to the last move, watch, make it
        seat = view["active_seat"]
        moves = api.legal(gid, seat)
        finishing = [m for m in moves if _finishes(api, gid, seat, m)]
        if finishing:
            break
        view = api.move(gid, tokens[seat], rng.choice(moves)).get_json()["game"]
    reader = Reader(open_stream(api, gid, query=f"after={view['version']}"))
    api.move(gid, tokens[seat], finishing[0])
    [chunk] = reader.events(1)
    assert orjson.loads(parse_sse(chunk)[0]["data"])["game"]["status"] == "finished"
    while (rest := reader.next()) is not None:  # the stream closes by itself
        assert rest.startswith(b":")


def _finishes(api, gid: str, seat: int, move: dict) -> bool:  # type: ignore[no-untyped-def]
    games = api.app.extensions["aos.games"]
    state = orjson.loads(games.load(gid).state)
    from service.engine import game

    return game.is_finished(game.apply(state, seat, move)[0])


def test_undo_and_takeback_entries_are_events_with_the_state_they_make(api_on) -> None:
    store = MemoryStore()
    api = api_on(store, **FAST)
    game = api.create(seed="takeback")
    gid = game["game_id"]
    api.play(game, 4, random.Random(1))
    # The entries that undo and takeback write, appended the way every change is: one
    # compare-and-set with the state they make and its view (as render_at makes past views).
    proposed = [{"type": "takeback_proposed", "seat": 0, "to_version": 2, "asked": [1], "versions": [3]}]
    for move, events in (({"type": "undo"}, []), ({"type": "takeback_proposed", "to_version": 2}, proposed),
                         ({"type": "takeback", "to_version": 2}, [])):
        commit_entry(store, gid, move, events)
    api.play({**game, "game_id": gid}, 3, random.Random(2))  # moves again, after the takeback
    commit_entry(store, gid, {"type": "undo"})

    expected = expected_events(api, gid)
    kinds = [e["move"]["type"] for e in expected]
    assert kinds.count("undo") == 2 and "takeback" in kinds and "takeback_proposed" in kinds
    # The state after an undo is the one before the move it took back.
    assert expected[4]["game"] | {"version": 3} == expected[2]["game"]
    for after in range(len(expected)):
        reader = Reader(open_stream(api, gid, accept="application/x-ndjson", query=f"after={after}"))
        got = [orjson.loads(c) for c in reader.events(len(expected) - after)]
        reader.stop()
        assert got == expected[after:], f"resume after {after}"


def commit_entry(store: MemoryStore, gid: str, move: dict, events: list[dict] | None = None) -> None:
    stored = store.load(gid)
    assert stored is not None
    entries = timeline.entries_of(store.history(gid) or [])
    entry = log_entry(stored.version, 0, move, events or [], state=orjson.loads(stored.state))
    state = timeline.state_at(orjson.loads(stored.state), [*entries, orjson.loads(entry)], stored.version + 1)
    view, _ = render_at(state, gid, stored.version + 1, stored.meta, [*entries, orjson.loads(entry)])
    result = store.commit(gid, expected_version=stored.version, ttl=3600, entries=[entry],
                          state=orjson.dumps(state), view=view)
    assert result.version == stored.version + 1


# -- bounds and errors -----------------------------------------------------------------------------


def test_a_stream_closes_after_its_lifetime_and_the_client_resumes(api_on) -> None:
    api = api_on(MemoryStore(), events_heartbeat=0.1, events_lifetime=0.3)
    gid = api.create(seed="lifetime")["game_id"]
    started = time.monotonic()
    data = open_stream(api, gid).get_data()  # returns: the stream ended by itself
    assert 0.3 <= time.monotonic() - started < 5
    assert data.startswith(b"retry: 2000\n\n")


def test_bad_resume_points_and_unknown_games(api_on) -> None:
    api = api_on(MemoryStore(), **FAST)
    game = api.create(seed="errors")
    gid = game["game_id"]
    api.play(game, 3)
    cases = [
        ({"query": "after=x"}, 400, "BAD_QUERY"),
        ({"query": "afer=2"}, 400, "BAD_QUERY"),
        ({"query": "after=-1"}, 400, "BAD_QUERY"),
        ({"Last-Event-ID": "three"}, 400, "BAD_HEADER"),
        ({"query": "after=4"}, 400, "VERSION_AHEAD"),
        ({"Last-Event-ID": "99", "query": "after=1"}, 400, "VERSION_AHEAD"),
    ]
    for headers, status, code in cases:
        response = open_stream(api, gid, **headers)
        assert response.status_code == status, headers
        assert response.get_json()["code"] == code
    assert open_stream(api, gid, query="after=4").get_json()["version"] == 3
    assert open_stream(api, "no-such-game").status_code == 404


# -- fan-out ---------------------------------------------------------------------------------------


class CountingStore(MemoryStore):
    """The memory store, counting the reads the events make: full loads of a game, and reads of
    its log from the start (what a replay from the seed needs)."""

    def __init__(self) -> None:
        super().__init__()
        self.full_loads = 0
        self.replays = 0

    def load(self, game_id: str, *, with_view: bool = False):  # type: ignore[no-untyped-def]
        self.full_loads += with_view
        return super().load(game_id, with_view=with_view)

    def history(self, game_id: str, start: int = 0, stop: int | None = None):  # type: ignore[no-untyped-def]
        self.replays += start == 0 and stop is not None and stop > 1
        return super().history(game_id, start, stop)


def test_watchers_of_a_game_share_one_read_of_the_store_per_move(api_on) -> None:
    store = CountingStore()
    api = api_on(store, **FAST)
    game = api.create(seed="fan-out")
    gid, tokens = game["game_id"], [s["token"] for s in game["seats"]]
    readers = [Reader(open_stream(api, gid)) for _ in range(20)]
    for reader in readers:
        assert reader.next() == b"retry: 2000\n\n"
    time.sleep(0.3)  # every watcher has read the game once and waits
    before = store.full_loads
    rng, view = random.Random(9), game
    for _ in range(6):
        seat = view["active_seat"]
        view = api.move(gid, tokens[seat], rng.choice(api.legal(gid, seat))).get_json()["game"]
        for reader in readers:  # every watcher gets the move before the next one is made
            [chunk] = reader.events(1)
            assert parse_sse(chunk)[0]["id"] == str(view["version"])
    for reader in readers:
        reader.stop()
    # One read per move for the 20 of them (not 20), give or take a read that met a move half
    # way; Games.apply's own loads are not full loads.
    assert store.full_loads - before <= 6 * 2, store.full_loads - before


def test_the_watch_ends_when_the_client_leaves(api_on) -> None:
    api = api_on(MemoryStore(), **FAST)
    gid = api.create(seed="leave")["game_id"]
    hub = api.app.extensions["aos.live"].hub
    reader = Reader(open_stream(api, gid))
    reader.next()
    assert hub.watching() == 1
    reader.stop()  # closes the response, as the server does when the client is gone
    assert hub.watching() == 0


def test_past_the_processes_stream_cap_a_stream_is_refused_at_once_and_other_requests_go_on(api_on) -> None:
    api = api_on(MemoryStore(), streams_per_worker=2, **FAST)
    gid = api.create(seed="cap")["game_id"]
    readers = [Reader(open_stream(api, gid)) for _ in range(2)]
    for reader in readers:
        assert reader.next() == b"retry: 2000\n\n"
    refused = open_stream(api, gid)
    assert refused.status_code == 503
    assert refused.headers["Retry-After"] == "2"
    assert refused.get_json()["code"] == "AT_CAPACITY"
    assert api.client.get(f"/v1/games/{gid}").status_code == 200  # a view is not a stream
    readers.pop().stop()  # a stream ends: its place is taken again
    again = Reader(open_stream(api, gid))
    assert again.next() == b"retry: 2000\n\n"
    for reader in (*readers, again):
        reader.stop()


def test_watchers_coming_back_a_few_versions_behind_share_one_replay(api_on) -> None:
    store = CountingStore()
    api = api_on(store, **FAST)
    game = api.create(seed="crowd")
    gid = game["game_id"]
    view = api.play(game, 12, random.Random(3))
    expected = expected_events(api, gid)
    keeper = Reader(open_stream(api, gid, query=f"after={view['version']}"))  # keeps the feed
    keeper.next()
    time.sleep(0.2)
    replays = store.replays
    # A crowd comes back (a restarted instance), each from where it was: 4 to 8 versions behind.
    readers = [Reader(open_stream(api, gid, query=f"after={view['version'] - 4 - n % 5}"))
               for n in range(20)]
    for n, reader in enumerate(readers):
        after = view["version"] - 4 - n % 5
        got = [orjson.loads(parse_sse(c)[0]["data"]) for c in reader.events(view["version"] - after)]
        assert got == expected[after:]
        reader.stop()
    keeper.stop()
    # The versions the window lacked were made once (back to the furthest), not once per watcher.
    assert store.replays - replays <= 2, store.replays - replays
