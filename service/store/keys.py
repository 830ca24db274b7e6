"""Redis key names.

Games are spread over a fixed number of shards. Every key of a game, and the shard's own keys
(its outbox stream, its clock set, its event channel, the records of creates, its queue of webhook
deliveries), carry the shard's hash tag `{sNN}`, so they share one Cluster slot: one Lua script
can change a game and queue what follows from the change (the outbox entry, the clock, the event)
atomically, on one Redis or on a Redis Cluster alike. The background worker reads each shard's
outbox, clocks and deliveries.

SHARDS is part of the key layout: changing it moves games to other keys, so it is fixed for the
life of a deployment (the layout's namespace, `aos:v2`, would change with it).
"""

from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass

PREFIX = "aos:v2"
SHARDS = 32


def shard_of(game_id: str) -> int:
    """The shard a game's keys live in: a stable hash of its id."""
    return zlib.crc32(game_id.encode()) % SHARDS


def shard_tag(shard: int, prefix: str = PREFIX) -> str:
    return f"{prefix}:{{s{shard:02d}}}"


@dataclass(frozen=True, slots=True)
class GameKeys:
    state: str  # hash: version, state, meta, view, ttl
    log: str  # list: one entry per version
    base: str  # prefix of the game's other keys (idempotency records, kept answers)


# Kept for the games served lately: a move names its game's keys in its load and its commit
# (a hash of the id and three strings each time, some 1.5 µs).
@functools.lru_cache(maxsize=1024)
def game_keys(game_id: str, prefix: str = PREFIX) -> GameKeys:
    base = f"{shard_tag(shard_of(game_id), prefix)}:g:{game_id}"
    return GameKeys(state=f"{base}:state", log=f"{base}:log", base=base)


def idem_key(game_id: str, key: str, prefix: str = PREFIX) -> str:
    return f"{game_keys(game_id, prefix).base}:idem:{key}"


def tombstone_key(game_id: str, prefix: str = PREFIX) -> str:
    """Left where a deleted game was, for a while: its id answers 410, not 404."""
    return f"{game_keys(game_id, prefix).base}:deleted"


def kept_key(game_id: str, name: str, prefix: str = PREFIX) -> str:
    return kept_key_of(game_keys(game_id, prefix), name)


def kept_key_of(keys: GameKeys, name: str) -> str:
    """kept_key from the game's keys at hand (a listing's read names two: the value and its read mark)."""
    return f"{keys.base}:kept:{name}"


# The mark that a kept name was read lately (GameStore.commit's `ahead`), kept under this + the name.
READ = "read:"
# The list whose items wake the readers waiting for a kept name (GameStore.await_kept).
READY = "ready:"


@dataclass(frozen=True, slots=True)
class ShardKeys:
    outbox: str  # stream: one entry per change of a game (created, committed), for the worker
    clocks: str  # sorted set: game id -> the unix time its active seat's clock runs out
    events: str  # sharded pub/sub channel: "<game id> <version>" after every new version
    deliveries: str  # sorted set: webhook delivery id -> the unix time it is due (or its claim ends)
    delivery_jobs: str  # hash: webhook delivery id -> what to send (opaque to the store)
    searches: str  # sorted set: search (hint) id -> the unix time it is due (or its claim ends)
    search_jobs: str  # hash: search id -> what to search (opaque to the store)

    def queue(self, name: str) -> tuple[str, str]:
        """The sorted set and the hash of one of the worker's queues: webhooks or searches."""
        if name == "webhooks":
            return self.deliveries, self.delivery_jobs
        if name == "searches":
            return self.searches, self.search_jobs
        raise ValueError(f"no queue {name!r}")


@functools.cache  # a few per prefix: SHARDS of them; a commit names its shard's every time
def shard_keys(shard: int, prefix: str = PREFIX) -> ShardKeys:
    tag = shard_tag(shard, prefix)
    return ShardKeys(outbox=f"{tag}:outbox", clocks=f"{tag}:clocks", events=f"{tag}:events",
                     deliveries=f"{tag}:deliveries", delivery_jobs=f"{tag}:delivery-jobs",
                     searches=f"{tag}:searches", search_jobs=f"{tag}:search-jobs")


def create_record_key(shard: int, digest: str, prefix: str = PREFIX) -> str:
    """Where a create's Idempotency-Key record lives: in the shard the game is created in, so
    that the record and the game are written by one script."""
    return f"{shard_tag(shard, prefix)}:create:{digest}"
