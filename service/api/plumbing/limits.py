"""Rate limits, shared by every instance: Flask-Limiter (on the `limits` library), its counters in
Redis when one is configured (REDIS_URL), in this process's memory otherwise.

Five policies, each a list of windows (`30/minute;300/hour`), set by the environment
(Settings): `create` (new games) and `import` (record replays) per client address, `hints` (each
a search in the worker) per seat token, `history` (reads of whole histories, counted in the
versions they replay, per client address: `spend_reads`), and `writes`
(moves, validations, every other POST/PUT/PATCH/DELETE under a game) per seat token, so one
player's bot cannot spend another's allowance; a write without a token counts against its
address. A refused request is `429 RATE_LIMITED` (problem+json) with `Retry-After`; every
limited response carries the IETF draft's `RateLimit-Policy` and `RateLimit` fields
(draft-ietf-httpapi-ratelimit-headers), which Flask-Limiter does not write itself.

The check runs before the request does any work (before the token, the game or the body's
rules are looked at). Should the counters' Redis fail, Flask-Limiter counts in memory until it
is back: the limits hold per process meanwhile, and a request never fails because of them.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import time
from typing import Any

from flask import Flask, Response, current_app, request
from flask_limiter import Limiter, RateLimitExceeded, RequestLimit
from limits import parse_many

from service.referee.settings import Settings

from ..responses import ApiError, problem
from . import bodies
from .proxies import address_in, networks

WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")
GAME_RULE_PREFIX = "/v1/games/<game_id>/"
CREATE_ENDPOINT = "v1.create_game"
HINTS_ENDPOINT = "v1_hints.ask_hint"
KEY_PREFIX = "aos:v1:ratelimit"
# redis-py's schemes as REDIS_URL spells them -> the `limits` storage schemes.
STORAGE_SCHEMES = {"redis+cluster": "redis+cluster", "rediss+cluster": "redis+cluster"}


def client_address() -> str:
    """The client's address (behind a trusted proxy, the one it forwarded: see proxies.py)."""
    return request.remote_addr or "unknown"


def writer_key() -> str:
    """A write's bucket: its seat token's digest (tokens are secrets, never stored as such), or
    its address when it sends none."""
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    token = token.strip()
    # Only a token of the form of this game's seat or admin tokens has a bucket of its own: any
    # other string would be a fresh bucket each time, so it counts against its address.
    game_id = (request.view_args or {}).get("game_id")
    parts = token.split(".")
    if (scheme.lower() == "bearer" and game_id and len(parts) == 3 and parts[0] == game_id
            and (parts[1].isdigit() or parts[1] == "admin") and len(parts[2]) >= 20):
        return "seat:" + hashlib.sha256(token.encode()).hexdigest()[:32]
    return "addr:" + client_address()


def is_import() -> bool:
    body = bodies.parsed_json()
    return isinstance(body, dict) and "record" in body


def storage_uri(url: str | None) -> tuple[str, dict]:
    """The `limits` storage URI and options for REDIS_URL (memory when there is none)."""
    if not url:
        return "memory://", {}
    scheme, sep, rest = url.partition("://")
    if scheme in STORAGE_SCHEMES:
        options = {"ssl": True} if scheme.startswith("rediss") else {}
        return STORAGE_SCHEMES[scheme] + sep + rest, options
    return url, {}


def policy_name(policy: str, limit: RequestLimit) -> str:
    return f"{policy}-{limit.limit.get_expiry()}s"


class RateLimits:
    def __init__(self, app: Flask, settings: Settings) -> None:
        uri, options = storage_uri(settings.rate_limit_storage)
        if uri != "memory://":
            timeout = settings.redis_timeout
            options |= {"socket_timeout": timeout, "socket_connect_timeout": timeout}
        self.exempt = networks(settings.rate_limit_exempt) if settings.rate_limit_exempt.strip() else []
        self.limiter = Limiter(
            client_address,
            storage_uri=uri,
            storage_options=options,
            strategy=settings.rate_limit_strategy,
            key_prefix=KEY_PREFIX,
            headers_enabled=False,  # the draft's fields are written below instead
            in_memory_fallback_enabled=True,
            swallow_errors=True,
            enabled=settings.rate_limits,
        )
        self.limiter.request_filter(self._exempt)
        self.limiter.init_app(app)
        # Which policy each limit string belongs to, for the header names.
        self.policies = {
            "create": settings.rate_limit_create,
            "import": settings.rate_limit_import,
            "writes": settings.rate_limit_writes,
            "hints": settings.rate_limit_hints,
        }
        # RateLimit-Policy is the configuration: written once, looked up nowhere.
        self.fields = {
            policy: ", ".join(
                f'"{policy}-{item.get_expiry()}s";q={item.amount};w={item.get_expiry()}'
                for item in parse_many(text)
            )
            for policy, text in self.policies.items()
        }
        self.history = parse_many(settings.rate_limit_history)
        self.fields["history"] = ", ".join(
            f'"history-{item.get_expiry()}s";q={item.amount};w={item.get_expiry()}' for item in self.history)
        if self.limiter.enabled:
            # Off, the wrappers would still look every write up (3 % of a move's time).
            self._limit_views(app)
        app.after_request(self._headers)
        app.register_error_handler(RateLimitExceeded, self._refused)

    def spend_reads(self, versions: int) -> None:
        """Charge a read of `versions` versions of a game's log to the client's address, before
        it is read; `429 RATE_LIMITED` (policy `history-<window>s`) when its budget is spent. A
        read costs at most a whole window's budget, so a game longer than it can still be read
        once a window. The counters' store down: the read goes on (as with every limit)."""
        if versions <= 0 or not self.limiter.enabled or self._exempt():
            return
        strategy, key = self.limiter.limiter, client_address()
        try:
            spent = [item for item in self.history
                     if not strategy.test(item, "history", key, cost=min(versions, item.amount))]
            if not spent:
                for item in self.history:
                    strategy.hit(item, "history", key, cost=min(versions, item.amount))
                return
            reset, remaining = strategy.get_window_stats(spent[0], "history", key)
        except Exception:  # noqa: BLE001 - the counters' store is down: never fail a read for it
            return
        item = spent[0]
        name = f"history-{item.get_expiry()}s"
        retry = max(1, math.ceil(reset - time.time()))
        raise ApiError(
            429, "RATE_LIMITED",
            f"too many versions of game histories read from this address: the {name} budget "
            f"({item.amount} versions) has {remaining} left and this read needs "
            f"{min(versions, item.amount)}; retry in {retry} s",
            headers={"Retry-After": str(retry), "RateLimit-Policy": self.fields["history"],
                     "RateLimit": f'"{name}";r={remaining};t={retry}'},
            policy=name)

    def _exempt(self) -> bool:
        return bool(self.exempt) and address_in(client_address(), self.exempt)

    def _limit_views(self, app: Flask) -> None:
        views: dict[str, Any] = app.view_functions  # each wrapped in its limits below
        creates = self.limiter.limit(
            self.policies["create"], key_func=client_address, exempt_when=is_import, scope="create"
        )
        imports = self.limiter.limit(
            self.policies["import"], key_func=client_address,
            exempt_when=lambda: not is_import(), scope="import",
        )
        views[CREATE_ENDPOINT] = creates(imports(views[CREATE_ENDPOINT]))
        writes = self.limiter.shared_limit(
            self.policies["writes"], scope="writes", key_func=writer_key, methods=list(WRITE_METHODS)
        )
        # Each hint asked for is a search in the worker: a seat's allowance of them is its own.
        if HINTS_ENDPOINT in views:
            hints = self.limiter.limit(self.policies["hints"], key_func=writer_key, scope="hints")
            views[HINTS_ENDPOINT] = hints(views[HINTS_ENDPOINT])
        for rule in app.url_map.iter_rules():
            if rule.rule.startswith(GAME_RULE_PREFIX) and set(rule.methods or ()) & set(WRITE_METHODS):
                views[rule.endpoint] = writes(views[rule.endpoint])

    def _policy_of(self, limit: RequestLimit) -> str:
        # The scope is the last of the limit's arguments: `<endpoint>:create`, or `writes`.
        policy = limit.request_args[-1].rsplit(":", 1)[-1]
        return policy if policy in self.policies else "limit"

    def _state(self, current: RequestLimit) -> str:
        """The RateLimit field: the state of the window that matters most (the breached one,
        else the shortest), one lookup in the counters' store rather than one per window."""
        reset, remaining = current.window
        name = policy_name(self._policy_of(current), current)
        return f'"{name}";r={max(0, remaining)};t={max(0, math.ceil(reset - time.time()))}'

    def _headers(self, response: Response) -> Response:
        limits = self.limiter.current_limits
        if not limits:
            return response
        applied = dict.fromkeys(self._policy_of(limit) for limit in limits)
        policies = [self.fields[policy] for policy in applied if policy in self.fields]
        # A tenant's spent quota (429 QUOTA_EXCEEDED) names its own policy and state: it comes
        # first, and its state is the one that matters.
        own = response.headers.get("RateLimit-Policy")
        response.headers["RateLimit-Policy"] = ", ".join([own, *policies] if own else policies)
        current = self.limiter.current_limit
        if current is not None and "RateLimit" not in response.headers:
            # The counters' store down: no field, and no failure either.
            with contextlib.suppress(Exception):
                response.headers["RateLimit"] = self._state(current)
        return response

    def _refused(self, exc: RateLimitExceeded) -> Response:
        breached = next((limit for limit in self.limiter.current_limits if limit.breached), None)
        retry = 1
        name = "limit"
        if breached is not None:
            name = policy_name(self._policy_of(breached), breached)
            try:
                retry = max(1, math.ceil(breached.window[0] - time.time()))
            except Exception:  # noqa: BLE001 - as in _headers
                retry = breached.limit.get_expiry()
        return problem(
            429,
            "RATE_LIMITED",
            f"too many requests: the {name} limit ({exc.limit.limit}) is spent; retry in {retry} s",
            {"Retry-After": str(retry)},
            policy=name,
        )


# A read of the log as it is stored (history, record) costs a tenth of its versions: on a game of
# 502 versions it took 1 ms (145 KB), where replaying them as events, each with the view made
# again at its version, took 139 ms (1.9 MB). The pages read the history at each load.
LOG_READ_SHARE = 10


def log_read_cost(versions: int) -> int:
    """What reading `versions` entries of the stored log costs of the history budget."""
    return -(-versions // LOG_READ_SHARE)


def spend_reads(versions: int) -> None:
    """`RateLimits.spend_reads` of this app (no limits installed: nothing to spend)."""
    limits = current_app.extensions.get("aos.limits")
    if limits is not None:
        limits.spend_reads(versions)


def install(app: Flask, settings: Settings) -> RateLimits:
    limits = RateLimits(app, settings)
    app.extensions["aos.limits"] = limits
    return limits

