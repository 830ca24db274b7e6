"""Structured logs: one JSON object per line on stderr, each carrying the request id (and the
game id) of the request it was written in."""

from __future__ import annotations

import logging
import sys
from datetime import UTC, datetime

import orjson
from flask import g, has_request_context


class JsonFormatter(logging.Formatter):
    """`{"ts", "level", "log", "logger", "pid", "msg", "request_id", "game_id", ...}`; a record's
    `fields` (passed as `extra={"fields": {...}}`) are merged in. `pid` is the process that wrote
    the line: under gunicorn, which worker served the request (the master's lines have its own)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "log": "app",
            "logger": record.name,
            "pid": record.process,
            "msg": record.getMessage(),
        }
        if has_request_context():
            line["request_id"] = g.get("request_id")
            if g.get("game_id") is not None:
                line["game_id"] = g.game_id
        line.update(getattr(record, "fields", {}))
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        # default=str: a stray non-JSON value must never lose the line.
        return orjson.dumps(line, default=str).decode()


class StderrHandler(logging.StreamHandler):
    """Writes to sys.stderr as it is when the record is written (as logging.lastResort does),
    so a redirection made after the handler was installed is followed."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(JsonFormatter())

    @property
    def stream(self):  # type: ignore[no-untyped-def, override]
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:  # type: ignore[no-untyped-def]
        pass


def configure(level: str) -> None:
    """JSON lines on stderr for every logger that propagates to the root (the app's, Flask's,
    werkzeug's), and `level` (LOG_LEVEL: debug, info, warning, error) for the app's own. Safe to
    call again: one handler only."""
    numeric = logging.getLevelName(level.strip().upper())
    if not isinstance(numeric, int):
        raise ValueError(f"LOG_LEVEL must be debug, info, warning or error, got {level!r}")
    root = logging.getLogger()
    if not any(isinstance(handler, StderrHandler) for handler in root.handlers):
        root.addHandler(StderrHandler())
    logging.getLogger("service").setLevel(numeric)
