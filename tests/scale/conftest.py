"""Real processes for the scale-out tests: a three-master Redis Cluster, a Redis with an AOF,
and the service under gunicorn. Every process is started on free ports and stopped at the end."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import requests
from redis.cluster import RedisCluster

from tests.conftest import REDIS_SERVER, distinct_free_ports, free_port

REPO = Path(__file__).parents[2]
REDIS_CLI = "/usr/bin/redis-cli"


def stop_process(process: subprocess.Popen, timeout: float = 20) -> None:
    """SIGTERM, then SIGKILL if it does not go."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout)


def wait_for(check, what: str, timeout: float = 20) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        try:
            if check():
                return
        except (redis.RedisError, requests.RequestException, OSError):
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.05)


class RedisProcess:
    """One redis-server on a fixed port, restartable over the same directory."""

    def __init__(self, workdir: Path, *args: str, port: int | None = None) -> None:
        self.port = free_port() if port is None else port
        self.workdir = workdir
        self.args = list(args)
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.workdir)]
        log = open(self.workdir / f"redis-{self.port}.log", "ab")  # noqa: SIM115 - the process owns it
        self.process = subprocess.Popen(command + self.args, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        with redis.Redis(port=self.port, socket_connect_timeout=0.2) as client:
            # ping() also fails while Redis is still loading its AOF (BusyLoadingError).
            wait_for(client.ping, f"redis-server on {self.port}")

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process)
            self.process = None

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port)


class Cluster:
    """Three masters, no replicas: every slot is served, each by one node."""

    def __init__(self, workdir: Path) -> None:
        self.nodes = []
        # Each node's port and bus port (else port + 10000, maybe taken), all six held at once:
        # ports asked for one after the other came back the same, and a node failed to listen.
        ports = distinct_free_ports(6)
        for port, bus in zip(ports[:3], ports[3:], strict=True):
            node = RedisProcess(
                workdir,
                "--cluster-enabled", "yes",
                "--cluster-port", str(bus),
                "--cluster-config-file", str(workdir / f"nodes-{port}.conf"),
                "--save", "",
                "--appendonly", "no",
                port=port,
            )  # fmt: skip
            self.nodes.append(node)

    @property
    def url(self) -> str:
        return f"redis+cluster://127.0.0.1:{self.nodes[0].port}"

    def start(self) -> None:
        for node in self.nodes:
            node.start()
        addresses = [f"127.0.0.1:{node.port}" for node in self.nodes]
        subprocess.run(
            [REDIS_CLI, "--cluster", "create", *addresses, "--cluster-replicas", "0", "--cluster-yes"],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip

        def every_node_ok() -> bool:
            for node in self.nodes:
                with node.client() as client:
                    if client.execute_command("CLUSTER", "INFO").find(b"cluster_state:ok") < 0:
                        return False
            return True

        wait_for(every_node_ok, "cluster_state:ok on every node", timeout=30)

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def client(self) -> RedisCluster:
        return RedisCluster(host="127.0.0.1", port=self.nodes[0].port)


class Service:
    """The API under gunicorn, as the image runs it (deploy/gunicorn.conf.py), on its own port."""

    def __init__(self, workdir: Path, redis_url: str, **env: str) -> None:
        self.port, self.metrics_port = distinct_free_ports(2)
        self.log_path = workdir / f"service-{self.port}.log"
        self.env = {
            **os.environ,
            "PORT": str(self.port),
            "HOST": "127.0.0.1",
            "WEB_CONCURRENCY": "2",
            "REDIS_URL": redis_url,
            "PROMETHEUS_MULTIPROC_DIR": str(workdir / f"metrics-{self.port}"),
            "AOS_METRICS_PORT": str(self.metrics_port),
            "LOG_LEVEL": "info",
            # The limits' counters live in the same Redis (a cluster too), but these tests play
            # games flat out from one address: allowances they never reach.
            "AOS_RATE_LIMIT_CREATE": "10000/minute",
            "AOS_RATE_LIMIT_WRITES": "10000/second",
            **env,
        }
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.metrics_port}/metrics"

    def start(self) -> None:
        log = open(self.log_path, "ab")  # noqa: SIM115 - the process owns it
        command = [sys.executable, "-m", "gunicorn", "--config", "deploy/gunicorn.conf.py"]
        self.process = subprocess.Popen(
            [*command, "service.api:create_app()"],
            cwd=REPO, env=self.env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        log.close()

        def ready() -> bool:
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited:\n{self.log()}")
            return requests.get(f"{self.url}/v1/ready", timeout=2).status_code == 200

        wait_for(ready, f"the service on {self.port}", timeout=30)

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process, timeout=30)
            self.process = None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    cluster = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def services(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A factory: n service instances on one REDIS_URL, all stopped after the test."""
    started: list[Service] = []

    def start(redis_url: str, n: int = 2, **env: str) -> list[Service]:
        for _ in range(n):
            service = Service(tmp_path, redis_url, **env)
            started.append(service)
            service.start()
        return started[-n:]

    yield start
    for service in started:
        service.stop()
