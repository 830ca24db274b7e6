"""Checks the action ids over many random games (issue 24: "ids are round-tripped and masks
checked over 1,000 random games on all five maps").

    python -m service.sim.check_actions --games 1000 [--maps all] [--players 3-6] [--workers N]
        [--seed S] [--walk-every K] [--game G]

Game g plays map g mod (number of maps), its player counts in turn (those of --players the map
takes), Holland with and without windmills, half the games with every seat funded ($60, so
random play reaches every round) and half from the map's own start. Every seat is the engine's
RandomPlayer; now and then a random seat resigns; chance nodes are sampled by their
probabilities. Each game's generator is seeded `check-<seed>-<g>`, so a run is reproducible.

At every decision (service/sim/checks.py) each listed move's id is round-tripped (it decodes to
the move), the mask is checked to be exactly the listing, and ids not legal are refused. Walking
every delivery's steps (on clones) is the costly part per decision, but random play lists
deliveries at few decisions, so by default it is done at all of them; --walk-every K walks only
every K-th decision that lists deliveries. A failure names its game and decision; `--game G` (with the
same --seed) replays that game alone, walking every delivery decision.

Prints a summary; the exit status is 1 when any check failed.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback
from dataclasses import dataclass, field

from service.engine import game
from service.engine.maps import load_map
from service.engine.playout import RandomPlayer
from service.sim import batch
from service.sim.checks import CheckFailed, check_decision
from service.sim.state import SimState

DEFAULT_WALK_EVERY = 1  # measured: walking every delivery decision adds ~5 % (random play delivers little)
RESIGN_CHANCE = 1 / 1500  # per decision: about one game in three sees a resignation
FUNDED_CASH = 60
MAX_ACTIONS = 50000


@dataclass(frozen=True)
class GameSpec:
    index: int
    seed: str
    map_id: str
    players: int
    options: dict
    walk_every: int


@dataclass
class Failure:
    index: int
    seed: str
    map_id: str
    players: int
    decision: int
    message: str


@dataclass
class GameResult:
    spec: GameSpec
    decisions: int = 0
    chance_nodes: int = 0
    moves_checked: int = 0
    delivery_decisions: int = 0
    walked: int = 0
    resignations: int = 0
    funded: bool = False
    rounds: int = 0
    seconds: float = 0.0
    failure: Failure | None = field(default=None)


def parse_players(text: str) -> tuple[int, int]:
    low, _, high = text.partition("-")
    lo, hi = int(low), int(high or low)
    if not 1 <= lo <= hi:
        raise argparse.ArgumentTypeError(f"bad player range {text!r}")
    return lo, hi


def specs(games: int, maps: list[str], players: tuple[int, int], seed: str,
          walk_every: int) -> list[GameSpec]:
    counts: dict[str, list[int]] = {}
    for m in maps:
        board = load_map(m)
        counts[m] = [p for p in range(players[0], players[1] + 1)
                     if board.min_players <= p <= board.max_players]
    maps = [m for m in maps if counts[m]]
    if not maps:
        raise SystemExit("no map takes that many players")
    out = []
    for g in range(games):
        map_id = maps[g % len(maps)]
        turn = g // len(maps)
        n = counts[map_id][turn % len(counts[map_id])]
        options = {}
        if map_id == "holland" and (turn // len(counts[map_id])) % 2:
            options = {"windmills": True}
        out.append(GameSpec(g, f"check-{seed}-{g}", map_id, n, options, walk_every))
    return out


def sample(weights: tuple[int, ...] | list[float], rnd: random.Random) -> int:
    return rnd.choices(range(len(weights)), weights)[0]


def resign(state: SimState, rnd: random.Random) -> SimState:
    """A random seat still in the game resigns; draws the resignation reaches are sampled."""
    seat = rnd.choice([i for i, p in enumerate(state.engine["players"]) if not p["eliminated"]])
    with game.choosing(lambda draw: sample(draw.weights, rnd)):
        engine, _ = game.play(state.engine, seat, {"type": game.RESIGN})
    return SimState(state.space, engine)


def check_game(spec: GameSpec) -> GameResult:
    """Plays one random game to its end, checking every decision; stops at the first failure."""
    started = time.process_time()
    result = GameResult(spec)
    rnd = random.Random(spec.seed)
    funded = result.funded = rnd.random() < 0.5
    state = SimState.new(spec.map_id, spec.players, spec.seed, cash=FUNDED_CASH if funded else None,
                         options=spec.options)
    player = RandomPlayer(rnd)
    decision = 0
    try:
        while not state.is_terminal():
            decision += 1
            if decision > MAX_ACTIONS:
                raise CheckFailed(f"the game did not end in {MAX_ACTIONS} decisions")
            if state.is_chance_node():
                check_decision(state)
                result.chance_nodes += 1
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[sample([p for _, p in outcomes], rnd)][0])
                continue
            if rnd.random() < RESIGN_CHANCE:
                state = resign(state, rnd)
                result.resignations += 1
                continue
            listing = state.listing()
            walk = False
            if listing.paths:
                walk = (result.delivery_decisions + spec.index) % spec.walk_every == 0
                result.delivery_decisions += 1
                result.walked += walk
            result.moves_checked += check_decision(state, walk=walk)
            result.decisions += 1
            moves = [*listing.moves.values(), *listing.paths.values()]
            for action in state.actions_of(player.choose(state.engine, state.current_player(),
                                                         moves)):
                state.apply_action(action)
    except Exception as error:  # noqa: BLE001 - a crash is a failure to report, not to hide
        message = str(error) if isinstance(error, CheckFailed) else \
            "".join(traceback.format_exception_only(error)).strip()
        result.failure = Failure(spec.index, spec.seed, spec.map_id, spec.players, decision,
                                 message)
    result.rounds = state.engine["round"]
    result.seconds = time.process_time() - started
    return result


def run(games: list[GameSpec], workers: int, show_progress: bool = True) -> list[GameResult]:
    def failed(results: list[GameResult]) -> str:
        return f", {sum(r.failure is not None for r in results)} failed"

    results = batch.run_all(check_game, games, workers, show_progress, failed)
    return sorted(results, key=lambda r: r.spec.index)


def summary(results: list[GameResult], wall: float, command: str) -> str:
    def total(name: str) -> int:
        return sum(getattr(r, name) for r in results)

    lines = [f"$ {command}", f"games: {len(results)}"]
    per_map: dict[str, list[GameResult]] = {}
    for r in results:
        per_map.setdefault(r.spec.map_id, []).append(r)
    for m, rs in per_map.items():
        players = sorted({r.spec.players for r in rs})
        windmills = sum(bool(r.spec.options) for r in rs)
        lines.append(f"  {m}: {len(rs)} games, {'/'.join(map(str, players))} players"
                     + (f", {windmills} with windmills" if windmills else "")
                     + f", {sum(r.funded for r in rs)} funded"
                     + f", {sum(r.decisions for r in rs):,} decisions")
    lines += [
        f"decisions checked: {total('decisions'):,} (and {total('chance_nodes'):,} chance nodes)",
        f"moves round-tripped: {total('moves_checked'):,}",
        f"decisions listing deliveries: {total('delivery_decisions'):,}, their steps walked at "
        f"{total('walked'):,} (every {results[0].spec.walk_every if results else '-'})",
        f"resignations: {total('resignations'):,}; rounds played: {total('rounds'):,}",
        f"CPU: {sum(r.seconds for r in results):.0f} s; wall: {wall:.0f} s",
    ]
    failures = [r.failure for r in results if r.failure is not None]
    lines.append(f"failures: {len(failures)}")
    for f in failures:
        lines.append(f"  game {f.index} (seed {f.seed}, {f.map_id}, {f.players} players) at "
                     f"decision {f.decision}: {f.message}")
        lines.append(f"    reproduce: python -m service.sim.check_actions --seed "
                     f"{f.seed.split('-')[1]} --game {f.index}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m service.sim.check_actions",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--maps", default="all", help="comma-separated map ids, or all")
    parser.add_argument("--players", type=parse_players, default=(3, 6), help="e.g. 3-6 or 4")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", default="1", help="no '-' in it")
    parser.add_argument("--walk-every", type=int, default=DEFAULT_WALK_EVERY,
                        help="walk the delivery steps at every K-th delivery decision")
    parser.add_argument("--game", type=int, default=None,
                        help="replay only this game of the run, walking every delivery decision")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if "-" in args.seed or args.walk_every < 1 or args.games < 1:
        parser.error("--seed without '-', --walk-every and --games at least 1")
    maps = list(game.MAP_IDS) if args.maps == "all" else args.maps.split(",")
    unknown = [m for m in maps if m not in game.MAP_IDS]
    if unknown:
        parser.error(f"unknown maps {unknown}; maps: {', '.join(game.MAP_IDS)}")
    games = specs(max(args.games, (args.game or 0) + 1), maps, args.players, args.seed,
                  args.walk_every)
    if args.game is not None:
        spec = games[args.game]
        games = [GameSpec(spec.index, spec.seed, spec.map_id, spec.players, spec.options, 1)]
    started = time.perf_counter()
    results = run(games, args.workers, show_progress=not args.quiet)
    command = "python -m service.sim.check_actions " + " ".join(argv if argv is not None
                                                                  else sys.argv[1:])
    print(summary(results, time.perf_counter() - started, command.strip()))
    return 1 if any(r.failure is not None for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
