"""The archive through outages, with real processes: PostgreSQL stopped for a while under moves
(the moves go on committing, and the archive catches up when it is back), and the copier killed
in the middle of a batch (another takes over: nothing missing, nothing twice)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from archive_games import archived_entries, create, play, query, script
from pg_cluster import free_port

from service.archive.copier import ArchiveCopier
from service.jobs.runner import Runner
from service.referee.games import Games
from service.referee.restore import describe
from service.referee.settings import Settings
from service.store import RedisStore
from service.store.archive import Archive

ROOT = Path(__file__).resolve().parents[2]


def wait_until(check, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def assert_archived_exactly(store: RedisStore, database_url: str, game_ids: list[str]) -> None:
    total = 0
    for game_id in game_ids:
        log = store.history(game_id)
        assert archived_entries(database_url, game_id) == list(enumerate(log, start=1)), game_id
        total += len(log)
    assert query(database_url, "SELECT count(*) FROM moves") == [(total,)]
    assert query(database_url, "SELECT count(*) FROM games") == [(len(game_ids),)]
    assert query(database_url, "SELECT count(*) FROM games g WHERE g.version = "
                 "(SELECT count(*) FROM moves m WHERE m.game_id = g.id)") == [(len(game_ids),)]


def test_postgresql_stopped_under_moves_then_started_nothing_missing(redis_url: str, own_postgres) -> None:
    store = RedisStore(redis_url)
    games = Games(store, Settings())
    database_url = own_postgres.url()
    archive = Archive(database_url, timeout=1.0, connect_timeout=1)
    copier = ArchiveCopier(store, archive, describe, "worker", cache_ttl=600)
    stop = threading.Event()
    worker = threading.Thread(target=Runner([copier], idle_sleep=0.05, error_sleep=0.2).run, args=(stop,))
    worker.start()
    try:
        ids = []
        for n in range(3):
            ids.append(create(games, "rust_belt", 3, f"outage-{n}")["game_id"])
        moves = {g: script("rust_belt", 3, f"outage-{n}") for n, g in enumerate(ids)}
        for g in ids:
            play(games, g, moves[g], 0, 10)
        wait_until(lambda: copier.backlog() == 0, 20, "the copier to catch up")

        own_postgres.stop()
        committed = time.monotonic()
        for g in ids:
            play(games, g, moves[g], 10, 40)  # every move commits: none waits on PostgreSQL
        assert time.monotonic() - committed < 15
        time.sleep(1.0)  # the copier fails meanwhile, holding its batch
        assert copier.backlog() >= 90
        assert copier._held

        own_postgres.start()
        for g in ids:
            play(games, g, moves[g], 40, 50)
        wait_until(lambda: copier.backlog() == 0, 30, "the archive to catch up")
    finally:
        stop.set()
        worker.join(10)
    assert_archived_exactly(store, database_url, ids)
    archive.close()
    store.close()


def copier_process(redis_url: str, database_url: str, consumer: str, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "REDIS_URL": redis_url, "DATABASE_URL": database_url, "LOG_LEVEL": "warning"}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    return subprocess.Popen(
        [sys.executable, "-m", "service.archive", "copy", "--consumer", consumer, *extra],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )


def test_the_copier_killed_mid_copy_nothing_missing_nothing_twice(redis_url: str, database_url: str) -> None:
    store = RedisStore(redis_url)
    games = Games(store, Settings())
    ids = []
    for n in range(6):
        game_id = create(games, "rust_belt", 3, f"killed-{n}")["game_id"]
        play(games, game_id, script("rust_belt", 3, f"killed-{n}"), 0, 40)
        ids.append(game_id)
    total = 6 * 41  # each game's create and its 40 moves
    assert store.outbox_backlog("archive") == total
    client = store._redis()

    def pending_of(consumer: str) -> int:
        count = 0
        for shard in range(32):
            stream = f"aos:v2:{{s{shard:02d}}}:outbox"
            for entry in client.xpending(stream, "archive")["consumers"]:
                if entry["name"] in (consumer, consumer.encode()):
                    count += int(entry["pending"])
        return count

    def archived() -> int:
        return query(database_url, "SELECT count(*) FROM moves")[0][0]

    # One change per shard per round, so that the copy takes many rounds: killed at random in
    # the middle of them, the copier holds changes it took and never acknowledged.
    for attempt in range(5):
        doomed = copier_process(redis_url, database_url, f"doomed-{attempt}", "--batch", "1")
        start = archived()
        wait_until(lambda d=doomed, s=start: archived() > s + 10 or d.poll() is not None, 30,
                   "copying to start")
        doomed.send_signal(signal.SIGKILL)
        doomed.wait(10)
        if pending_of(f"doomed-{attempt}") > 0 and archived() < 6 * 40:
            break
    else:
        raise AssertionError("never killed the copier in the middle of a batch")
    assert 0 < archived() < 6 * 40

    heir = copier_process(redis_url, database_url, "heir", "--claim-idle-ms", "300")
    try:
        wait_until(lambda: store.outbox_backlog("archive") == 0, 60, "the heir to finish the copy")
    finally:
        heir.send_signal(signal.SIGTERM)
        assert heir.wait(20) == 0, heir.stderr.read().decode()[-2000:]
    assert all(pending_of(f"doomed-{n}") == 0 for n in range(5))
    assert_archived_exactly(store, database_url, ids)

    # Then Redis loses everything, and gunicorn's forked workers put the games back.
    before = {g: (store.history(g), store.load_view(g)) for g in ids}
    client.flushall()
    port = free_port()
    env = {**os.environ, "REDIS_URL": redis_url, "DATABASE_URL": database_url, "LOG_LEVEL": "warning"}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    api = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--config", str(ROOT / "deploy" / "gunicorn.conf.py"),
         "--workers", "2", "--bind", f"127.0.0.1:{port}", "service.api:create_app()"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        wait_until(lambda: _get(port, "/v1/health")[0] == 200, 30, "gunicorn")
        for game_id, (log, (version, view)) in before.items():
            status, body, etag = _get(port, f"/v1/games/{game_id}/history")
            assert status == 200 and body == b"[" + b",".join(log) + b"]" and etag == f'"{version}"'
            assert _get(port, f"/v1/games/{game_id}")[1] == view
    finally:
        api.send_signal(signal.SIGTERM)
        api.wait(30)
    store.close()


def _get(port: int, path: str) -> tuple[int, bytes, str | None]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
            return response.status, response.read(), response.headers.get("ETag")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), None
    except OSError:
        return 0, b"", None
