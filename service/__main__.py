"""`python -m service [--host H] [--port P]`: run the API with Flask's server, for local use.
Production runs gunicorn 'service.api:create_app()' (see deploy/). The metrics are on a port of
their own here too: AOS_METRICS_PORT (default 9100, `off` for none)."""

from __future__ import annotations

import argparse
import logging
import os

from werkzeug.serving import WSGIRequestHandler

from service import serving
from service.api import create_app
from service.observability import logs, metrics
from service.store import store_from_env


class _RequestHandler(WSGIRequestHandler):
    def version_string(self) -> str:
        return serving.SERVER  # not werkzeug's banner with its and Python's versions


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m service", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    logs.configure(os.environ.get("LOG_LEVEL", "info"))
    # The app writes one JSON access line per request; werkzeug's own would say it twice.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    store = store_from_env()
    if store.kind == "memory":
        logging.getLogger("service").warning(
            "REDIS_URL is not set: games live in this process's memory and die with it"
        )
    else:
        logging.getLogger("service").info("storing games in Redis at %s", _redacted(os.environ["REDIS_URL"]))
    app = create_app(store=store)
    port = serving.metrics_port()
    if port is not None:
        try:
            serving.start_metrics_server(port, args.host, metrics.exposition)
            logging.getLogger("service").info("metrics on http://%s:%d/metrics", args.host, port)
        except OSError as exc:  # a second local instance: the API matters more than its metrics
            logging.getLogger("service").warning("no metrics: port %d: %s", port, exc)
    if store.kind == "memory":
        # No other process can see these games: the background jobs (clocks, webhooks) run here.
        from service.worker.main import start_in_thread

        start_in_thread(app.extensions["aos.games"])
        logging.getLogger("service").info("running the background jobs (clocks, webhooks) in this process")
    logging.getLogger("service").info("serving on http://%s:%d", args.host, args.port)
    app.run(host=args.host, port=args.port, threaded=True, request_handler=_RequestHandler)


def _redacted(url: str) -> str:
    # Never log a password that the URL carries.
    scheme, sep, rest = url.partition("://")
    if "@" in rest:
        rest = "***@" + rest.rsplit("@", 1)[1]
    return scheme + sep + rest


if __name__ == "__main__":
    main()
