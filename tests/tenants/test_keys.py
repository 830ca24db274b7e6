"""Tenant keys: shown once, kept as digests, found by id, compared in constant time, revocable
at once; the same on memory, Redis and PostgreSQL, and from the command line."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.tenants import (
    KeyRegistry,
    MemoryKeys,
    PostgresKeys,
    RedisKeys,
    key_id_of,
    matches,
    new_key,
)
from service.tenants.keys import KEY_FORM, digest_of

ROOT = Path(__file__).resolve().parents[2]


def test_a_key_is_one_word_with_the_prefix_and_its_record_holds_only_a_digest() -> None:
    key, record = new_key("Acme", ["games:write", "games:read"])
    assert KEY_FORM.fullmatch(key) and key.startswith("aos_") and key.isprintable() and " " not in key
    assert key_id_of(key) == record.key_id
    secret = key.split("_")[2]
    assert record.digest == digest_of(key) and key not in repr(record) and secret not in repr(record)
    assert record.scopes == ("games:read", "games:write")  # in the catalogue's order
    assert "digest" not in record.public()


def test_keys_are_unique_and_carry_about_256_bits_of_secret() -> None:
    keys = {new_key("Acme", ["games:read"])[0] for _ in range(200)}
    assert len(keys) == 200
    assert len({k.split("_")[1] for k in keys}) == 200  # ids too
    assert len(next(iter(keys)).split("_")[2]) == 43  # 43 of 62 symbols: 256 bits


@pytest.mark.parametrize("bad", [
    "", "aos_", "aos_abc_def", "sk_live_abc", "aos_ABCDEFGHIJKL_" + "a" * 43,
    "aos_abcdefghijkl_" + "a" * 42, "aos_abcdefghijkl_" + "a" * 44, "aos_abcdefghijkl_" + "-" * 43,
])
def test_a_key_of_the_wrong_form_has_no_id(bad: str) -> None:
    assert key_id_of(bad) is None


def test_a_key_matches_only_its_own_record() -> None:
    key, record = new_key("Acme", ["games:read"])
    other, _ = new_key("Acme", ["games:read"])
    assert matches(record, key)
    assert not matches(record, other)
    # Same id, one character of the secret changed.
    assert not matches(record, key[:-1] + ("A" if key[-1] != "A" else "B"))
    assert not matches(None, key)


@pytest.mark.parametrize("name, scopes, quotas, says", [
    ("", ["games:read"], None, "name"),
    ("Acme", [], None, "scopes"),
    ("Acme", ["games:admin"], None, "games:admin"),
    ("Acme", ["games:read"], {"games_per_day": -1}, "quotas"),
    ("Acme", ["games:read"], {"moves": 3}, "quotas"),
])
def test_a_key_is_refused_with_a_reason(name: str, scopes: list[str], quotas: dict | None, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        new_key(name, scopes, quotas)


@pytest.fixture(params=["memory", "redis", "postgres"])
def registry(request: pytest.FixtureRequest) -> Iterator[KeyRegistry]:
    if request.param == "memory":
        yield MemoryKeys()
        return
    made: KeyRegistry
    if request.param == "redis":
        made = RedisKeys(request.getfixturevalue("redis_url"))
    else:
        made = PostgresKeys(request.getfixturevalue("database_url"))
    yield made
    made.close()


def test_a_registry_keeps_finds_lists_and_revokes(registry: KeyRegistry) -> None:
    key_a, a = new_key("Acme", ["games:write", "games:read"], {"games_per_day": 50}, now=1000.0)
    key_b, b = new_key("Beta", ["games:read"], now=2000.0)
    registry.add(a)
    registry.add(b)
    with pytest.raises(ValueError, match="exists"):
        registry.add(a)
    found = registry.get(a.key_id)
    assert found == a and matches(found, key_a) and not matches(found, key_b)
    assert found is not None and found.allows("games:write") and found.quotas == {"games_per_day": 50}
    assert registry.get("zzzzzzzzzzzz") is None
    assert [r.key_id for r in registry.all()] == [a.key_id, b.key_id]

    revoked = registry.revoke(a.key_id, at=3000.0)
    assert revoked is not None and revoked.revoked_at == 3000.0
    again = registry.get(a.key_id)
    assert again is not None and not again.active and not again.allows("games:read")
    # Revoking twice keeps the first time; an unknown id is None.
    assert registry.revoke(a.key_id, at=4000.0).revoked_at == 3000.0  # type: ignore[union-attr]
    assert registry.revoke("zzzzzzzzzzzz") is None
    assert registry.get(b.key_id) == b


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "service.tenants", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("where", ["redis", "postgres"])
def test_the_command_line_creates_lists_and_revokes(where: str, request: pytest.FixtureRequest) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    url = request.getfixturevalue("redis_url" if where == "redis" else "database_url")
    env["REDIS_URL" if where == "redis" else "DATABASE_URL"] = url

    made = _cli("create", "Acme", "--scope", "games:write", "--scope", "games:read",
                "--quota", "games_per_day=5", env=env)
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()
    assert KEY_FORM.fullmatch(key), made.stdout
    key_id = key_id_of(key)
    assert key_id is not None and "shown this once" in made.stderr

    listed = _cli("list", env=env)
    assert listed.returncode == 0 and key_id in listed.stdout and "active" in listed.stdout
    assert key not in listed.stdout and key.split("_")[2] not in listed.stdout
    assert '"games_per_day": 5' in _cli("list", "--json", env=env).stdout

    gone = _cli("revoke", key_id, env=env)
    assert gone.returncode == 0 and f"revoked {key_id}" in gone.stdout
    assert "revoked 20" in _cli("list", env=env).stdout
    missing = _cli("revoke", "zzzzzzzzzzzz", env=env)
    assert missing.returncode == 1 and "no key" in missing.stderr

    registry = RedisKeys(url) if where == "redis" else PostgresKeys(url)
    try:
        record = registry.get(key_id)
        assert record is not None and matches(record, key) and not record.active
    finally:
        registry.close()


def test_the_command_line_refuses_to_keep_keys_in_its_own_memory() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
    result = _cli("create", "Acme", "--scope", "games:read", env=env)
    assert result.returncode == 2 and result.stdout == ""
    assert "DATABASE_URL or REDIS_URL" in result.stderr


def test_the_command_line_refuses_an_unknown_scope(redis_url: str) -> None:
    env = {**os.environ, "REDIS_URL": redis_url}
    env.pop("DATABASE_URL", None)
    result = _cli("create", "Acme", "--scope", "games:admin", env=env)
    assert result.returncode == 2 and "invalid choice" in result.stderr and result.stdout == ""
