"""Hosting for many customers: who is asking (a tenant's API key, or nobody), what they may do,
which games are theirs, what they used and what they may still use.

`AOS_TENANCY=open` (the default) keeps the service as it always was: anyone may create games, and
a key, when one comes, only makes its tenant the owner of the games it creates. With `required`,
creating or importing needs a key with `games:write`. In both modes a game created with a key
belongs to that key's tenant: it is listed for it, can be deleted by it, and, made `private`,
answers 404 to anyone without the tenant's key or one of the game's seat tokens.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from service.observability import metrics
from service.store.base import GameStore
from service.tenants import KeyRegistry, TenantKey, key_id_of, matches
from service.tenants.ledger import Ledger, seconds_to_midnight

from . import listing, tokens
from .errors import GameError

if TYPE_CHECKING:
    from service.store.archive import Archive
from .listing import Filters
from .settings import Settings

MAX_USAGE_DAYS = 366
# A spent webhooks quota renews when one is deleted, not with time: a minute is a fair wait.
WEBHOOKS_RETRY_SECONDS = 60


@dataclass(frozen=True, slots=True)
class Caller:
    """Who sent a request: a tenant (by its key), or nobody in particular."""

    key: TenantKey | None = None

    @property
    def tenant(self) -> str | None:
        return None if self.key is None else self.key.tenant

    def may(self, scope: str) -> bool:
        return self.key is not None and self.key.allows(scope)


ANONYMOUS = Caller()


@dataclass(frozen=True, slots=True)
class Quotas:
    games_per_day: int
    writes_per_second: int
    open_streams: int
    webhooks: int

    @classmethod
    def of(cls, settings: Settings, key: TenantKey | None) -> Quotas:
        own: Mapping[str, int] = {} if key is None else key.quotas
        return cls(
            games_per_day=own.get("games_per_day", settings.tenant_games_per_day),
            writes_per_second=own.get("writes_per_second", settings.tenant_writes_per_second),
            open_streams=own.get("open_streams", settings.tenant_open_streams),
            webhooks=own.get("webhooks", settings.tenant_webhooks),
        )


def quota_spent(name: str, limit: int, retry_after: int) -> GameError:
    return GameError("QUOTA_EXCEEDED", f"this tenant's {name} quota of {limit} is spent",
                     quota=name, limit=limit, retry_after=retry_after)


@dataclass
class Charge:
    """Games counted in a tenant's day before they are made (Tenancy.charge_creates)."""

    ledger: Ledger
    tenant: str | None
    count: int
    at: float

    def refund(self, count: int | None = None) -> None:
        """Gives back `count` of the games charged (all by default) that were not made after
        all: refused further on, or a retry answered with an earlier request's game."""
        count = self.count if count is None else min(count, self.count)
        if self.tenant is None or count <= 0:
            return
        self.ledger.count(self.tenant, "creates", -count, at=self.at)
        self.count -= count


QUOTAS_CACHE_SECONDS = 30.0  # a key's own quotas, as a game's writes and streams read them
QUOTAS_CACHE_SIZE = 10_000


@dataclass
class Tenancy:
    settings: Settings
    registry: KeyRegistry
    ledger: Ledger
    # key id -> (read at, the key's record): quotas change only when a key is made, so a move
    # need not read the key store each time. Never consulted to let a key in (caller() is).
    _keys_read: dict[str, tuple[float, TenantKey | None]] = field(default_factory=dict, repr=False)

    @property
    def required(self) -> bool:
        return self.settings.tenancy == "required"

    # -- who is asking ------------------------------------------------------------------------

    def caller(self, api_key: str | None) -> Caller:
        """The caller of a request that came with `api_key` (None: none came). A key that is not
        one, unknown or revoked is refused: a client that sends a key means to be someone."""
        if api_key is None:
            return ANONYMOUS
        key_id = key_id_of(api_key)
        record = None if key_id is None else self.registry.get(key_id)
        if not matches(record, api_key):
            metrics.TENANT_KEY_REFUSED.labels(reason="unknown").inc()
            raise GameError("API_KEY_INVALID", "this API key is not one of this service's")
        assert record is not None  # it matched
        if not record.active:
            metrics.TENANT_KEY_REFUSED.labels(reason="revoked").inc()
            raise GameError("API_KEY_INVALID", "this API key was revoked")
        return Caller(record)

    def need(self, caller: Caller, scope: str) -> None:
        """Refuses a caller without `scope`: no key (401), or a key without it (403)."""
        if caller.key is None:
            raise GameError("API_KEY_REQUIRED", f"send a tenant's API key with {scope} in X-API-Key",
                            scope=scope)
        if not caller.may(scope):
            raise GameError("API_KEY_SCOPE", f"this API key lacks the scope {scope}", scope=scope)

    def may_create(self, caller: Caller) -> None:
        if self.required or caller.key is not None:
            self.need(caller, "games:write")

    # -- whose games --------------------------------------------------------------------------

    @staticmethod
    def owner_meta(caller: Caller, private: bool) -> dict[str, Any]:
        """What a new game's metadata says of its owner."""
        if caller.tenant is None:
            if private:
                raise GameError("API_KEY_REQUIRED", "only a tenant's game can be private: send its key",
                                scope="games:write")
            return {}
        # The key that made the game: its own quotas (webhooks) hold for the game.
        assert caller.key is not None
        return {"tenant": caller.tenant, "key": caller.key.key_id, **({"private": True} if private else {})}

    @staticmethod
    def owns(caller: Caller, meta: Mapping[str, Any]) -> bool:
        return caller.tenant is not None and meta.get("tenant") == caller.tenant

    def may_see(self, caller: Caller, meta: Mapping[str, Any], bearer: str | None) -> bool:
        """Whether the caller may read the game: any game that is not private; a private one
        with its tenant's key, or one of its seat tokens or its admin token."""
        if not meta.get("private") or self.owns(caller, meta):
            return True
        if bearer is None:
            return False
        digest = tokens.digest(bearer)
        return digest in meta.get("tokens", ()) or digest == meta.get("admin")

    # -- what they used -----------------------------------------------------------------------

    def charge_creates(self, caller: Caller, count: int, *, now: float | None = None) -> Charge:
        """Counts `count` new games in the tenant's day at once, so that concurrent creates on
        every instance never pass its quota together; refuses them all (counting nothing) when
        they would pass it. The games not made after all are given back with the charge's
        `refund`."""
        now = time.time() if now is None else now
        if caller.key is None or count <= 0:
            return Charge(self.ledger, None, 0, now)
        quota = Quotas.of(self.settings, caller.key).games_per_day
        tenant = caller.key.tenant
        if self.ledger.count(tenant, "creates", count, at=now) > quota:
            self.ledger.count(tenant, "creates", -count, at=now)
            raise quota_spent("games_per_day", quota, seconds_to_midnight(now))
        return Charge(self.ledger, tenant, count, now)

    def created(self, caller: Caller, game_id: str, map_id: str, created_ms: int) -> None:
        """A game made (and charged for): listed, and seen by the metric."""
        if caller.key is None:
            return
        self.ledger.add_game(caller.key.tenant, game_id, map_id, created_ms)
        metrics.TENANT_USAGE.labels(tenant=caller.key.tenant, kind="creates").inc()

    def quotas_of(self, meta: Mapping[str, Any]) -> Quotas:
        """The quotas that hold for a tenant's game: those of the key that made it (its own,
        given at `create --quota`, else the host's defaults)."""
        key_id = meta.get("key")
        if not isinstance(key_id, str):
            return Quotas.of(self.settings, None)
        now = time.monotonic()
        read = self._keys_read.get(key_id)
        if read is None or now - read[0] > QUOTAS_CACHE_SECONDS:
            if len(self._keys_read) >= QUOTAS_CACHE_SIZE:
                self._keys_read.clear()
            read = self._keys_read[key_id] = (now, self.registry.get(key_id))
        return Quotas.of(self.settings, read[1])

    def write(self, meta: Mapping[str, Any]) -> None:
        """A write (a move, an undo...) on a tenant's game: refused past the tenant's writes a
        second."""
        tenant = meta.get("tenant")
        if tenant is None:
            return
        limit = self.quotas_of(meta).writes_per_second
        if self.ledger.per_second(tenant, "writes") > limit:
            raise quota_spent("writes_per_second", limit, 1)

    def applied(self, meta: Mapping[str, Any], moves: int) -> None:
        tenant = meta.get("tenant")
        if tenant is None or moves <= 0:
            return
        self.ledger.count(tenant, "moves", moves)
        metrics.TENANT_USAGE.labels(tenant=tenant, kind="moves").inc(moves)

    def hold_webhook(self, meta: Mapping[str, Any], game_id: str, hook_id: str,
                     alive: Callable[[str, str], bool]) -> None:
        """Counts a new registration on a tenant's game against the tenant's webhooks (the quota
        of the key that made the game, else the host's default); refuses it past the quota.
        Registrations that went with their games (deleted, expired) are let go when the quota
        looks spent: `alive(game_id, hook_id)` says whether one still is."""
        tenant = meta.get("tenant")
        if tenant is None:
            return
        limit = self.quotas_of(meta).webhooks
        member = f"{game_id}/{hook_id}"
        if self.ledger.hold(tenant, "webhooks", member, limit, until=float("inf")):
            return
        for held in self.ledger.held(tenant, "webhooks"):
            held_game, _, held_hook = held.partition("/")
            if not alive(held_game, held_hook):
                self.ledger.release(tenant, "webhooks", held)
        if not self.ledger.hold(tenant, "webhooks", member, limit, until=float("inf")):
            raise quota_spent("webhooks", limit, WEBHOOKS_RETRY_SECONDS)

    def release_webhook(self, meta: Mapping[str, Any], game_id: str, hook_id: str) -> None:
        tenant = meta.get("tenant")
        if tenant is not None:
            self.ledger.release(tenant, "webhooks", f"{game_id}/{hook_id}")

    def usage(self, caller: Caller, start: str, end: str) -> dict[str, Any]:
        self.need(caller, "games:read")
        assert caller.key is not None
        try:
            first, last = dt.date.fromisoformat(start), dt.date.fromisoformat(end)
        except ValueError:
            raise GameError("BAD_DATE", "from and to are dates, YYYY-MM-DD") from None
        if last < first or (last - first).days >= MAX_USAGE_DAYS:
            raise GameError("BAD_DATE", f"to is from or later, at most {MAX_USAGE_DAYS} days on")
        days = [(first + dt.timedelta(days=n)).isoformat() for n in range((last - first).days + 1)]
        counted = self.ledger.usage(caller.key.tenant, days)
        return {"tenant": caller.key.tenant, "days": [{"date": day, **counted[day]} for day in days]}

    # -- the listing --------------------------------------------------------------------------

    def page(self, caller: Caller, store: GameStore, archive: Archive | None, cursor: str | None,
             count: int, filters: Filters | None = None) -> tuple[list[dict[str, Any]], str | None]:
        """A page of the caller's games (from Redis, and from the archive when there is one),
        newest first, and the cursor after it (None: the last)."""
        self.need(caller, "games:read")
        assert caller.key is not None
        return listing.page(store, self.ledger, archive, caller.key.tenant, cursor=cursor, limit=count,
                            filters=filters or Filters())
