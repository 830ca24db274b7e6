"""A game's version as an entity tag, and whether a condition on it holds: the core applies a
change only while `If-Match` names the version it is judged against."""

from __future__ import annotations


def etag(version: int) -> str:
    return f'"{version}"'


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
