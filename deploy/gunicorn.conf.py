"""Gunicorn settings for the aos-rules API, all from the environment.

    gunicorn --config deploy/gunicorn.conf.py 'service.api:create_app()'

PORT             listen port (default 8000); HOST the address (default 0.0.0.0)
WEB_CONCURRENCY  worker processes (default usable cores + 1, cores counted from the CPU affinity
                 mask and the cgroup CPU quota, so a container limited to 1 CPU on a 64-core node
                 gets 2 workers, not 65)
GUNICORN_WORKER_CONNECTIONS  connections each worker holds at once (default 2500): open event
                 streams, long-polls, keep-alive and slow clients all count; past it a
                 connection is answered 503 AT_CAPACITY at once (service/serving.py, Ceiling)
LOG_LEVEL        gunicorn's error-log level and the app's (default info)
GUNICORN_TIMEOUT, GUNICORN_GRACEFUL_TIMEOUT, GUNICORN_MAX_REQUESTS,
GUNICORN_MAX_REQUESTS_JITTER, FORWARDED_ALLOW_IPS   rarely changed; defaults below
PROMETHEUS_MULTIPROC_DIR  the workers' metrics files: emptied at start (a fresh directory if
                 unset), and prometheus_client is told when a worker exits (on_starting, child_exit)
AOS_METRICS_PORT `/metrics` for Prometheus, served by the master on a port of its own (default
                 9100; `off` for none), summing every worker; AOS_METRICS_HOST its address
                 (default 0.0.0.0). It is not on the API port.

gevent workers (deploy/README.md, "The worker model"): each worker serves many connections at
once, each in a greenlet that waits on its socket or on Redis without holding the process, so
open event streams, long-polls and clients that send slowly cost a greenlet each, not a worker.
preload_app is off: every worker imports the app itself (after gevent has patched the standard
library) and creates its own Redis connections lazily, so no socket is ever shared across
fork().
"""
from __future__ import annotations

import math
import os
from pathlib import Path


def _env_int(name: str, default: int, minimum: int = 0) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def cgroup_cpu_limit(root: str | os.PathLike[str] = "/sys/fs/cgroup") -> int | None:
    """CPUs allowed by the cgroup quota (v2 cpu.max, or v1 cfs quota), rounded up; None if none."""
    base = Path(root)
    try:
        quota, _, period = (base / "cpu.max").read_text().strip().partition(" ")
        if quota != "max":
            return max(1, math.ceil(int(quota) / int(period or 100000)))
        return None
    except (OSError, ValueError):
        pass
    try:
        quota_us = int((base / "cpu" / "cpu.cfs_quota_us").read_text())
        period_us = int((base / "cpu" / "cpu.cfs_period_us").read_text())
        if quota_us > 0 and period_us > 0:
            return max(1, math.ceil(quota_us / period_us))
    except (OSError, ValueError):
        pass
    return None


def available_cpus() -> int:
    """Cores this process may use: the affinity mask, capped by any cgroup CPU quota."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    limit = cgroup_cpu_limit()
    return max(1, min(cpus, limit) if limit else cpus)


def default_workers() -> int:
    # One gevent worker per core keeps the cores busy; one more keeps a request that computes
    # for long (a big record import) from holding up every connection of its core.
    return available_cpus() + 1


# --- server socket ---
bind = [f"{os.environ.get('HOST', '0.0.0.0')}:{_env_int('PORT', 8000, minimum=1)}"]
backlog = 2048

# --- workers ---
# The worker model, here only (deploy/README.md says why): gevent. Our subclasses of gunicorn's
# workers (service/serving.py) are the same workers, but gunicorn's own error answers (bad request
# line, line or headers too long, bad chunked body) are problem+json and the Server banner is
# generic.
WORKER_CLASSES = {"sync": "service.serving.SyncWorker", "gevent": "service.serving.GeventWorker"}
worker_class = WORKER_CLASSES["gevent"]
workers = _env_int("WEB_CONCURRENCY", 0, minimum=0) or default_workers()
# Per worker, from measurement (benchmarks/live.py; deploy/README.md, "The connection ceiling"):
# an open stream costs ~28 KiB and ~2.4 ms of CPU to open, so 3 workers on 2 cores hold 5,000
# streams, unevenly spread over the workers, with room to spare: 7,500 connections in all. Past
# it a connection is refused at once, 503 with Retry-After, rather than left in the backlog.
worker_connections = _env_int("GUNICORN_WORKER_CONNECTIONS", 2500, minimum=1)
# Event streams take at most 90 % of a worker's connections (AOS_STREAMS_PER_WORKER, read by the
# app in each worker): past that a stream is refused 503 AT_CAPACITY, and moves, views and health
# checks still find a connection.
STREAM_SHARE = 0.9
os.environ.setdefault("AOS_STREAMS_PER_WORKER", str(max(1, int(worker_connections * STREAM_SHARE))))
preload_app = False  # a Redis pool per worker, created lazily after fork
timeout = _env_int("GUNICORN_TIMEOUT", 30, minimum=1)  # a worker silent this long is killed
graceful_timeout = _env_int("GUNICORN_GRACEFUL_TIMEOUT", 25, minimum=1)  # < k8s grace (40 s)
# gevent workers apply it to reading each request's line and headers, the first one included:
# a client that sends its headers slowly is dropped after this long (and never holds a worker).
keepalive = 5
# Recycle workers now and then (bounds any slow leak), not all at once (jitter). Not too often:
# each recycled worker leaves its metrics files behind in multi-process mode (see below).
max_requests = _env_int("GUNICORN_MAX_REQUESTS", 10000)
max_requests_jitter = _env_int("GUNICORN_MAX_REQUESTS_JITTER", 1000)
# Heartbeat files in RAM: the root filesystem is read-only in Kubernetes, and /tmp may be disk.
_SHM = "/dev/shm"
worker_tmp_dir = _SHM if os.path.isdir(_SHM) and os.access(_SHM, os.W_OK) else None

# --- request limits (the app also caps bodies; these stop abuse before Flask sees it) ---
limit_request_line = 4094
limit_request_fields = 100
limit_request_field_size = 8190

# --- proxies: trust X-Forwarded-* only from these addresses ---
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")

# --- logging: everything to stdout/stderr, for the container runtime to collect ---
# No gunicorn access log: the app writes one JSON line per request itself, with what only it
# knows (the URL rule, the game id, the request id it echoed). gunicorn's own messages (workers
# booting, timing out) stay on the error log.
accesslog = None
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info").lower()
capture_output = False
proc_name = "aos-rules"

# --- gunicorn >= 25.1 control socket (gunicornc): off. It would be created under $HOME, which
# does not exist in the image (read-only root); scale by replicas and WEB_CONCURRENCY instead.
# Older gunicorn ignores the unknown setting.
control_socket_disable = True


# --- metrics across workers: prometheus_client's multi-process mode, served by the master ---
def on_starting(server):
    """Start from an empty metrics directory: files of a previous run would be summed in. With
    none set, make one (in RAM if we can), before any worker imports prometheus_client."""
    metrics_dir = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not metrics_dir:
        if os.environ.get("AOS_METRICS_PORT", "9100").strip().lower() in ("off", "0", ""):
            return  # no metrics served: no directory needed
        import tempfile

        metrics_dir = tempfile.mkdtemp(prefix="aos-metrics-", dir=worker_tmp_dir)
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
    path = Path(metrics_dir)
    path.mkdir(parents=True, exist_ok=True)
    for stale in path.glob("*.db"):
        stale.unlink()


def when_ready(server):
    """Serve /metrics from the master, on its own port: the API port never shows them."""
    from service.serving import metrics_port, start_metrics_server

    port = metrics_port()
    if port is None:
        return
    host = os.environ.get("AOS_METRICS_HOST", "0.0.0.0")
    try:
        start_metrics_server(port, host)
    except OSError as exc:  # e.g. the old master of a USR2 upgrade still holds it: serve the API
        if server is not None:
            server.log.error("no metrics on %s:%d: %s", host, port, exc)
        return
    if server is not None:
        server.log.info("metrics on http://%s:%d/metrics", host, port)


def post_worker_init(worker):
    """On SIGTERM a worker stops taking connections and waits up to graceful_timeout for the
    open ones: open event streams and long-polls are told to end at once, so that their clients
    resume on another worker or instance instead of holding the shutdown up."""
    import signal

    previous = signal.getsignal(signal.SIGTERM)

    def stop(signum, frame):
        from service.live import stop_watching

        stop_watching()
        if callable(previous):
            previous(signum, frame)

    signal.signal(signal.SIGTERM, stop)


def child_exit(server, worker):
    """A worker is gone: drop its live gauges (its counters stay, so totals never go back)."""
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return
    try:
        from prometheus_client import multiprocess
    except ImportError:
        return
    multiprocess.mark_process_dead(worker.pid)


if __name__ == "__main__":
    # `python deploy/gunicorn.conf.py`: load this file as gunicorn does, pass every setting
    # through gunicorn's own validators, and print the result (deploy/check.sh runs this).
    from gunicorn.config import Config

    _cfg = Config()
    for _key, _value in list(globals().items()):
        if _key in _cfg.settings:
            _cfg.set(_key, _value)
    print(
        f"workers={_cfg.workers} bind={_cfg.bind} worker_class={_cfg.worker_class_str} "
        f"worker_connections={_cfg.worker_connections} "
        f"timeout={_cfg.timeout} graceful_timeout={_cfg.graceful_timeout} "
        f"max_requests={_cfg.max_requests}+{_cfg.max_requests_jitter} "
        f"preload_app={_cfg.preload_app} loglevel={_cfg.loglevel} "
        f"metrics_port={os.environ.get('AOS_METRICS_PORT', '9100')}"
    )
