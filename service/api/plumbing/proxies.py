"""The client's address behind a proxy, decided the way gunicorn decides whom to trust.

gunicorn trusts `X-Forwarded-*` only from the addresses in FORWARDED_ALLOW_IPS, but it never
rewrites REMOTE_ADDR. Here the same variable decides: a request whose peer is one of those
proxies gets its REMOTE_ADDR from the `X-Forwarded-For` entry that proxy appended (werkzeug's
ProxyFix, one hop), so the access log and the rate limits see the client, not the proxy. A
request from anyone else keeps its peer's address, whatever `X-Forwarded-For` it sends.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable

from werkzeug.middleware.proxy_fix import ProxyFix

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def networks(spec: str) -> list[Network] | None:
    """`a, b/24, ...` as networks; None for `*` (every peer is a trusted proxy)."""
    items = [item.strip() for item in spec.split(",") if item.strip()]
    if "*" in items:
        return None
    return [ipaddress.ip_network(item, strict=False) for item in items]


def address_in(address: str, allowed: list[Network] | None) -> bool:
    if allowed is None:
        return True
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in allowed)


class TrustedProxies:
    """WSGI middleware: ProxyFix (X-Forwarded-For only, `hops` proxies) for trusted peers."""

    def __init__(self, app: Callable, trusted: str, hops: int = 1) -> None:
        self.app = app
        self.trusted = networks(trusted)
        self.fixed = ProxyFix(app, x_for=hops, x_proto=0, x_host=0, x_port=0, x_prefix=0)

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        if address_in(environ.get("REMOTE_ADDR", ""), self.trusted):
            return self.fixed(environ, start_response)
        return self.app(environ, start_response)
