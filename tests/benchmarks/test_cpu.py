"""The HTTP benchmark's CPU by process (benchmarks/http/cpu.py): each part's time is read from
the process that spent it, a parent's children are found, and the per-request split is the
difference of two snapshots over the requests between them."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
import redis

from benchmarks.http import cpu
from benchmarks.http.load import Result, run
from benchmarks.http.run import print_commands, print_cpu

pytestmark = pytest.mark.skipif(not cpu.PROC.joinpath("self", "stat").exists(), reason="needs Linux's /proc")

# A child that spends about 0.3 s of CPU, says so, and waits to be told to end.
BURN = """import sys, time
end = time.process_time() + 0.3
while time.process_time() < end:
    pass
print("burnt", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def burner() -> Iterator[subprocess.Popen]:
    child = subprocess.Popen([sys.executable, "-c", BURN], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline() == "burnt\n"
    yield child
    child.communicate("")


def test_a_process_s_cpu_is_its_user_and_system_time(burner: subprocess.Popen) -> None:
    assert 0.25 <= cpu.process_seconds(burner.pid) < 5


def test_a_process_that_is_gone_has_spent_nothing() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert cpu.process_seconds(child.pid) == 0.0


def test_a_parent_s_children_are_found_by_their_parent_pid(burner: subprocess.Popen) -> None:
    assert burner.pid in cpu.children(os.getpid())
    assert cpu.children(burner.pid) == []


def test_the_split_per_request_is_each_part_s_difference_over_the_requests() -> None:
    before, after = cpu.Cpu(1.0, 0.5, 2.0), cpu.Cpu(1.5, 0.6, 2.2)
    per = (after - before).per_request_us(1000)
    assert (per.workers, per.redis, per.load) == pytest.approx((500.0, 100.0, 200.0))
    assert per.total == pytest.approx(800.0)
    assert (before + after).workers == pytest.approx(2.5)


def test_a_snapshot_counts_the_master_and_its_workers_redis_and_the_joined_load(
        burner: subprocess.Popen, redis_url: str, server: int) -> None:
    store = redis.Redis.from_url(redis_url)
    # This process stands for gunicorn's master: its child, the burner, for a worker.
    before = cpu.snapshot(os.getpid(), store)
    assert before is not None
    assert before.workers >= cpu.process_seconds(burner.pid) >= 0.25
    with store.pipeline(transaction=False) as pipe:
        for n in range(20_000):
            pipe.set(f"cpu-test:{n % 10}", n)
        pipe.execute()
    result = run("cpu", "127.0.0.1", server,
                 lambda i: lambda last: ("GET", "/", None, {}), connections=2, seconds=0.5,
                 processes=2)
    after = cpu.snapshot(os.getpid(), store)
    assert after is not None
    spent = after - before
    assert result.requests > 0
    assert spent.redis > 0  # the 20,000 SETs
    assert spent.load > 0  # the load generator's two processes, joined by run()
    assert spent.workers > 0  # this process served the requests (its threads)


def _result(name: str, requests: int) -> Result:
    return Result(name, requests, 10.0, 1.0, 2.0, {200: requests})


def test_the_table_puts_each_run_against_the_mean_of_the_two_floor_runs(
        capsys: pytest.CaptureFixture[str]) -> None:
    results = [_result("floor", 1000), _result("POST move", 500), _result("floor", 1000)]
    # The floors: 1,000 and 1,200 us a request, so 1,100 on average; the move 1,320.
    cpus = [cpu.Cpu(0.8, 0.1, 0.1), cpu.Cpu(0.5, 0.07, 0.09), cpu.Cpu(1.0, 0.1, 0.1)]
    print_cpu(results, cpus)
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines() if line}
    assert rows["floor"][-5:] == ["900", "100", "100", "1100", "1.00x"]
    assert rows["POST"][-5:] == ["1000", "140", "180", "1320", "1.20x"]


def test_no_table_without_proc(capsys: pytest.CaptureFixture[str]) -> None:
    print_cpu([_result("floor", 1000), _result("floor", 1000)], [None, None])
    assert capsys.readouterr().out == ""


def test_redis_time_by_command_is_each_command_s_difference_over_the_requests(redis_url: str) -> None:
    store = redis.Redis.from_url(redis_url)
    script = store.register_script("redis.call('SET', KEYS[1], ARGV[1]) return 1")
    script(keys=["cpu-test:cmd"], args=[0])  # loaded, so that every call below is an EVALSHA
    before = cpu.commands(store)
    for n in range(100):
        script(keys=["cpu-test:cmd"], args=[n])
        store.get("cpu-test:cmd")
    split = cpu.command_split(before, cpu.commands(store), requests=50)
    by_name = {name: (calls, usec) for name, calls, usec in split}
    # Two of each a request; the script's SET counted under its own name too; the readings'
    # own INFO left out.
    assert by_name["evalsha"][0] == by_name["get"][0] == by_name["set"][0] == 2
    assert "info" not in by_name
    assert by_name["evalsha"][1] >= by_name["set"][1] > 0  # the script's time holds its SET's
    assert [usec for _, _, usec in split] == sorted((usec for _, _, usec in split), reverse=True)


def test_a_command_not_run_between_the_readings_is_not_listed() -> None:
    before = {"get": (10, 50), "evalsha": (5, 100)}
    after = {"get": (10, 50), "evalsha": (9, 300), "xadd": (2, 8)}
    assert cpu.command_split(before, after, requests=2) == [("evalsha", 2.0, 100.0), ("xadd", 1.0, 4.0)]


def test_the_command_table_names_each_run_with_its_dearest_commands(
        capsys: pytest.CaptureFixture[str]) -> None:
    results = [_result("floor", 1000), _result("POST move", 500)]
    print_commands(results, [[("evalsha", 1.0, 25.0), ("script|load", 0.001, 0.1), ("hmget", 1.0, 1.8)],
                             [("evalsha", 1.0, 59.0), ("xadd", 1.0, 4.5), ("hmget", 2.0, 2.2)]],
                   shown=2)
    lines = capsys.readouterr().out.splitlines()
    assert "  floor                evalsha 25.0 (1), hmget 1.8 (1)" in lines
    assert "  POST move            evalsha 59.0 (1), xadd 4.5 (1)" in lines
