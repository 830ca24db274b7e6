"""A throwaway PostgreSQL cluster on a free port, for tests and benchmarks (and by hand):

    .venv/bin/python tools/pg_cluster.py      # prints a DATABASE_URL; Ctrl-C stops and removes it

It runs Debian's initdb and pg_ctl (/usr/lib/postgresql/<version>/bin; `apt-get install
postgresql`) on a temporary directory, with durability off (fsync, synchronous_commit): data that
must outlive the machine never goes there. initdb refuses to run as root, so as root the
cluster runs as the `postgres` user (made by the Debian package), else `nobody`.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg

HOST = "127.0.0.1"
SUPERUSER = "aos"


def bin_dir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).resolve().parent
    raise RuntimeError("no PostgreSQL server binaries: apt-get install postgresql")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def _run_as() -> str | None:
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise RuntimeError("running as root and no unprivileged user (postgres, nobody) to run PostgreSQL")


class PostgresCluster:
    """initdb on a fresh directory, then start/stop/kill on one port (the same after a restart)."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.bin = bin_dir()
        self.user = _run_as()
        self.dir = Path(tempfile.mkdtemp(prefix="aos-pg-"))
        self.data = self.dir / "data"
        self.log = self.dir / "postgres.log"
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            os.chown(self.dir, entry.pw_uid, entry.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, "-A", "trust", "-E", "UTF8",
                  "--locale=C", "--no-sync", "--no-instructions")

    def _run(self, tool: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.bin / tool), *args], user=self.user, cwd=self.dir,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=check,
                              timeout=120)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@{HOST}:{self.port}/{database}"

    def start(self) -> None:
        options = (f"-p {self.port} -h {HOST} -k {self.dir} -c fsync=off -c synchronous_commit=off "
                   "-c full_page_writes=off -c max_connections=200")
        result = self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60",
                           "-o", options, "start", check=False)
        if result.returncode != 0:
            raise RuntimeError(f"PostgreSQL did not start: {result.stdout.decode()}\n{self.log_tail()}")
        deadline = time.monotonic() + 30
        while True:
            try:
                psycopg.connect(self.url(), connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def stop(self) -> None:
        """A clean, fast shutdown: open connections are cut (as a database restart does)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop", check=False)

    def running(self) -> bool:
        return self._run("pg_ctl", "-D", str(self.data), "status", check=False).returncode == 0

    def create_database(self, name: str, template: str | None = None) -> str:
        with psycopg.connect(self.url(), autocommit=True) as conn:
            suffix = f" TEMPLATE {template}" if template else ""
            conn.execute(f'CREATE DATABASE "{name}"{suffix}')
        return self.url(name)

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def remove(self) -> None:
        if self.running():
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", check=False)
        shutil.rmtree(self.dir, ignore_errors=True)


if __name__ == "__main__":
    cluster = PostgresCluster()
    cluster.start()
    print(cluster.url(), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        cluster.remove()
        sys.exit(0)
