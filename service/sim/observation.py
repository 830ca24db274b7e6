"""What a seat observes: a flat float32 vector of a fixed shape per map and player count, and a
compact string form for debugging (docs/simulation.md lists the layout).

Only public information: the track and its owners, the cubes on the board, the display, the
bag's counts by colour, every player's cash, income, shares, locomotive and action, the round,
the phase and its record, the map's own public state. Never the seed, the generator or anything
that depends on them: the state the sim holds has them blanked (state.blank_secrets), and
nothing here reads those keys. Age of Steam hides nothing else, so every seat sees the same
vector but for the one-hot of who is observing.
"""

from __future__ import annotations

from functools import cache
from typing import Any, cast

import numpy as np

from service.engine import game
from service.sim.actions import ActionSpace, action_space

OBSERVATION_VERSION = "aos-observation/1"
PHASES = ("issue_shares", "auction", "select_action", "build", "move_goods", "production", "finished")
PAIRS = tuple((a, b) for a in range(6) for b in range(a + 1, 6))
PAIR_INDEX = {p: i for i, p in enumerate(PAIRS)}
# The maps' own public state, as numbers: (name, how many) per map; see _map_features.
MAP_FEATURES: dict[str, tuple[tuple[str, int], ...]] = {
    "berlin": (("wall_disc_standing", 19), ("wall_fallen", 1), ("wall_falls_round", 1)),
    "holland": (("blocked_action", 2),),
    "iraq": (("oil_drums", -1), ("oil_aside", 1)),  # -1: one per seat
    "madagascar": (("double_disc", 8), ("must_drop_out", -1)),
    "rust_belt": (),
}


class Layout:
    """Where each part of the observation lies, for one map and player count."""

    def __init__(self, space: ActionSpace) -> None:
        ms = space.move_space
        self.space = space
        self.players = p = space.players
        self.colours = ms.colours
        self.colour_index = {c: i for i, c in enumerate(ms.colours)}
        self.hexes = ms.hexes
        self.hex_index = {f"{q},{r}": i for i, (q, r) in enumerate(ms.hexes)}
        self.columns = ms.columns
        self.actions = ms.actions
        self.action_index = {a: i for i, a in enumerate(ms.actions)}
        owners = p + 1  # unowned, then each seat
        self.per_hex = {"track": 15 * owners, "town_exits": 6 * owners, "stop": 3,
                        "cubes": len(ms.colours), "built_this_turn": 1, "delivery_at": 1}
        self.hex_width = sum(self.per_hex.values())
        blocks: list[tuple[str, int]] = [
            ("hexes", self.hex_width * len(ms.hexes)),
            ("display", len(ms.columns) * 3 * len(ms.colours)),
            ("bag", len(ms.colours)),
            ("cash", p), ("income", p), ("shares", p), ("locomotive", p), ("eliminated", p),
            ("turn_order", p * p), ("player_action", p * len(ms.actions)),
            ("observer", p), ("active", p),
            ("round", 1), ("last_round", 1), ("phase", len(PHASES)), ("locked_actions", len(ms.actions)),
            ("auction_high_bid", 1), ("auction_high_bidder", p), ("auction_in", p),
            ("pass_holder", p), ("pass_used", 1),
            ("build_tiles_left", 1), ("build_urbanized", 1),
            ("move_round", 1), ("move_used", p), ("move_upgraded", p),
            ("production_drawn", len(ms.colours)),
            ("delivery_colour", len(ms.colours)), ("delivery_steps", 1), ("chance_node", 1),
        ]
        for name, n in MAP_FEATURES.get(space.map_id, ()):
            blocks.append((name, p if n == -1 else n))
        self.offsets: dict[str, tuple[int, int]] = {}
        at = 0
        for name, n in blocks:
            self.offsets[name] = (at, n)
            at += n
        self.size = at
        self.hex_offsets = {}
        at = 0
        for name, n in self.per_hex.items():
            self.hex_offsets[name] = at
            at += n

    def describe(self) -> list[dict]:
        """The layout as a table: each part's name, where it starts and how long it is."""
        return [{"name": n, "offset": o, "size": s} for n, (o, s) in self.offsets.items()]


@cache
def layout(map_id: str, players: int) -> Layout:
    return Layout(action_space(map_id, players))


def observation(state, seat: int) -> np.ndarray:
    """The observation of `seat` (a SimState's), as a float32 vector of layout(...).size."""
    engine = state.engine
    lay = layout(engine["map"], len(engine["players"]))
    obs = _static(engine["map"], len(engine["players"])).copy()
    off = lay.offsets
    p = lay.players
    owners = p + 1
    hw, ho, hex_index = lay.hex_width, lay.hex_offsets, lay.hex_index
    for k, tracks in engine["track"].items():
        base = hex_index[k] * hw + ho["track"]
        for a, b, owner in tracks:
            obs[base + PAIR_INDEX[(a, b)] * owners + (0 if owner is None else owner + 1)] = 1
    for k, exits in engine["towns"].items():
        base = hex_index[k] * hw + ho["town_exits"]
        for e, owner in exits:
            obs[base + e * owners + (0 if owner is None else owner + 1)] = 1
    ms = lay.space.move_space
    for k in engine["new_cities"]:
        obs[hex_index[k] * hw + ho["stop"] + 2] = 1
    ci = lay.colour_index
    for k, cubes in engine["cubes"].items():
        base = hex_index[k] * hw + ho["cubes"]
        for c in cubes:
            obs[base + ci[c]] += 1
    for k, c in (engine["variant"].get("windmills") or {}).items():
        if c is not None:
            obs[hex_index[k] * hw + ho["cubes"] + ci[c]] += 1
    if engine["build"] is not None:
        for k in engine["build"]["built"]:
            obs[hex_index[k] * hw + ho["built_this_turn"]] = 1
    o = off["display"][0]
    nc = len(lay.colours)
    for i, column in enumerate(lay.columns):
        for j, c in enumerate(engine["display"].get(column, ())):
            if c is not None:
                obs[o + (i * 3 + j) * nc + ci[c]] = 1
    o = off["bag"][0]
    for c, n in engine["bag"].items():
        obs[o + ci[c]] = n
    ai = lay.action_index
    for s, player in enumerate(engine["players"]):
        obs[off["cash"][0] + s] = player["cash"]
        obs[off["income"][0] + s] = player["income"]
        obs[off["shares"][0] + s] = player["shares"]
        obs[off["locomotive"][0] + s] = player["loco"]
        obs[off["eliminated"][0] + s] = player["eliminated"]
        if player["action"] is not None:
            obs[off["player_action"][0] + s * len(ai) + ai[player["action"]]] = 1
    for place, s in enumerate(engine["turn_order"]):
        obs[off["turn_order"][0] + s * p + place] = 1
    if 0 <= seat < p:
        obs[off["observer"][0] + seat] = 1
    active = game.active_seat(engine)
    if active is not None and state.pending is None:
        obs[off["active"][0] + active] = 1
    obs[off["round"][0]] = engine["round"]
    obs[off["last_round"][0]] = engine["last_round"]
    obs[off["phase"][0] + PHASES.index(engine["phase"])] = 1
    for a in engine["actions"]["locked"]:
        obs[off["locked_actions"][0] + ai[a]] = 1
    auction = engine["auction"]
    if auction is not None:
        obs[off["auction_high_bid"][0]] = auction["high_bid"]
        if auction["high_bidder"] is not None:
            obs[off["auction_high_bidder"][0] + auction["high_bidder"]] = 1
        for s in auction["in"]:
            obs[off["auction_in"][0] + s] = 1
        obs[off["pass_used"][0]] = auction["pass_used"]
    if engine["pass_holder"] is not None:
        obs[off["pass_holder"][0] + engine["pass_holder"]] = 1
    build = engine["build"]
    if build is not None:
        obs[off["build_tiles_left"][0]] = build["tiles_left"]
        obs[off["build_urbanized"][0]] = build["urbanized"]
    mg = engine["move_goods"]
    if mg is not None:
        obs[off["move_round"][0]] = mg["round"]
        for s, n in mg["used"].items():
            obs[off["move_used"][0] + int(s)] = n
        for s in mg["upgraded"]:
            obs[off["move_upgraded"][0] + s] = 1
    production = engine["production"]
    if production is not None:
        for c in production["drawn"]:
            obs[off["production_drawn"][0] + ci[c]] += 1
    if state.partial:
        cube = state.partial[0] - lay.space.first_cube
        source, colour = divmod(cube, nc)
        obs[off["delivery_colour"][0] + colour] = 1
        obs[off["delivery_steps"][0]] = len(state.partial) - 1
        obs[source * hw + ho["delivery_at"]] = 1
    obs[off["chance_node"][0]] = state.pending is not None
    _map_features(engine, lay, obs, ms)
    return obs


def _map_features(engine: dict, lay: Layout, obs: np.ndarray, ms) -> None:
    variant, off = engine["variant"], lay.offsets
    if "wall_disc_standing" in off:
        index = _disc_index(engine["map"])
        for disc in variant["wall"]:
            obs[off["wall_disc_standing"][0] + index[disc]] = 1
        obs[off["wall_fallen"][0]] = variant["fallen"]
        obs[off["wall_falls_round"][0]] = variant["wall_falls"]
    if "blocked_action" in off and variant.get("blocked"):
        obs[off["blocked_action"][0] + ("urbanization", "engineer").index(variant["blocked"])] = 1
    if "oil_drums" in off:
        for s, n in variant["drums"].items():
            obs[off["oil_drums"][0] + int(s)] = n
        obs[off["oil_aside"][0]] = variant["oil_aside"]
    if "double_disc" in off:
        if variant.get("double_disc"):
            obs[off["double_disc"][0] + lay.action_index[variant["double_disc"]]] = 1
        if variant.get("must_drop_out") is not None:
            obs[off["must_drop_out"][0] + variant["must_drop_out"]] = 1


@cache
def _static(map_id: str, players: int) -> np.ndarray:
    """What every observation of the map holds: its cities and towns (copied, never changed)."""
    lay = layout(map_id, players)
    base = np.zeros(lay.size, dtype=np.float32)
    for k, kind in _stop_kinds(map_id, players).items():
        base[lay.hex_index[k] * lay.hex_width + lay.hex_offsets["stop"] + kind] = 1
    base.flags.writeable = False
    return base


@cache
def _disc_index(map_id: str) -> dict[int, int]:
    """The map's wall discs by id -> their place in the observation (in id order)."""
    # The wall is Berlin's own feature (MapDetail's features take any map's).
    discs = cast(dict[str, Any], game.map_info(map_id)["features"])["wall"]
    return {d["id"]: i for i, d in enumerate(sorted(discs, key=lambda d: d["id"]))}


@cache
def _stop_kinds(map_id: str, players: int) -> dict[str, int]:
    """The map's cities (0) and towns (1) by hex key."""
    info = game.map_info(map_id)
    out = {}
    for kind, items in ((0, info["cities"]), (1, info["towns"])):
        for item in items:
            h = item["hex"]
            out[f"{h['q']},{h['r']}"] = kind
    return out


def describe(state, seat: int | None) -> str:
    """A compact, human-readable form of what a seat sees (public information only)."""
    engine = state.engine
    lines = [f"{engine['map']} round {engine['round']}/{engine['last_round']} {engine['phase']}"
             + (f" seat {game.active_seat(engine)} to act" if game.active_seat(engine) is not None else "")
             + (f" (observer {seat})" if seat is not None else "")]
    if state.pending is not None:
        lines.append(f"chance: {state.pending.draw.kind} after seat {state.pending.seat}'s "
                     f"{state.pending.move['type']}")
    if state.partial:
        lines.append("delivering: " + ", ".join(state.space.describe(a) for a in state.partial))
    for s, pl in enumerate(engine["players"]):
        lines.append(f"P{s} ${pl['cash']} inc {pl['income']} sh {pl['shares']} loco {pl['loco']}"
                     f" {pl['action'] or '-'}{' out' if pl['eliminated'] else ''}")
    lines.append("order " + " ".join(map(str, engine["turn_order"]))
                 + " | bag " + " ".join(f"{c[:2]}{n}" for c, n in engine["bag"].items()))
    lines.append("display " + " ".join(
        f"{col}:{''.join((c or '.')[0] for c in sq)}" for col, sq in engine["display"].items()))
    lines.append("cubes " + " ".join(f"{k}:{''.join(c[0] for c in v)}"
                                       for k, v in sorted(engine["cubes"].items()) if v))
    lines.append("track " + " ".join(
        f"{k}:" + "/".join(f"{a}{b}{'' if o is None else o}" for a, b, o in t)
        for k, t in sorted(engine["track"].items())))
    if engine["towns"]:
        lines.append("towns " + " ".join(
            f"{k}:" + "/".join(f"{e}{'' if o is None else o}" for e, o in t)
            for k, t in sorted(engine["towns"].items())))
    return "\n".join(lines)
