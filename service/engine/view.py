"""What clients see: the contract's game view, the map list and one map's geometry."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from contextlib import suppress
from typing import TYPE_CHECKING, cast

import orjson

from service.engine import rules_data as R
from service.engine.contract_types import (
    AuctionView,
    BoardView,
    BuildView,
    MapDetail,
    MapDetailFeatures,
    MapDetailHex,
    MapSummary,
    MapSummaryOption,
    PlayerView,
    RulesView,
)
from service.engine.hexgrid import Hex, as_dict, key, parse_key
from service.engine.layout import State
from service.engine.maps import MAP_IDS, MapData, load_map
from service.engine.network import Network, Route
from service.engine.places import places
from service.engine.state import active_players

if TYPE_CHECKING:
    from service.engine.variants.base import Rules


def game_view(state: State, rules: Rules) -> RulesView:
    """The game view: its JSON (game_view_to_write) read back, so it shares nothing with the
    state."""
    return cast(RulesView, orjson.loads(orjson.dumps(game_view_to_write(state, rules))))


def game_view_to_write(state: State, rules: Rules) -> RulesView:
    """The game view for orjson to write (the stored view): it holds the state's own lists and
    dicts, which orjson only reads, and its board is JSON already (an orjson.Fragment of
    board_json), which orjson writes as it is."""
    return _game_view(state, rules, cast(BoardView, orjson.Fragment(board_json(state, rules))))


def _game_view(state: State, rules: Rules, board: BoardView) -> RulesView:
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
            "taken": state["actions"]["taken"],
            "locked": state["actions"]["locked"],
        },
        "build": _build(state),
        "move_goods": ({"round": state["move_goods"]["round"],
                        "locomotive_upgraded": state["move_goods"]["upgraded"]}
                       if state["move_goods"] else None),
        "production": ({"seat": state["production"]["seat"],
                        "drawn": state["production"]["drawn"]}
                       if state["production"] else None),
        "goods_display": state["display"],
        "bag": state["bag"],
        "board": board,
        "scores": state["scores"],
        "seed_commitment": state["seed_commitment"],
        "reproducible": state["seed_given"],
        "options": state["options"],
    }


def _auction(state: State) -> AuctionView | None:
    a = state["auction"]
    if a is None:
        return None
    return {"high_bid": a["high_bid"], "high_bidder": a["high_bidder"], "in": a["in"],
            "bids": a["bids"], "turn_order_pass_available": (
                a["pass_holder"] is not None and not a["pass_used"])}


def _build(state: State) -> BuildView | None:
    b = state["build"]
    if b is None:
        return None
    return {"seat": b["seat"], "tiles_left": b["tiles_left"], "urbanized": b["urbanized"]}


def board_json(state: State, rules: Rules) -> bytes:
    """The board's JSON: the track on each hex in (q, r) order, the complete links, the cities
    (the map's, then the new ones) with their goods, the towns, and the map's own features
    (Berlin's walls, Iraq's oil...: BoardView's additionalProperties). Joined from pieces made
    once per map (_BoardJson); the tracks and links, the dearest part, are kept per track, which
    most moves leave as it was."""
    board = _board_json(rules.map)
    features = rules.board_features(state)
    return b"".join((b'{"tracks":', board.tracks_and_links(state, rules), b',"cities":[',
                     board.cities_and_towns(state),
                     b"]," + orjson.dumps(features)[1:] if features else b"]}"))


_NO_NEW_CITY = b',"new_city":null}'


class _BoardJson:
    """One map's pieces of the board's JSON, made from the map data alone (so kept for good):
    each city up to its goods, each town whole, and each town as each new city it may become up
    to its goods and after them. Keeps the last few tracks and links made too, and the last few
    cities and towns (by what they are made of: most moves change neither)."""

    KEPT = 256  # of each: a few per game a worker serves at once
    # The last network traced of each of this many games, with its JSON, to make the game's
    # next from. A game's own last board is the one to start from: another game's differs on
    # most hexes, and made from it a board cost a sixth more than made again (three games'
    # boards made in turn, 6.3 ms against 5.4, where each made from its own took 4.6).
    KEPT_TRACED = 64
    FEW_CHANGED = 8  # hexes: a board that differs on more is traced all again

    def __init__(self, board: MapData) -> None:
        self.board = board
        self.cities = [(key(h), _head({"hex": as_dict(h), "name": city.name, "colors": list(city.colors)}))
                       for h, city in sorted(board.cities.items())]
        self.towns = [(key(h), orjson.dumps({"hex": as_dict(h), "name": name}))
                      for h, name in sorted(board.towns.items())]
        self.new_city_heads = {
            (key(h), t.letter): _head({"hex": as_dict(h), "name": name, "colors": [t.color]})
            for h, name in board.towns.items() for t in board.new_city_tiles.values()}
        self.new_city_tails = {t.letter: b',"new_city":' + orjson.dumps(t.letter) + b"}"
                               for t in board.new_city_tiles.values()}
        # Each hex's JSON, and its place in (q, r) order by its state key.
        self.hexes = {h: orjson.dumps(as_dict(h)).decode() for h in board.terrain}
        self.order = {key(h): i for i, h in enumerate(sorted(board.terrain))}
        self.keyed = {key(h): text for h, text in self.hexes.items()}
        self.kept_tracks = _Kept(self.KEPT)
        # By the game's seed: nothing in a state names its game, and two games of one seed
        # share a base only as long as they agree (what differs is traced again either way).
        self.traced: OrderedDict[object, tuple[_MadeOf, _Traced]] = OrderedDict()
        self.kept_cities = _Kept(self.KEPT)

    def tracks_and_links(self, state: State, rules: Rules) -> bytes:
        """`[tracks],"links":[links]` of the board's JSON, kept by what they are made of: the
        track and town exits with their owners, the new cities and the map's trackless stops
        (all that Network reads of a state)."""
        made_of = (orjson.dumps((state["track"], state["towns"], state["new_cities"])),
                   rules.trackless_stops(state))
        return self.kept_tracks.made(made_of, lambda: self._tracks_and_links(state, rules, made_of))

    def _tracks_and_links(self, state: State, rules: Rules, made_of: _MadeOf) -> bytes:
        """Made from the game's last tracks made when their stops are these (most often its
        board before this move, whose track differs on a hex or two): the routes traced again
        only where they read the hexes whose track differs (Network.routes_from), and the JSON
        of each hex and link that is as it was kept."""
        game = state.get("seed")
        last = self.traced.get(game)
        made = None
        if last is not None and last[0][1] == made_of[1] and last[1].net.one_route_each():
            track, towns, new_cities = orjson.loads(last[0][0])
            if new_cities == state["new_cities"]:
                changed = _changed(track, state["track"]) | _changed(towns, state["towns"])
                if len(changed) <= self.FEW_CHANGED:
                    made = last[1].after(state, changed)
        if made is None:
            made = _Traced(rules.network(state))
        text = f'[{self.tracks(state, made)}],"links":[{self.links(state, rules, made)}]'.encode()
        self.traced[game] = (made_of, made)
        with suppress(KeyError):  # another thread took it out meanwhile
            self.traced.move_to_end(game)
        if len(self.traced) > self.KEPT_TRACED:
            with suppress(KeyError):  # another thread took the oldest out
                self.traced.popitem(last=False)
        return text

    def cities_and_towns(self, state: State) -> bytes:
        """`cities],"towns":[towns` of the board's JSON: the cities with their goods and the
        towns not made new cities, kept by the goods and the new cities."""
        made_of = orjson.dumps((state["cubes"], state["new_cities"]))
        return self.kept_cities.made(made_of, lambda: self._cities_and_towns(state))

    def _cities_and_towns(self, state: State) -> bytes:
        new_cities, cubes = state["new_cities"], state["cubes"]
        cities = [b"".join((head, orjson.dumps(cubes.get(k, ())), _NO_NEW_CITY)) for k, head in self.cities]
        cities += [b"".join((self.new_city_heads[k, letter], orjson.dumps(cubes.get(k, ())),
                             self.new_city_tails[letter]))
                   for k, letter in sorted(new_cities.items())]
        towns = [town for k, town in self.towns if k not in new_cities]
        return b",".join(cities) + b'],"towns":[' + b",".join(towns)

    def tracks(self, state: State, made: _Traced | None = None) -> str:
        """The board's tracks in JSON, the entries without the brackets around them; the
        entries of the hexes `made` keeps (those as they were) taken from it, and the others
        kept in it."""
        track, towns = state["track"], state["towns"]
        kept = {} if made is None else made.entries
        keys = track.keys() | towns.keys()
        try:
            ordered = sorted(keys, key=self.order.__getitem__)
        except KeyError:  # track off the map: no map data says so, but the view shows it
            ordered = sorted(keys, key=parse_key)
        entries = []
        for k in ordered:
            entry = kept.get(k)
            if entry is None:
                pieces = ",".join([f'{{"edges":[{a},{b}],"owner":{"null" if o is None else o}}}'
                                   for a, b, o in track.get(k, ())])
                at = self.keyed.get(k) or self.hex_text(parse_key(k))
                entry = f'{{"hex":{at},"tracks":[{pieces}]'
                if k in towns:
                    exits = ",".join([f'{{"edge":{e},"owner":{"null" if o is None else o}}}'
                                      for e, o in towns[k]])
                    entry += f',"town_exits":[{exits}]'
                entry = kept[k] = entry + "}"
            entries.append(entry)
        return ",".join(entries)

    def links(self, state: State, rules: Rules, made: _Traced | None = None) -> str:
        """The board's complete links in JSON, without the brackets around them; the JSON of
        the routes `made` keeps taken from it, and the others kept in it."""
        made = _Traced(rules.network(state)) if made is None else made
        texts, text = made.texts, self.hex_text
        out = []
        for link in made.routes():
            if link.complete:
                entry = texts.get(id(link))
                if entry is None:
                    entry = texts[id(link)] = (
                        f'{{"id":"{link.link_id}","owner":{"null" if link.owner is None else link.owner},'
                        f'"stops":[{text(link.stops[0])},{text(link.stops[1])}],'
                        f'"hexes":[{",".join([text(h) for h in link.hexes()])}],'
                        f'"segments":{len(link.pieces)}}}')
                out.append(entry)
        return ",".join(out)

    def hex_text(self, h: Hex) -> str:
        text = self.hexes.get(h)
        return f'{{"q":{h[0]},"r":{h[1]}}}' if text is None else text


_MadeOf = tuple[bytes, frozenset[Hex]]


class _Traced:
    """A network with its routes, and the JSON made of its hexes' track (by state key) and of
    its links (by the id of the route, which the network keeps alive)."""

    def __init__(self, net: Network, routes: list[Route] | None = None,
                 entries: dict[str, str] | None = None, texts: dict[int, str] | None = None) -> None:
        self.net = net
        self._routes = routes
        self.entries = {} if entries is None else entries
        self.texts = {} if texts is None else texts

    def routes(self) -> list[Route]:
        if self._routes is None:
            self._routes = self.net.routes()
        return self._routes

    def after(self, state: State, changed: set[str]) -> _Traced | None:
        """The same for `state`, whose stops are this network's and whose track differs from
        its only on the hexes of these keys: the network changed there (Network.changed_on),
        the routes that read none of them, and the JSON of the rest, kept. None when the
        network may hold a piece on two routes (Network.one_route_each)."""
        hexes = {parse_key(k) for k in changed}
        net = self.net.changed_on(state, hexes)
        if not net.one_route_each():
            return None
        routes = net.routes_from(self.net, hexes)
        kept = {id(r) for r in routes}
        return _Traced(net, routes, {k: e for k, e in self.entries.items() if k not in changed},
                       {i: t for i, t in self.texts.items() if i in kept})


class _Kept:
    """The JSON texts of the last few things made, by what each is made of (hashable); the
    oldest goes first when it is full."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.texts: OrderedDict[Hashable, bytes] = OrderedDict()

    def made(self, made_of: Hashable, make: Callable[[], bytes]) -> bytes:
        text = self.texts.get(made_of)
        if text is None:
            text = make()
            if len(self.texts) >= self.size:
                with suppress(KeyError):  # another thread took the last one out
                    self.texts.popitem(last=False)  # one call: safe beside other threads
            self.texts[made_of] = text
        return text


def _changed(before: dict[str, list], after: dict[str, list]) -> set[str]:
    """The keys of the hexes whose entries differ between two of the state's dicts of track by
    hex."""
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


def _head(entry: dict) -> bytes:
    """The JSON of a city entry up to its goods."""
    return orjson.dumps(entry)[:-1] + b',"goods":'


_BOARDS: dict[str, _BoardJson] = {}


def _board_json(board: MapData) -> _BoardJson:
    made = _BOARDS.get(board.id)
    if made is None or made.board is not board:  # made again for another MapData of the map
        made = _BOARDS[board.id] = _BoardJson(board)
    return made


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

