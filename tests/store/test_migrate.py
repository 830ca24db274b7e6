"""Games stored under the old key layout (aos:v1) move to the sharded one, nothing lost."""

from __future__ import annotations

from service.store import RedisStore
from service.store.keys import game_keys
from service.store.migrate import main, old_keys


def test_old_games_move_with_their_version_log_and_ttl(redis_server, redis_url, capsys) -> None:
    with redis_server.client() as client:
        for n in range(3):
            state, log = old_keys(f"old{n}")
            client.hset(state, mapping={"version": 2, "state": f"s{n}", "meta": "m", "view": "v"})
            client.rpush(log, "e1", "e2")
            client.expire(state, 5000)
            client.expire(log, 5000)
    assert main(["--url", redis_url]) == 0
    assert "moved 3 game(s)" in capsys.readouterr().out
    store = RedisStore(redis_url)
    stored = store.load("old1", with_view=True)
    assert (stored.version, stored.state, stored.meta, stored.view) == (2, b"s1", b"m", b"v")
    assert store.history("old1") == [b"e1", b"e2"]
    with redis_server.client() as client:
        assert 4990 <= client.ttl(game_keys("old1").state) <= 5000
        assert client.keys("aos:v1:*") == []
    # Safe to run again, and the moved games play on.
    assert main(["--url", redis_url]) == 0
    assert store.commit("old1", expected_version=2, ttl=60, entries=[b"e3"]).version == 3
    store.close()
