"""Tenant API keys: how a key looks, how it is kept, how one presented is checked.

A key is one word, ``aos_<key id>_<secret>``: the id is public (the CLI lists it, a revocation
names it), the secret is 32 random bytes. Only a digest of the whole key is stored, so a copy of
the store hands out no key. The digest is a plain SHA-256: the secret has 256 bits of entropy, so
there is nothing for a slow password hash to protect (GitHub and Stripe tokens are kept the same
way). A presented key is found by its id and its digest compared in constant time, so the time
of an answer says nothing about how much of a guess was right.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass, field, replace

PREFIX = "aos_"
SCOPES = ("games:read", "games:write")
# The quotas a key may carry; absent ones take the host's defaults (service/tenants/quotas.py).
QUOTA_NAMES = ("games_per_day", "writes_per_second", "open_streams", "webhooks")

_ID_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
_SECRET_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
KEY_FORM = re.compile(r"aos_([0-9a-z]{12})_([0-9A-Za-z]{43})")


@dataclass(frozen=True, slots=True)
class TenantKey:
    """What the store keeps of a key: never the key itself."""

    key_id: str
    tenant: str
    scopes: tuple[str, ...]
    digest: str
    created_at: float
    revoked_at: float | None = None
    quotas: dict[str, int] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    def allows(self, scope: str) -> bool:
        return self.active and scope in self.scopes

    def revoked(self, at: float) -> TenantKey:
        return replace(self, revoked_at=at)

    def public(self) -> dict[str, object]:
        """The key as `list` shows it: everything but the digest."""
        return {
            "key_id": self.key_id,
            "tenant": self.tenant,
            "scopes": list(self.scopes),
            "created_at": self.created_at,
            "revoked_at": self.revoked_at,
            "quotas": dict(self.quotas),
        }


def digest_of(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def new_key(tenant: str, scopes: list[str], quotas: dict[str, int] | None = None,
            *, now: float | None = None) -> tuple[str, TenantKey]:
    """A fresh key (shown once) and the record to store for it."""
    tenant = tenant.strip()
    if not tenant or len(tenant) > 100 or any(ord(c) < 32 for c in tenant):
        raise ValueError("a tenant's name is 1 to 100 printable characters")
    unknown = sorted(set(scopes) - set(SCOPES))
    if unknown or not scopes:
        raise ValueError(f"scopes are some of {', '.join(SCOPES)}; got {', '.join(unknown) or 'none'}")
    quotas = dict(quotas or {})
    bad = sorted(set(quotas) - set(QUOTA_NAMES))
    if bad or any(not isinstance(v, int) or v < 0 for v in quotas.values()):
        raise ValueError(f"quotas are non-negative integers named {', '.join(QUOTA_NAMES)}")
    key_id = "".join(secrets.choice(_ID_ALPHABET) for _ in range(12))
    secret = "".join(secrets.choice(_SECRET_ALPHABET) for _ in range(43))  # ~256 bits
    key = f"{PREFIX}{key_id}_{secret}"
    record = TenantKey(
        key_id=key_id,
        tenant=tenant,
        scopes=tuple(s for s in SCOPES if s in scopes),
        digest=digest_of(key),
        created_at=time.time() if now is None else now,
        quotas=quotas,
    )
    return key, record


def key_id_of(key: str) -> str | None:
    """The id in a key of the right form, else None (checked before any store is asked)."""
    match = KEY_FORM.fullmatch(key)
    return match[1] if match else None


def matches(record: TenantKey | None, key: str) -> bool:
    """Whether `key` is the key of `record`, in time that does not depend on where they differ."""
    if record is None:
        # Compare anyway, so that an unknown id costs what a wrong secret costs.
        hmac.compare_digest(digest_of(key), "0" * 64)
        return False
    return hmac.compare_digest(digest_of(key), record.digest)
