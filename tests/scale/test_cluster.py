"""Scale-out: two service instances (gunicorn, two workers each) on one three-master Redis
Cluster, playing whole games through both at once. No CROSSSLOT error, nothing lost."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import requests
from prometheus_client.parser import text_string_to_metric_families
from redis.crc import key_slot

from service.store.keys import game_keys
from tests.scale.http_play import TIMEOUT, HttpGame


def scrape(metrics_url: str) -> dict[tuple[str, tuple], float]:
    text = requests.get(metrics_url, timeout=TIMEOUT).text
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def total(samples: dict, name: str, **labels: str) -> float:
    wanted = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and wanted <= set(ls))


def one_game_per_master(cluster, base_url: str) -> list[HttpGame]:  # type: ignore[no-untyped-def]
    """New games until every master holds one (game ids are random, so their slots are too)."""
    client = cluster.client()
    try:
        by_node: dict[str, HttpGame] = {}
        for n in range(60):
            created = HttpGame(base_url, seed=f"cluster-{n}")
            node = client.get_node_from_key(game_keys(created.game_id).state).name
            by_node.setdefault(node, created)
            if len(by_node) == len(cluster.nodes):
                return list(by_node.values())
    finally:
        client.close()
    raise AssertionError(f"60 games landed on only {len(by_node)} masters")


def test_whole_games_through_two_instances_on_a_cluster(cluster, services) -> None:
    one, two = services(cluster.url, 2)
    urls = [one.url, two.url]
    games = one_game_per_master(cluster, one.url)

    # Each game in its own thread, each move through the other instance than the last.
    with ThreadPoolExecutor(len(games)) as pool:
        for result in [pool.submit(g.play, urls[i % 2 :] + urls[: i % 2]) for i, g in enumerate(games)]:
            result.result()

    for g in games:
        assert g.finished
        for url in urls:
            version, view, history = g.snapshot(url)
            assert version == g.version
            entries = json.loads(history)
            assert len(entries) == version  # every committed move is in the log, once
            assert [e["version"] for e in entries] == list(range(1, version + 1))
        # The record replays, on the other instance, to the same game and the same scores.
        record = requests.get(f"{one.url}/v1/games/{g.game_id}/record", timeout=TIMEOUT).json()
        replayed = requests.post(f"{two.url}/v1/games", json={"record": record}, timeout=TIMEOUT)
        assert replayed.status_code == 201, replayed.text
        final = json.loads(g.snapshot(one.url)[1])
        assert replayed.json()["version"] == g.version
        assert replayed.json()["scores"] == final["scores"]
        assert replayed.json()["phase"] == final["phase"] == "finished"

    # A game's keys share one slot, and the games are spread over every master.
    keys = [game_keys(g.game_id) for g in games]
    slots = {key_slot(k.encode()) for keyset in keys for k in (keyset.state, keyset.log)}
    assert len(slots) == len(games)

    moves = sum(g.version for g in games)
    samples = [scrape(service.metrics_url) for service in (one, two)]
    assert sum(total(s, "aos_moves_applied_total", map="rust_belt") for s in samples) == moves
    assert sum(total(s, "aos_store_errors_total") for s in samples) == 0
    for s in samples:  # both instances served moves, and no 5xx at all
        assert total(s, "aos_http_requests_total", route="/v1/games/<game_id>/moves", status="200") > 0
        server_errors = [k for k, v in s.items() if k[0] == "aos_http_requests_total" and v
                         and dict(k[1])["status"].startswith("5")]
        assert not server_errors, server_errors


def test_request_ids_and_json_logs_under_gunicorn(cluster, services) -> None:
    (service,) = services(cluster.url, 1)
    game = HttpGame(service.url, seed="logs")
    response = requests.get(
        f"{service.url}/v1/games/{game.game_id}", headers={"X-Request-Id": "trace-0042"}, timeout=TIMEOUT
    )
    assert response.headers["X-Request-Id"] == "trace-0042"
    missing = requests.get(f"{service.url}/v1/games/nope", timeout=TIMEOUT)
    assert missing.status_code == 404 and len(missing.headers["X-Request-Id"]) == 32
    assert service.process is not None
    master = service.process.pid
    service.stop()  # flushes the log
    lines = [json.loads(line) for line in service.log().splitlines() if line.startswith("{")]
    access = [line for line in lines if line.get("log") == "access"]
    (traced,) = [line for line in access if line["request_id"] == "trace-0042"]
    assert traced["route"] == "/v1/games/<game_id>" and traced["status"] == 200
    assert traced["game_id"] == game.game_id and traced["method"] == "GET"
    assert any(line["request_id"] == missing.headers["X-Request-Id"] for line in access)
    # One line per request: the app writes it, gunicorn's own access log is off.
    assert len([line for line in access if line["request_id"] == "trace-0042"]) == 1
    # Each line names the process that wrote it: a request's, the worker that served it.
    assert all(isinstance(line["pid"], int) and line["pid"] != master for line in access)


def test_rate_limits_are_counted_in_the_cluster_and_shared_by_both_instances(cluster, services) -> None:
    one, two = services(cluster.url, 2, AOS_RATE_LIMIT_CREATE="3/minute")
    body = {"map": "rust_belt", "players": [{"name": n} for n in ("a", "b", "c")], "seed": "limits"}
    statuses = [requests.post(f"{url}/v1/games", json=body, timeout=TIMEOUT).status_code
                for url in (one.url, two.url, one.url, two.url, one.url)]
    assert statuses == [201, 201, 201, 429, 429]
    refused = requests.post(f"{two.url}/v1/games", json=body, timeout=TIMEOUT)
    assert refused.json()["code"] == "RATE_LIMITED" and int(refused.headers["Retry-After"]) >= 1
    for service in (one, two):
        service.stop()
        assert "falling back to in-memory" not in service.log()  # the cluster held the counts


def test_the_marks_of_a_kept_names_reads_on_a_cluster(cluster) -> None:
    """A read of a kept name on a cluster goes through redis-py's cluster pipeline, which
    applies reply callbacks: SET … GET still answers whether the name was read lately, as a
    peek's GET of the mark does, and the kept value comes back at its version."""
    from service.store import RedisStore

    store = RedisStore(cluster.url)
    store.create("kept-on-cluster", state=b"s", meta=b"m", view=b"v", ttl=60)
    assert store.peek_kept("kept-on-cluster", "legal:1")[1] is False
    store.mark_read("kept-on-cluster", "legal:1", 30)
    assert store.peek_kept("kept-on-cluster", "legal:1")[1] is True
    assert store.load_kept("kept-on-cluster", "legal:3", 30)[2] is False
    assert store.load_kept("kept-on-cluster", "legal:3", 30)[2] is True
    store.keep("kept-on-cluster", "legal:1", 0, b"moves", ttl=30)
    stored, kept, read_lately = store.load_kept("kept-on-cluster", "legal:1", 30)
    assert (stored.version, kept, read_lately) == (0, b"moves", True)
    assert store.load_kept("kept-on-cluster", "legal:2", 30)[1:] == (None, False)
    assert store.peek_kept("no-such-game", "legal:1") is None
