"""JSON responses dumped with orjson, and ETag handling."""

from __future__ import annotations

import orjson
from flask import Response

JSON = "application/json"


def json_response(body: object, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return raw_json(orjson.dumps(body), status, headers)


def raw_json(data: bytes, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(data, status=status, headers=headers, content_type=JSON)


def etag(version: int) -> str:
    return f'"{version}"'


def etag_matches(header: str | None, version: int) -> bool:
    """Whether an If-None-Match / If-Match header names this version (or is `*`)."""
    if header is None:
        return False
    wanted = etag(version)
    for tag in header.split(","):
        tag = tag.strip()
        if tag == "*" or tag.removeprefix("W/") == wanted:
            return True
    return False
