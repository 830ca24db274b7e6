"""Where a webhook may be sent: the SSRF guard.

A URL is http or https, names a host and no credentials. Its host is resolved and every address
it resolves to must be public: loopback, private, link-local, multicast, reserved and other
special-purpose addresses are refused (IPv4 inside IPv6 is judged as IPv4). The delivery then
connects to the address that was checked, not to the name again, so a DNS answer that changes
between the check and the connection cannot send it elsewhere; and it follows no redirect. The
operator can allow private addresses with AOS_WEBHOOKS_ALLOW_PRIVATE=1 (a receiver on the same
network, or tests).
"""

from __future__ import annotations

import concurrent.futures
import ipaddress
import os
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

ALLOW_PRIVATE = "AOS_WEBHOOKS_ALLOW_PRIVATE"
MAX_URL_LENGTH = 2048
RESOLVE_SECONDS = 3.0

# Ports of services that live inside a network and speak something a POST could confuse: Docker,
# etcd, MySQL, PostgreSQL, Redis, the Kubernetes API and kubelet, Elasticsearch, memcached,
# MongoDB. Port 0 (which urllib would quietly make 80) and every port below 1024 but 80 and 443
# are refused too.
INTERNAL_PORTS = frozenset({0, 2375, 2376, 2379, 2380, 3306, 5432, 6379, 6443, 9200, 9300, 10250,
                            10255, 11211, 27017})

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[str]]

# getaddrinfo has no timeout of its own: it runs here, and whoever waits gives up in time.
_resolvers = concurrent.futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="aos-dns")


class Refused(Exception):
    """A URL a webhook may not be sent to; the message says why."""


@dataclass(frozen=True, slots=True)
class Target:
    url: str
    scheme: str  # http or https
    host: str  # a name, or an address (IPv6 without brackets)
    port: int
    path: str  # the path and query, as sent in the request line


def allow_private(env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    return env.get(ALLOW_PRIVATE, "").strip().lower() in ("1", "true", "yes")


def parse(url: str) -> Target:
    """The target of a webhook URL; Refused when it is not a plain http(s) URL."""
    if not isinstance(url, str) or not url or len(url) > MAX_URL_LENGTH:
        raise Refused(f"a webhook URL is 1-{MAX_URL_LENGTH} characters")
    if not url.isascii() or any(c.isspace() or not c.isprintable() for c in url):
        raise Refused("a webhook URL is printable ASCII without spaces")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise Refused(f"not a URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise Refused("a webhook URL is http:// or https://")
    if parts.username is not None or parts.password is not None:
        raise Refused("a webhook URL carries no credentials")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise Refused("a webhook URL names a host")
    if port is not None and (port in INTERNAL_PORTS or (port < 1024 and port not in (80, 443))):
        raise Refused(f"a webhook URL's port is 80, 443 or 1024-65535, and not a well-known "
                      f"internal service's (not {port})")
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return Target(url, scheme, host, port or (443 if scheme == "https" else 80), path)


def refusal(address: Address) -> str | None:
    """Why a webhook may not go to this address, or None when it may (it is public)."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour or (address.teredo[1] if address.teredo else None)
        if embedded is not None:
            return refusal(embedded)
    for kind in ("loopback", "link_local", "multicast", "unspecified", "reserved", "private"):
        if getattr(address, f"is_{kind}"):
            return kind.replace("_", "-")
    if not address.is_global:
        return "not public"
    return None


def system_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return [str(info[4][0]) for info in infos]


def resolve(target: Target, *, private_ok: bool, resolver: Resolver = system_resolver,
            timeout: float = RESOLVE_SECONDS) -> list[str]:
    """The addresses to connect to for `target`, each one checked; Refused when the host does
    not resolve in time or any of its addresses may not be reached."""
    try:
        literal = ipaddress.ip_address(target.host)
    except ValueError:
        literal = None
    if literal is not None:
        found = [str(literal)]
    else:
        future = _resolvers.submit(resolver, target.host, target.port)
        try:
            found = future.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            raise Refused(f"{target.host} did not resolve within {timeout:g} s") from None
        except (OSError, UnicodeError) as exc:
            raise Refused(f"{target.host} does not resolve: {exc}") from None
    addresses = list(dict.fromkeys(a.split("%", 1)[0] for a in found))  # no zone ids
    if not addresses:
        raise Refused(f"{target.host} resolves to no address")
    if not private_ok:
        for text in addresses:
            why = refusal(ipaddress.ip_address(text))
            if why is not None:
                raise Refused(f"{target.host} resolves to {text}, a {why} address "
                              f"(allowed only with {ALLOW_PRIVATE}=1)")
    return addresses
