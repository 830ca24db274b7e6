"""The HTTP service: `create_app()` builds the Flask app (gunicorn 'service.api:create_app()')."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from flask import Flask

from service.store import GameStore, store_from_env

from . import events, instrumentation, logs, metrics, problems
from .config import Settings
from .gameplay import Games
from .routes import bp

log = logging.getLogger(__name__)


def contract_path() -> Path:
    """openapi.yaml: AOS_OPENAPI_PATH, else the source tree's (an editable install), else the
    working directory's (the image puts it in /app beside an installed package)."""
    if "AOS_OPENAPI_PATH" in os.environ:
        return Path(os.environ["AOS_OPENAPI_PATH"])
    source_tree = Path(__file__).parents[2] / "openapi.yaml"
    return source_tree if source_tree.is_file() else Path.cwd() / "openapi.yaml"


def create_app(store: GameStore | None = None, settings: Settings | None = None) -> Flask:
    logs.configure(os.environ.get("LOG_LEVEL", "info"))
    settings = settings or Settings.from_env()
    store = store or store_from_env()
    store.on_retry = metrics.store_retried
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    app.extensions["aos.games"] = Games(store, settings)
    app.extensions["aos.contract"] = contract_path().read_bytes()
    problems.install(app)
    instrumentation.install(app)
    app.register_blueprint(bp)
    events.install(app, store, settings)  # the events stream, long-polls, the spectator page
    log.info("aos-rules API on the %s store", store.kind)
    return app
