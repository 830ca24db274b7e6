"""Cross-origin requests (flask-cors): a frontend on another origin may read and write, since a
seat is authorised by a bearer token it sends, never by a cookie the browser adds on its own.

AOS_CORS_ORIGINS: `*` (the default) or a comma-separated list of origins
(`https://play.example.com,http://localhost:5173`); an empty value turns CORS off.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from flask import Flask
from flask_cors import CORS

# What a browser script may read of a response: the version (ETag), where a new game is
# (Location), the id to quote in a bug report, and when to come back after a 429 or 503.
EXPOSED_HEADERS = (
    "ETag",
    "Location",
    "X-Request-Id",
    "Retry-After",
    "RateLimit-Policy",
    "RateLimit",
)
# What a browser script may send: every request header the contract names.
ALLOWED_HEADERS = (
    "Authorization",
    "Content-Type",
    "If-Match",
    "If-None-Match",
    "Idempotency-Key",
    "Prefer",
    "Last-Event-ID",
    "X-Request-Id",
    "X-API-Key",
)
METHODS = ("GET", "POST", "PUT", "DELETE", "OPTIONS")  # PUT: a seat's orders
MAX_AGE = 600  # seconds a browser may keep a preflight's answer


def origins_from_env(env: Mapping[str, str] | None = None) -> list[str]:
    env = os.environ if env is None else env
    value = env.get("AOS_CORS_ORIGINS", "*")
    return [origin.strip() for origin in value.split(",") if origin.strip()]


def install(app: Flask, origins: list[str] | None = None) -> None:
    origins = origins_from_env() if origins is None else origins
    if not origins:
        return
    anyone = origins == ["*"]
    CORS(
        app,
        origins="*" if anyone else origins,
        send_wildcard=anyone,  # `*` itself, so one cached answer serves every origin
        methods=list(METHODS),
        allow_headers=list(ALLOWED_HEADERS),
        expose_headers=list(EXPOSED_HEADERS),
        supports_credentials=False,
        max_age=MAX_AGE,
    )
