"""One webhook request, bounded: a POST to an address checked beforehand (service/webhooks/
addresses.py), no redirect followed, at most `timeout` seconds in all (a watchdog shuts the
socket when time is up, however slowly the receiver drips its answer), and at most
`max_response_bytes` of the answer read."""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import threading
import time
from dataclasses import dataclass

from .addresses import Target

USER_AGENT = "aos-rules-webhooks/1"


@dataclass(frozen=True, slots=True)
class Outcome:
    status: int | None  # the HTTP status, or None when no answer came
    seconds: float
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


class _Pinned(http.client.HTTPConnection):
    """HTTP to a given address, with the URL's host in the Host header."""

    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self.address, self.port), self.timeout)


class _PinnedTLS(http.client.HTTPSConnection):
    """HTTPS to a given address; the certificate is checked against the URL's host (SNI too)."""

    def __init__(self, host: str, port: int, address: str, timeout: float, context: ssl.SSLContext) -> None:
        super().__init__(host, port, timeout=timeout, context=context)
        self.address = address
        self.tls = context

    def connect(self) -> None:
        raw = socket.create_connection((self.address, self.port), self.timeout)
        self.sock = self.tls.wrap_socket(raw, server_hostname=self.host)


_tls = ssl.create_default_context()


def post(target: Target, address: str, body: bytes, headers: dict[str, str], *, timeout: float,
         max_response_bytes: int = 4096) -> Outcome:
    """POSTs `body` to `target` at `address`; never raises for a network failure."""
    started = time.monotonic()
    if target.scheme == "https":
        conn: http.client.HTTPConnection = _PinnedTLS(target.host, target.port, address, timeout, _tls)
    else:
        conn = _Pinned(target.host, target.port, address, timeout)

    def time_up() -> None:
        sock = conn.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    watchdog = threading.Timer(timeout, time_up)
    watchdog.daemon = True
    watchdog.start()
    try:
        conn.request("POST", target.path, body=body, headers={
            "Content-Type": "application/json", "User-Agent": USER_AGENT, **headers})
        response = conn.getresponse()
        response.read(max_response_bytes)  # what is beyond is never read
        return Outcome(response.status, time.monotonic() - started)
    except (OSError, http.client.HTTPException, ValueError) as exc:
        elapsed = time.monotonic() - started
        reason = "timeout" if elapsed >= timeout else f"{type(exc).__name__}: {exc}"
        return Outcome(None, elapsed, reason[:200])
    finally:
        watchdog.cancel()
        conn.close()
