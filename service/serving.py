"""How the service is served, beyond the WSGI app: gunicorn worker classes whose own error answers
are problem+json, and the metrics endpoint on a port of its own.

gunicorn answers some requests itself, before the app sees them (a malformed request line, a
line or headers over its limits, a bad chunked body), with an HTML page and no hook to change
it. `ProblemErrors` is a mixin over gunicorn's workers that answers those as the app answers
everything (`application/problem+json`, a stable `code`, `X-Request-Id`, the security headers);
`SyncWorker` and `GeventWorker` (made on first use) are gunicorn's two worker classes with it
(`worker_class = "service.serving.SyncWorker"` in deploy/gunicorn.conf.py). The import of this
module also replaces the `Server: gunicorn` banner with a generic one.

`GeventWorker` also has a ceiling (`Ceiling`): it holds at most `worker_connections` connections,
and answers the next ones at once, `503 AT_CAPACITY` with `Retry-After`, instead of leaving them
unanswered in the listen backlog. Its gauges say how near the instance is to the ceiling.

`/metrics` is not on the API port: `start_metrics_server` serves it on AOS_METRICS_PORT, from
gunicorn's master (the workers' counts, summed by prometheus_client's multi-process collector),
or from the process itself under `python -m service`. This module imports nothing of the app:
gunicorn's master loads it, and must not import Redis clients before gevent patches them.
"""

from __future__ import annotations

import logging
import os
import threading
import uuid
from collections.abc import Callable, Mapping
from socketserver import ThreadingMixIn
from ssl import SSLError
from typing import cast
from wsgiref.simple_server import ServerHandler, WSGIRequestHandler, WSGIServer, make_server

import gunicorn.http.wsgi
import orjson
from gunicorn import util
from gunicorn.http import errors
from gunicorn.workers.sync import SyncWorker as _GunicornSyncWorker

SERVER = "aos-rules"
# Every answer of ours carries these; the app adds them to its own (service/api/plumbing/security.py).
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'; base-uri 'none'",
    "Referrer-Policy": "no-referrer",
}
DETAIL_CHARS = 200

gunicorn.http.wsgi.SERVER = SERVER  # Response reads it per response: `Server: aos-rules`

# gunicorn's own failures: (exception, status, reason, code). The first match wins, so the
# app's own bad response headers (subclasses of the request-header errors) come first.
GUNICORN_ERRORS: tuple[tuple[type[BaseException], int, str, str], ...] = (
    (errors.InvalidResponseHeader, 500, "Internal Server Error", "INTERNAL"),
    (errors.InvalidResponseHeaderName, 500, "Internal Server Error", "INTERNAL"),
    (errors.ConfigurationProblem, 500, "Internal Server Error", "INTERNAL"),
    (errors.LimitRequestLine, 414, "URI Too Long", "URI_TOO_LONG"),
    (errors.LimitRequestHeaders, 431, "Request Header Fields Too Large", "HEADERS_TOO_LARGE"),
    (errors.UnsupportedTransferCoding, 501, "Not Implemented", "TRANSFER_CODING_UNSUPPORTED"),
    (errors.ExpectationFailed, 417, "Expectation Failed", "EXPECTATION_FAILED"),
    (errors.ForbiddenProxyRequest, 403, "Forbidden", "PROXY_FORBIDDEN"),
    (SSLError, 403, "Forbidden", "TLS_ERROR"),
    (errors.InvalidRequestLine, 400, "Bad Request", "BAD_REQUEST_LINE"),
    (errors.InvalidRequestMethod, 400, "Bad Request", "BAD_METHOD"),
    (errors.InvalidHTTPVersion, 400, "Bad Request", "BAD_HTTP_VERSION"),
    (errors.InvalidHeaderName, 400, "Bad Request", "BAD_HEADER"),
    (errors.InvalidHeader, 400, "Bad Request", "BAD_HEADER"),
    (errors.ObsoleteFolding, 400, "Bad Request", "BAD_HEADER"),
    (errors.InvalidChunkSize, 400, "Bad Request", "BAD_CHUNKED_BODY"),
    (errors.ChunkMissingTerminator, 400, "Bad Request", "BAD_CHUNKED_BODY"),
    (errors.InvalidChunkExtension, 400, "Bad Request", "BAD_CHUNKED_BODY"),
    (errors.InvalidProxyLine, 400, "Bad Request", "BAD_PROXY_LINE"),
    (errors.InvalidSchemeHeaders, 400, "Bad Request", "BAD_SCHEME_HEADERS"),
    (errors.InvalidH2CPreface, 400, "Bad Request", "BAD_REQUEST"),
    (errors.ParseException, 400, "Bad Request", "BAD_REQUEST"),
)


def classify(exc: BaseException) -> tuple[int, str, str]:
    """(status, reason, code) of a failure gunicorn meets; 500 for anything it does not know."""
    for kind, status, reason, code in GUNICORN_ERRORS:
        if isinstance(exc, kind):
            return status, reason, code
    return 500, "Internal Server Error", "INTERNAL"


def problem_response(status: int, reason: str, code: str, detail: str,
                     extra: Mapping[str, str] | None = None) -> bytes:
    """A whole HTTP/1.1 answer, problem+json, that closes the connection."""
    body = orjson.dumps(
        {"type": f"urn:aos:problem:{code}", "title": reason, "status": status, "code": code, "detail": detail}
    )
    headers = {
        "Content-Type": "application/problem+json",
        "Content-Length": str(len(body)),
        "Connection": "close",
        "Server": SERVER,
        "X-Request-Id": uuid.uuid4().hex,
        **SECURITY_HEADERS,
        **(extra or {}),
    }
    head = f"HTTP/1.1 {status} {reason}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return head.encode("latin-1") + b"\r\n" + body


class ProblemErrors:
    """A gunicorn worker mixin: its own error answers are problem+json instead of HTML pages."""

    log: logging.Logger

    def handle_error(self, req, client, addr, exc):  # type: ignore[no-untyped-def]  # gunicorn's signature
        status, reason, code = classify(exc)
        addr = addr or ("", -1)
        if status < 500:
            self.log.warning("Invalid request from ip=%s: %s", addr[0], exc)
            detail = str(exc)[:DETAIL_CHARS] or reason
        else:
            self.log.exception("Error handling request %s", getattr(req, "uri", "(no URI read)"))
            detail = "an internal error; it has been logged"
        try:
            util.write_nonblock(client, problem_response(status, reason, code, detail))
        except Exception:  # noqa: BLE001 - the client has gone: nothing left to tell it
            self.log.debug("Failed to send error message.")


class SyncWorker(ProblemErrors, _GunicornSyncWorker):
    pass


# -- the connection ceiling ---------------------------------------------------------------------

# Connections past the ceiling that are being answered 503 at once: each takes a greenlet for as
# long as it takes to read its request (at most REFUSAL_READ_SECONDS) and write the answer.
REFUSAL_SPARE = 200
REFUSAL_READ_SECONDS = 1.0
RETRY_AFTER_SECONDS = 2


class Ceiling:
    """A gevent worker mixin: at most `worker_connections` connections held at once (open event
    streams, long-polls, keep-alive, requests); each one past that is answered at once with
    `503 AT_CAPACITY` and `Retry-After`, then closed. gevent's own pool, when full, stops
    accepting: the extra connections would wait unanswered in the listen backlog, and a client
    could not tell a full instance from a dead one. The pool is `REFUSAL_SPARE` larger than the
    ceiling, so that refusing costs a short-lived greenlet, never a held slot."""

    worker_connections: int
    log: logging.Logger

    def init_process(self) -> None:
        self.ceiling = self.worker_connections
        self.worker_connections = self.ceiling + REFUSAL_SPARE  # the size of gevent's pool
        self.held = 0
        self.gauges = connection_gauges()
        self.gauges[1].set(self.ceiling)
        super().init_process()  # type: ignore[misc]  # the worker's own: runs until it exits

    def handle(self, listener, client, addr):  # type: ignore[no-untyped-def]  # gunicorn's signature
        self.held += 1
        held_gauge, _, refused = self.gauges
        held_gauge.inc()
        try:
            if self.held > self.ceiling:
                if refuse(client, self.ceiling):
                    refused.inc()
                return
            super().handle(listener, client, addr)  # type: ignore[misc]
        finally:
            self.held -= 1
            held_gauge.dec()


HEALTH_BODY = b'{"status":"ok"}'


def health_response() -> bytes:
    """`GET /v1/health`'s answer (as the app gives it), that closes the connection."""
    headers = {
        "Content-Type": "application/json",
        "Content-Length": str(len(HEALTH_BODY)),
        "Connection": "close",
        "Server": SERVER,
        "X-Request-Id": uuid.uuid4().hex,
        "Access-Control-Allow-Origin": "*",
        **SECURITY_HEADERS,
    }
    head = "HTTP/1.1 200 OK\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return head.encode("latin-1") + b"\r\n" + HEALTH_BODY


def is_health(request: bytes) -> bool:
    """Whether a request's first line asks for `/v1/health` (the reserved path)."""
    line = request.split(b"\r\n", 1)[0]
    method, _, rest = line.partition(b" ")
    target = rest.split(b" ", 1)[0].split(b"?", 1)[0]
    return method in (b"GET", b"HEAD") and target == b"/v1/health"


def refuse(client, ceiling: int) -> bool:  # type: ignore[no-untyped-def]  # a gevent socket
    """Answer one connection `503 AT_CAPACITY` and close it. The request is read first (what
    arrives within REFUSAL_READ_SECONDS): closing with it unread would reset the connection, and
    the client would see a reset instead of the answer. `/v1/health` is the reserved path: it is
    answered here, 200, so the probes see a full instance as alive (it is), never as dead.
    Returns whether the connection was refused (False: it was a health check, answered)."""
    try:
        client.settimeout(REFUSAL_READ_SECONDS)
        try:
            request = client.recv(65536)
        except TimeoutError:
            request = b""  # nothing came in time: answered all the same, not closed in silence
        if is_health(request):
            client.sendall(health_response())
            return False
        client.sendall(problem_response(
            503, "Service Unavailable", "AT_CAPACITY",
            f"this instance holds as many connections as it may ({ceiling} per worker); "
            f"try again after Retry-After seconds", {"Retry-After": str(RETRY_AFTER_SECONDS)}))
    except OSError:
        pass  # the client has gone: nothing left to tell it
    finally:
        client.close()
    return True


def connection_gauges() -> tuple:
    """(held, ceiling, refused): the worker's connections now, its ceiling, and the refusals;
    summed over the live workers, held / ceiling is how near the instance is to its ceiling."""
    from prometheus_client import Counter, Gauge

    return (
        Gauge("aos_connections_open", "Connections the workers hold now (streams, long-polls, "
              "keep-alive, requests, and those being refused).", multiprocess_mode="livesum"),
        Gauge("aos_connections_ceiling", "Connections the workers may hold at once; past it a "
              "connection is answered 503 AT_CAPACITY.", multiprocess_mode="livesum"),
        Counter("aos_connections_refused_total", "Connections answered 503 AT_CAPACITY: the "
                "workers held as many as they may."),
    )


def __getattr__(name: str) -> type:
    # GeventWorker is made on first use: a master running sync workers never imports gevent.
    if name == "GeventWorker":
        from gunicorn.workers.ggevent import GeventWorker as _GunicornGeventWorker

        worker = type("GeventWorker", (ProblemErrors, Ceiling, _GunicornGeventWorker),
                      {"__module__": __name__})
        globals()["GeventWorker"] = worker
        return worker
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# -- the metrics port -------------------------------------------------------------------------


def metrics_port(env: Mapping[str, str] | None = None) -> int | None:
    """AOS_METRICS_PORT (default 9100); None when it is `off` or `0`."""
    env = os.environ if env is None else env
    raw = env.get("AOS_METRICS_PORT", "9100").strip().lower()
    if raw in ("", "off", "0", "none"):
        return None
    port = int(raw)
    if not 0 < port < 65536:
        raise ValueError(f"AOS_METRICS_PORT must be a port number or off, got {raw!r}")
    return port


def multiprocess_exposition() -> tuple[bytes, str]:
    """Every worker's metrics, summed from PROMETHEUS_MULTIPROC_DIR (gunicorn's master)."""
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest, multiprocess

    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=os.environ["PROMETHEUS_MULTIPROC_DIR"])
    return generate_latest(registry), CONTENT_TYPE_LATEST


def metrics_app(exposition: Callable[[], tuple[bytes, str]]) -> Callable:
    """A WSGI app: `GET /metrics` is the exposition; anything else is a problem 404 or 405."""

    def app(environ: dict, start_response: Callable) -> list[bytes]:
        path, method = environ.get("PATH_INFO", ""), environ.get("REQUEST_METHOD", "")
        if path == "/metrics" and method in ("GET", "HEAD"):
            body, content_type = exposition()
            status = "200 OK"
        else:
            status, code = ("404 Not Found", "NOT_FOUND") if path != "/metrics" else (
                "405 Method Not Allowed", "METHOD_NOT_ALLOWED")
            body = orjson.dumps({"type": f"urn:aos:problem:{code}", "title": status[4:],
                                 "status": int(status[:3]), "code": code, "detail": "only GET /metrics"})
            content_type = "application/problem+json"
        headers = [("Content-Type", content_type), ("Content-Length", str(len(body))),
                   *SECURITY_HEADERS.items()]
        start_response(status, headers)
        return [b"" if method == "HEAD" else body]

    return app


class _Handler(ServerHandler):
    server_software = SERVER  # wsgiref's own banner names Python's version


class _RequestHandler(WSGIRequestHandler):
    timeout = 10.0  # an idle connection to the metrics port holds a thread: closed after this

    def version_string(self) -> str:
        return SERVER  # the banner of the answers the handler writes itself (a bad request line)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
        pass  # Prometheus scrapes every few seconds: nothing worth a line each

    def handle(self) -> None:
        # WSGIRequestHandler.handle, with our handler class (and so our Server header).
        self.raw_requestline = self.rfile.readline(65537)
        if len(self.raw_requestline) > 65536 or not self.parse_request():
            return
        handler = _Handler(self.rfile, self.wfile,  # type: ignore[arg-type]  # wsgiref passes these too
                           self.get_stderr(), self.get_environ(), multithread=True)
        handler.request_handler = self  # type: ignore[attr-defined]  # as wsgiref's own handle() does
        app = cast(WSGIServer, self.server).get_app()
        assert app is not None  # serve() sets it before the first request
        handler.run(app)


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


def start_metrics_server(
    port: int, host: str = "0.0.0.0", exposition: Callable[[], tuple[bytes, str]] | None = None
) -> WSGIServer:
    """Serve `GET /metrics` on host:port from a daemon thread of this process."""
    app = metrics_app(exposition or multiprocess_exposition)
    server = make_server(host, port, app, _Server, _RequestHandler)
    threading.Thread(target=server.serve_forever, name="aos-metrics", daemon=True).start()
    return server
