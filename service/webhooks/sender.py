"""One webhook request, bounded: a POST to an address checked beforehand (service/webhooks/
addresses.py), no redirect followed, at most `timeout` seconds in all, and at most
`max_response_bytes` of the answer read.

The deadline holds whatever the framing. A watchdog shuts the TCP socket when time is up, and
each read waits at most for the time left. The connection keeps its own handle on the socket:
http.client lets go of `conn.sock` as soon as an answer says `HTTP/1.0` or `Connection: close`
(the answer then owns the socket), and a watchdog that shut `conn.sock` found nothing to shut
while such a receiver dripped its body a byte a second. An answer not read in time is a failure
(a timeout), never a delivery. `Abort` shuts every socket of a worker that is stopping."""

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


class Abort:
    """The sockets of the requests in flight, so that a stopping worker can cut them off."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self.aborted = False

    def add(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.add(sock)
            aborted = self.aborted
        if aborted:
            _shut(sock)

    def discard(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.discard(sock)

    def all(self) -> None:
        with self._lock:
            self.aborted = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


class _Pinned(http.client.HTTPConnection):
    """HTTP to a given address, with the URL's host in the Host header. `raw` stays the TCP
    socket until the end, whoever owns it (the connection, or an answer that closes it)."""

    raw: socket.socket | None = None

    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.address = address

    def connect(self) -> None:
        self.raw = socket.create_connection((self.address, self.port), self.timeout)
        self.sock = self.raw


class _PinnedTLS(http.client.HTTPSConnection):
    """HTTPS to a given address; the certificate is checked against the URL's host (SNI too)."""

    raw: socket.socket | None = None

    def __init__(self, host: str, port: int, address: str, timeout: float, context: ssl.SSLContext) -> None:
        super().__init__(host, port, timeout=timeout, context=context)
        self.address = address
        self.tls = context

    def connect(self) -> None:
        tcp = socket.create_connection((self.address, self.port), self.timeout)
        # The TLS socket takes the TCP one's descriptor over: it is the one to shut.
        self.raw = self.sock = self.tls.wrap_socket(tcp, server_hostname=self.host)


_tls = ssl.create_default_context()


def post(target: Target, address: str, body: bytes, headers: dict[str, str], *, timeout: float,
         max_response_bytes: int = 4096, abort: Abort | None = None) -> Outcome:
    """POSTs `body` to `target` at `address`; never raises for a network failure."""
    started = time.monotonic()
    deadline = started + timeout
    conn: _Pinned | _PinnedTLS
    if target.scheme == "https":
        conn = _PinnedTLS(target.host, target.port, address, timeout, _tls)
    else:
        conn = _Pinned(target.host, target.port, address, timeout)
    expired = threading.Event()

    def time_up() -> None:
        expired.set()
        if conn.raw is not None:
            _shut(conn.raw)

    watchdog = threading.Timer(timeout, time_up)
    watchdog.daemon = True
    watchdog.start()
    try:
        conn.connect()
        assert conn.raw is not None  # connect() sets it
        if abort is not None:
            abort.add(conn.raw)
        conn.request("POST", target.path, body=body, headers={
            "Content-Type": "application/json", "User-Agent": USER_AGENT, **headers})
        response = conn.getresponse()
        left = max_response_bytes
        while left > 0:  # what is beyond the cap is never read
            conn.raw.settimeout(max(0.001, deadline - time.monotonic()))
            chunk = response.read1(min(left, 1024))
            if not chunk:
                break
            left -= len(chunk)
        if expired.is_set() or time.monotonic() >= deadline:
            return Outcome(None, time.monotonic() - started, "timeout")
        if abort is not None and abort.aborted:
            return Outcome(None, time.monotonic() - started, "aborted")
        return Outcome(response.status, time.monotonic() - started)
    except (OSError, http.client.HTTPException, ValueError) as exc:
        elapsed = time.monotonic() - started
        if abort is not None and abort.aborted:
            reason = "aborted"
        elif expired.is_set() or elapsed >= timeout:
            reason = "timeout"
        else:
            reason = f"{type(exc).__name__}: {exc}"
        return Outcome(None, elapsed, reason[:200])
    finally:
        watchdog.cancel()
        if conn.raw is not None:
            if abort is not None:
                abort.discard(conn.raw)
            with contextlib.suppress(OSError):
                conn.raw.close()
        conn.close()
