"""Redis with an AOF (fsync every second) restarted mid-game: every game is intact after it
(same version, view and history) and plays on to its end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.scale.conftest import RedisProcess
from tests.scale.http_play import TIMEOUT, HttpGame


@pytest.fixture
def aof_redis(tmp_path: Path) -> Iterator[RedisProcess]:
    server = RedisProcess(tmp_path, "--appendonly", "yes", "--appendfsync", "everysec", "--save", "")
    try:
        server.start()
        yield server
    finally:
        server.stop()


def test_games_survive_a_redis_restart(aof_redis: RedisProcess, services) -> None:
    one, two = services(f"redis://127.0.0.1:{aof_redis.port}/0", 2)
    urls = [one.url, two.url]
    games = [HttpGame(urls[n % 2], seed=f"aof-{n}") for n in range(4)]
    for n, g in enumerate(games):
        g.play(urls, moves=10 + 5 * n)
    before = {g.game_id: g.snapshot(one.url) for g in games}
    assert all(version > 0 for version, _, _ in before.values())

    aof_redis.stop()  # SIGTERM: Redis writes out its AOF and exits
    assert requests.get(f"{one.url}/v1/ready", timeout=TIMEOUT).status_code == 503
    assert (aof_redis.workdir / "appendonlydir").is_dir()
    aof_redis.start()  # the same port and directory: it loads the AOF

    for g in games:
        for url in urls:
            assert g.snapshot(url) == before[g.game_id]
    for g in games:
        g.play(urls)
        assert g.finished
        version, _, _ = g.snapshot(two.url)
        assert version == g.version
