"""Admission: what one client, one game, or a crowd may hold of a process's connection slots.

Every request holds a slot (a greenlet of gunicorn's gevent pool, `worker_connections` of them,
or a thread) from its first byte to its last. Most are short; event streams and long-polls
(`GET /v1/games/{id}` with `If-None-Match` and `Prefer: wait`; a hint's with `Prefer: wait`) are
held for minutes, and a request body sent a byte a second is held as long as the client likes.
Without bounds one address could take every slot, and `/v1/health` would time out for everyone.
So, per process:

- *waits* (streams and long-polls) in flight: at most `per_address_waits` from one address and
  `per_game_waits` on one game; beyond, `429 TOO_MANY_WAITS` with `Retry-After`;
- requests in flight from one address: at most `per_address`; beyond, `429 TOO_MANY_REQUESTS`;
- `/v1/health` and `/v1/ready` are never refused here; past the worker's connection ceiling
  the gevent worker answers `/v1/health` itself (service/serving.py, the reserved path);
- an address whose requests had a token or a tenant's API key refused (401) `auth_failures` times
  this minute has its requests with either refused, `429 TOO_MANY_AUTH_FAILURES`, before the app
  reads any game or key (guessing keys from one address gets 60 guesses a minute);
- a request body must arrive whole within `body_seconds`, else `408 BODY_TIMEOUT`: the body is
  read here, before the app, under a watchdog that shuts the socket when time is up; one that
  ends before its Content-Length (the client hung up) is `400 BODY_INCOMPLETE`. Either is one
  log line, never a traceback.

Every refusal closes the connection (`Connection: close`), so a refused client holds nothing.
The counts are this process's (gunicorn runs WEB_CONCURRENCY of them): an address may hold
`per_address_waits` in each. The address is the one the app sees (after the trusted proxies).

`client_gone(environ)` tells a long wait whether its client has hung up (EOF on its socket), so
the wait ends and frees its slot at once instead of at its deadline.
"""

from __future__ import annotations

import contextlib
import heapq
import io
import itertools
import logging
import os
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

import orjson

RESERVED_PATHS = frozenset({"/v1/health", "/v1/ready"})
GAME = re.compile(r"^/v1/games/([A-Za-z0-9_-]{1,64})(/events)?$")
HINT = re.compile(r"^/v1/games/([A-Za-z0-9_-]{1,64})/hints/[^/]{1,64}$")
READ_SIZE = 64 << 10
# The body as read here, for the app (bodies.json_body): werkzeug's own reading of the same
# bytes again, through its stream wrappers, was a thirtieth of a POST move.
BODY = "aos.body"
log = logging.getLogger("service.admission")


@dataclass(frozen=True)
class Limits:
    per_address_waits: int = 32
    per_game_waits: int = 512
    per_address: int = 128
    auth_failures: int = 60  # 401s per address and minute; past them, a request with a token is 429
    body_seconds: float = 10.0
    max_body: int = 1 << 20  # a body larger is not read here (the app refuses it with 413)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Limits:
        env = os.environ if env is None else env

        def number(name: str, default: float, kind: type = int) -> float:
            raw = env.get(name, "").strip()
            if not raw:
                return default
            value = kind(raw)
            if value <= 0:
                raise ValueError(f"{name} must be positive, got {raw!r}")
            return value

        return cls(
            per_address_waits=int(number("AOS_MAX_WAITS_PER_ADDRESS", cls.per_address_waits)),
            per_game_waits=int(number("AOS_MAX_WAITS_PER_GAME", cls.per_game_waits)),
            per_address=int(number("AOS_MAX_REQUESTS_PER_ADDRESS", cls.per_address)),
            auth_failures=int(number("AOS_MAX_AUTH_FAILURES_PER_MINUTE", cls.auth_failures)),
            body_seconds=float(number("AOS_BODY_TIMEOUT_SECONDS", cls.body_seconds, float)),
        )


def _wait_of(environ: Mapping[str, object]) -> str | None:
    """The game a request would wait on (a stream, a long-poll), or None."""
    if environ.get("REQUEST_METHOD") != "GET":
        return None
    path = str(environ.get("PATH_INFO", ""))
    prefer = str(environ.get("HTTP_PREFER", "")).lower()
    hint = HINT.match(path)
    if hint is not None:  # a hint's long-poll waits for its search
        return hint.group(1) if "wait" in prefer else None
    found = GAME.match(path)
    if found is None:
        return None
    if found.group(2):
        return found.group(1)
    return found.group(1) if "HTTP_IF_NONE_MATCH" in environ and "wait" in prefer else None


def client_socket(environ: Mapping[str, object]) -> socket.socket | None:
    sock = environ.get("gunicorn.socket") or environ.get("werkzeug.socket")
    return sock if isinstance(sock, socket.socket) else None


def client_gone(environ: Mapping[str, object]) -> bool:
    """Whether the client of this request has closed its connection (its socket reads EOF).
    False when it cannot tell (no socket known) or the client sent more (a pipelined request)."""
    sock = client_socket(environ)
    if sock is None:
        return False
    # MSG_DONTWAIT alone is not enough: gevent's socket (gunicorn's workers set theirs blocking)
    # answers EWOULDBLOCK by waiting for the socket to become readable, so the peek would park
    # the long-poll until its client hung up, deaf to the move it waits for. A zero timeout
    # makes gevent raise at once; the request's own greenlet or thread is the socket's only user.
    try:
        timeout = sock.gettimeout()
    except OSError:
        return True
    try:
        sock.settimeout(0.0)
        try:
            return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        finally:
            sock.settimeout(timeout)
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:
        return True


class Admission:
    """WSGI middleware applying `Limits` (see the module's doc)."""

    def __init__(self, app: Callable, limits: Limits | None = None,
                 on_refused: Callable[[str], None] | None = None) -> None:
        self.app = app
        self.limits = limits or Limits.from_env()
        self.on_refused = on_refused or (lambda code: None)
        self._lock = threading.Lock()
        self.in_flight = 0
        self._addresses: dict[str, int] = {}
        self._address_waits: dict[str, int] = {}
        self._game_waits: dict[str, int] = {}
        # address -> (the minute, 401s answered to it in that minute)
        self._failures: dict[str, tuple[int, int]] = {}

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        if environ.get("PATH_INFO") in RESERVED_PATHS:
            return self.app(environ, start_response)
        address = str(environ.get("REMOTE_ADDR") or "unknown")
        credentials = "HTTP_AUTHORIZATION" in environ or "HTTP_X_API_KEY" in environ
        if credentials and self._failing(address):
            return self._refuse(environ, start_response, 429, "TOO_MANY_AUTH_FAILURES", (
                f"more than {self.limits.auth_failures} requests from this address had a token "
                f"or API key refused in the last minute"))
        start_response = self._counting_failures(address, start_response)
        game = _wait_of(environ)
        refused = self._enter(address, game)
        if refused is not None:
            return self._refuse(environ, start_response, *refused)
        try:
            try:
                whole = self._read_body(environ)
            except BodyBrokeOff as exc:
                self._leave(address, game)
                _body_refused(environ, address, "BODY_INCOMPLETE", str(exc))
                return self._refuse(environ, start_response, 400, "BODY_INCOMPLETE", str(exc))
            except BadBody as exc:
                self._leave(address, game)
                _body_refused(environ, address, "BAD_CHUNKED_BODY", str(exc))
                return self._refuse(environ, start_response, 400, "BAD_CHUNKED_BODY", str(exc))
            if not whole:
                self._leave(address, game)
                detail = f"the request body did not arrive within {self.limits.body_seconds:g} s"
                _body_refused(environ, address, "BODY_TIMEOUT", detail)
                return self._refuse(environ, start_response, 408, "BODY_TIMEOUT", detail)
            result = self.app(environ, start_response)
        except BaseException:
            self._leave(address, game)
            raise
        if game is None:
            # Its answer is made: what is left is sending it. Only waits (a stream's answer is
            # the wait) are held until the server closes the answer.
            self._leave(address, game)
            return result
        return _Held(result, lambda: self._leave(address, game))

    # -- tokens refused ---------------------------------------------------------------------
    # A request with a made-up token costs a read of its game before it is refused (401), and
    # each made-up token was its own bucket of the write limit: an address whose tokens keep
    # being refused is refused before the app, for the rest of the minute.

    def _failing(self, address: str) -> bool:
        minute = int(time.monotonic() // 60)
        with self._lock:
            seen = self._failures.get(address)
            return seen is not None and seen[0] == minute and seen[1] >= self.limits.auth_failures

    def _counting_failures(self, address: str, start_response: Callable) -> Callable:
        def start(status: str, headers: list, *args: object) -> object:
            if status.startswith("401"):
                minute = int(time.monotonic() // 60)
                with self._lock:
                    if len(self._failures) > 100_000:  # bounded: old minutes go first
                        self._failures = {a: v for a, v in self._failures.items() if v[0] == minute}
                    seen = self._failures.get(address)
                    count = seen[1] + 1 if seen is not None and seen[0] == minute else 1
                    self._failures[address] = (minute, count)
            return start_response(status, headers, *args)

        return start

    # -- counting ---------------------------------------------------------------------------

    def _enter(self, address: str, game: str | None) -> tuple[int, str, str] | None:
        limits = self.limits
        with self._lock:
            if self._addresses.get(address, 0) >= limits.per_address:
                return refusal(429, "TOO_MANY_REQUESTS",
                               f"at most {limits.per_address} requests in flight from one address")
            if game is not None:
                if self._address_waits.get(address, 0) >= limits.per_address_waits:
                    return refusal(429, "TOO_MANY_WAITS", (
                        f"at most {limits.per_address_waits} event streams and long-polls open "
                        f"from one address"))
                if self._game_waits.get(game, 0) >= limits.per_game_waits:
                    return refusal(429, "TOO_MANY_WAITS", (
                        f"at most {limits.per_game_waits} event streams and long-polls open on one game"))
                self._address_waits[address] = self._address_waits.get(address, 0) + 1
                self._game_waits[game] = self._game_waits.get(game, 0) + 1
            self.in_flight += 1
            self._addresses[address] = self._addresses.get(address, 0) + 1
        return None

    def _leave(self, address: str, game: str | None) -> None:
        with self._lock:
            self.in_flight -= 1
            _drop(self._addresses, address)
            if game is not None:
                _drop(self._address_waits, address)
                _drop(self._game_waits, game)

    def counts(self) -> dict[str, int]:
        with self._lock:
            return {"in_flight": self.in_flight, "addresses": len(self._addresses),
                    "waits": sum(self._address_waits.values())}

    # -- the body ----------------------------------------------------------------------------

    def _read_body(self, environ: dict) -> bool:
        """Reads a body of known length (up to the size limit) into memory within the deadline;
        False when it did not arrive in time. A chunked body is left to the app (bodies.py),
        under the same watchdog."""
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return True  # the app answers a bad Content-Length
        chunked = "chunked" in str(environ.get("HTTP_TRANSFER_ENCODING", "")).lower()
        if (length <= 0 and not chunked) or length > self.limits.max_body:
            return True
        sock = client_socket(environ)
        # Marked by the watchdog's thread when time is up: a list, not a threading.Event (a
        # Condition and a Lock made for every body, 3 us; nothing waits on this mark).
        expired: list[bool] = []

        def time_up() -> None:
            expired.append(True)
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RD)

        watch = WATCHDOG.arm(self.limits.body_seconds, time_up)
        stream = environ["wsgi.input"]
        try:
            parts, size = [], 0
            limit = length if length > 0 else self.limits.max_body + 1
            while size < limit:
                part = stream.read(min(READ_SIZE, limit - size))
                if not part:
                    break
                parts.append(part)
                size += len(part)
        except Exception as exc:  # noqa: BLE001 - a body cut off (by us or the client), or bad
            if expired:
                return False
            raise BadBody(f"the request body cannot be read: {type(exc).__name__}") from None
        finally:
            WATCHDOG.cancel(watch)
        if expired:
            return False
        if length > 0 and size < length:
            # The client hung up mid-body. Left to the app, the short body would surface as
            # werkzeug's ClientDisconnected wherever the body is first read, with a traceback.
            raise BodyBrokeOff(f"the request body broke off after {size} of {length} bytes")
        data = b"".join(parts)
        environ["wsgi.input"] = io.BytesIO(data)
        environ[BODY] = data
        if chunked:
            environ["CONTENT_LENGTH"] = str(len(data))
            environ.pop("HTTP_TRANSFER_ENCODING", None)
            environ["wsgi.input_terminated"] = True
        return True

    def _refuse(self, environ: dict, start_response: Callable, status: int, code: str,
                detail: str) -> Iterable[bytes]:
        self.on_refused(code)
        reason = {400: "Bad Request", 408: "Request Timeout", 429: "Too Many Requests"}[status]
        body = orjson.dumps({"type": f"urn:aos:problem:{code}", "title": reason, "status": status,
                             "code": code, "detail": detail})
        start_response(f"{status} {reason}", [
            ("Content-Type", "application/problem+json"), ("Content-Length", str(len(body))),
            ("Retry-After", "1"), ("Connection", "close"), ("Cache-Control", "no-store"),
            # Every answer carries a request id, this one made before the app sees the request.
            ("X-Request-Id", uuid.uuid4().hex), ("X-Content-Type-Options", "nosniff"),
            ("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")])
        # gunicorn drops an app's Connection header: once the answer is out, the connection's
        # reading side is shut, so the server finds it ended and closes it.
        sock = client_socket(environ)
        return _Held([body], lambda: _shut_reading(sock))


class Watchdog:
    """Deadlines kept by one thread of the process. A thread (threading.Timer) per body cost a
    thread start, and the wait for it, on every POST: about a tenth of a move's time in the app
    (issue 27, item 3). Here arming is a push on a heap and cancelling a store into the entry;
    the thread wakes only at the earliest deadline still set. Under gevent's monkey-patching the
    thread is a greenlet, as the Timer was."""

    def __init__(self) -> None:
        self._ready = threading.Condition(threading.Lock())
        self._heap: list[list] = []  # [deadline, n, action or None once cancelled]
        self._numbers = itertools.count()
        self._pid: int | None = None

    def arm(self, seconds: float, action: Callable[[], None]) -> list:
        """Calls `action` in `seconds` unless cancelled first; the entry is the handle."""
        entry = [time.monotonic() + seconds, next(self._numbers), action]
        with self._ready:
            if self._pid != os.getpid():  # first use in this process (a forked worker's too)
                self._pid = os.getpid()
                self._heap = []
                threading.Thread(target=self._run, name="aos-watchdog", daemon=True).start()
            heapq.heappush(self._heap, entry)
            if self._heap[0] is entry:
                self._ready.notify()
        return entry

    def cancel(self, entry: list) -> None:
        """The action will not be called, unless it is being called now (as with a Timer)."""
        entry[2] = None

    def _run(self) -> None:
        while True:
            with self._ready:
                heap = self._heap
                due: list[Callable[[], None] | None] = []
                while not due:
                    now = time.monotonic()
                    if not heap or heap[0][0] > now:
                        self._ready.wait(heap[0][0] - now if heap else None)
                        continue
                    while heap and heap[0][0] <= now:
                        due.append(heapq.heappop(heap)[2])
                    # Cancelled entries are dropped only here, when a deadline wakes the thread:
                    # dropped at every arm's wake-up, they would leave the heap empty, and every
                    # next arm would wake the thread again.
                    while heap and heap[0][2] is None:
                        heapq.heappop(heap)
                    due = [action for action in due if action is not None]
            for action in due:
                if action is not None:
                    with contextlib.suppress(Exception):
                        action()


WATCHDOG = Watchdog()


def _body_refused(environ: Mapping[str, object], address: str, code: str, detail: str) -> None:
    """One line for a body refused (a slow or broken-off client is the client's fault, not ours:
    no traceback)."""
    log.warning("request body refused: %s", detail, extra={"fields": {
        "event": "body_refused", "code": code, "method": str(environ.get("REQUEST_METHOD"))[:20],
        "path": str(environ.get("PATH_INFO"))[:200], "remote": address}})


def _shut_reading(sock: socket.socket | None) -> None:
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RD)


def refusal(status: int, code: str, detail: str) -> tuple[int, str, str]:
    """A refusal to answer (its code is in service/api/error_codes.py, which a test holds to
    the codes named here)."""
    return status, code, detail


class BadBody(Exception):
    """A body that broke off or is malformed (not a timeout)."""


class BodyBrokeOff(BadBody):
    """A body of known length whose client stopped sending (hung up) before its end."""


def _drop(counts: dict[str, int], key: str) -> None:
    left = counts.get(key, 1) - 1
    if left > 0:
        counts[key] = left
    else:
        counts.pop(key, None)


class _Held:
    """The app's answer, whose slot is given back when the server is done with it (close())."""

    def __init__(self, result: Iterable[bytes], release: Callable[[], None]) -> None:
        self._result = result
        self._release: Callable[[], None] | None = release

    def __iter__(self) -> Iterator[bytes]:
        yield from self._result
        self.close()  # run to its end: given back now, whether or not the server closes it

    def close(self) -> None:
        try:
            close = getattr(self._result, "close", None)
            if close is not None:
                close()
        finally:
            if self._release is not None:
                release, self._release = self._release, None
                release()
