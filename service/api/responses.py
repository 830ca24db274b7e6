"""JSON responses dumped with orjson, and ETag handling."""

from __future__ import annotations

import re

import orjson
from flask import Response

JSON = "application/json"
# RFC 9110: `*`, or entity tags (`"3"`, `W/"3"`) separated by commas.
_TAG = r'(?:W/)?"[\x21\x23-\x7e\x80-\xff]*"'
ETAG_LIST = re.compile(rf"\*|{_TAG}(?:[ \t]*,[ \t]*{_TAG})*")


def json_response(body: object, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return raw_json(orjson.dumps(body), status, headers)


def raw_json(data: bytes, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(data, status=status, headers=headers, content_type=JSON)


def etag(version: int) -> str:
    return f'"{version}"'


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


def etag_matches(header: str | None, version: int) -> bool:
    """Whether an If-None-Match header names this version (or is `*`), weakly (RFC 9110 13.1.2);
    pass If-Match through `strong_tags` first."""
    if header is None:
        return False
    wanted = etag(version)
    for tag in header.split(","):
        tag = tag.strip()
        if tag == "*" or tag.removeprefix("W/") == wanted:
            return True
    return False
