"""The archive's schema as numbered SQL files (migrations/NNNN_name.sql), applied in order and
recorded in schema_migrations. Applying is idempotent and safe to run from several places at
once (an advisory lock lets one run at a time); a migration already applied whose file has
changed since is refused, not applied again."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources

import psycopg

# Taken for the whole run: any number of pods may start `migrate` together.
LOCK_KEY = 0x616F735F61726368  # "aos_arch"

NAME = re.compile(r"(\d{4})_([a-z0-9_]+)\.sql")


class MigrationError(Exception):
    pass


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def migrations() -> list[Migration]:
    """The migrations shipped with the package, in order."""
    found = []
    for item in resources.files("service.archive").joinpath("migrations").iterdir():
        match = NAME.fullmatch(item.name)
        if match:
            found.append(Migration(int(match[1]), match[2], item.read_text(encoding="utf-8")))
        elif item.name.endswith(".sql"):
            raise MigrationError(f"migration file {item.name!r} is not named NNNN_name.sql")
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise MigrationError(f"two migrations share a number: {versions}")
    return found


def applied(conn: psycopg.Connection) -> dict[int, str]:
    """Version -> checksum of the migrations recorded in the database (none before the first)."""
    row = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()
    assert row is not None  # a SELECT without FROM gives one row
    exists = row[0]
    if not exists:
        return {}
    return dict(conn.execute("SELECT version, checksum FROM schema_migrations").fetchall())


def migrate(dsn: str) -> list[Migration]:
    """Applies the migrations the database lacks, each in its own transaction; returns them."""
    done = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", [LOCK_KEY])
        try:
            conn.execute(
                """CREATE TABLE IF NOT EXISTS schema_migrations (
                       version    integer PRIMARY KEY,
                       name       text NOT NULL,
                       checksum   text NOT NULL,
                       applied_at timestamptz NOT NULL DEFAULT now())"""
            )
            recorded = applied(conn)
            for migration in migrations():
                if migration.version in recorded:
                    if recorded[migration.version] != migration.checksum:
                        raise MigrationError(
                            f"migration {migration.version:04d}_{migration.name} was applied, "
                            "and its file has changed since: add a new migration instead")
                    continue
                with conn.transaction():
                    conn.execute(migration.sql)
                    conn.execute(
                        "INSERT INTO schema_migrations (version, name, checksum) VALUES (%s, %s, %s)",
                        [migration.version, migration.name, migration.checksum],
                    )
                done.append(migration)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", [LOCK_KEY])
    return done


def pending(dsn: str) -> list[Migration]:
    """The migrations the database lacks."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        recorded = applied(conn)
    return [m for m in migrations() if m.version not in recorded]
