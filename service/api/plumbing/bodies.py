"""Request bodies before any route reads them: the size limit, whatever the framing.

A body with Content-Length over the limit is refused by werkzeug before it is read. A body
without one (`Transfer-Encoding: chunked`) is only cut at the limit by werkzeug, and what is
left of it would be parsed: a valid move padded to the limit, then garbage, was applied. Here
such a body is read up to one byte past the limit, refused with 413 if that byte exists, and
otherwise handed on as a body of known length.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

import orjson
from flask import Flask, Request, current_app, g, request
from werkzeug.exceptions import RequestEntityTooLarge

from service.admission import BODY

from ..responses import ApiError

if TYPE_CHECKING:
    from flask.ctx import _AppCtxGlobals

READ_SIZE = 64 << 10
_UNPARSED = object()


def this_request() -> Request:
    """The request itself, not its proxy: each attribute read through `flask.request` is a
    failed lookup on the proxy, an AttributeError made, then the proxy's __getattr__; on the
    request it is a plain one. For the move's path, which reads several."""
    return request._get_current_object()  # type: ignore[attr-defined]


def this_app() -> Flask:
    """The app itself, not `current_app`'s proxy (as this_request)."""
    return current_app._get_current_object()  # type: ignore[attr-defined]


def request_globals() -> _AppCtxGlobals:
    """`flask.g` itself, not its proxy (as this_request)."""
    return g._get_current_object()  # type: ignore[attr-defined]


def read_at_most(stream: io.RawIOBase, limit: int) -> bytes:
    """Up to `limit` bytes of `stream`, fewer only if it ends first."""
    parts, size = [], 0
    while size < limit:
        part = stream.read(min(READ_SIZE, limit - size))
        if not part:
            break
        parts.append(part)
        size += len(part)
    return b"".join(parts)


def bound_streamed_body() -> None:
    environ = request.environ
    if request.content_length is not None or "wsgi.input_terminated" not in environ:
        # A known length is checked by werkzeug; a stream the server does not terminate is
        # never read (werkzeug hands the app an empty one).
        return
    limit = current_app.config["MAX_CONTENT_LENGTH"]
    try:
        data = read_at_most(environ["wsgi.input"], limit + 1)
    except Exception as exc:  # noqa: BLE001 - whatever the server's decoder raises: a bad body
        # gunicorn's chunk decoder raises its own errors (a bad chunk size, a missing CRLF) or
        # an OSError (the client went away): the client's fault, never a 500.
        detail = f"the chunked body cannot be read: {type(exc).__name__}"
        raise ApiError(400, "BAD_CHUNKED_BODY", detail) from None
    if len(data) > limit:
        raise RequestEntityTooLarge()
    # From here on the body is an ordinary one of known length: werkzeug reads it as such.
    environ["wsgi.input"] = io.BytesIO(data)
    environ["CONTENT_LENGTH"] = str(len(data))
    environ.pop("HTTP_TRANSFER_ENCODING", None)
    request.__dict__.pop("content_length", None)  # werkzeug's cached_property, computed above


def read_body() -> bytes:
    """The request's body: as admission read it (within its deadline), else through werkzeug.
    Over the size limit either way: 413, as werkzeug says it."""
    current = this_request()
    data = current.environ.get(BODY)
    if data is None:
        return current.get_data()
    limit = this_app().config["MAX_CONTENT_LENGTH"]
    if limit is not None and len(data) > limit:
        raise RequestEntityTooLarge()
    return data


def json_body() -> Any:
    """The body as JSON, parsed once per request (the rate limits look at it before the route
    does); 400 if it is not JSON, or missing."""
    kept = request_globals()
    parsed = kept.get("json_body", _UNPARSED)
    if parsed is _UNPARSED:
        try:
            data = read_body()
            if not data:
                raise orjson.JSONDecodeError("a JSON body is required, and none was sent", "", 0)
            parsed = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            parsed = ApiError(400, "MALFORMED_JSON", f"the body is not JSON: {exc}")
        kept.json_body = parsed
    if isinstance(parsed, ApiError):
        raise parsed
    return parsed


def parsed_json() -> Any:
    """The body as JSON, or None if it is not JSON."""
    try:
        return json_body()
    except ApiError:
        return None


JSON_MEDIA_TYPE = "application/json"
BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def json_label_problem(content_type: str | None) -> str | None:
    """Why a Content-Type is not JSON's, or None if it is (`application/json`, in any case,
    with no charset but UTF-8, JSON's only one: RFC 8259 8.1)."""
    if not content_type:
        return "the body has no Content-Type"
    media_type, _, parameters = content_type.partition(";")
    if media_type.strip().lower() != JSON_MEDIA_TYPE:
        return f"the body is {media_type.strip()[:64]!r}"
    for parameter in parameters.split(";"):
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset" and value.strip().strip('"').lower() not in ("utf-8", "utf8"):
            return f"the body's charset is {value.strip()[:32]!r}"
    return None


def check_media_type() -> None:
    """A body sent to a route must be JSON (415 otherwise). A request without a body is not
    checked: there is nothing to mislabel, and a route that needs one says 400."""
    current = this_request()  # it reads several of the request's attributes
    if current.routing_exception is not None or current.method not in BODY_METHODS:
        return  # a 404 or 405 says more than a 415 would
    if not current.content_length:
        return
    problem = json_label_problem(current.headers.get("Content-Type"))
    if problem is not None:
        raise ApiError(415, "UNSUPPORTED_MEDIA_TYPE", f"{problem}: send application/json",
                       headers={"Accept": JSON_MEDIA_TYPE})


def install(app: Flask) -> None:
    app.before_request(bound_streamed_body)
    app.before_request(check_media_type)
