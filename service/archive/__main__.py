"""`python -m service.archive migrate | copy | status`: the archive's schema and its copier.

    migrate   creates or upgrades the schema in DATABASE_URL (safe to run from many pods at once;
              without DATABASE_URL there is no archive and nothing to do)
    copy      copies the outbox into the archive until SIGTERM/SIGINT (the copier alone; the
              worker, `python -m service.worker`, runs the same job beside its others)
    status    the schema's pending migrations and the copier's backlog
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading

from service.observability import logs
from service.referee.settings import Settings

from . import jobs
from .migrate import migrate, pending

log = logging.getLogger("service.archive")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m service.archive", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("migrate", help="create or upgrade the schema")
    copy = commands.add_parser("copy", help="copy the outbox into the archive until stopped")
    copy.add_argument("--batch", type=int, default=100, help="changes taken per shard per round")
    copy.add_argument("--claim-idle-ms", type=int, default=30_000,
                      help="take over changes a dead copier left pending this long")
    copy.add_argument("--consumer", help="this copier's name in the group (default host-pid)")
    copy.add_argument("--metrics-port", type=int,
                      default=int(os.environ.get("AOS_ARCHIVE_METRICS_PORT", "0")),
                      help="serve Prometheus metrics on this port (0: none)")
    commands.add_parser("status", help="pending migrations and the copier's backlog")
    args = parser.parse_args(argv)
    logs.configure(os.environ.get("LOG_LEVEL", "info"))
    settings = Settings.from_env()
    if not settings.database_url:
        if args.command == "migrate":
            log.info("DATABASE_URL is not set: there is no archive to migrate")
            return 0
        log.error("DATABASE_URL is not set: there is no archive")
        return 2
    if args.command == "migrate":
        applied = migrate(settings.database_url)
        log.info("archive schema up to date", extra={"fields": {
            "event": "archive_migrated", "applied": [f"{m.version:04d}_{m.name}" for m in applied]}})
        return 0
    from service.store import store_from_env

    store = store_from_env()
    if args.command == "status":
        waiting = pending(settings.database_url)
        print(f"pending migrations: {[f'{m.version:04d}_{m.name}' for m in waiting] or 'none'}")
        print(f"outbox changes not archived yet: {store.outbox_backlog('archive')}")
        return 1 if waiting else 0
    return copy_until_stopped(store, settings, args)


def copy_until_stopped(store, settings: Settings, args: argparse.Namespace) -> int:
    from service.jobs.runner import Runner

    assert settings.database_url  # main() stops first without one
    if pending(settings.database_url):
        log.error("the archive schema is not up to date: run `python -m service.archive migrate`")
        return 2
    from service.observability import metrics as api_metrics

    # Under PROMETHEUS_MULTIPROC_DIR (the image sets it) values live in files there.
    api_metrics.prepare()
    if args.metrics_port:
        from prometheus_client import REGISTRY, CollectorRegistry, multiprocess, start_http_server

        registry = REGISTRY
        if api_metrics.multiprocess_dir():
            registry = CollectorRegistry()
            multiprocess.MultiProcessCollector(registry, path=api_metrics.multiprocess_dir())
        start_http_server(args.metrics_port, registry=registry)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    Runner(jobs(store, settings, consumer=args.consumer, batch=args.batch,
                claim_idle_ms=args.claim_idle_ms)).run(stop)
    return 0


if __name__ == "__main__":
    sys.exit(main())
