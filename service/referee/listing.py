"""A tenant's games, newest first, a page at a time (`GET /v1/games`).

Two places know whose games there are: the tenants' ledger beside the games in Redis (every game
as soon as it is made) and, when one is configured, the archive in PostgreSQL (every game the
copier has copied, including those that left Redis: expired, flushed). A page is read from both
and merged on the listing's order, (created ms, game id) descending, which is also what a cursor
names. Each source is read down to a bound below which it may hold more; the page stops at the
higher of the two bounds, so that no game of either is skipped, and the next page starts there.
A game in Redis is shown as Redis has it (the archive may lag behind); one only in the archive,
as archived. Nothing is put back from the archive to be listed.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from service.store.base import GameStore
from service.tenants.ledger import Ledger

from .errors import GameError

if TYPE_CHECKING:
    from service.store.archive import Archive

MAX_LIST = 100  # games on one page of the listing, at most
LEDGER_PAGES = 5  # pages of the ledger looked at, at most, to fill one page past the filters

Key = tuple[int, str]  # (created ms, game id): the listing's order, descending


@dataclass(frozen=True, slots=True)
class Filters:
    status: str | None = None  # active | finished
    map_id: str | None = None


def parse_cursor(cursor: str) -> Key:
    ms, _, game_id = cursor.partition(".")
    if not ms.isdigit() or not game_id or len(cursor) > 100:
        raise GameError("BAD_CURSOR", "this cursor is not one the listing gave")
    return int(ms), game_id


def cursor_of(key: Key) -> str:
    return f"{key[0]}.{key[1]}"


def page(store: GameStore, ledger: Ledger, archive: Archive | None, tenant: str, *,
         cursor: str | None, limit: int, filters: Filters) -> tuple[list[dict[str, Any]], str | None]:
    """One page of the tenant's games (at most `limit`), and the cursor of the next (None: that
    was the last)."""
    before = parse_cursor(cursor) if cursor else None
    found: dict[str, tuple[Key, dict[str, Any]]] = {}
    ledger_bound = _from_ledger(store, ledger, archive, tenant, before, limit, filters, found)
    archive_bound = None
    if archive is not None:
        rows = archive.tenant_games(tenant, before=before, count=limit,
                                    finished=None if filters.status is None else filters.status == "finished",
                                    map_id=filters.map_id)
        for row in rows:
            key = (row.created_ms, row.game_id)
            if row.game_id in found:
                continue  # Redis's is the newer word
            live = store.load_view(row.game_id)
            if live is not None:  # in Redis, though its ledger entry is gone: as Redis has it
                item = _live_item(row.game_id, row.map, row.created_ms, live)
                if filters.status is None or item["status"] == filters.status:
                    found[row.game_id] = (key, item)
                continue
            found[row.game_id] = (key, _item(row.game_id, row.map, row.created_ms, row.version,
                                             "finished" if row.finished else "active",
                                             list(enumerate(row.players))))
        archive_bound = (rows[-1].created_ms, rows[-1].game_id) if len(rows) == limit else None
    bounds = [b for b in (ledger_bound, archive_bound) if b is not None]
    bound = max(bounds) if bounds else None
    ordered = sorted((v for v in found.values() if bound is None or v[0] >= bound),
                     key=lambda v: v[0], reverse=True)
    if len(ordered) > limit:
        ordered = ordered[:limit]
        bound = ordered[-1][0]
    return [item for _, item in ordered], None if bound is None else cursor_of(bound)


def _from_ledger(store: GameStore, ledger: Ledger, archive: Archive | None, tenant: str,
                 before: Key | None, limit: int, filters: Filters,
                 found: dict[str, tuple[Key, dict[str, Any]]]) -> Key | None:
    """Reads the ledger's pages into `found` until `limit` games passed the filters or a
    bounded number of pages was read; returns the key of the last game looked at (None: the
    ledger holds no more). A game gone from Redis is the archive's to list."""
    position = before
    matched = 0
    gone: set[str] = set()
    for _ in range(LEDGER_PAGES):
        listed = ledger.games(tenant, before=position, count=limit)
        for entry in listed:
            if filters.map_id is not None and entry.map != filters.map_id:
                continue
            live = store.load_view(entry.game_id)
            if live is None:
                gone.add(entry.game_id)
                continue
            item = _live_item(entry.game_id, entry.map, entry.created_ms, live)
            if filters.status is None or item["status"] == filters.status:
                found[entry.game_id] = ((entry.created_ms, entry.game_id), item)
                matched += 1
        if len(listed) < limit:
            position = None
            break
        position = (listed[-1].created_ms, listed[-1].game_id)
        if matched >= limit:
            break
    # A game gone from Redis leaves the ledger once the archive has it (it lists it from then
    # on), or at once without an archive (it expired), so the ledger stays as small as Redis.
    for game_id in gone if archive is None else archive.known(gone):
        ledger.remove_game(tenant, game_id)
    return position


def _live_item(game_id: str, map_id: str, created_ms: int, live: tuple[int, bytes]) -> dict[str, Any]:
    version, view = live
    data = orjson.loads(view)
    return _item(game_id, map_id, created_ms, version, data["status"],
                 [(p["seat"], p["name"]) for p in data["players"]])


def _item(game_id: str, map_id: str, created_ms: int, version: int, status: str,
          players: list[tuple[int, str]]) -> dict[str, Any]:
    created_at = dt.datetime.fromtimestamp(created_ms / 1000, dt.UTC).isoformat(timespec="milliseconds")
    return {"game_id": game_id, "map": map_id, "status": status, "version": version,
            "created_at": created_at.replace("+00:00", "Z"),
            "players": [{"seat": seat, "name": name} for seat, name in players]}
