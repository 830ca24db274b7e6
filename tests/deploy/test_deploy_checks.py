"""deploy/: the offline deploy checks pass, and the gunicorn config follows the environment."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHECK_SH = REPO / "deploy" / "check.sh"
GUNICORN_CONF = REPO / "deploy" / "gunicorn.conf.py"

EXPECTED_CHECKS = [
    "ok: hadolint deploy/Dockerfile",
    "ok: compose spec: deploy/compose.yaml",
    "ok: render deploy/k8s",
    "ok: kubernetes-validate --strict",
    "ok: yamllint deploy/",
    "ok: gunicorn config deploy/gunicorn.conf.py",
    "ok: shellcheck",
]


def _run_check(prefix: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, VENV=sys.prefix)  # the venv running the tests
    return subprocess.run(
        [*(prefix or []), "bash", str(CHECK_SH)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_check_sh_passes():
    result = _run_check()
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    for line in EXPECTED_CHECKS:
        assert line in output, f"{line!r} missing from:\n{output}"
    assert "all 7 checks passed" in output


def _no_network_prefix() -> list[str]:
    """`unshare -n` (root), else `unshare -rn` (a user namespace, for a user who is not root)."""
    missing = [tool for tool in ("unshare", "shellcheck") if not shutil.which(tool)]
    assert not missing, f"{missing} missing: ./test.sh installs them (util-linux, shellcheck)"
    for prefix in (["unshare", "-n"], ["unshare", "-rn"]):
        if subprocess.run([*prefix, "true"], capture_output=True).returncode == 0:
            return prefix
    pytest.fail("neither `unshare -n` nor `unshare -rn` can make a network namespace here")


def test_check_sh_needs_no_network():
    """Every check runs in a network namespace with no interfaces up: no schema downloads."""
    prefix = _no_network_prefix()
    interfaces = "import socket; print(sorted(name for _, name in socket.if_nameindex()))"
    probe = subprocess.run([*prefix, sys.executable, "-c", interfaces], capture_output=True, text=True)
    assert probe.stdout.strip() == "['lo']", probe.stdout + probe.stderr  # only loopback, and it is down
    result = _run_check(prefix=prefix)
    assert result.returncode == 0, result.stdout + result.stderr


def _load_conf(monkeypatch: pytest.MonkeyPatch, **env: str):
    names = ("WEB_CONCURRENCY", "PORT", "HOST", "LOG_LEVEL", "GUNICORN_TIMEOUT",
             "GUNICORN_WORKER_CONNECTIONS")
    for name in names:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    spec = importlib.util.spec_from_file_location("aos_gunicorn_conf", GUNICORN_CONF)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_workers_from_web_concurrency(monkeypatch):
    conf = _load_conf(monkeypatch, WEB_CONCURRENCY="7", PORT="9123", LOG_LEVEL="WARNING")
    assert conf.workers == 7
    assert conf.bind == ["0.0.0.0:9123"]
    assert conf.loglevel == "warning"
    # One of our workers (gunicorn's, whose own error answers are problem+json): gevent, for many
    # connections per worker (streams, slow clients).
    assert conf.worker_class == conf.WORKER_CLASSES["gevent"]
    assert conf.worker_connections == 2500  # the ceiling measured for 5,000 streams (deploy/README.md)
    assert _load_conf(monkeypatch, GUNICORN_WORKER_CONNECTIONS="50").worker_connections == 50
    from gunicorn.util import load_class

    from service.serving import ProblemErrors

    for path in conf.WORKER_CLASSES.values():
        assert issubclass(load_class(path), ProblemErrors), path
    from service.serving import Ceiling

    assert issubclass(load_class(conf.WORKER_CLASSES["gevent"]), Ceiling)  # refuses past the ceiling
    assert conf.preload_app is False
    assert conf.accesslog is None  # the app writes the access lines (JSON, with the route)
    assert conf.max_requests > 0 and conf.max_requests_jitter > 0
    assert 0 < conf.graceful_timeout <= conf.timeout


def test_workers_default_to_the_cores_plus_one(monkeypatch):
    conf = _load_conf(monkeypatch)
    assert conf.workers == conf.available_cpus() + 1
    assert conf.bind == ["0.0.0.0:8000"]
    # An empty value (compose's `${WEB_CONCURRENCY:-}`) means "not set".
    assert _load_conf(monkeypatch, WEB_CONCURRENCY="").workers == conf.available_cpus() + 1


def test_default_workers_follow_the_cpu_quota(monkeypatch):
    conf = _load_conf(monkeypatch)
    monkeypatch.setattr(conf.os, "sched_getaffinity", lambda pid: set(range(64)))
    monkeypatch.setattr(conf, "cgroup_cpu_limit", lambda: 1)
    assert conf.default_workers() == 2  # a 1-CPU container on a 64-core node
    monkeypatch.setattr(conf, "cgroup_cpu_limit", lambda: None)
    assert conf.default_workers() == 65


@pytest.mark.parametrize("value", ["abc", "-1", "2.5"])
def test_bad_web_concurrency_is_refused(monkeypatch, value):
    with pytest.raises(ValueError, match="WEB_CONCURRENCY"):
        _load_conf(monkeypatch, WEB_CONCURRENCY=value)


def test_cgroup_cpu_limit(tmp_path):
    conf_mod = importlib.util.spec_from_file_location("aos_gunicorn_conf2", GUNICORN_CONF)
    conf = importlib.util.module_from_spec(conf_mod)
    conf_mod.loader.exec_module(conf)

    v2 = tmp_path / "v2"
    v2.mkdir()
    (v2 / "cpu.max").write_text("150000 100000\n")
    assert conf.cgroup_cpu_limit(v2) == 2
    (v2 / "cpu.max").write_text("max 100000\n")
    assert conf.cgroup_cpu_limit(v2) is None

    v1 = tmp_path / "v1"
    (v1 / "cpu").mkdir(parents=True)
    (v1 / "cpu" / "cpu.cfs_quota_us").write_text("50000\n")
    (v1 / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert conf.cgroup_cpu_limit(v1) == 1
    (v1 / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    assert conf.cgroup_cpu_limit(v1) is None

    assert conf.cgroup_cpu_limit(tmp_path / "nothing") is None


def test_gunicorn_accepts_the_settings():
    """gunicorn's own validators take every setting, with workers from the environment."""
    env = dict(os.environ, WEB_CONCURRENCY="4", PORT="8123")
    result = subprocess.run(
        [sys.executable, str(GUNICORN_CONF)], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "workers=4 " in result.stdout
    assert "0.0.0.0:8123" in result.stdout


def _renderer():
    spec = importlib.util.spec_from_file_location(
        "aos_render_k8s", REPO / "deploy" / "render_k8s.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _copy_k8s(tmp_path: Path) -> Path:
    target = tmp_path / "k8s"
    shutil.copytree(REPO / "deploy" / "k8s", target)
    return target


def test_renderer_lists_every_manifest_once():
    render = _renderer()
    docs = render.load_resources(REPO / "deploy" / "k8s")
    kinds = sorted(d["kind"] for d in docs)
    assert kinds == sorted(
        [
            "ConfigMap",
            "Secret",
            "Secret",  # the archive's DATABASE_URL
            "Secret",  # AOS_SECRET_KEY, which seals webhook secrets
            "Deployment",
            "Deployment",  # the worker
            "Service",
            "HorizontalPodAutoscaler",
            "PodDisruptionBudget",
            "NetworkPolicy",
            "NetworkPolicy",  # the worker's
        ]
    )
    assert render.check_consistency(docs) == []


def test_renderer_refuses_what_it_cannot_render(tmp_path):
    render = _renderer()
    kdir = _copy_k8s(tmp_path)
    kfile = kdir / "kustomization.yaml"
    kfile.write_text(kfile.read_text() + "namespace: games\n")
    with pytest.raises(render.RenderError, match="unsupported fields"):
        render.load_resources(kdir)


def test_renderer_finds_unlisted_files_and_broken_references(tmp_path):
    render = _renderer()
    kdir = _copy_k8s(tmp_path)
    (kdir / "extra.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    with pytest.raises(render.RenderError, match="extra.yaml"):
        render.load_resources(kdir)
    (kdir / "extra.yaml").unlink()

    svc = kdir / "service.yaml"
    svc.write_text(svc.read_text().replace("component: api", "component: web"))
    secret = kdir / "secret.yaml"
    secret.write_text(secret.read_text().replace("REDIS_URL:", "REDIS_DSN:"))
    problems = render.check_consistency(render.load_resources(kdir))
    assert any(p.startswith("Service/aos-rules: selector") for p in problems), problems
    assert any("has no key REDIS_URL" in p for p in problems), problems


def test_metrics_dir_is_emptied_at_start(monkeypatch, tmp_path):
    conf = _load_conf(monkeypatch)
    metrics = tmp_path / "metrics"
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(metrics))
    conf.on_starting(server=None)
    assert metrics.is_dir()
    (metrics / "counter_123.db").write_bytes(b"stale")
    (metrics / "keep.txt").write_text("not ours")
    conf.on_starting(server=None)
    assert sorted(p.name for p in metrics.iterdir()) == ["keep.txt"]
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR")
    conf.on_starting(server=None)  # unset: nothing to do


# Read by Python itself or by a library, not by our code.
_THIRD_PARTY_VARIABLES = {
    "PATH",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONUNBUFFERED",
    "PIP_NO_CACHE_DIR",
    "PIP_DISABLE_PIP_VERSION_CHECK",
    "PROMETHEUS_MULTIPROC_DIR",  # prometheus_client's multi-process mode (and our gunicorn hooks)
    "POSTGRES_USER",  # the postgres image's
    "POSTGRES_PASSWORD",
    "POSTGRES_DB",
}


def _configured_variables() -> dict[str, set[str]]:
    import re

    import yaml

    found: dict[str, set[str]] = {}
    configmap = yaml.safe_load((REPO / "deploy" / "k8s" / "configmap.yaml").read_text())
    found["k8s/configmap.yaml"] = set(configmap["data"])
    for manifest in ("deployment.yaml", "worker-deployment.yaml"):
        deployment = yaml.safe_load((REPO / "deploy" / "k8s" / manifest).read_text())
        found[f"k8s/{manifest}"] = {
            env["name"]
            for c in deployment["spec"]["template"]["spec"]["containers"]
            for env in c.get("env", [])
        }
    compose = yaml.safe_load((REPO / "deploy" / "compose.yaml").read_text())
    found["compose.yaml"] = {
        name for svc in compose["services"].values() for name in svc.get("environment", {})
    }
    dockerfile = (REPO / "deploy" / "Dockerfile").read_text().replace("\\\n", " ")
    found["Dockerfile"] = {
        name
        for line in dockerfile.splitlines()
        if line.startswith("ENV ")
        for name in re.findall(r"(\w+)=", line)
    }
    return found


def test_every_configured_variable_is_read_by_something():
    """A setting in the manifests that no code reads would mislead every operator."""
    code = GUNICORN_CONF.read_text() + "".join(
        p.read_text() for p in (REPO / "service").rglob("*.py")
    )
    for where, names in _configured_variables().items():
        unread = sorted(
            name
            for name in names
            if name not in _THIRD_PARTY_VARIABLES
            and f'"{name}"' not in code
            and f"'{name}'" not in code
        )
        assert not unread, f"deploy/{where} sets {unread}, which neither service/ nor gunicorn reads"
