"""A small closed-loop HTTP load generator: C connections (spread over processes, a thread per
connection, keep-alive where the server allows), each sending its next request when the last
one is answered. Reports throughput and latency percentiles, and how many connections ran out of
requests before the time was up (Result.ran_dry): their throughput is not the server's."""

from __future__ import annotations

import http.client
import multiprocessing
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

# A request plan for one connection: called with the previous (status, body) or None, returns
# (method, path, body, headers) or None when the connection has nothing more to send. A fifth
# element, a label, files the request's latency under that label too (Result.labelled).
Plan = Callable[[tuple[int, bytes] | None], tuple | None]
PlanFactory = Callable[[int], Plan]


@dataclass
class Result:
    name: str
    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    statuses: dict[int, int]
    labelled: dict[str, list[float]] = field(default_factory=dict)  # label -> latencies (s)
    # Connections whose plan ended before the time was up: fewer were open from then on, and
    # `rps` (requests over the whole time) says less than the server could do.
    ran_dry: int = 0

    def label_p(self, label: str, p: float) -> float:
        """The p-quantile (0-1) latency of one label's requests, in ms."""
        values = sorted(self.labelled[label])
        return values[min(len(values) - 1, int(p * len(values)))] * 1000

    @property
    def rps(self) -> float:
        return self.requests / self.seconds


def _connection(host: str, port: int, plan: Plan, stop_at: float, out: list) -> None:
    conn = http.client.HTTPConnection(host, port, timeout=30)
    latencies, statuses, last = [], Counter(), None
    labelled: dict[str, list[float]] = {}
    dry = False
    while time.perf_counter() < stop_at:
        request = plan(last)
        if request is None:
            dry = True
            break
        method, path, body, headers = request[:4]
        label = request[4] if len(request) > 4 else None
        started = time.perf_counter()
        try:
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            data = response.read()
        except (http.client.HTTPException, OSError):
            conn.close()  # the server closed a kept-alive connection: open another
            conn = http.client.HTTPConnection(host, port, timeout=30)
            last = None
            continue
        latencies.append(time.perf_counter() - started)
        if label is not None:
            labelled.setdefault(label, []).append(latencies[-1])
        statuses[response.status] += 1
        if response.getheader("Connection", "").lower() == "close":
            conn.close()
        last = (response.status, data)
    conn.close()
    out.append((latencies, statuses, labelled, dry))


def _process(
    host: str, port: int, factory: PlanFactory, ids: list[int], seconds: float, start_at: float, queue
) -> None:
    while time.time() < start_at:
        time.sleep(0.001)
    stop_at = time.perf_counter() + seconds
    out: list = []
    threads = [threading.Thread(target=_connection, args=(host, port, factory(i), stop_at, out)) for i in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    queue.put(out)


def run(
    name: str,
    host: str,
    port: int,
    factory: PlanFactory,
    *,
    connections: int = 16,
    seconds: float = 10.0,
    processes: int = 2,
) -> Result:
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    start_at = time.time() + 0.5
    groups = [list(range(p, connections, processes)) for p in range(processes)]
    procs = [
        ctx.Process(target=_process, args=(host, port, factory, ids, seconds, start_at, queue))
        for ids in groups
    ]
    for proc in procs:
        proc.start()
    outs = [queue.get() for _ in procs]
    for proc in procs:
        proc.join()
    latencies: list[float] = []
    statuses: Counter = Counter()
    labelled: dict[str, list[float]] = {}
    ran_dry = 0
    for out in outs:
        for lat, st, lab, dry in out:
            ran_dry += dry
            latencies.extend(lat)
            statuses.update(st)
            for label, values in lab.items():
                labelled.setdefault(label, []).extend(values)
    cuts = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else [0.0] * 99
    return Result(name, len(latencies), seconds, cuts[49] * 1000, cuts[98] * 1000, dict(statuses),
                  labelled, ran_dry)
