"""What clients see: the contract's game view, the map list and one map's geometry."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from service.engine import rules_data as R
from service.engine.contract_types import (
    AuctionView,
    BoardView,
    BoardViewTown,
    BuildView,
    CityView,
    HexTrack,
    Link,
    MapDetail,
    MapDetailFeatures,
    MapDetailHex,
    MapSummary,
    MapSummaryOption,
    PlayerView,
    RulesView,
)
from service.engine.hexgrid import as_dict, key, parse_key
from service.engine.layout import State
from service.engine.maps import MAP_IDS, load_map
from service.engine.places import places
from service.engine.state import active_players

if TYPE_CHECKING:
    from service.engine.variants.base import Rules


def game_view(state: State, rules: Rules) -> RulesView:
    players: list[PlayerView] = [
        {"seat": i, "name": p["name"], "cash": p["cash"], "income": p["income"],
         "shares": p["shares"], "locomotive": p["loco"], "action": p["action"],
         "eliminated": p["eliminated"]}
        for i, p in enumerate(state["players"])
    ]
    finished = state["phase"] == "finished"
    return {
        "map": state["map"],
        "status": "finished" if finished else "active",
        "round": state["round"],
        "last_round": state["last_round"],
        "phase": state["phase"],
        "active_seat": state["queue"][0] if state["queue"] else None,
        "players": players,
        "turn_order": active_players(state),
        "auction": _auction(state),
        "actions": {
            "available": [] if finished else rules.available_actions(state),
            "taken": dict(state["actions"]["taken"]),
            "locked": list(state["actions"]["locked"]),
        },
        "build": _build(state),
        "move_goods": ({"round": state["move_goods"]["round"],
                        "locomotive_upgraded": list(state["move_goods"]["upgraded"])}
                       if state["move_goods"] else None),
        "production": ({"seat": state["production"]["seat"],
                        "drawn": list(state["production"]["drawn"])}
                       if state["production"] else None),
        "goods_display": {c: list(v) for c, v in state["display"].items()},
        "bag": dict(state["bag"]),
        "board": board_view(state, rules),
        "scores": state["scores"],
        "seed_commitment": state["seed_commitment"],
        "reproducible": state["seed_given"],
        "options": dict(state["options"]),
    }


def _auction(state: State) -> AuctionView | None:
    a = state["auction"]
    if a is None:
        return None
    return {"high_bid": a["high_bid"], "high_bidder": a["high_bidder"], "in": list(a["in"]),
            "bids": dict(a["bids"]), "turn_order_pass_available": (
                a["pass_holder"] is not None and not a["pass_used"])}


def _build(state: State) -> BuildView | None:
    b = state["build"]
    if b is None:
        return None
    return {"seat": b["seat"], "tiles_left": b["tiles_left"], "urbanized": b["urbanized"]}


def board_view(state: State, rules: Rules) -> BoardView:
    board = rules.map
    tracks: list[HexTrack] = []
    for k in sorted(set(state["track"]) | set(state["towns"]), key=lambda k: parse_key(k)):
        entry: HexTrack = {"hex": as_dict(parse_key(k)),
                       "tracks": [{"edges": [a, b], "owner": o} for a, b, o in state["track"].get(k, [])]}
        if k in state["towns"]:
            entry["town_exits"] = [{"edge": e, "owner": o} for e, o in state["towns"][k]]
        tracks.append(entry)
    links: list[Link] = [
        {"id": link.link_id, "owner": link.owner, "stops": [as_dict(h) for h in link.stops],
         "hexes": [as_dict(h) for h in link.hexes()], "segments": len(link.pieces)}
        for link in rules.network(state).links()
    ]
    cities: list[CityView] = []
    for h, city in sorted(board.cities.items()):
        cities.append({"hex": as_dict(h), "name": city.name, "colors": list(city.colors),
                       "goods": list(state["cubes"].get(key(h), [])), "new_city": None})
    for k, letter in sorted(state["new_cities"].items()):
        h = parse_key(k)
        cities.append({"hex": as_dict(h), "name": board.towns[h],
                       "colors": [board.new_city_tiles[letter].color],
                       "goods": list(state["cubes"].get(k, [])), "new_city": letter})
    towns: list[BoardViewTown] = [{"hex": as_dict(h), "name": name} for h, name in sorted(board.towns.items())
             if key(h) not in state["new_cities"]]
    view: BoardView = {"tracks": tracks, "links": links, "cities": cities, "towns": towns}
    # The map's own features (Berlin's walls, Iraq's oil...) beside them: BoardView's
    # additionalProperties, which a TypedDict does not declare.
    cast(dict, view).update(rules.board_features(state))
    return view


def maps() -> list[MapSummary]:
    from service.engine.variants import rules_for

    out: list[MapSummary] = []
    for map_id in MAP_IDS:
        board = load_map(map_id)
        rules = rules_for(map_id) if _has_variant(map_id) else None
        out.append({
            "id": map_id,
            "name": board.name,
            "players": {"min": board.min_players, "max": board.max_players},
            "rounds_by_players": {str(k): v for k, v in (
                board.rounds_by_players or R.ROUNDS_BY_PLAYERS).items()
                if board.min_players <= k <= board.max_players},
            "options": _options(rules),
            "reconstructed": board.source_kind == "reconstructed",
            "playable": rules is not None,
        })
    return out


def _has_variant(map_id: str) -> bool:
    from service.engine.variants.registry import VARIANTS

    return map_id in VARIANTS


def _options(rules: Rules | None) -> list[MapSummaryOption]:
    if rules is None:
        return []
    return [{"name": name, "type": kind.__name__, "default": default}
            for name, (kind, default) in rules.options_schema().items()]


def map_info(map_id: str) -> MapDetail:
    board = load_map(map_id)
    summary = next(m for m in maps() if m["id"] == map_id)
    label = places(map_id).label
    hexes: list[MapDetailHex] = []
    for h, terrain in sorted(board.terrain.items()):
        raw = board.raw_hexes[h]
        entry: MapDetailHex = {"q": h[0], "r": h[1], "terrain": terrain,
                 "x": raw["board_x"], "y": raw["board_y"]}
        if h in board.towns:
            entry["town"] = board.towns[h]
        if h in board.cities:
            entry["city"] = board.cities[h].name
        # What a map's data may say of a hex besides its terrain (MapDetail.hexes), in this order.
        if "side" in raw:
            entry["side"] = raw["side"]
        if "windmill" in raw:
            entry["windmill"] = raw["windmill"]
        if "oil_field" in raw:
            entry["oil_field"] = raw["oil_field"]
        if "flag_link" in raw:
            entry["flag_link"] = raw["flag_link"]
        if "label" in raw:
            entry["label"] = raw["label"]
        entry["place"] = label[h]
        hexes.append(entry)
    return {
        **summary,
        "source": board.source_kind,
        "rotation": board.rotation,
        "hexes": hexes,
        "cities": [{"hex": as_dict(h), "name": c.name, "colors": list(c.colors),
                    "columns": list(c.columns), "starting_cubes": c.starting_cubes}
                   for h, c in sorted(board.cities.items())],
        "towns": [{"hex": as_dict(h), "name": n} for h, n in sorted(board.towns.items())],
        "new_city_tiles": [{"letter": t.letter, "color": t.color, "column_under": t.column_under,
                            "removed": t.letter in board.removed_new_cities}
                           for t in sorted(board.new_city_tiles.values(), key=lambda t: t.letter)],
        "terrain_costs": {k: v for k, v in board.terrain_costs.items()},
        "features": _features(map_id),
    }


def _features(map_id: str) -> MapDetailFeatures:
    from service.engine.variants import rules_for

    # A map's own features beside `actions`: MapDetail's additionalProperties.
    return cast(MapDetailFeatures, rules_for(map_id).map_features() if _has_variant(map_id) else {})

