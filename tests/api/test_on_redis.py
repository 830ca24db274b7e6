"""The service on a real Redis: stateless instances sharing games, racing writers, outages."""

from __future__ import annotations

import random
import threading

from service.store import RedisStore


def test_two_instances_continue_each_others_games(api_on, redis_url: str) -> None:
    one, two = api_on(RedisStore(redis_url)), api_on(RedisStore(redis_url))
    game = one.create(seed="shared")
    gid = game["game_id"]
    tokens = [s["token"] for s in game["seats"]]
    rng = random.Random(4)
    instances = [one, two]
    for n in range(30):
        api = instances[n % 2]
        view = api.view(gid)
        if view["active_seat"] is None:
            break
        seat = view["active_seat"]
        move = rng.choice(api.legal(gid, seat))
        response = api.move(gid, tokens[seat], move, If_Match=f'"{view["version"]}"')
        assert response.status_code == 200, response.get_json()
    assert one.view(gid) == two.view(gid)
    assert one.snapshot(gid) == two.snapshot(gid)
    history = two.client.get(f"/v1/games/{gid}/history").get_json()
    assert [h["version"] for h in history] == list(range(1, len(history) + 1))
    assert len(history) == one.view(gid)["version"]
    assert two.client.get("/v1/ready").get_json() == {"status": "ready", "store": "redis"}


def test_racing_writers_through_the_api_have_one_winner(api_on, redis_url: str) -> None:
    instances = [api_on(RedisStore(redis_url)) for _ in range(4)]
    game = instances[0].create(seed="race")
    gid, seat = game["game_id"], game["active_seat"]
    token = game["seats"][seat]["token"]
    moves = instances[0].legal(gid, seat)
    barrier = threading.Barrier(8)
    statuses: list[int] = []

    def writer(n: int) -> None:
        api = instances[n % 4]
        barrier.wait()
        # Each posts a different legal move of the same seat at the same version.
        statuses.append(api.move(gid, token, moves[n % len(moves)]).status_code)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # One applied; the others were re-judged against the new state, where this seat no longer
    # decides (422), never both applied.
    assert statuses.count(200) == 1, statuses
    assert set(statuses) <= {200, 422}
    assert instances[1].view(gid)["version"] == 1
    assert len(instances[2].client.get(f"/v1/games/{gid}/history").get_json()) == 1


def test_redis_killed_mid_game_then_restarted(api_on, durable_redis) -> None:
    store = RedisStore(durable_redis.url, connect_timeout=0.2, socket_timeout=0.5, retries=1)
    api = api_on(store)
    game = api.create(seed="outage")
    gid = game["game_id"]
    tokens = [s["token"] for s in game["seats"]]
    view = api.play(game, 6, random.Random(8))
    before = api.snapshot(gid)
    seat = view["active_seat"]
    move = api.legal(gid, seat)[0]

    durable_redis.kill()
    for response in (
        api.move(gid, tokens[seat], move),
        api.client.get(f"/v1/games/{gid}"),
        api.client.get(f"/v1/games/{gid}/legal-moves?seat={seat}"),
        api.client.get(f"/v1/games/{gid}/history"),
        api.client.post("/v1/games", json={"map": "rust_belt", "players": [{"name": "a"}] * 3}),
        api.client.get("/v1/ready"),
    ):
        assert response.status_code == 503
        assert response.get_json()["code"] == "STORE_UNAVAILABLE"
        assert response.headers["Retry-After"] == "1"
    assert api.client.get("/v1/health").status_code == 200

    durable_redis.start()
    assert api.client.get("/v1/ready").status_code == 200
    assert api.snapshot(gid) == before  # nothing half-written, nothing lost
    response = api.move(gid, tokens[seat], move)
    assert response.status_code == 200
    assert response.get_json()["version"] == view["version"] + 1
