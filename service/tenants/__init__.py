"""Tenants: a host's customers. Their API keys (shown once, kept as digests, scoped, revocable at
once), and which games are whose. Below the API: it knows the stores, never HTTP."""

from .keys import PREFIX, QUOTA_NAMES, SCOPES, TenantKey, key_id_of, matches, new_key
from .registry import KeyRegistry, MemoryKeys, PostgresKeys, RedisKeys, registry_from_env

__all__ = [
    "PREFIX",
    "QUOTA_NAMES",
    "SCOPES",
    "KeyRegistry",
    "MemoryKeys",
    "PostgresKeys",
    "RedisKeys",
    "TenantKey",
    "key_id_of",
    "matches",
    "new_key",
    "registry_from_env",
]
