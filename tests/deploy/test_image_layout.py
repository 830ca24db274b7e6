"""What the image does, without Docker: install the project non-editable (`pip install .`, as
deploy/Dockerfile does), lay out /app as the image does (openapi.yaml + gunicorn.conf.py), run
gunicorn with deploy/gunicorn.conf.py from there, and probe it as Kubernetes would.

Catches what hadolint cannot: package data missing from the wheel, a contract the installed app
cannot find, a gunicorn config that does not boot, probes that do not answer as the manifests
expect (liveness 200 always; readiness 503 while Redis is down).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

from service.engine import native
from tests.conftest import distinct_free_ports

REPO = Path(__file__).resolve().parents[2]



def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def image_root(tmp_path_factory) -> Path:
    """/opt/venv's site-packages and /app of the image, built the way the Dockerfile builds."""
    root = tmp_path_factory.mktemp("image")
    src = root / "src"
    src.mkdir()
    shutil.copy(REPO / "pyproject.toml", src)
    if (REPO / "README.md").exists():
        shutil.copy(REPO / "README.md", src)
    shutil.copytree(REPO / "service", src / "service",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    wheels = root / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(src)],
        check=True, capture_output=True, timeout=300,
    )
    site = root / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site),
         *map(str, wheels.glob("*.whl"))],
        check=True, capture_output=True, timeout=300,
    )
    app = root / "app"
    app.mkdir()
    shutil.copy(REPO / "openapi.yaml", app)
    shutil.copy(REPO / "deploy" / "gunicorn.conf.py", app / "gunicorn.conf.py")
    return root


def _env(root: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env.update(
        PYTHONPATH=str(root / "site"),
        AOS_OPENAPI_PATH=str(root / "app" / "openapi.yaml"),  # as the image's ENV sets it
        PYTHONDONTWRITEBYTECODE="1",
        WEB_CONCURRENCY="2",
        PROMETHEUS_MULTIPROC_DIR=str(root / "metrics"),
        HOME=str(root / "nohome"),  # as in the image: no writable home directory
    )
    env.update(extra)
    return env


def test_wheel_carries_every_data_file(image_root):
    installed = image_root / "site" / "service"
    wanted = sorted(
        str(p.relative_to(REPO / "service"))
        for p in (REPO / "service").rglob("*")
        if p.is_file()
        and p.suffix in (".json", ".yaml", ".yml", ".txt", ".svg", ".lua", ".sql", ".html", ".js", ".css")
    )
    missing = [rel for rel in wanted if not (installed / rel).is_file()]
    assert not missing, (
        f"`pip install .` leaves out {missing}: list them in pyproject.toml "
        "[tool.setuptools.package-data], or the image cannot load them"
    )


def test_installed_package_is_the_one_imported(image_root):
    out = subprocess.run(
        [sys.executable, "-c", "import service; print(service.__file__)"],
        cwd=image_root / "app", env=_env(image_root), capture_output=True, text=True, check=True,
    ).stdout
    assert out.strip().startswith(str(image_root / "site")), out


def test_the_engine_build_copied_in_is_the_one_the_image_runs(image_root):
    # deploy/Dockerfile's route: the build listing compiled where mypy is (here: this checkout's
    # build), then copied beside the same sources installed non-editable, where mypy is not.
    assert native.status() == "compiled", native.NOT_COMPILED
    engine = image_root / "site" / "service" / "engine"
    subprocess.run([sys.executable, str(REPO / "scripts" / "build_native.py"), "--if-stale",
                    "--into", str(engine)], check=True, capture_output=True, timeout=300)
    out = subprocess.run(
        [sys.executable, "-c", "from service.engine import native; "
         "from service.engine.phases import build; print(native.status(), build.__file__)"],
        cwd=image_root / "app", env=_env(image_root), capture_output=True, text=True, check=True,
    ).stdout.split()
    assert out == ["compiled", str(engine / "phases" / f"build{EXTENSION_SUFFIXES[0]}")]


def _get(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=3) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def _serve(image_root: Path, port: int, **env: str) -> subprocess.Popen[str]:
    env.setdefault("AOS_METRICS_PORT", str(_free_port()))  # not the deploy's 9100: tests run side by side
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--config", "gunicorn.conf.py",
         "service.api:create_app()"],
        cwd=image_root / "app", env=_env(image_root, PORT=str(port), **env),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"gunicorn exited {proc.returncode}:\n{proc.stdout.read()}")
        try:
            if _get(f"http://127.0.0.1:{port}/v1/health")[0] == 200:
                return proc
        except OSError:
            pass
        time.sleep(0.2)
    proc.kill()
    pytest.fail(f"/v1/health never answered:\n{proc.communicate()[0]}")


def _stop(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    try:
        out, _ = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        pytest.fail(f"gunicorn ignored SIGTERM for 30 s:\n{out}")
    assert proc.returncode == 0, out
    return out


def test_image_layout_serves_and_shuts_down_gracefully(image_root):
    port, metrics_port = distinct_free_ports(2)
    proc = _serve(image_root, port, AOS_METRICS_PORT=str(metrics_port))
    try:
        status, headers, _ = _get(f"http://127.0.0.1:{port}/v1/health")
        assert status == 200
        assert _get(f"http://127.0.0.1:{port}/v1/ready")[0] == 200  # in-memory store
        for _ in range(6):  # likely spread over both workers
            _get(f"http://127.0.0.1:{port}/v1/health")
        # The master serves the metrics on their own port, every worker's requests summed.
        assert _get(f"http://127.0.0.1:{port}/metrics")[0] == 404
        status, _, metrics = _get(f"http://127.0.0.1:{metrics_port}/metrics")
        assert status == 200
        counted = re.search(
            r'^aos_http_requests_total\{method="GET",route="/v1/health",status="200"\} (\S+)$',
            metrics.decode(), re.MULTILINE,
        )  # fmt: skip
        assert counted, metrics
    finally:
        out = _stop(proc)
    access = [json.loads(line) for line in out.splitlines() if line.startswith('{"ts"')]
    health = [rec for rec in access if rec.get("log") == "access" and rec["route"] == "/v1/health"]
    assert len(health) == float(counted.group(1)) >= 7, out  # the startup polls are in both
    assert all(rec["status"] == 200 for rec in health), out
    assert headers["X-Request-Id"] in {rec["request_id"] for rec in health}


def test_readiness_follows_redis_and_liveness_does_not(image_root, tmp_path):
    redis_port, port, metrics_port = distinct_free_ports(3)
    redis = subprocess.Popen(
        ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    proc = None
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", redis_port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        proc = _serve(image_root, port, REDIS_URL=f"redis://127.0.0.1:{redis_port}/0",
                      AOS_METRICS_PORT=str(metrics_port))
        assert _get(f"http://127.0.0.1:{port}/v1/ready")[0] == 200
        redis.terminate()
        redis.wait(timeout=10)
        # The readiness probe takes the pod out of the Service; liveness keeps it running.
        assert _get(f"http://127.0.0.1:{port}/v1/ready")[0] == 503
        assert _get(f"http://127.0.0.1:{port}/v1/health")[0] == 200
    finally:
        if redis.poll() is None:
            redis.kill()
            redis.wait()
        if proc is not None:
            _stop(proc)
