"""Shared fixtures: real redis-server processes and PostgreSQL clusters that the tests start on
free ports and stop, the store contract's two implementations over them, a live HTTP server and a
real browser."""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

# Bytecode is cached, outside the tree: with PYTHONDONTWRITEBYTECODE set (as on our machines) every
# xdist worker compiled and assert-rewrote the tests again at collection (3 CPU-s each), and every
# gunicorn worker, worker process and bot the tests start compiled service/ and the client again.
# Set before service/ is imported here; the processes the tests start inherit it.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False
if not sys.pycache_prefix:
    sys.pycache_prefix = str(Path(tempfile.gettempdir()) / "aos-rules-pycache")
os.environ["PYTHONPYCACHEPREFIX"] = sys.pycache_prefix

import psycopg  # noqa: E402
import pytest  # noqa: E402
import redis  # noqa: E402

from service.engine import warm  # noqa: E402
from service.store import GameStore, MemoryStore, RedisStore  # noqa: E402

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
# The service warms the engine up when its app is made (engine/warm.py: a few random games per
# map). Every server the tests start would pay it again, per gunicorn worker: about 4 s each on a
# quiet core, several minutes over the suite. Off unless asked for; tests/engine/test_warm_up.py
# tests the warm-up itself. Set before any app is made, so the subprocesses inherit it.
os.environ.setdefault("AOS_WARM_UP_GAMES", "0")
if os.environ["AOS_WARM_UP_GAMES"] == "0":
    # The apps the tests make in their own processes with Settings of their own (not read from
    # the environment) would warm up all the same, each process's first: four games a map, some
    # 3 CPU-s a process, 13 over a run's four. Taken as warm instead, the collector settled as a
    # warm-up leaves it.
    warm._warmed = True
    warm.settle_collector()
TESTS = Path(__file__).resolve().parent

# ---- tiers: the slow groups, marked by where they live -------------------------------------------
# Each is also `slow`: `./test.sh --quick` (pytest -m "not slow") leaves them all out, `./test.sh`
# runs everything. Marked here, by directory or file, so no test body carries its tier.
SLOW_TIERS = {  # a path under tests/ -> its marker
    "e2e": "e2e",  # the service under gunicorn: whole games, slow clients, hardening
    "scale": "scale",  # several gunicorns on one Redis, AOF restarts
    "scale/test_cluster.py": "cluster",  # a three-master Redis Cluster
    "scale/test_live_cluster.py": "cluster",
    "deploy": "deploy",  # bootstrap.sh in fresh venvs, the image layout, the deploy linters
    "archive/test_outages.py": "outages",  # PostgreSQL and Redis stopped under a running service
    # Whole random games in process, move by move: exhaustive listing checks, invariants, replays.
    "engine/test_random_play.py": "games",
    "engine/test_playout.py": "games",
    "engine/test_error_fields.py": "games",
    "engine/test_build_listing_is_complete.py": "games",
    "engine/test_delivery_listing_is_complete.py": "games",
    "engine/test_warm_up.py": "games",
    "api/test_async_random_play.py": "games",
    "sim/test_levels.py": "games",  # the search's levels at their full budgets (level 5: ~10 s)
    "api/test_schemathesis.py": "fuzz",  # schemathesis over every operation
    "engine/test_typing.py": "typing",  # mypy over service/
    "client/test_readme_python.py": "typing",  # the READMEs' Python under mypy --strict, and run
    # The service or the worker started as processes (python -m service, python -m service.worker).
    "api/test_main.py": "processes",
    "worker": "processes",
    "client/test_search_policy.py": "processes",  # a whole game whose hints a worker searches
    "client/test_readme_walkthrough.py": "processes",  # the README's curl walk-through, run
}
SLOW_FIXTURES = {"browser": "browser"}  # a test that takes this fixture -> its marker
# Tests that share a costly server must run in one xdist worker (`--dist loadgroup`), else each
# worker starts its own: the e2e gunicorn (session-scoped) and each scale module's processes.
# test_typing.py's two mypy runs share the tree's .mypy_cache, so they run one after the other.
XDIST_GROUPS = ("e2e", "scale/test_cluster.py", "scale/test_live_cluster.py", "scale/test_live.py",
                "scale/test_aof_restart.py", "scale/test_live_restart.py", "engine/test_typing.py")


def _under(relative: str, prefix: str) -> bool:
    return relative == prefix or relative.startswith(prefix + "/")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under -m "not slow" (./test.sh --quick) a file or directory wholly in a slow tier is not even
    imported: schemathesis alone spends seconds per worker building its cases at collection."""
    if config.option.markexpr.strip() != "not slow":
        return None
    try:
        relative = collection_path.resolve().relative_to(TESTS).as_posix()
    except ValueError:
        return None
    return True if any(_under(relative, prefix) for prefix in SLOW_TIERS) else None


@pytest.hookimpl(tryfirst=True)  # before xdist's, which reads the xdist_group marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        _own_id(item)
        relative = item.path.resolve().relative_to(TESTS).as_posix()
        tiers = {marker for prefix, marker in SLOW_TIERS.items() if _under(relative, prefix)}
        tiers |= {marker for name, marker in SLOW_FIXTURES.items() if name in item.fixturenames}
        for marker in sorted(tiers | ({"slow"} if tiers else set())):
            item.add_marker(marker)
        group = next((prefix for prefix in XDIST_GROUPS if _under(relative, prefix)), None)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
            if getattr(config.option, "loadgroup", False):  # an xdist worker under --dist loadgroup
                _into_group(item, group)
    # The longest work first: xdist hands out tests in this order, so the groups (each run
    # through on one worker: e2e alone is minutes) and the slow tiers start at once, and the
    # quick tests fill the workers' ends instead of waiting behind them (a stable sort: every
    # worker collects the same order, as xdist requires). ./test.sh: 5 min 27 s -> 5 min 4 s.
    items.sort(key=_start_order)


def _start_order(item: pytest.Item) -> int:
    if item.get_closest_marker("xdist_group") is not None:
        return 0
    return 1 if item.get_closest_marker("slow") is not None else 2


def _own_id(item: pytest.Item) -> None:
    """schemathesis names each operation's test `test_x[GET /v1/maps]`, but under pytest 9.2 all of
    them got the one id `...::test_x`: xdist keys its work by id, so it ran 2 of the 82 schemathesis
    tests and dropped the rest without a word. Such an item gets the id its name says."""
    if hasattr(item, "_id") and item.nodeid.rpartition("::")[2] != item.name:
        from _pytest.nodeid import NodeId

        item._id = NodeId.parse(f"{item.nodeid.rpartition('::')[0]}::{item.name}")


def _into_group(item: pytest.Item, group: str) -> None:
    """The group written into the test's id as `id@group`, which is all the loadgroup scheduler
    reads. xdist 3.8 writes it to `item._nodeid`, which pytest 9.2 no longer reads (its ids are
    structured: pytest-xdist issue 1386): every test was then sent alone, and each worker started
    its own e2e gunicorn and its own copy of a scale module's processes. xdist, after this hook,
    may add the suffix again (`id@group@group`): the scheduler reads the last one."""
    suffixed = f"{item.nodeid}@{group}"
    if hasattr(item, "_id"):  # pytest >= 9.2
        from _pytest.nodeid import NodeId

        item._id = NodeId.parse(suffixed)
    else:
        item._nodeid = suffixed


# ---- URL rules: each rule's builders compiled once per process -----------------------------------
# Most API tests build an app of their own (a fresh store and settings: nothing leaks between
# tests). werkzeug compiles two URL builders per route for every app (Rule._compile_builder: an
# AST put together and compile()d, 43 routes), ~8 of the ~11 ms that create_app takes, about
# 1,100 apps over the suite. A builder depends only on the rule (its parts, converters and
# defaults), not on the app: the function compiled for the first app is bound to the same rule of
# every later one (Rule.compile binds it with __get__), so the apps stay separate.


def _share_url_rule_builders() -> None:
    from werkzeug.routing.rules import Rule

    compile_builder = Rule._compile_builder
    compiled: dict[tuple, object] = {}

    def shared(self: Rule, append_unknown: bool = True):  # type: ignore[no-untyped-def]
        if self.defaults:  # folded into the code through the converters' to_url: not shared
            return compile_builder(self, append_unknown)
        # The code names the rule's parts; a converter is called through the bound rule.
        key = (append_unknown, tuple(self._trace), self.rule)
        if key not in compiled:
            compiled[key] = compile_builder(self, append_unknown)
        return compiled[key]

    Rule._compile_builder = shared  # type: ignore[method-assign]


_share_url_rule_builders()


# ---- the test client closes what it has read, as a server closes what it has sent ---------------
# The app leaves work for after a response (service/api/plumbing/after_response.py: the next
# seat's legal moves, listed ahead once a move is committed); it runs when the server closes the
# response. Flask's test client closes nothing: the listing stayed marked pending, and every
# reader of it waited Settings.legal_moves_wait_ms (50 ms) before listing for itself, 40 s idle
# over the quick tier (tests/api/test_digests.py alone: 5 s). Here a response that is not a
# stream is read whole and closed before the test sees it. A test that asks for
# `buffered=False` (a stream, or a response it closes itself: test_games's listings ahead)
# gets it as it was; closing a response twice runs its work once.


def _close_responses_as_a_server_does() -> None:
    from flask import Flask
    from flask.testing import FlaskClient

    class ServedClient(FlaskClient):
        def open(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            chosen = "buffered" in kwargs
            response = super().open(*args, **kwargs)
            if not chosen and response.mimetype != "text/event-stream":
                response.make_sequence()
                on_close, response._on_close = list(response._on_close), []
                for close in on_close:
                    close()
            return response

    Flask.test_client_class = ServedClient


_close_responses_as_a_server_does()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def distinct_free_ports(n: int) -> list[int]:
    """`n` free ports, different from one another: their sockets are all bound before any is
    let go. Two free_port() calls one after the other can return the same port, and the second
    server to listen on it fails."""
    sockets = [socket.socket() for _ in range(n)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


class RedisServer:
    """One redis-server process; `durable` servers keep an fsync-always AOF so that a restart
    after a kill shows exactly what was committed."""

    def __init__(self, workdir: Path, *, durable: bool = False) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.durable = durable
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        persistence = (
            ["--appendonly", "yes", "--appendfsync", "always"]
            if self.durable
            else ["--appendonly", "no"]
        )
        args = [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        args += persistence + ["--dir", str(self.workdir), "--daemonize", "no"]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis(port=self.port, socket_connect_timeout=0.2)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                break
            except redis.RedisError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.02)
            finally:
                client.close()

    def kill(self) -> None:
        """Stop it at once, as a crash would."""
        if self.process is not None:
            self.process.kill()
            self.process.wait(10)
            self.process = None

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
            self.process = None

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> Iterator[str]:
    """The shared server's URL, emptied before each test."""
    with redis_server.client() as client:
        client.flushall()
    yield redis_server.url


@pytest.fixture
def durable_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A server of the test's own, to kill and restart."""
    server = RedisServer(tmp_path, durable=True)
    server.start()
    yield server
    server.stop()


@pytest.fixture(params=["memory", "redis"])
def store(request: pytest.FixtureRequest) -> Iterator[GameStore]:
    """Each test that takes `store` runs twice: on a MemoryStore and on a RedisStore over a real
    redis-server (emptied first)."""
    if request.param == "memory":
        yield MemoryStore()
        return
    store = RedisStore(request.getfixturevalue("redis_url"))
    yield store
    store.close()


# ---- a real HTTP server and a real browser -----------------------------------------------------

CHROMIUM = "/usr/bin/chromium"  # Debian's package; test.sh installs it
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]


class LiveServer:
    """A WSGI app behind werkzeug's threaded HTTP server on a free port of 127.0.0.1."""

    def __init__(self, app: object, host: str = "127.0.0.1") -> None:
        import threading

        from werkzeug.serving import make_server

        self.server = make_server(host, free_port(), app, threaded=True)
        self.url = f"http://{host}:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)


@pytest.fixture
def live_server() -> Iterator[object]:
    """A factory: `live_server(app)` serves a WSGI app until the test ends, returns its URL."""
    servers: list[LiveServer] = []

    def serve(app: object) -> str:
        servers.append(LiveServer(app))
        return servers[-1].url

    yield serve
    for server in servers:
        server.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """Headless Chromium (Debian's) driven by Playwright; a test opens its own page."""
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: ./test.sh installs Debian's chromium"
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
# -- PostgreSQL, for the archive ------------------------------------------------------------------

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from pg_cluster import PostgresCluster  # noqa: E402


class Databases:
    """Databases on one PostgreSQL server: each test gets a fresh one, cloned from a template
    that has the archive's schema."""

    def __init__(self, admin_url: str) -> None:
        self.admin_url = admin_url
        self._count = itertools.count()
        self._names: list[str] = []
        self.template_name = f"aos_archive_template_{os.getpid()}"
        self.template = self.create(migrated=False, name=self.template_name)
        from service.archive.migrate import migrate

        migrate(self.template)

    def _url(self, name: str) -> str:
        base, _, _ = self.admin_url.rpartition("/")
        return f"{base}/{name}"

    def create(self, *, migrated: bool = True, name: str | None = None) -> str:
        name = name or f"aos_test_{os.getpid()}_{next(self._count)}"
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            template = f' TEMPLATE "{self.template_name}"' if migrated else ""
            conn.execute(f'CREATE DATABASE "{name}"{template}')
        self._names.append(name)
        return self._url(name)

    def drop_all(self) -> None:
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            for name in reversed(self._names):
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def postgres() -> Iterator[Databases]:
    """A PostgreSQL server for the session: AOS_TEST_DATABASE_URL's (a DSN with the right to
    create databases) when given, else a private cluster started here and removed after."""
    given = os.environ.get("AOS_TEST_DATABASE_URL")
    if given:
        databases = Databases(given)
        yield databases
        databases.drop_all()
        return
    cluster = PostgresCluster()
    cluster.start()
    try:
        yield Databases(cluster.url())
    finally:
        cluster.remove()


@pytest.fixture
def database_url(postgres: Databases) -> str:
    """A fresh database with the archive's schema, for this test alone."""
    return postgres.create()


@pytest.fixture
def own_postgres() -> Iterator[PostgresCluster]:
    """A PostgreSQL cluster of the test's own, to stop and start (the archive migrated in its
    `postgres` database)."""
    cluster = PostgresCluster()
    cluster.start()
    from service.archive.migrate import migrate

    migrate(cluster.url())
    try:
        yield cluster
    finally:
        cluster.remove()
