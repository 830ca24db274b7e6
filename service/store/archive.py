"""The archive in PostgreSQL: what the copier writes (one transaction per batch) and what a
rebuild reads. Bytes and versions only: the rules stay in the API.

DATABASE_URL is a libpq connection string or URI, e.g. `postgresql://aos:PASSWORD@db:5432/aos`
(`?sslmode=verify-full` for TLS). Connections come from a small pool per process, opened on
first use and again after a fork (gunicorn forks its workers after importing the app).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from service.store import StoreUnavailable

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

# psycopg and its pool are imported on first use, not here: every process of the service imports
# this module (a game put back from the archive is read through it), and psycopg was a sixth of
# an import of the API (213 of 1,206 ms), paid by each gunicorn worker, configured or not.

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Header:
    """A game's public header (its replay record's), as the API describes it from a state."""

    map: str
    players: list
    options: dict
    rules_version: str
    seed_commitment: str
    seed: str | None  # only once the game is finished
    created_ms: int


@dataclass(frozen=True, slots=True)
class Move:
    game_id: str
    version: int
    seat: int | None
    type: str
    move: str  # JSON text
    events: str  # JSON text
    at: str  # RFC 3339
    by: str | None
    entry: bytes  # the log entry as the API wrote it


@dataclass
class Batch:
    """What one transaction writes: rows keyed so that a batch holds each at most once."""

    headers: dict[str, Header] = field(default_factory=dict)
    moves: dict[tuple[str, int], Move] = field(default_factory=dict)
    # game -> (meta, the game's version then, the outbox change that wrote it as (ms, seq))
    metas: dict[str, tuple[bytes, int, tuple[int, int]]] = field(default_factory=dict)
    states: dict[str, tuple[int, bytes]] = field(default_factory=dict)  # game -> (version, state)
    # (game, idempotency key) -> (value, the game's version after the change, expiry in unix ms)
    idem: dict[tuple[str, str], tuple[bytes, int, int]] = field(default_factory=dict)
    finished: set[str] = field(default_factory=set)  # games a move of this batch finished
    conflicts_within: int = 0  # one version given twice with different entries

    def games(self) -> set[str]:
        return {*self.headers, *(g for g, _ in self.moves), *self.metas, *self.states,
                *(g for g, _ in self.idem)}

    def add_idem(self, game_id: str, key: str, value: bytes, version: int, expires_ms: int) -> None:
        self.idem.setdefault((game_id, key), (value, version, expires_ms))

    def add_move(self, move: Move) -> None:
        key = (move.game_id, move.version)
        prior = self.moves.get(key)
        if prior is None:
            self.moves[key] = move
        elif prior.entry != move.entry:
            self.conflicts_within += 1

    def add_meta(self, game_id: str, meta: bytes, version: int, change: tuple[int, int]) -> None:
        prior = self.metas.get(game_id)
        if prior is None or (prior[1], prior[2]) < (version, change):
            self.metas[game_id] = (meta, version, change)

    def add_state(self, game_id: str, version: int, state: bytes) -> None:
        prior = self.states.get(game_id)
        if prior is None or prior[0] < version:
            self.states[game_id] = (version, state)


@dataclass(frozen=True, slots=True)
class Written:
    """What a batch did: moves new to the archive, repeats of archived ones (no-ops), repeats
    whose entry differs from the archived one (a second history: counted, never written), and
    each game's version archived without a gap after it."""

    inserted: int
    repeated: int
    conflicts: int
    versions: dict[str, int]


@dataclass(frozen=True, slots=True)
class ArchivedGame:
    """What the archive holds of a game: its log entries 1..version (no gap), its latest meta,
    a state at state_version (when that is above `version`, or -1, the state only tells the seed), and
    how many versions lie beyond a gap."""

    game_id: str
    version: int
    entries: list[bytes]
    meta: bytes
    state: bytes
    state_version: int
    beyond_gap: int
    finished: bool
    # Unexpired idempotency records of changes up to `version`: (key, value, seconds left)
    idem: list[tuple[str, bytes, int]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Listing:
    """One of a tenant's archived games, as its listing shows it."""

    game_id: str
    map: str
    created_ms: int
    version: int  # archived without a gap up to here
    finished: bool
    players: list[str]  # names, in seat order


def _kind(exc: BaseException) -> str:
    import psycopg
    from psycopg_pool import PoolTimeout

    if isinstance(exc, PoolTimeout):
        return "timeout"
    if isinstance(exc, psycopg.OperationalError):
        return "connection"
    return "other"


class Archive:
    def __init__(self, dsn: str, *, max_size: int = 4, timeout: float = 5.0,
                 connect_timeout: int = 3) -> None:
        self.dsn = dsn
        self._max_size = max_size
        self._timeout = timeout
        self._connect_timeout = connect_timeout
        self._lock = threading.Lock()
        self._pool: ConnectionPool | None = None
        self._pid = 0

    def _connections(self) -> ConnectionPool:
        from psycopg_pool import ConnectionPool

        if self._pool is None or self._pid != os.getpid():
            with self._lock:
                if self._pool is None or self._pid != os.getpid():
                    # A pool inherited through fork() shares sockets with the parent: leave it.
                    self._pool = ConnectionPool(
                        self.dsn,
                        min_size=0,
                        max_size=self._max_size,
                        timeout=self._timeout,
                        kwargs={"connect_timeout": self._connect_timeout, "autocommit": False},
                        # A connection left from before PostgreSQL restarted is found dead here,
                        # not in the middle of a batch.
                        check=ConnectionPool.check_connection,
                        num_workers=1,
                        name="aos-archive",
                        open=True,
                    )
                    self._pid = os.getpid()
        return self._pool

    @contextmanager
    def transaction(self, op: str = "archive") -> Iterator[psycopg.Connection]:
        """A connection in a transaction, committed on success. Failures to reach PostgreSQL
        become StoreUnavailable (op "archive"), like the game store's."""
        import psycopg
        from psycopg_pool import PoolTimeout

        try:
            with self._connections().connection() as conn:
                yield conn
        except (psycopg.OperationalError, PoolTimeout) as exc:
            raise StoreUnavailable(f"{op}: {exc}", op="archive", kind=_kind(exc)) from exc
        except psycopg.errors.UndefinedTable as exc:
            raise StoreUnavailable(
                f"{op}: {exc} (run `python -m service.archive migrate`)", op="archive", kind="other"
            ) from exc

    def ping(self) -> None:
        with self.transaction("ping") as conn:
            conn.execute("SELECT 1")

    def close(self) -> None:
        if self._pool is not None and self._pid == os.getpid():
            self._pool.close()
        self._pool = None

    # -- what the copier writes -----------------------------------------------------------------

    def known(self, game_ids: set[str]) -> set[str]:
        """Which of these games the archive has a header of."""
        if not game_ids:
            return set()
        with self.transaction("known") as conn:
            rows = conn.execute("SELECT id FROM games WHERE id = ANY(%s)", [list(game_ids)])
            return {row[0] for row in rows}

    def write(self, batch: Batch) -> Written:
        """Writes a batch in one transaction: all of it or none of it. Every write is a no-op
        when repeated, so a batch copied twice (its copier died before acknowledging it) leaves
        the archive as once."""
        # Rows are written in game order, so that two copiers' batches that touch the same
        # games lock them in the same order (no deadlock).
        games = sorted(batch.games())
        with self.transaction("write") as conn:
            if batch.headers:
                conn.cursor().executemany(
                    """INSERT INTO games (id, map, players, options, rules_version, seed_commitment,
                                          seed, created_at)
                       VALUES (%s, %s, %s::jsonb, %s::jsonb, %s, %s, %s,
                               to_timestamp(%s::double precision / 1000))
                       ON CONFLICT (id) DO UPDATE SET seed = EXCLUDED.seed
                       WHERE games.seed IS NULL AND EXCLUDED.seed IS NOT NULL""",
                    [(g, h.map, _json(h.players), _json(h.options), h.rules_version,
                      h.seed_commitment, h.seed, h.created_ms) for g, h in sorted(batch.headers.items())],
                )
            inserted, repeated, conflicts = self._write_moves(conn, list(batch.moves.values()))
            if batch.metas:
                conn.cursor().executemany(
                    """INSERT INTO game_secrets (game_id, meta, meta_version, meta_change)
                       VALUES (%s, %s, %s, %s)
                       ON CONFLICT (game_id) DO UPDATE
                       SET meta = EXCLUDED.meta, meta_version = EXCLUDED.meta_version,
                           meta_change = EXCLUDED.meta_change
                       WHERE game_secrets.meta IS NULL
                          OR (game_secrets.meta_version, game_secrets.meta_change)
                             < (EXCLUDED.meta_version, EXCLUDED.meta_change)""",
                    [(g, meta, version, list(change))
                     for g, (meta, version, change) in sorted(batch.metas.items())],
                )
            if batch.states:
                conn.cursor().executemany(
                    """INSERT INTO game_secrets (game_id, state, state_version) VALUES (%s, %s, %s)
                       ON CONFLICT (game_id) DO UPDATE
                       SET state = EXCLUDED.state, state_version = EXCLUDED.state_version
                       WHERE game_secrets.state IS NULL
                          OR game_secrets.state_version < EXCLUDED.state_version""",
                    [(g, state, version) for g, (version, state) in sorted(batch.states.items())],
                )
            if batch.idem:
                conn.cursor().executemany(
                    """INSERT INTO game_idempotency (game_id, key, value, version, expires_at)
                       VALUES (%s, %s, %s, %s, to_timestamp(%s::double precision / 1000))
                       ON CONFLICT (game_id, key) DO NOTHING""",
                    [(g, key, value, version, expires_ms)
                     for (g, key), (value, version, expires_ms) in sorted(batch.idem.items())],
                )
                # Expired records go a bounded slice at a time, as new ones come.
                conn.execute(
                    """DELETE FROM game_idempotency WHERE ctid = ANY(ARRAY(
                         SELECT ctid FROM game_idempotency WHERE expires_at < clock_timestamp()
                         LIMIT 1000))""")
            owned = sorted(set(batch.headers) | set(batch.metas))
            if owned:
                # Whose game it is, for the tenant's listing: from the meta, whichever of the
                # game's header and meta was copied last.
                conn.execute(
                    """UPDATE games SET tenant = convert_from(s.meta, 'UTF8')::jsonb ->> 'tenant'
                       FROM game_secrets s
                       WHERE s.game_id = games.id AND games.id = ANY(%s)
                         AND games.tenant IS NULL AND s.meta IS NOT NULL""",
                    [owned],
                )
            finishing = sorted(batch.finished | set(batch.headers))
            if finishing:
                conn.execute(
                    """UPDATE games SET finished_at = f.at
                       FROM (SELECT m.game_id, min(m.at) AS at FROM moves m
                             WHERE m.game_id = ANY(%s)
                               AND m.events @> '[{"type": "game_finished"}]'
                             GROUP BY m.game_id) f
                       WHERE games.id = f.game_id AND games.finished_at IS NULL""",
                    [finishing],
                )
            versions = self._advance(conn, games)
        return Written(inserted, repeated, conflicts + batch.conflicts_within, versions)

    @staticmethod
    def _write_moves(conn: psycopg.Connection, moves: list[Move]) -> tuple[int, int, int]:
        if not moves:
            return 0, 0, 0
        moves = sorted(moves, key=lambda m: (m.game_id, m.version))
        columns = [
            [m.game_id for m in moves], [m.version for m in moves], [m.seat for m in moves],
            [m.type for m in moves], [m.move for m in moves], [m.events for m in moves],
            [m.at for m in moves], [m.by for m in moves], [m.entry for m in moves],
        ]
        rows = conn.execute(
            """INSERT INTO moves (game_id, version, seat, type, move, events, at, by, entry)
               SELECT g, v, s, t, mv::jsonb, ev::jsonb, a::timestamptz, b, e
               FROM unnest(%s::text[], %s::int[], %s::smallint[], %s::text[], %s::text[],
                           %s::text[], %s::text[], %s::text[], %s::bytea[])
                    AS u(g, v, s, t, mv, ev, a, b, e)
               ON CONFLICT (game_id, version) DO NOTHING
               RETURNING game_id, version""",
            columns,
        ).fetchall()
        fresh = {(g, v) for g, v in rows}
        repeats = [m for m in moves if (m.game_id, m.version) not in fresh]
        conflicts = 0
        if repeats:
            row = conn.execute(
                """SELECT count(*) FROM moves m
                   JOIN unnest(%s::text[], %s::int[], %s::bytea[]) AS u(g, v, e)
                     ON m.game_id = u.g AND m.version = u.v
                   WHERE m.entry <> u.e""",
                [[m.game_id for m in repeats], [m.version for m in repeats], [m.entry for m in repeats]],
            ).fetchone()
            assert row is not None  # count(*) gives one row
            conflicts = row[0]
            if conflicts:
                log.error("archive conflicts", extra={"fields": {
                    "event": "archive_conflict", "count": conflicts,
                    "games": sorted({m.game_id for m in repeats})[:10]}})
        return len(fresh), len(repeats) - conflicts, conflicts

    @staticmethod
    def _advance(conn: psycopg.Connection, games: list[str]) -> dict[str, int]:
        """Moves each game's gap-free version up over the versions archived right above it,
        and returns it."""
        if not games:
            return {}
        conn.execute(
            """UPDATE games SET version = s.top
               FROM (SELECT g.id, g.version AS base, max(m.version) AS top, count(*) AS n
                     FROM games g JOIN moves m ON m.game_id = g.id AND m.version > g.version
                     WHERE g.id = ANY(%s) GROUP BY g.id, g.version) s
               WHERE games.id = s.id AND s.n = s.top - s.base""",
            [games],
        )
        rows = conn.execute("SELECT id, version FROM games WHERE id = ANY(%s)", [games])
        return {game_id: version for game_id, version in rows}

    # -- a tenant's listing -----------------------------------------------------------------------

    def tenant_games(self, tenant: str, *, before: tuple[int, str] | None, count: int,
                     finished: bool | None = None, map_id: str | None = None) -> list[Listing]:
        """A tenant's archived games, newest first (created, then id in byte order, descending: the
        order of the ledger in Redis, whose pages this merges with), strictly
        after the cursor `before` (created ms, game id); at most `count`. `finished` and
        `map_id` filter."""
        where: list[str] = ["tenant = %s"]
        params: list[object] = [tenant]
        if before is not None:
            where.append('(created_at, id COLLATE "C") < (to_timestamp(%s::double precision / 1000), %s)')
            params += [before[0], before[1]]
        if finished is not None:
            where.append("finished_at IS NOT NULL" if finished else "finished_at IS NULL")
        if map_id is not None:
            where.append("map = %s")
            params.append(map_id)
        with self.transaction("tenant_games") as conn:
            rows = conn.execute(
                f"""SELECT id, map, round(extract(epoch FROM created_at) * 1000)::bigint, version,
                           finished_at IS NOT NULL, players
                    FROM games WHERE {" AND ".join(where)}
                    ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT %s""",  # noqa: S608 - fixed clauses
                [*params, count],
            ).fetchall()
        return [Listing(game_id, map_, int(ms), version, done, [p["name"] for p in players])
                for game_id, map_, ms, version, done, players in rows]

    # -- what a rebuild reads --------------------------------------------------------------------

    def load(self, game_id: str) -> ArchivedGame | None:
        """The game as archived, or None when the archive cannot rebuild it (never archived,
        or its create and meta not copied yet)."""
        with self.transaction("load") as conn:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            game = conn.execute(
                "SELECT finished_at IS NOT NULL FROM games WHERE id = %s", [game_id]
            ).fetchone()
            if game is None:
                return None
            secrets = conn.execute(
                "SELECT meta, state, state_version FROM game_secrets WHERE game_id = %s", [game_id]
            ).fetchone()
            if secrets is None or secrets[0] is None or secrets[1] is None:
                return None
            rows = conn.execute(
                "SELECT version, entry FROM moves WHERE game_id = %s ORDER BY version", [game_id]
            ).fetchall()
            records = conn.execute(
                """SELECT key, value, version,
                          ceil(extract(epoch FROM expires_at - clock_timestamp()))::integer
                   FROM game_idempotency WHERE game_id = %s AND expires_at > clock_timestamp()
                   ORDER BY key""",
                [game_id],
            ).fetchall()
        entries: list[bytes] = []
        for version, entry in rows:
            if version != len(entries) + 1:
                break
            entries.append(bytes(entry))
        return ArchivedGame(
            game_id=game_id,
            version=len(entries),
            entries=entries,
            meta=bytes(secrets[0]),
            state=bytes(secrets[1]),
            state_version=secrets[2],
            beyond_gap=len(rows) - len(entries),
            finished=game[0],
            idem=[(key, bytes(value), max(1, left)) for key, value, version, left in records
                  if version <= len(entries)],
        )

    def purge(self, game_ids: set[str]) -> int:
        """Deletes every row of these games (deleted at their owner's request), in one
        transaction; returns how many games had a header."""
        if not game_ids:
            return 0
        ids = sorted(game_ids)
        with self.transaction("purge") as conn:
            for table in ("moves", "moves_set_aside", "game_idempotency", "game_secrets"):
                conn.execute(f"DELETE FROM {table} WHERE game_id = ANY(%s)", [ids])
            return conn.execute("DELETE FROM games WHERE id = ANY(%s)", [ids]).rowcount

    def set_aside(self, game_id: str, version: int) -> int:
        """Moves the game's versions above `version` out of its history (into moves_set_aside):
        they lie beyond a gap that can no longer be filled, and the game goes on from
        `version`. Returns how many were set aside."""
        with self.transaction("set_aside") as conn:
            moved = conn.execute(
                """WITH gone AS (DELETE FROM moves WHERE game_id = %s AND version > %s RETURNING *)
                   INSERT INTO moves_set_aside
                     (game_id, version, seat, type, move, events, at, by, entry, archived_at)
                   SELECT game_id, version, seat, type, move, events, at, by, entry, archived_at
                   FROM gone""",
                [game_id, version],
            ).rowcount
            conn.execute("UPDATE games SET version = %s WHERE id = %s AND version > %s",
                         [version, game_id, version])
            # The answers of changes set aside are not the game's any more.
            conn.execute("DELETE FROM game_idempotency WHERE game_id = %s AND version > %s",
                         [game_id, version])
            # A state from beyond the gap still tells the seed, but no version of the history
            # that goes on: -1 marks it so (and any later snapshot replaces it).
            conn.execute(
                "UPDATE game_secrets SET state_version = -1 WHERE game_id = %s AND state_version > %s",
                [game_id, version],
            )
        if moved:
            log.warning("archived versions set aside", extra={"fields": {
                "event": "archive_set_aside", "game_id": game_id, "from_version": version + 1,
                "count": moved}})
        return moved


def _json(value: object) -> str:
    import orjson

    return orjson.dumps(value).decode()
