"""Random play: whole games on Rust Belt for 3-6 players, with the engine's invariants checked
after every move, legality tested both ways, and replay compared byte for byte. `play_checked`
takes any map and its options; Madagascar and Holland are played here too."""

from __future__ import annotations

import random
from collections.abc import Callable

import orjson
import pytest

from service.engine import game
from service.engine.errors import IllegalMove
from service.engine.playout import RandomPlayer
from service.engine.state import cubes_in_play
from tests.engine.board import lay

READ_ONLY = ("cost", "income")
TOTAL_CUBES = 96


def canonical(move: dict) -> bytes:
    """A move without its read-only fields, in one order, for comparing with the listing."""
    m = {k: v for k, v in move.items() if k not in READ_ONLY}
    if isinstance(m.get("tracks"), list):
        m["tracks"] = sorted(sorted(t) for t in m["tracks"] if isinstance(t, list))
    if isinstance(m.get("town_exits"), list):
        m["town_exits"] = sorted(m["town_exits"])
    if isinstance(m.get("placements"), list):
        m["placements"] = sorted(m["placements"], key=lambda p: orjson.dumps(p, option=orjson.OPT_SORT_KEYS))
    return orjson.dumps(m, option=orjson.OPT_SORT_KEYS)


def remembered_canonical() -> Callable[[dict], bytes]:
    """`canonical`, remembered by the move's JSON as it is. A game lists the same builds turn after
    turn, and canonicalising each of the 4 M listed moves cost this file a tenth of its CPU time;
    one plain orjson dump costs a sixth of `canonical`. Equal JSON is an equal move (moves are
    JSON values: no tuples), so the answer is `canonical`'s."""
    seen: dict[bytes, bytes] = {}

    def canonical_of(move: dict) -> bytes:
        key = orjson.dumps(move)
        known = seen.get(key)
        if known is None:
            known = seen[key] = canonical(move)
        return known

    return canonical_of


def mutations(move: dict, state: dict, seat: int, chooser: random.Random) -> list[dict]:
    """Near misses of a legal move: each is legal only if the listing says so."""
    out: list[dict] = [{**move, "type": "bid" if move["type"] != "bid" else "pass"}]
    cash = state["players"][seat]["cash"]
    if move["type"] == "issue_shares":
        out += [{**move, "count": move["count"] + 14}, {**move, "count": -1}]
    elif move["type"] == "bid":
        out += [{**move, "amount": cash + 1}, {**move, "amount": move["amount"] - 1}]
    elif move["type"] == "select_action":
        out += [{**move, "action": a} for a in ("first_move", "engineer", "nonsense")]
    elif move["type"] == "build":
        h = move["hex"]
        out += [{**move, "hex": {"q": h["q"] + dq, "r": h["r"] + dr}}
                for dq, dr in ((1, 0), (0, 1), (-1, 1))]
        if "tracks" in move:
            out.append({**move, "tracks": [[(a + 1) % 6, (b + 1) % 6] for a, b in move["tracks"]]})
            out.append({**move, "tracks": move["tracks"] + [[0, 3]]})
        else:
            out.append({**move, "town_exits": [(e + 1) % 6 for e in move["town_exits"]]})
    elif move["type"] == "deliver":
        links = move["links"]
        out += [{**move, "links": links[::-1]}, {**move, "links": links[:-1] or ["0,0,0"]},
                {**move, "links": links + links[:1]},
                {**move, "color": chooser.choice(["red", "blue", "yellow", "purple", "black"])}]
    elif move["type"] == "produce":
        out += [{**move, "placements": [{**p, "column": "light-1"} for p in move["placements"]]},
                {**move, "placements": move["placements"][:-1]}]
    return out


def cash_deltas_from_events(events: list[dict], players: int) -> list[int]:
    """What the events say each seat's cash changed by."""
    delta = [0] * players
    for e in events:
        t = e["type"]
        if t == "shares_issued":
            delta[e["seat"]] += e["cash"]
        elif t == "turn_order_set":
            for p in e["payments"]:
                delta[p["seat"]] -= p["paid"]
        elif t == "track_built":
            delta[e["seat"]] -= e["cost"]
        elif t == "income_collected":
            for s, amount in e["income"].items():
                delta[int(s)] += amount
        elif t == "expenses_paid":
            for row in e["expenses"]:
                delta[row["seat"]] -= row["paid"]
    return delta


def income_deltas_from_events(events: list[dict], players: int) -> list[int]:
    """What the events say each seat's income changed by."""
    delta = [0] * players
    for e in events:
        t = e["type"]
        if t == "good_delivered" or t == "oil_drums_counted":
            for s, amount in e["income"].items():
                delta[int(s)] += amount
        elif t == "expenses_paid":
            for row in e["expenses"]:
                delta[row["seat"]] -= row["shortfall"]
        elif t == "income_reduced":
            for row in e["reductions"]:
                delta[row["seat"]] -= row["reduction"]
    return delta


def check_invariants(before: dict, after: dict, events: list[dict]) -> None:
    assert cubes_in_play(after) + sum(after["bag"].values()) == TOTAL_CUBES
    assert all(n >= 0 for n in after["bag"].values())
    for p in after["players"]:
        assert p["cash"] >= 0, p
        assert 1 <= p["loco"] <= 6
        assert 2 <= p["shares"] <= 15
    expected = cash_deltas_from_events(events, len(after["players"]))
    actual = [a["cash"] - b["cash"] for a, b in zip(after["players"], before["players"], strict=True)]
    assert actual == expected, events
    expected = income_deltas_from_events(events, len(after["players"]))
    actual = [a["income"] - b["income"]
              for a, b in zip(after["players"], before["players"], strict=True)]
    assert actual == expected, events
    supply = after["supply"]
    assert all(n >= 0 for n in supply.values())
    for route_owner in (o for ts in after["track"].values() for _, _, o in ts):
        assert route_owner is None or not after["players"][route_owner]["eliminated"]


def play_checked(players: int, seed: int, check_all_every: int = 0, map_id: str = "rust_belt",
                 options: dict | None = None, start: dict | None = None) -> tuple[dict, list[dict]]:
    """Plays one random game to its end, checking every move; `start` is a state to play on from
    instead of a new game (its record then replays from that state, not from the seed)."""
    chooser = random.Random(seed)
    state = start if start is not None else game.new_game(
        map_id, [f"P{i}" for i in range(players)], f"random-{seed}", options)
    record: list[dict] = []
    player = RandomPlayer(chooser)
    decisions = 0
    canonical_of = remembered_canonical()
    while not game.is_finished(state):
        seat = game.active_seat(state)
        for other in range(players):
            if other != seat:
                assert game.legal_moves(state, other) == []
        options = game.legal_moves(state, seat)
        assert options, f"seat {seat} must decide in {state['phase']} but has no legal move"
        listed = {canonical_of(m) for m in options}
        assert len(listed) == len(options), "a move is listed twice"
        move = player.choose(state, seat, options)
        # Every listed move applies (all of them now and then, a sample otherwise).
        sample = options if check_all_every and decisions % check_all_every == 0 else \
            chooser.sample(options, min(3, len(options)))
        for m in sample:
            game.apply(state, seat, m)
        # Near misses are accepted exactly when they are listed.
        for m in mutations(move, state, seat, chooser):
            verdict = game.validate(state, seat, m)
            assert verdict["legal"] == (canonical_of(m) in listed), (m, verdict)
            if not verdict["legal"]:
                # Not pytest.raises: its context costs ten times a plain try, at 130 k refusals.
                try:
                    game.apply(state, seat, m)
                except IllegalMove:
                    pass
                else:
                    pytest.fail(f"apply took a move validate refused: {m}")
        before_bytes = orjson.dumps(state)
        after, events = game.apply(state, seat, move)
        assert orjson.dumps(state) == before_bytes, "apply changed its input"
        check_invariants(state, after, events)
        record.append({"seat": seat, "move": move})
        state = after
        decisions += 1
    return state, record


# 100 games, 13,535 decisions, each with its listing, a sample of it applied and near misses
# judged both ways (200 games took a ninth of the suite's CPU time for no rule they did not meet).
@pytest.mark.parametrize("players", [3, 4, 5, 6])
@pytest.mark.parametrize("seed", range(25))
def test_random_game_keeps_invariants_and_replays(players: int, seed: int) -> None:
    final, record = play_checked(players, seed * 10 + players, check_all_every=25 if seed < 3 else 0)
    assert final["phase"] == "finished"
    scores = final["scores"]
    assert len(scores) == players
    survivors = [s for s in scores if s["points"] is not None]
    for s in survivors:
        assert s["points"] == s["income_points"] + s["share_points"] + s["track_points"]
    replayed = game.replay(game.record_header(final), record)
    assert orjson.dumps(replayed) == orjson.dumps(final)


# -- Madagascar and Holland --------------------------------------------------------------------

MADAGASCAR_AND_HOLLAND = [("madagascar", p, {}) for p in (3, 4, 5, 6)] + [
    ("holland", p, {"windmills": w}) for p in (3, 4) for w in (False, True)]


@pytest.mark.parametrize(("map_id", "players", "options"), MADAGASCAR_AND_HOLLAND,
                         ids=lambda v: v if not isinstance(v, dict) else
                         ("windmills" if v.get("windmills") else "plain"))
# 40 games, 4,854 decisions.
@pytest.mark.parametrize("seed", range(5))
def test_random_game_on_madagascar_and_holland(map_id: str, players: int, options: dict,
                                               seed: int) -> None:
    final, record = play_checked(players, seed * 10 + players, check_all_every=25 if seed < 2 else 0,
                                 map_id=map_id, options=options)
    assert final["phase"] == "finished"
    assert final["map"] == map_id and final["options"] == {**final["options"], **options}
    assert len(final["scores"]) == players
    for s in final["scores"]:
        if s["points"] is not None:
            assert s["points"] == s["income_points"] + s["share_points"] + s["track_points"]
    replayed = game.replay(game.record_header(final), record)
    assert orjson.dumps(replayed) == orjson.dumps(final)


@pytest.mark.parametrize("players", [3, 4])
@pytest.mark.parametrize("seed", range(10))
def test_random_play_from_round_5_with_windmills_and_money(players: int, seed: int) -> None:
    """Random players go broke early, before the polders open. From round 5, with $80 each and
    two links from Delft to Den Haag (one over the windmill at 5,10), they play on to the last
    round, building on polders and delivering windmill cubes, every move checked."""
    state = game.new_game("holland", [f"P{i}" for i in range(players)], f"mills-{seed}",
                          {"windmills": True})
    state["round"] = 5
    for p in state["players"]:
        p["cash"] = 80
    lay(state, [((5, 10), [[3, 5]]), ((5, 11), [[0, 2]])], owner=0)
    lay(state, [((4, 11), [[0, 3]]), ((4, 12), [[0, 2]]), ((5, 12), [[1, 5]])], owner=1)
    final, record = play_checked(players, seed, check_all_every=10 if seed < 2 else 0, start=state)
    assert final["phase"] == "finished"
    replayed = state
    for entry in record:
        replayed, _ = game.apply(replayed, entry["seat"], entry["move"])
    assert orjson.dumps(replayed) == orjson.dumps(final)


# -- Whole games to the last round, on every map -------------------------------------------------

MAP_PLAYER_COUNTS = [(m, p) for m in ("rust_belt", "madagascar", "iraq", "berlin") for p in (3, 4, 5, 6)] + [
    ("holland", 3), ("holland", 4)]


@pytest.mark.parametrize(("map_id", "players"), MAP_PLAYER_COUNTS)
@pytest.mark.parametrize("seed", range(1))  # a second seed cost the suite 8 CPU-s
def test_funded_random_game_plays_to_the_last_round(map_id: str, players: int, seed: int) -> None:
    """Random players go broke by round 5 or so; with $300 each at the start they play every
    round, so the late rounds, the last income reduction and final scoring of every map are
    played and checked move by move too."""
    start = game.new_game(map_id, [f"P{i}" for i in range(players)], f"funded-{seed}")
    for p in start["players"]:
        p["cash"] = 300
    final, record = play_checked(players, seed, start=start)
    assert final["phase"] == "finished" and final["round"] == final["last_round"]
    assert any(s["track_points"] for s in final["scores"] if s["points"] is not None)
    replayed = start
    for entry in record:
        replayed, _ = game.apply(replayed, entry["seat"], entry["move"])
    assert orjson.dumps(replayed) == orjson.dumps(final)
