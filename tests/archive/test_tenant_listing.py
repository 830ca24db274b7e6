"""A tenant's listing from the archive: games that left Redis (flushed, expired) are listed still,
newest first, a page at a time, merged with the games Redis has that the copier has not copied
yet; only the caller's own; and nothing is put back into Redis to be listed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis
from archive_games import drain, play, script

from service.archive.copier import ArchiveCopier
from service.referee.games import Games
from service.referee.listing import Filters
from service.referee.restore import describe
from service.referee.settings import Settings
from service.referee.tenancy import Caller, Tenancy
from service.store import RedisStore
from service.store.archive import Archive
from service.tenants import MemoryKeys, new_key
from service.tenants.ledger import RedisLedger


class Host:
    def __init__(self, redis_url: str, database_url: str) -> None:
        self.store = RedisStore(redis_url)
        self.games = Games(self.store, Settings(database_url=database_url, tenant_writes_per_second=10_000))
        self.ledger = RedisLedger(redis_url)
        self.tenancy = Tenancy(self.games.settings, MemoryKeys(), self.ledger)
        self.games.tenancy = self.tenancy
        self.callers: dict[str, Caller] = {}
        for tenant in ("Acme", "Beta"):
            key, record = new_key(tenant, ["games:write", "games:read"])
            self.tenancy.registry.add(record)
            self.callers[tenant] = self.tenancy.caller(key)
        self.copier = ArchiveCopier(self.store, Archive(database_url), describe, "c1", cache_ttl=600)

    def create(self, tenant: str, map_id: str = "rust_belt", seed: str = "s") -> tuple[tuple[int, str], str]:
        who = self.callers[tenant]
        body = {"map": map_id, "players": [{"name": f"P{i}"} for i in range(3)], "seed": seed}
        made = self.games.create(body, body, None, owner=self.tenancy.owner_meta(who, False))
        self.tenancy.created(who, made.game_id, map_id, made.created_ms)
        return (made.created_ms, made.game_id), made.game_id

    def listing(self, tenant: str, limit: int, archive: bool = True, **filters: str) -> list[list[str]]:
        """Every page of the tenant's listing, each as its games' ids."""
        pages, cursor = [], None
        while True:
            listed, cursor = self.tenancy.page(self.callers[tenant], self.store,
                                               self.games.archive if archive else None, cursor, limit,
                                               Filters(**filters))
            pages.append([g["game_id"] for g in listed])
            if cursor is None:
                return pages

    def close(self) -> None:
        self.store.close()
        self.ledger.close()


@pytest.fixture
def host(redis_url: str, database_url: str) -> Iterator[Host]:
    made = Host(redis_url, database_url)
    yield made
    made.close()


def test_games_that_left_redis_are_listed_from_the_archive_newest_first_in_pages(
        host: Host, redis_url: str) -> None:
    acme = [host.create("Acme", "iraq" if n % 4 == 0 else "rust_belt", f"a{n}") for n in range(11)]
    beta = [host.create("Beta", seed=f"b{n}") for n in range(2)]
    finished = host.create("Acme", seed="done")
    moves = script("rust_belt", 3, "done")
    play(host.games, finished[1], moves)
    acme.append(finished)
    drain(host.copier)
    with redis.Redis.from_url(redis_url) as client:
        client.flushall()  # Redis lost everything, the tenants' ledger with it

    newest_first = [g for _, g in sorted(acme, reverse=True)]
    pages = host.listing("Acme", 5)
    assert [len(p) for p in pages] == [5, 5, 2]
    assert sum(pages, []) == newest_first
    assert host.listing("Beta", 5) == [[g for _, g in sorted(beta, reverse=True)]]
    assert host.listing("Acme", 100, status="finished") == [[finished[1]]]
    iraq = [g for _, g in sorted(acme[0:11:4], reverse=True)]
    assert sum(host.listing("Acme", 2, map_id="iraq"), []) == iraq
    assert len(iraq) == 3
    # As archived: the finished game's whole history, the others at their start.
    [done] = host.tenancy.page(host.callers["Acme"], host.store, host.games.archive, None, 100,
                               Filters(status="finished"))[0]
    assert (done["status"], done["version"], done["map"]) == ("finished", len(moves), "rust_belt")
    assert [p["name"] for p in done["players"]] == ["P0", "P1", "P2"]
    assert all(host.store.load_view(g) is None for g in newest_first)  # nothing put back to list it

    # Games made since, not copied yet, come first, from Redis; without the archive only they list.
    fresh = [host.create("Acme", seed=f"f{n}") for n in range(3)]
    merged = sum(host.listing("Acme", 4), [])
    assert merged == [g for _, g in sorted(fresh, reverse=True)] + newest_first
    assert host.listing("Acme", 4, archive=False) == [[g for _, g in sorted(fresh, reverse=True)]]


def test_a_game_in_both_is_listed_once_as_redis_has_it(host: Host) -> None:
    key, game_id = host.create("Acme", seed="both")
    drain(host.copier)
    play(host.games, game_id, script("rust_belt", 3, "both"), 0, 4)  # not copied yet
    [[listed]] = [host.tenancy.page(host.callers["Acme"], host.store, host.games.archive, None, 10)[0]]
    assert (listed["game_id"], listed["version"]) == (game_id, 4)
    # Beta sees none of it, from either place.
    assert host.listing("Beta", 10) == [[]]
    # A deleted game leaves both.
    host.games.delete(game_id)
    host.ledger.remove_game("Acme", game_id)
    assert host.listing("Acme", 10) == [[]]
