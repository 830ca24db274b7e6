"""GET /v1/docs: the contract as interactive pages (Swagger UI), rendered in the browser from
/v1/openapi.yaml. Swagger UI's files come from the flask-swagger-ui package and are served here:
no CDN, so the page works on a closed network. Every URL is relative, so the page works behind a
proxy that mounts the service under a prefix; no script is inline, so a strict
`script-src 'self'` policy allows it."""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from flask import Blueprint, Response

from ..responses import ApiError

bp = Blueprint("v1_docs", __name__, url_prefix="/v1")

# Swagger UI's files the page loads, and their types; nothing else of the package is served.
ASSETS = {
    "swagger-ui.css": "text/css; charset=utf-8",
    "swagger-ui-bundle.js": "application/javascript; charset=utf-8",
}
CACHE_CONTROL = "public, max-age=86400"  # they change only with a release
# The page runs only its own scripts (no inline one), may not be framed (clickjacking), and
# reaches nothing but this service. Swagger UI sets inline styles and data: images.
DOCS_CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
            "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; "
            "frame-ancestors 'none'; base-uri 'none'; form-action 'none'")

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Age of Steam rules as a service: API</title>
<link rel="stylesheet" href="docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/docs-init.js"></script>
</body>
</html>
"""

INIT = """window.ui = SwaggerUIBundle({
  url: "openapi.yaml",
  dom_id: "#swagger-ui",
  deepLinking: true,
  docExpansion: "list",
  defaultModelsExpandDepth: 0,
  displayOperationId: true,
  tryItOutEnabled: false,
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
});
"""


@cache
def _asset(name: str) -> bytes:
    return files("flask_swagger_ui").joinpath("dist", name).read_bytes()


@bp.get("/docs")
def docs_page() -> Response:
    return Response(PAGE, content_type="text/html; charset=utf-8",
                    headers={"Content-Security-Policy": DOCS_CSP, "X-Frame-Options": "DENY"})


@bp.get("/docs/<asset>")
def docs_asset(asset: str) -> Response:
    if asset == "docs-init.js":
        body = INIT.encode()
        kind = "application/javascript; charset=utf-8"
    elif asset in ASSETS:
        body, kind = _asset(asset), ASSETS[asset]
    else:
        raise ApiError(404, "NOT_FOUND", f"no documentation file {asset!r}")
    return Response(body, content_type=kind, headers={"Cache-Control": CACHE_CONTROL})
