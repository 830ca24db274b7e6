"""`python -m service.store.migrate`: moves games stored under the old key layout (`aos:v1`, one
hash tag per game) to the sharded one (`aos:v2`), keeping each game's version, state, log and
remaining time to live. Run it once, with the API stopped or still on the old release, on the
REDIS_URL of the deployment; it is safe to run again (a game already moved is left alone).

Old games carry no outbox entry and no clock: the archive learns of them at their next move.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from .keys import game_keys
from .redis_store import RedisStore, connect

log = logging.getLogger("service.store.migrate")

OLD_PREFIX = "aos:v1"
OLD_STATE = f"{OLD_PREFIX}:{{game:*}}:state"


def old_keys(game_id: str) -> tuple[str, str]:
    base = f"{OLD_PREFIX}:{{game:{game_id}}}"
    return f"{base}:state", f"{base}:log"


def migrate(url: str) -> tuple[int, int]:
    """Moves every old game; returns (moved, already there)."""
    store = RedisStore(url)
    client = connect(url)
    moved = skipped = 0
    try:
        for raw in client.scan_iter(match=OLD_STATE, count=500):
            name = raw.decode()
            game_id = name[len(f"{OLD_PREFIX}:{{game:"):-len("}:state")]
            state_key, log_key = old_keys(game_id)
            fields = client.hgetall(state_key)
            ttl = client.ttl(state_key)
            if not fields or ttl == -2:
                continue  # expired while we looked
            if store.version(game_id) is not None:
                skipped += 1
                continue
            entries = client.lrange(log_key, 0, -1)
            ttl = ttl if ttl > 0 else 30 * 24 * 3600
            store.create(game_id, state=fields[b"state"], meta=fields[b"meta"], view=fields[b"view"],
                         ttl=ttl, log=entries)
            new = game_keys(game_id)
            assert store.version(game_id) == int(fields[b"version"]), f"{game_id}: version differs"
            client.delete(state_key, log_key)
            moved += 1
            log.info("moved %s to %s (version %d)", game_id, new.state, int(fields[b"version"]))
    finally:
        client.close()
        store.close()
    return moved, skipped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m service.store.migrate", description=__doc__)
    parser.add_argument("--url", default=os.environ.get("REDIS_URL"), help="default: $REDIS_URL")
    args = parser.parse_args(argv)
    if not args.url:
        parser.error("set REDIS_URL or pass --url")
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    moved, skipped = migrate(args.url)
    print(f"moved {moved} game(s) to the aos:v2 layout; {skipped} were there already")
    return 0


if __name__ == "__main__":
    sys.exit(main())
