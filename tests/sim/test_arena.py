"""The arena: seeded games between policies, rated, with first places and their intervals, and
its Markdown, JSON and picture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from service.sim import arena


def test_wilson_interval_of_known_proportions() -> None:
    low, high = arena.wilson(10, 40)  # 25 %: the textbook 95 % interval is 14.2 % to 40.2 %
    assert round(low, 3) == 0.142 and round(high, 3) == 0.402
    assert arena.wilson(0, 10)[0] == pytest.approx(0.0) and arena.wilson(10, 10)[1] == pytest.approx(1.0)


def result(index: int, seats: tuple[str, ...], ranks: list[int]) -> arena.Result:
    match = arena.Match("rust_belt", index, f"s{index}", seats, None, None)
    return arena.Result(match, [10 * (5 - r) for r in ranks], ranks, 100, 1.0)


def test_ratings_follow_the_ranks_and_copies_of_one_policy_count_once() -> None:
    seats = ("a", "b", "b", "b")
    wins = [result(i, seats, [1, 2, 3, 4]) for i in range(10)]
    ratings = arena.rate(wins)
    assert ratings["a"][0] > 25 > ratings["b"][0]
    # Three copies of one policy ranking among themselves change nothing.
    even = arena.rate([result(0, ("b", "b", "b"), [1, 2, 3])])
    assert abs(even["b"][0] - 25) < 1e-9


def test_a_tie_for_first_splits_the_place() -> None:
    summary = arena.summarise("rust_belt", [result(0, ("a", "b", "b", "b"), [1, 1, 3, 4])])
    rows = {r["policy"]: r for r in summary["policies"]}
    assert rows["a"]["first"] == 0.5 and rows["b"]["first"] == 0.5
    assert rows["a"]["first_share"] == 0.5 and rows["b"]["seat_games"] == 3


@pytest.mark.parametrize("workers", [1, 2])
def test_the_command_plays_rates_and_writes_its_reports(tmp_path: Path, workers: int) -> None:
    out = tmp_path / "arena"
    argv = ["--policies", "greedy,random,random", "--map", "rust_belt", "--games", "3",
            "--workers", str(workers), "--quiet", "--out", str(out)]
    assert arena.main(argv) == 0
    report = json.loads((out / "arena.json").read_text())
    (m,) = report["maps"]
    assert m["map"] == "rust_belt" and m["games"] == 3
    rows = {r["policy"]: r for r in m["policies"]}
    assert rows["greedy"]["seat_games"] == 3 and rows["random"]["seat_games"] == 6
    assert sum(r["first"] for r in rows.values()) == 3
    low, high = rows["greedy"]["first_ci95"]
    assert low <= rows["greedy"]["first_share"] <= high
    assert report["command"].startswith("python -m service.sim.arena --policies greedy,random,random")
    assert "| greedy |" in (out / "arena.md").read_text()
    assert (out / "ratings.svg").read_text().startswith("<svg")


def test_the_same_seed_plays_the_same_games(tmp_path: Path) -> None:
    runs = [arena.run(["rust_belt"], ["greedy", "random", "random"], 2, "same", 1, None, None, False)[0]
            for _ in range(2)]
    assert [(r.points, r.ranks) for r in runs[0]["rust_belt"]] == \
        [(r.points, r.ranks) for r in runs[1]["rust_belt"]]
