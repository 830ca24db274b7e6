"""Real worker processes (`python -m service.worker`) on a real Redis, an API on the same Redis,
and a webhook receiver: a small HTTP server that verifies every delivery's signature."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import orjson
import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from service.api import create_app
from service.referee.settings import Settings
from service.store import RedisStore

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


NAMES = ["Ada", "Brunel", "Cugnot", "Daimler"]


class WorkerProcess:
    def __init__(self, redis_url: str, log: Path, **env: str) -> None:
        self.metrics_port = free_port()
        full = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
        full.update(
            REDIS_URL=redis_url,
            AOS_WORKER_METRICS_PORT=str(self.metrics_port),
            AOS_WORKER_METRICS_HOST="127.0.0.1",
            AOS_WORKER_IDLE_SECONDS="0.05",
            AOS_WEBHOOKS_ALLOW_PRIVATE="1",
            LOG_LEVEL="info",
            **env,
        )
        self.log = log
        self.process = subprocess.Popen(
            [sys.executable, "-m", "service.worker"],
            cwd=REPO,
            env=full,
            stdout=log.open("ab"),
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/healthz", timeout=1):
                    return
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the worker did not start:\n{log.read_text()}") from None
                time.sleep(0.05)

    def metric(self, name: str, **labels: str) -> float:
        """One sample of the worker's own /metrics (0 when absent)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=2) as r:
            text = r.read().decode()
        selector = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
        want = f"{name}{{{selector}}}" if labels else name
        for line in text.splitlines():
            if line.startswith(want + " "):
                return float(line.split()[-1])
        return 0.0

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


@pytest.fixture
def start_worker(redis_url: str, tmp_path: Path) -> Iterator[Callable[..., WorkerProcess]]:
    started: list[WorkerProcess] = []

    def start(**env: str) -> WorkerProcess:
        worker = WorkerProcess(redis_url, tmp_path / f"worker{len(started)}.log", **env)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # many deliveries connect at once; the default backlog is 5
    daemon_threads = True


class Receiver:
    """Records every delivery; `answer(delivery_id, attempt) -> (status, seconds to stall)`."""

    def __init__(self) -> None:
        self.secrets: dict[str, str] = {}  # hook id -> secret
        self.received: list[dict] = []
        self.lock = threading.Lock()
        self.answer: Callable[[str, int], tuple[int, float]] = lambda _id, _n: (200, 0.0)
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                hook = self.path.rsplit("/", 1)[-1]
                headers = {k.lower(): v for k, v in self.headers.items()}
                try:
                    Webhook(receiver.secrets[hook]).verify(body, headers)
                    valid = True
                except (WebhookVerificationError, KeyError):
                    valid = False
                with receiver.lock:
                    attempt = sum(1 for r in receiver.received if r["id"] == headers.get("webhook-id")) + 1
                    receiver.received.append(
                        {
                            "id": headers.get("webhook-id"),
                            "hook": hook,
                            "valid": valid,
                            "body": orjson.loads(body),
                            "at": time.time(),
                            "headers": headers,
                        }
                    )
                status, stall = receiver.answer(headers.get("webhook-id", ""), attempt)
                time.sleep(stall)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                return

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/hooks/{name}"

    def ids(self) -> list[str]:
        with self.lock:
            return [r["id"] for r in self.received]

    def wait_for(self, condition: Callable[[], bool], timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; received {self.ids()}")
            time.sleep(0.05)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.server.shutdown()


class Api:
    """The API in process, on the same Redis as the workers."""

    def __init__(self, redis_url: str) -> None:
        self.store = RedisStore(redis_url)
        self.client = create_app(store=self.store, settings=Settings()).test_client()

    def create(self, players: int = 3, **options: object) -> dict:
        body = {
            "map": "rust_belt",
            "players": [{"name": n} for n in NAMES[:players]],
            "seed": "worker",
            "options": options,
        }
        response = self.client.post("/v1/games", json=body)
        assert response.status_code == 201, response.get_json()
        return response.get_json()

    def view(self, game_id: str) -> dict:
        return self.client.get(f"/v1/games/{game_id}").get_json()

    def history(self, game_id: str) -> list[dict]:
        return self.client.get(f"/v1/games/{game_id}/history").get_json()

    def legal(self, game_id: str, seat: int) -> list[dict]:
        return self.client.get(f"/v1/games/{game_id}/legal-moves?seat={seat}").get_json()["moves"]

    def move(self, game: dict, move: dict) -> dict:
        view = self.view(game["game_id"])
        seat = view["active_seat"]
        response = self.client.post(
            f"/v1/games/{game['game_id']}/moves",
            json=move,
            headers={"Authorization": f"Bearer {game['seats'][seat]['token']}"},
        )
        assert response.status_code == 200, response.get_json()
        return response.get_json()["game"]

    def register(self, game: dict, seat: int, url: str, events: list[str]) -> dict:
        response = self.client.post(
            f"/v1/games/{game['game_id']}/webhooks",
            json={"url": url, "events": events},
            headers={"Authorization": f"Bearer {game['seats'][seat]['token']}"},
        )
        assert response.status_code == 201, response.get_json()
        return response.get_json()


@pytest.fixture
def api(redis_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    monkeypatch.setenv("AOS_WEBHOOKS_ALLOW_PRIVATE", "1")  # the receiver is on 127.0.0.1
    a = Api(redis_url)
    yield a
    a.store.close()
