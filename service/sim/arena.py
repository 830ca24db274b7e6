"""The arena: many seeded games between policies, on the machine's cores, rated.

    python -m service.sim.arena --policies search,greedy,greedy,greedy --map rust_belt --games 200
        [--seed 1] [--workers N] [--search-sims 16 | --search-ms 1000] [--out docs/arena]

Game g of a map is seeded `arena-<seed>-<map>-<g>` and seats the policies rotated by g, so each
policy sits in every seat equally often; the policies' own generators are seeded from the game's
seed, so a run is reproducible given its budget in simulations (a budget in milliseconds depends
on the machine). It reports per map and per policy:

- an OpenSkill rating (Plackett-Luce over the game's ranks, every seat its own team) as μ ± σ.
  A policy with several seats in a game is one player: each game, its μ moves by the mean of
  its seats' changes and its σ becomes the mean of theirs, so three equal copies cancel out;
- the share of its seats that finished first (a tie for first splits the place), with a 95 %
  Wilson interval;
- its mean points (an eliminated seat scores 0 here, as in the client's bot) and eliminations;
- the CPU seconds it spent per decision (decisions with more than one legal move).

It writes `arena.md`, `arena.json` and `ratings.svg` (μ ± σ per policy and map) into --out.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from service.engine import game, warm
from service.sim import batch, policies

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Match:
    map_id: str
    index: int
    seed: str
    seats: tuple[str, ...]  # the policy of each seat
    search_simulations: int | None
    search_time_ms: float | None


@dataclass
class Result:
    match: Match
    points: list[int | None]
    ranks: list[int]
    moves: int
    seconds: float
    decision_seconds: dict[str, list[float]] = field(default_factory=dict)


def play(match: Match) -> Result:
    """Plays one game to the end."""
    started = time.perf_counter()
    rng = random.Random(match.seed)
    seats = [policies.make(name, random.Random(rng.random()), match.search_simulations,
                           match.search_time_ms) for name in match.seats]
    state = game.new_game(match.map_id, [f"{name}-{i}" for i, name in enumerate(match.seats)], match.seed)
    moves = 0
    thinking: dict[str, list[float]] = {}
    while not game.is_finished(state):
        seat = game.active_seat(state)
        assert seat is not None
        legal = game.legal_moves(state, seat)
        # CPU seconds of this process, not the wall clock: on a shared machine the wall clock
        # counts other programs' time too.
        t = time.process_time()
        move = seats[seat].choose(state, seat, legal)
        if len(legal) > 1:
            thinking.setdefault(match.seats[seat], []).append(time.process_time() - t)
        state, _ = game.apply(state, seat, move)
        moves += 1
    scores = sorted(state["scores"] or [], key=lambda s: s["seat"])
    return Result(match, [s["points"] for s in scores], [s["rank"] for s in scores], moves,
                  time.perf_counter() - started,
                  {k: [sum(v), len(v)] for k, v in thinking.items()})


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def rate(results: list[Result]) -> dict[str, tuple[float, float]]:
    """OpenSkill Plackett-Luce ratings of the policies over the games, in game order."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings: dict[str, tuple[float, float]] = {}
    for r in sorted(results, key=lambda r: r.match.index):
        names = r.match.seats
        teams = [[model.rating(*ratings.get(n, (model.mu, model.sigma)))] for n in names]
        new = model.rate(teams, ranks=list(r.ranks))
        changes: dict[str, list[tuple[float, float]]] = {}
        for name, team in zip(names, new, strict=True):
            changes.setdefault(name, []).append((team[0].mu, team[0].sigma))
        for name, seen in changes.items():
            mu, sigma = ratings.get(name, (model.mu, model.sigma))
            ratings[name] = (mu + sum(m - mu for m, _ in seen) / len(seen),
                             sum(s for _, s in seen) / len(seen))
    return ratings


def summarise(map_id: str, results: list[Result]) -> dict:
    ratings = rate(results)
    rows = []
    for name in sorted(ratings, key=lambda n: -ratings[n][0]):
        seats = firsts = eliminated = 0
        firsts_f = 0.0
        points = 0
        think, decisions = 0.0, 0
        for r in results:
            winners = sum(1 for k in r.ranks if k == 1)
            for seat, seat_name in enumerate(r.match.seats):
                if seat_name != name:
                    continue
                seats += 1
                if r.ranks[seat] == 1:
                    firsts += 1
                    firsts_f += 1 / winners
                p = r.points[seat]
                eliminated += p is None
                points += p or 0
            if name in r.decision_seconds:
                think += r.decision_seconds[name][0]
                decisions += int(r.decision_seconds[name][1])
        low, high = wilson(firsts_f, seats)
        rows.append({"policy": name, "mu": round(ratings[name][0], 2), "sigma": round(ratings[name][1], 2),
                     "seat_games": seats, "first": round(firsts_f, 2),
                     "first_share": round(firsts_f / seats, 4) if seats else 0.0,
                     "first_ci95": [round(low, 4), round(high, 4)],
                     "mean_points": round(points / seats, 2) if seats else 0.0,
                     "eliminated": eliminated,
                     "seconds_per_decision": round(think / decisions, 4) if decisions else 0.0})
    return {"map": map_id, "games": len(results),
            "mean_moves": round(sum(r.moves for r in results) / max(1, len(results)), 1),
            "policies": rows}


def markdown(report: dict) -> str:
    lines = [f"# Arena: {', '.join(report['policies'])}", "",
             f"Made by `{report['command']}`", "",
             f"Search budget: {report['search_budget']}. Seeds `arena-{report['seed']}-<map>-<game>`; "
             f"{report['workers']} worker process(es), {report['seconds']:.0f} s in all.", ""]
    for m in report["maps"]:
        lines += [f"## {m['map']} ({m['games']} games, {m['mean_moves']} moves a game)", "",
                  "| policy | OpenSkill μ ± σ | first places | share first (95 % CI) | mean points "
                  "| eliminated | CPU s / decision |",
                  "|---|---|---|---|---|---|---|"]
        for row in m["policies"]:
            low, high = row["first_ci95"]
            lines.append(f"| {row['policy']} | {row['mu']:.1f} ± {row['sigma']:.1f} "
                         f"| {row['first']:g} / {row['seat_games']} "
                         f"| {100 * row['first_share']:.1f} % ({100 * low:.1f}–{100 * high:.1f} %) "
                         f"| {row['mean_points']:.1f} | {row['eliminated']} "
                         f"| {row['seconds_per_decision']:.3f} |")
        lines.append("")
    return "\n".join(lines)


def svg(report: dict) -> str:
    """μ ± σ per policy, a band of bars per map."""
    rows = [(m["map"], row) for m in report["maps"] for row in m["policies"]]
    width, left, bar, gap = 640, 190, 18, 10
    height = 40 + len(rows) * (bar + 6) + gap * len(report["maps"]) + 30
    top = max([row["mu"] + row["sigma"] for _, row in rows] + [50.0])
    scale = (width - left - 100) / top  # room for the label right of the whisker
    colours = {"search": "#c0392b", "greedy": "#2471a3", "random": "#7f8c8d"}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="10" y="20" font-size="14">OpenSkill rating μ ± σ ({report["search_budget"]})</text>']
    y, previous = 34, None
    for map_id, row in rows:
        if map_id != previous:
            y += gap
            previous = map_id
        x0 = left
        w = max(0.0, row["mu"]) * scale
        colour = colours.get(row["policy"], "#555")
        out.append(f'<text x="10" y="{y + 13}">{map_id}: {row["policy"]}</text>')
        out.append(f'<rect x="{x0}" y="{y}" width="{w:.1f}" height="{bar}" fill="{colour}" opacity="0.8"/>')
        lo, hi = max(0.0, row["mu"] - row["sigma"]) * scale, (row["mu"] + row["sigma"]) * scale
        mid = y + bar / 2
        out.append(f'<line x1="{x0 + lo:.1f}" x2="{x0 + hi:.1f}" y1="{mid}" y2="{mid}" stroke="black"/>')
        for x in (lo, hi):
            out.append(f'<line x1="{x0 + x:.1f}" x2="{x0 + x:.1f}" y1="{y + 4}" y2="{y + bar - 4}" '
                       f'stroke="black"/>')
        out.append(f'<text x="{x0 + hi + 4:.1f}" y="{y + 13}">{row["mu"]:.1f} ± {row["sigma"]:.1f}</text>')
        y += bar + 6
    out.append("</svg>")
    return "\n".join(out) + "\n"


def run(map_ids: list[str], seats: list[str], games: int, seed: str, workers: int,
        search_simulations: int | None, search_time_ms: float | None,
        show_progress: bool = True) -> tuple[dict[str, list[Result]], float]:
    matches = [Match(m, g, f"arena-{seed}-{m}-{g}", tuple(seats[g % len(seats):] + seats[:g % len(seats)]),
                     search_simulations, search_time_ms)
               for m in map_ids for g in range(games)]
    started = time.perf_counter()
    results: dict[str, list[Result]] = {m: [] for m in map_ids}
    for result in batch.run_all(play, matches, workers, show_progress):
        results[result.match.map_id].append(result)
    return results, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m service.sim.arena", description=__doc__.splitlines()[0])
    parser.add_argument("--policies", default="search,greedy,greedy,greedy",
                        help=f"a policy per seat, comma-separated, from: {', '.join(policies.NAMES)}")
    parser.add_argument("--map", default="rust_belt", help="a map id, several comma-separated, or all")
    parser.add_argument("--games", type=int, default=200, help="games per map")
    parser.add_argument("--seed", default="1")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--search-sims", type=int, default=None, help="simulations per search decision")
    parser.add_argument("--search-ms", type=float, default=None,
                        help="milliseconds per search decision (default 1000 when no --search-sims)")
    parser.add_argument("--out", default="arena-out", help="directory for arena.md, arena.json, ratings.svg")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    seats = args.policies.split(",")
    unknown = [s for s in seats if s not in policies.NAMES]
    if unknown:
        parser.error(f"unknown policies {unknown}; policies: {', '.join(policies.NAMES)}")
    map_ids = list(game.MAP_IDS) if args.map == "all" else args.map.split(",")
    for m in map_ids:
        if m not in game.MAP_IDS:
            parser.error(f"no map {m!r}; maps: {', '.join(game.MAP_IDS)}")
    sims, ms = args.search_sims, args.search_ms
    if sims is None and ms is None:
        ms = 1000.0
    # Before the pool forks: every worker starts with the geometry warmed and the collector
    # settled (engine/warm.py); AOS_WARM_UP_GAMES=0 (the tests) skips it. Moves are the same.
    warm.warm_up(int(os.environ.get("AOS_WARM_UP_GAMES", "1") or "1"))
    results, seconds = run(map_ids, seats, args.games, args.seed, max(1, args.workers), sims, ms,
                           not args.quiet)
    budget = " and ".join(x for x in (f"{sims} simulations" if sims else "",
                                      f"{ms:g} ms" if ms else "") if x) + " per search decision"
    command = "python -m service.sim.arena " + " ".join(argv if argv is not None else sys.argv[1:])
    report = {"command": command, "policies": seats, "seed": args.seed, "workers": max(1, args.workers),
              "search_budget": budget, "seconds": round(seconds, 1),
              "maps": [summarise(m, results[m]) for m in map_ids]}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "arena.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / "arena.md").write_text(markdown(report))
    (out / "ratings.svg").write_text(svg(report))
    print(markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
