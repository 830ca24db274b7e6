"""What every request leaves behind: its X-Request-Id (taken from the caller or made here, and
echoed on every response, errors included), one JSON access-log line and the HTTP metrics.
Prometheus reads the metrics on a port of their own, not the API's (service/serving.py)."""

from __future__ import annotations

import logging
import re
import time
import uuid

from flask import Flask, Response, g, request

from service.observability import metrics

REQUEST_ID_HEADER = "X-Request-Id"
# What a proxy or client may hand us: the ids of nginx, ingress controllers and tracers (hex,
# UUIDs, base64) fit; anything else is replaced, so the logs and the header stay clean.
REQUEST_ID = re.compile(r"[A-Za-z0-9._:/+=@-]{1,128}")
UNMATCHED = "unmatched"  # the route label of a request that matched no URL rule
# The method label's closed set: gunicorn passes on any method of 3-20 capital letters, and each
# one would otherwise be a new time series of the counter and the histogram.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
OTHER_METHOD = "OTHER"
USER_AGENT_CHARS = 256

access_log = logging.getLogger("service.access")


def request_id(header: str | None) -> str:
    """The caller's X-Request-Id if it is a sane one, else a new one."""
    if header is not None and REQUEST_ID.fullmatch(header):
        return header
    return uuid.uuid4().hex


def route() -> str:
    """The URL rule (`/v1/games/<game_id>/moves`): bounded, unlike the raw path."""
    return request.url_rule.rule if request.url_rule is not None else UNMATCHED


def method() -> str:
    return request.method if request.method in METHODS else OTHER_METHOD


def _start() -> None:
    g.started = time.perf_counter()
    g.request_id = request_id(request.headers.get(REQUEST_ID_HEADER))


def _finish(response: Response) -> Response:
    seconds = time.perf_counter() - g.get("started", time.perf_counter())
    rule, status = route(), response.status_code
    response.headers[REQUEST_ID_HEADER] = g.get("request_id") or request_id(None)
    verb = method()
    metrics.HTTP_REQUESTS.labels(route=rule, method=verb, status=str(status)).inc()
    metrics.HTTP_DURATION.labels(route=rule, method=verb).observe(seconds)
    access_log.info(
        "request",
        extra={
            "fields": {
                "log": "access",
                "method": request.method[:20],
                "route": rule,
                "path": request.path,
                "status": status,
                "duration_ms": round(seconds * 1000, 3),
                "remote": request.remote_addr,
                "user_agent": (request.user_agent.string or "")[:USER_AGENT_CHARS] or None,
            }
        },
    )
    return response


def install(app: Flask) -> None:
    metrics.prepare()
    app.before_request(_start)
    app.after_request(_finish)
