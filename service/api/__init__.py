"""The HTTP service: `create_app()` builds the Flask app (gunicorn 'service.api:create_app()')."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from flask import Flask

from service.admission import Admission
from service.engine import NATIVE, warm
from service.observability import logs, metrics
from service.referee.games import Games
from service.referee.settings import Settings
from service.store import GameStore, store_from_env
from service.webhooks import addresses

from . import responses
from .plumbing import after_response, bodies, cors, instrumentation, limits, security, tenancy
from .plumbing.proxies import TrustedProxies
from .routes import BLUEPRINTS, live, webhooks

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
    games = app.extensions["aos.games"] = Games(store, settings)
    app.extensions["aos.webhooks"] = webhooks.Webhooks(games, private_ok=addresses.allow_private())
    app.extensions["aos.contract"] = contract_path().read_bytes()
    responses.install(app)  # every failure a problem document
    tenancy.install(app, games)  # who asks: before any route looks at a game
    cors.install(app)
    instrumentation.install(app)
    bodies.install(app)
    after_response.install(app, games)  # the next seat's legal moves, listed ahead
    security.install(app)
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)
    live.install(app, store, settings)  # the events stream, long-polls, the spectator page
    limits.install(app, settings)  # after the routes: it limits their view functions
    app.wsgi_app = TrustedProxies(Admission(app.wsgi_app), settings.trusted_proxies)  # type: ignore[method-assign]  # Flask's way to wrap it
    metrics.ENGINE_PROCESSES.labels(native=NATIVE).set(1)
    warmed = warm.warm_up(settings.warm_up_games)
    if warmed:
        log.info("engine warmed up in %.2f s (%d game(s) per map)", warmed, settings.warm_up_games)
    log.info("aos-rules API on the %s store", store.kind)
    return app
