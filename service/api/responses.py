"""What the API answers: JSON responses dumped with orjson, ETag handling, and problem+json
errors (RFC 9457) with stable codes, with the handlers that make every failure one."""

from __future__ import annotations

import logging
import re
from typing import Any

import orjson
from flask import Flask, Response
from werkzeug.exceptions import HTTPException

from service.observability import metrics
from service.referee.conditions import etag, etag_matches
from service.referee.errors import GameError
from service.store import StoreUnavailable

from .error_codes import status_of

__all__ = [
    "ApiError", "etag", "etag_matches", "game_problem", "install", "json_response", "problem", "raw_json",
    "strong_tags", "well_formed_etags",
]

JSON = "application/json"
# RFC 9110: `*`, or entity tags (`"3"`, `W/"3"`) separated by commas.
_TAG = r'(?:W/)?"[\x21\x23-\x7e\x80-\xff]*"'
ETAG_LIST = re.compile(rf"\*|{_TAG}(?:[ \t]*,[ \t]*{_TAG})*")


def json_response(body: object, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return raw_json(orjson.dumps(body), status, headers)


def raw_json(data: bytes, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(data, status=status, headers=headers, content_type=JSON)


def strong_tags(header: str | None) -> str | None:
    """An If-Match header with its weak tags left out: If-Match compares strongly (RFC 9110
    13.1.1), so `W/"3"` never matches, even at version 3. A header of weak tags only is kept
    as an empty one, which matches nothing."""
    if header is None:
        return None
    return ", ".join(tag.strip() for tag in header.split(",") if not tag.strip().startswith("W/"))


def well_formed_etags(header: str) -> bool:
    """Whether an If-Match / If-None-Match value is `*` or a list of quoted entity tags."""
    return ETAG_LIST.fullmatch(header.strip(" \t")) is not None


log = logging.getLogger(__name__)

PROBLEM_JSON = "application/problem+json"

TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    412: "Precondition failed",
    413: "Request body too large",
    422: "Unprocessable request",
    429: "Too many requests",
    500: "Internal server error",
    503: "Service unavailable",
}

# Werkzeug's own errors (routing, body limit) under our stable codes.
HTTP_CODES = {
    400: "BAD_REQUEST",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    413: "BODY_TOO_LARGE",
}


class ApiError(GameError):
    """A failure of the HTTP request itself (its body, headers, query) that the client can act
    on: becomes a problem response with `code`. The core's refusals are GameErrors, answered
    with the status of their code."""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        *,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(code, detail, **extra)
        self.args = (f"{status} {code}: {detail}",)
        self.status = status
        self.headers = headers or {}


def problem(
    status: int,
    code: str,
    detail: str,
    headers: dict[str, str] | None = None,
    **extra: object,
) -> Response:
    body = {
        "type": f"urn:aos:problem:{code}",
        "title": TITLES.get(status, "Error"),
        "status": status,
        "code": code,
        "detail": detail,
        **extra,
    }
    # Validation messages are keyed by list index (ints) as well as by field name.
    data = orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS)
    return Response(data, status=status, headers=headers, content_type=PROBLEM_JSON)


# The response headers a code of the core asks the client to read (error_codes.API_CODES names
# them), made from the refusal's own fields.
_RETRY = {"Retry-After": "1"}
_BEARER = {"WWW-Authenticate": "Bearer"}
CODE_HEADERS = {
    "VERSION_MISMATCH": lambda extra: {"ETag": etag(extra["version"])},
    "CONTENTION": lambda extra: _RETRY,
    "STORE_UNAVAILABLE": lambda extra: _RETRY,
    "TOKEN_MISSING": lambda extra: _BEARER,
    "TOKEN_INVALID": lambda extra: _BEARER,
    "QUOTA_EXCEEDED": lambda extra: {
        "Retry-After": str(extra["retry_after"]),
        "RateLimit-Policy": f'"{extra["quota"]}";q={extra["limit"]}',
        "RateLimit": f'"{extra["quota"]}";r=0;t={extra["retry_after"]}',
    },
}


def game_problem(exc: GameError) -> Response:
    """The problem response to a refusal of the core: its code's status and headers."""
    headers = CODE_HEADERS[exc.code](exc.extra) if exc.code in CODE_HEADERS else None
    return problem(status_of(exc.code), exc.code, exc.detail, headers, **exc.extra)


def install(app: Flask) -> None:
    @app.errorhandler(ApiError)
    def _api_error(exc: ApiError) -> Response:
        return problem(exc.status, exc.code, exc.detail, exc.headers, **exc.extra)

    @app.errorhandler(GameError)
    def _game_error(exc: GameError) -> Response:
        return game_problem(exc)

    @app.errorhandler(StoreUnavailable)
    def _store_down(exc: StoreUnavailable) -> Response:
        metrics.STORE_ERRORS.labels(op=exc.op, kind=exc.kind).inc()
        log.warning(
            "store unavailable",
            extra={"fields": {"event": "store_error", "op": exc.op, "kind": exc.kind, "error": str(exc)}},
        )
        return problem(503, "STORE_UNAVAILABLE", "the game store is unreachable", {"Retry-After": "1"})

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException) -> Response:
        status = exc.code or 500
        headers = {k: v for k, v in exc.get_headers() if k.lower() == "allow"}
        code = HTTP_CODES.get(status, "HTTP_ERROR")
        return problem(status, code, exc.description or TITLES.get(status, "error"), headers)

    @app.errorhandler(Exception)
    def _bug(exc: Exception) -> Response:
        log.exception("unhandled error")
        return problem(500, "INTERNAL", "an internal error; it has been logged")
