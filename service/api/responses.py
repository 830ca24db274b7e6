"""JSON responses dumped with orjson, and ETag handling."""

from __future__ import annotations

import re

import orjson
from flask import Response

from service.referee.conditions import etag, etag_matches

__all__ = ["etag", "etag_matches", "json_response", "raw_json", "strong_tags", "well_formed_etags"]

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
