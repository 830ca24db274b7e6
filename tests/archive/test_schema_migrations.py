"""`python -m service.archive migrate`: the schema from numbered SQL files shipped in the
package, applied once, recorded, safe to run from many places at once."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import psycopg
import pytest

from service.archive import __main__ as cli
from service.archive.migrate import MigrationError, migrate, migrations, pending

ROOT = Path(__file__).resolve().parents[2]
TABLES = {"games", "moves", "game_secrets", "moves_set_aside", "tenant_keys", "game_idempotency",
          "schema_migrations"}


def tables(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        return {name for (name,) in rows}


def test_the_package_ships_its_migrations_in_order() -> None:
    found = migrations()
    assert [m.version for m in found] == sorted(m.version for m in found)
    assert found[0].version == 1 and found[0].name == "archive"
    assert "CREATE TABLE moves" in found[0].sql


def test_migrate_from_the_command_line_then_again_is_a_no_op(postgres) -> None:
    url = postgres.create(migrated=False)
    env = {**os.environ, "DATABASE_URL": url, "LOG_LEVEL": "info"}
    env.pop("REDIS_URL", None)
    run = [sys.executable, "-m", "service.archive", "migrate"]
    first = subprocess.run(run, cwd=ROOT, env=env, capture_output=True, timeout=60)
    assert first.returncode == 0, first.stderr
    assert b"0001_archive" in first.stderr
    assert tables(url) == TABLES
    with psycopg.connect(url) as conn:
        recorded = conn.execute("SELECT version, name, checksum FROM schema_migrations").fetchall()
    assert recorded == [(m.version, m.name, m.checksum) for m in migrations()]
    assert migrate(url) == [] and pending(url) == []


def test_many_migrations_at_once_apply_each_file_once(postgres) -> None:
    url = postgres.create(migrated=False)
    applied: list[list] = []
    errors: list[Exception] = []

    def run() -> None:
        try:
            applied.append(migrate(url))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert sorted(len(a) for a in applied) == [0, 0, 0, len(migrations())]


def test_a_migration_changed_after_it_was_applied_is_refused(database_url: str) -> None:
    with psycopg.connect(database_url) as conn:
        conn.execute("UPDATE schema_migrations SET checksum = 'edited' WHERE version = 1")
    with pytest.raises(MigrationError, match="0001_archive"):
        migrate(database_url)


def test_without_database_url_there_is_no_archive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    assert cli.main(["migrate"]) == 0  # nothing to do: an init container may run it regardless
    assert cli.main(["copy"]) == 2
    monkeypatch.setenv("DATABASE_URL", "")  # a Secret's empty placeholder
    assert cli.main(["status"]) == 2


def test_status_says_what_is_pending(postgres, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    url = postgres.create(migrated=False)
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.delenv("REDIS_URL", raising=False)
    assert cli.main(["status"]) == 1
    assert "0001_archive" in capsys.readouterr().out
    assert cli.main(["copy"]) == 2  # the copier refuses a schema that is not up to date
    assert cli.main(["migrate"]) == 0
    assert cli.main(["status"]) == 0
    assert "pending migrations: none" in capsys.readouterr().out
