"""`python -m service [--host H] [--port P]`: run the API with Flask's server, for local use.
Production runs gunicorn 'service.api:create_app()' (see deploy/)."""

from __future__ import annotations

import argparse
import logging
import os

from service.api import create_app, logs
from service.store import store_from_env


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
    if store.kind == "memory":
        # No other process can see these games: the background jobs (clocks, webhooks) run here.
        from service.worker.main import start_in_thread

        start_in_thread(app.extensions["aos.games"])
        logging.getLogger("service").info("running the background jobs (clocks, webhooks) in this process")
    logging.getLogger("service").info("serving on http://%s:%d", args.host, args.port)
    app.run(host=args.host, port=args.port, threaded=True)


def _redacted(url: str) -> str:
    # Never log a password that the URL carries.
    scheme, sep, rest = url.partition("://")
    if "@" in rest:
        rest = "***@" + rest.rsplit("@", 1)[1]
    return scheme + sep + rest


if __name__ == "__main__":
    main()
