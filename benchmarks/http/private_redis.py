"""A redis-server of the benchmark's own, on a free port, with nothing kept on disk."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

import redis


@contextmanager
def private_redis(host: str, port: int, workdir: str) -> Iterator[redis.Redis]:
    """A client of a redis-server started on `host:port` (its files, if any, in `workdir`),
    yielded once it answers; the server is stopped after."""
    server = subprocess.Popen(
        [shutil.which("redis-server") or "/usr/bin/redis-server", "--port", str(port), "--bind",
         host, "--save", "", "--appendonly", "no", "--dir", workdir],
        stdout=subprocess.DEVNULL,
    )
    try:
        client = redis.Redis(host=host, port=port)
        for _ in range(100):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        yield client
    finally:
        server.terminate()
        server.wait(30)
