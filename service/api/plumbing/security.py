"""Security headers on every answer of the app.

- `X-Content-Type-Options: nosniff` everywhere: a browser never reads JSON, a problem or the
  board picture as anything but what its Content-Type says.
- A strict Content-Security-Policy on everything but HTML pages (which set their own): nothing
  an answer holds may load or run anything. board.svg may carry inline styles, nothing else,
  and may be embedded (a picture is meant to be shown); JSON may not even be framed.
- `Referrer-Policy: no-referrer`: URLs carry game ids.
The `Server` banner is gunicorn's business: service/serving.py makes it generic.
"""

from __future__ import annotations

from flask import Flask, Response

JSON_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'"
SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'"


def policy_for(mimetype: str) -> str | None:
    if mimetype == "text/html":
        return None
    if mimetype == "image/svg+xml":
        return SVG_CSP
    return JSON_CSP


def add_headers(response: Response) -> Response:
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    policy = policy_for(response.mimetype or "")
    if policy is not None and "Content-Security-Policy" not in response.headers:
        response.headers["Content-Security-Policy"] = policy
    return response


def install(app: Flask) -> None:
    app.after_request(add_headers)
