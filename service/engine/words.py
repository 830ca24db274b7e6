"""Moves and events in words: one short English sentence each, naming seats by their players'
names and hexes as players do (places.py), never by coordinates.

    "Ann builds a curve northwest of Pittsburgh for $3"
    "Cat delivers red from Chicago to Detroit over 3 links: +2 income for Cat, +1 for Ann"

Pure: a sentence depends on the move or event, the players' names and the map data, and, for a
move not made yet (a listed move), on the state it would be made on (the track already on a
hex, where each link leads). `with_texts` words a whole listing at once, working out what every
move of it shares once; `listing` is legal_moves with its words, the listing of a build turn
worded as it is made (the answer of GET legal-moves).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from functools import cache, lru_cache
from typing import Any, cast

import orjson

from service.engine import game
from service.engine.hexgrid import Hex, key
from service.engine.layout import Event, GivenMove, State
from service.engine.maps import load_map
from service.engine.once import once_per
from service.engine.phases import build
from service.engine.phases.build_shapes import TownListing, TrackListing
from service.engine.places import Places, places
from service.engine.tiles import Track, track_shape
from service.engine.variants import rules_for

# What a player calls each tile (tiles.json ids) when it is built.
TILE_NAMES = {
    "straight": "a straight",
    "gentle": "a curve",
    "tight": "a tight curve",
    "x": "an X crossing",
    "bow_and_arrow": "a bow-and-arrow crossing",
    "crossing_curves": "two crossing curves",
    "straight_tight": "a straight and a tight curve",
    "coexisting_curves": "two curves",
    "curve_tight_1": "a curve and a tight curve",
    "curve_tight_2": "a curve and a tight curve",
}
# A track piece by how far apart its two edges are (1: neighbouring edges).
PIECE_NAMES = {1: "a tight curve", 2: "a curve", 3: "a straight"}


def _hex(d: Mapping) -> Hex:
    return (d["q"], d["r"])


def and_list(items: Iterable[str]) -> str:
    """"a", "a and b", "a, b and c"."""
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def action_name(action: object) -> str:
    """An action id as the rules name it: "first_build" -> "First Build"."""
    return " ".join(w.capitalize() for w in str(action).split("_"))


def column_name(column: object) -> str:
    """A goods-display column as players say it: "light 2", "dark 5", "new city D"."""
    side, _, number = str(column).partition("-")
    return f"{side} {number}" if number else f"new city {column}"


def money(amount: int) -> str:
    return f"-${-amount}" if amount < 0 else f"${amount}"


def signed(amount: int) -> str:
    return f"+{amount}" if amount >= 0 else f"\u2212{-amount}"


class Teller:
    """The words of one game: its players' names and its map's places."""

    def __init__(self, map_id: str, names: Sequence[str]) -> None:
        self.map_id = map_id
        self.names = tuple(names)
        self.places: Places = places(map_id)

    @classmethod
    def of(cls, state: State) -> Teller:
        return _teller(state["map"], tuple([p["name"] for p in state["players"]]))

    def who(self, seat: object) -> str:
        if isinstance(seat, int) and 0 <= seat < len(self.names):
            return self.names[seat]
        return f"seat {seat}"

    def seats(self, amounts: Mapping[str, int], mover: int | None = None) -> list[tuple[int, int]]:
        """(seat, amount) of a {"seat": amount} object, the mover first, then by seat."""
        pairs = sorted(((int(s), a) for s, a in amounts.items()), key=lambda p: (p[0] != mover, p[0]))
        return pairs

    def where(self, h: Mapping | Hex) -> str:
        return self.places.where(h if isinstance(h, tuple) else _hex(h))

    def place(self, h: Mapping | Hex) -> str:
        return self.places.name(h if isinstance(h, tuple) else _hex(h))

    def heading(self, edges: Iterable[int]) -> str:
        return and_list(self.places.edge_direction[e] for e in sorted(edges))

    # -- the pieces of sentences ----------------------------------------------------------

    def delivery(self, seat: int, start: Mapping, colour: str, to: Mapping | Hex | None, links: int,
                 income: Mapping[str, int]) -> str:
        who = self.who(seat)
        route = f"from {self.place(start)}" + (f" to {self.place(to)}" if to is not None else "")
        over = f"over {links} link" + ("s" if links != 1 else "")
        gains = [f"+{amount} income for {self.who(s)}" if i == 0 else f"+{amount} for {self.who(s)}"
                 for i, (s, amount) in enumerate(self.seats(income, seat))]
        earned = ", ".join(gains) if gains else "no income for anyone"
        return f"{who} delivers {colour} {route} {over}: {earned}"

    def build(self, seat: int, h: Mapping, tile: str | None, kind: str, cost: int | None,
              tracks: Sequence[Sequence[int]] | None, town_exits: Sequence[int] | None,
              added: Sequence | None = None) -> str:
        """A build: `kind` new, upgrade or redirect; `added` the new pieces when known (track
        pairs, or town exits), for an upgrade's words."""
        who, where = self.who(seat), self.where(h)
        price = f" for {money(cost)}" if cost is not None else ""
        if town_exits is not None:
            town = self.place(h)
            if kind == "new":
                return f"{who} builds track out of {town} heading {self.heading(town_exits)}{price}"
            if kind == "upgrade" and added:
                return f"{who} adds track out of {town} heading {self.heading(added)}{price}"
            return f"{who} rebuilds the track out of {town} to head {self.heading(town_exits)}{price}"
        shape = TILE_NAMES.get(tile or "")
        if kind == "new":
            return f"{who} builds {shape or 'track'} {where}{price}"
        if kind == "upgrade" and added:
            pieces = and_list(PIECE_NAMES.get(min((b - a) % 6, (a - b) % 6), "track") for a, b in added)
            made = f", making {shape}" + ("," if price else "") if shape else ""
            return f"{who} adds {pieces} to the track {where}{made}{price}"
        if kind == "redirect":
            return f"{who} redirects the track {where} into {shape or 'new track'}{price}"
        return f"{who} upgrades the track {where} to {shape or 'new track'}{price}"

    def placements(self, placements: Sequence[Mapping]) -> str:
        return and_list(f"{p.get('color')} on {column_name(p.get('column'))}" for p in placements)

    # -- events ---------------------------------------------------------------------------

    def event(self, e: Mapping) -> str:
        """The sentence of one event, engine's or the service's own (undo and takeback)."""
        teller = EVENTS.get(str(e.get("type")))
        if teller is not None:
            return teller(self, e)
        who = f"{self.who(e['seat'])}: " if "seat" in e else ""
        return who + str(e.get("type", "something happens")).replace("_", " ")

    def events(self, events: Iterable[Event]) -> None:
        """Gives every event its `text`, in place."""
        for e in events:
            if "text" not in e:
                e["text"] = self.event(e)

    # -- moves ----------------------------------------------------------------------------

    def entry(self, seat: int, move: Mapping, events: Sequence[Mapping]) -> str:
        """The sentence of a history entry: the move as made, told by its own event when it has
        one (which knows the cost, the destination, what an upgrade added)."""
        kind = move.get("type")
        own = OWN_EVENT.get(str(kind))
        for e in events:
            if own is not None and e.get("type") == own and e.get("seat", seat) == seat:
                return self.event(e)
        return self.move(seat, move)

    def tell(self, seat: int, move: Mapping, events: list[Event]) -> str:
        """events(events), then entry(seat, move, events), telling the move's own event once:
        the entry's sentence is the text that event was just given."""
        own = OWN_EVENT.get(str(move.get("type")))
        sentence = None
        for e in events:
            told = "text" not in e
            if told:
                e["text"] = self.event(e)
            if sentence is None and own is not None and e.get("type") == own and e.get("seat", seat) == seat:
                sentence = e["text"] if told else self.event(e)
        return self.move(seat, move) if sentence is None else sentence

    def move(self, seat: int, move: Mapping, state: State | None = None) -> str:
        """The sentence of a move before it is made (a listed move): the state, when given,
        says what is on the hex built on and where a delivery's links lead."""
        kind = str(move.get("type"))
        who = self.who(seat)
        teller = MOVES.get(kind)
        if teller is not None:
            return teller(self, seat, move, state)
        if kind == "build":
            return self._build_move(seat, move, state)
        if kind == "deliver":
            return self.delivery(seat, move.get("from") or {}, str(move.get("color")),
                                 _follow(_link_stops(state), move) if state is not None else None,
                                 len(move.get("links") or []), move.get("income") or {})
        return f"{who} {kind.replace('_', ' ')}s"

    def _build_move(self, seat: int, move: Mapping, state: State | None) -> str:
        h = move.get("hex") or {}
        k = key(_hex(h)) if h else ""
        if "town_exits" in move:
            had = {e for e, _ in state["towns"].get(k, [])} if state is not None else set()
            exits = move["town_exits"]
            kind = "upgrade" if had else "new"
            return self.build(seat, h, None, kind, move.get("cost"), None, exits,
                              [e for e in exits if e not in had])
        tracks = [tuple(sorted(t)) for t in move.get("tracks") or []]
        had_tracks = {(a, b) for a, b, _ in state["track"].get(k, [])} if state is not None else set()
        tile = _tile(tracks)
        if not had_tracks:
            return self.build(seat, h, tile, "new", move.get("cost"), tracks, None)
        if had_tracks <= set(tracks):
            return self.build(seat, h, tile, "upgrade", move.get("cost"), tracks, None,
                              [t for t in tracks if t not in had_tracks])
        return self.build(seat, h, tile, "redirect", move.get("cost"), tracks, None)


@lru_cache(maxsize=1 << 10)
def _teller(map_id: str, names: tuple[str, ...]) -> Teller:
    """A game's Teller, kept (every log entry asks for one): it holds nothing but its key."""
    return Teller(map_id, names)


def _tile(tracks: Sequence[tuple[int, ...]]) -> str | None:
    shape = track_shape(frozenset((t[0], t[1]) for t in tracks))
    return shape.tile if shape is not None else None


def _link_stops(state: State) -> dict[str, tuple[Hex, Hex]]:
    return {link.link_id: link.stops for link in rules_for(state["map"]).network(state).links()}


def with_texts(state: State, seat: int, moves: Sequence[GivenMove]) -> list[dict[str, Any]]:
    """The listing `moves` of `seat`, each with its `text` (new dicts; the listing is not
    changed). What the moves share is worked out once: the network for the deliveries, and for
    the hundreds of builds of a build turn, each hex's words (where it is, what is on it) and
    each set of exits' heading; a build on an empty hex (most of them) is then one lookup of
    its shape's name. The sentences are Teller.move's, word for word."""
    if not moves:
        return []
    texts = _texts(Teller.of(state), state, seat, moves)
    return [{**move, "text": text} for move, text in zip(moves, texts, strict=True)]


def _texts(teller: Teller, state: State, seat: int, moves: Sequence[GivenMove]) -> list[str]:
    """The text of each of `moves`, a listing of `seat` (with_texts)."""
    who = teller.who(seat)
    stops: dict[str, tuple[Hex, Hex]] | None = None
    # Made at the first build: a build turn's listing words its builds apart (ListedBuilds),
    # and leaves here only its other moves (end_build, the map's own).
    builds: _BuildWords | None = None
    named = teller.places.named
    colours = _new_city_colours(teller.map_id)
    out = []
    for move in moves:
        kind = move["type"]
        if kind == "build" and "cost" in move:
            if builds is None:
                builds = _BuildWords(teller, who, state)
            text = builds.text(move)
            if text is not None:
                out.append(text)
                continue
        if kind == "urbanize":
            h, letter = move["hex"], move["new_city"]
            town = named.get((h["q"], h["r"])) or teller.place(h)
            text = f"{who} urbanizes {town} into {colours.get(letter, '')}new city {letter}"
        elif kind == "deliver":
            if stops is None:
                stops = _link_stops(state)
            text = teller.delivery(seat, move["from"], move["color"], _follow(stops, move),
                                   len(move["links"]), move.get("income") or {})
        else:
            text = teller.move(seat, move, state)
        out.append(text)
    return out


@cache
def _new_city_colours(map_id: str) -> dict[str, str]:
    """Each new city's letter and its colour as an urbanize move names it, per map."""
    return {t.letter: f"{t.color} " for t in load_map(map_id).new_city_tiles.values()}


def listing(state: State, seat: int) -> list[Any]:
    """with_texts(state, seat, game.legal_moves(state, seat)), to be serialized (orjson) into the
    same JSON, worked out in one go: in a build turn the builds (hundreds of them) are worded
    and written as the listing makes them, from what it knows there (the hex, what it holds,
    each shape of the surrounding), all of them one JSON text already (an orjson.Fragment in
    the list where they come: no dict per move, nothing left for orjson to do), a hex's kept
    per situation (ListedBuilds). The other moves are dicts, worded as with_texts words them."""
    if state["phase"] != "build" or game.active_seat(state) != seat:
        return with_texts(state, seat, game.legal_moves(state, seat))
    return build.legal(state, rules_for(state["map"]), seat, ListedBuilds(state, seat))


def listing_json(state: State, seat: int, fields: Mapping[str, Any]) -> bytes:
    """orjson.dumps({**fields, "moves": listing(state, seat)}), byte for byte. A build turn's is
    joined from the JSON texts its listing makes (ListedText) and the builder's name put in once
    over the whole: its builds' texts, some 40 KB, are never copied whole into another buffer
    (orjson's of a Fragment, bytes.replace's of the joined builds, one of the other around
    them): a copy that size is one memcpy, some 35 k instructions a cold listing."""
    if state["phase"] != "build" or game.active_seat(state) != seat:
        return orjson.dumps({**fields, "moves": listing(state, seat)})
    words = ListedText(state, seat)
    # Any: besides its dicts, the listing holds _Texts (build.legal's Move is its dicts' type).
    moves: list[Any] = build.legal(state, rules_for(state["map"]), seat, words)
    texts: list[bytes] = []
    for move in moves:
        if isinstance(move, _Texts):
            texts.extend(move.texts)
        else:
            texts.append(orjson.dumps(move))
    head = orjson.dumps(fields)[:-1] + (b',"moves":[' if fields else b'"moves":[')
    if not texts:
        return head + b"]}"
    # The head and the tail on the first and last texts (a few hundred bytes each), not
    # around the joined whole. No JSON text holds WHO as it is: replacing over everything
    # changes the builds' alone.
    texts[0] = head + texts[0]
    texts[-1] += b"]}"
    return b",".join(texts).replace(WHO_BYTES, words.who)


def _in_json(text: str) -> str:
    """`text` as a JSON string holds it, quotes left off, escaped as orjson escapes: each
    character on its own, so the escaped pieces of a text join into the escaped text."""
    return orjson.dumps(text).decode()[1:-1]


# The JSON of each shape of a listing of build_shapes, in three pieces around where the hex is
# and the price (ListedBuilds): they depend on the listing alone (kept per surrounding), and a
# town's on the map's compass too. Kept per listing while it is; the bound only guards memory.
Phrases = tuple[tuple[str, str, str], ...]
_TRACK_PHRASES: dict[int, tuple[TrackListing, Phrases]] = {}
_TOWN_PHRASES: dict[tuple[int, tuple[str, ...]], tuple[TownListing, Phrases]] = {}
_PHRASES_KEPT = 1 << 15


# Where the builder's name goes in the kept JSON of builds (ListedBuilds): a character that
# JSON text never holds as it is (orjson escapes every control character), so the kept texts
# serve every player, and one replace over a listing's builds names the builder.
WHO = "\x00"
WHO_BYTES = WHO.encode()
# The builds kept per map and context (ListedBuilds.kept: the tiles left, and what else a
# listing shares), in the order the contexts were last asked for: a worker's warm-up (four
# games a map) keeps some 26,000 situations of hexes in 366 contexts, 8,900 of them made, 9 MB
# (a situation made about 1.1 KB, its JSON texts, some twice for the loop checks; one met
# again in another context, as the empty hexes' per budget are, a reference; the listings and
# geometry are build_shapes'). At the bound (at most 36 MB, were every situation made apart),
# the contexts least recently asked for go until half of it is left (_make_room): a worker
# busy with many games keeps those it plays, and those its warm-up made that they share,
# rather than starting every game over cold.
_BUILDS_KEPT = 1 << 15
_KEPT_BUILDS: dict[tuple[int, tuple], tuple[Places, dict[Any, build.HexBuilds]]] = {}
# The pieces of a build's JSON that its cost makes (ListedBuilds._price), on an empty hex and
# on one with track: from the cost to the builder's name, and the price to the end.
_PRICED: tuple[dict[int, tuple[str, str]], dict[int, tuple[str, str]]] = ({}, {})
_AFTER_COST = f',"text":"{WHO}'


class ListedBuilds:
    """The builds of a listing as the answer writes them, made as the listing makes them
    (build.BuildWords). A build's JSON is with_texts' move serialized,

        {"type":"build","hex":{"q":Q,"r":R},"tracks":[[A,B]],"cost":C,"text":"TEXT"}

    (town_exits for a town), TEXT the sentence "{who}{a}{where}{b}{price}" of with_texts with
    (a, b) per shape (_track_phrase, _town_phrase). It is joined from pieces kept as far out as
    they are shared: per hex its head (up to the tracks) and where it is; per shape of the
    surrounding's listing its tracks to `"cost":`, a and b; per price the cost to who and the
    price to the end. Every piece is escaped on its own (_in_json). The builder's name is WHO
    in all of them, so that a hex's builds, once made, are kept for every listing of the map
    (`kept`), and put in once the listing's builds are joined (`joined`). The turn's other
    moves (urbanize, the map's own, end_build) stay dicts and get their texts as with_texts's."""

    def __init__(self, state: State, seat: int) -> None:
        self.state, self.seat = state, seat
        self.teller = teller = Teller.of(state)
        self.places = teller.places
        self.hexes = _hex_pieces(teller.places)
        self.who = _in_json(teller.who(seat)).encode()

    def kept(self, *context: object) -> dict[Any, build.HexBuilds]:
        at = self.places
        known = _KEPT_BUILDS.pop((id(at), context), None)
        if known is None or known[0] is not at:
            _make_room()
            known = (at, {})
        _KEPT_BUILDS[(id(at), context)] = known  # the last: the most recently asked for
        return known[1]

    def track_words(self, h: Hex, old_tracks: frozenset[Track], listing: TrackListing,
                    costs: Sequence[int | None]) -> build.HexWords:
        known = _TRACK_PHRASES.get(id(listing))
        phrases = known[1] if known is not None and known[0] is listing else _track_phrases(
            listing, old_tracks)
        had = bool(old_tracks)
        priced = _PRICED[had]
        prices = [None if c is None else priced.get(c) or _price(c, had) for c in costs]
        head, _, where, _ = self.hexes.get(h) or self._pieces(h)
        return head, where, phrases, prices

    def town_words(self, h: Hex, old_exits: frozenset[int], listing: TownListing,
                   extra: int) -> build.HexWords:
        compass = self.places.edge_direction
        known = _TOWN_PHRASES.get((id(listing), compass))
        phrases = known[1] if known is not None and known[0] is listing else _town_phrases(
            listing, old_exits, compass)
        priced = _PRICED[True]
        prices = [priced.get(base + extra) or _price(base + extra, True)
                  for _, _, base, _, _ in listing.shapes]
        _, head, _, town = self.hexes.get(h) or self._pieces(h)
        return head, town, phrases, prices

    def joined(self, texts: list[bytes]) -> Any:
        # orjson's stub types a Fragment as a tuple; it is made of JSON text.
        # bytes (the kept texts are encoded once, as they are made): replacing in them is
        # several times quicker than in a str.
        return cast(Any, orjson.Fragment(b",".join(texts).replace(WHO_BYTES, self.who)))

    def word(self, moves: list[Any]) -> None:
        for move, text in zip(moves, _texts(self.teller, self.state, self.seat, moves),
                              strict=True):
            move["text"] = text

    def urbanizing(self, letters: tuple[str, ...], towns: tuple[Hex, ...]) -> Any:
        return cast(Any, orjson.Fragment(
            self._urbanize_text(letters, towns).replace(WHO_BYTES, self.who)))

    def _urbanize_text(self, letters: tuple[str, ...], towns: tuple[Hex, ...]) -> bytes:
        at = self.places
        known = _URBANIZING.get((id(at), letters, towns))
        if known is None or known[0] is not at:
            if len(_URBANIZING) >= _PHRASES_KEPT:
                _URBANIZING.clear()
            known = _URBANIZING[(id(at), letters, towns)] = (
                at, _urbanize_moves(self.teller, letters, towns))
        return known[1]

    def _pieces(self, h: Hex) -> HexPieces:
        pieces = self.hexes[h] = _hex_piece(self.places, h)
        return pieces


def _make_room() -> None:
    """Before a context of builds is added (ListedBuilds.kept): at the bound, the contexts least
    recently asked for are dropped until at most half of it is left (_KEPT_BUILDS)."""
    total = sum(len(kept) for _, kept in _KEPT_BUILDS.values())
    for context in list(_KEPT_BUILDS) if total >= _BUILDS_KEPT else ():
        total -= len(_KEPT_BUILDS.pop(context)[1])
        if total <= _BUILDS_KEPT // 2:
            break


class _Texts:
    """Moves of a listing as JSON texts (UTF-8), the builder's name still WHO (ListedText). Not
    a subclass of list: mypyc (service.engine.native) compiles no subclass of a builtin type."""

    __slots__ = ("texts",)

    def __init__(self, texts: list[bytes]) -> None:
        self.texts = texts


class ListedText(ListedBuilds):
    """ListedBuilds for listing_json: the builds and the urbanize moves left as their texts,
    for listing_json to join with the rest of the answer and name the builder in once."""

    def joined(self, texts: list[bytes]) -> Any:
        return _Texts(texts)

    def urbanizing(self, letters: tuple[str, ...], towns: tuple[Hex, ...]) -> Any:
        return _Texts([self._urbanize_text(letters, towns)])


# The urbanize moves of a build turn as JSON (ListedBuilds.urbanizing), per map, new cities
# left and towns, the builder's name WHO.
_URBANIZING: dict[tuple[int, tuple[str, ...], tuple[Hex, ...]], tuple[Places, bytes]] = {}


def _urbanize_moves(teller: Teller, letters: tuple[str, ...], towns: tuple[Hex, ...]) -> bytes:
    """The JSON of with_texts' urbanize moves (Teller.move's words, as _texts says them) of
    `letters` on `towns`, the builder's name WHO: each {"type","hex","new_city","text"}, joined
    from the map's kept moves (_urbanize_move): the new cities left and the towns not urbanized
    change as a game goes, each new pair of them a listing meets for the first time."""
    kept = _urbanize_kept(teller.map_id)
    out = []
    for letter in letters:
        for h in towns:
            move = kept.get((letter, h))
            if move is None:
                move = kept[(letter, h)] = _urbanize_move(teller, letter, h)
            out.append(move)
    return ",".join(out).encode()


@cache
def _urbanize_kept(map_id: str) -> dict[tuple[str, Hex], str]:
    """Per map, the JSON of each new city's urbanize move on each town (_urbanize_move), filled
    as listings meet them: at most the map's new cities times its towns (8 x 12-15, some 150
    bytes each: under 20 KB a map)."""
    return {}


def _urbanize_move(teller: Teller, letter: str, h: Hex) -> str:
    """The JSON of the urbanize move of new city `letter` on the town `h`, the builder WHO."""
    q, r = h
    town = teller.places.named.get(h) or teller.place(h)
    colour = _new_city_colours(teller.map_id).get(letter, "")
    words = _in_json(f" urbanizes {town} into {colour}new city {letter}")
    return (f'{{"type":"urbanize","hex":{{"q":{q},"r":{r}}},"new_city":{orjson.dumps(letter).decode()},'
            f'"text":"{WHO}{words}"}}')


def _price(cost: int, had: bool) -> tuple[str, str]:
    """The pieces of a build's JSON its cost makes: up to who builds, and the price to the end.
    On an empty hex with_texts writes "$" and the cost, as Teller.build does for a cost that is
    not below 0 (no build's is), on another money(cost)."""
    price = money(cost) if had else f"${cost}"
    pieces = _PRICED[had][cost] = (f"{cost}{_AFTER_COST}", f'{_in_json(price)}"}}')
    return pieces


# Each shape's pieces (_shape_pieces) by what it reads: the track held and the tracks built
# (_track_phrase), or the exits held, the exits built and the compass (_town_phrase). Many
# listings share shapes (a hex's listings of other surroundings, other hexes'): a listing met
# for the first time mostly finds its shapes' pieces here. The bound only guards memory.
_SHAPE_PIECES: dict[tuple, tuple[str, str, str]] = {}


def _track_phrases(listing: TrackListing, old_tracks: frozenset[Track]) -> Phrases:
    if len(_TRACK_PHRASES) >= _PHRASES_KEPT:
        _TRACK_PHRASES.clear()
    phrases = _kept_pieces([((old_tracks, pairs), pairs) for _, _, _, pairs, _ in listing.shapes],
                           lambda pairs: _track_phrase(old_tracks, pairs))
    _TRACK_PHRASES[id(listing)] = (listing, phrases)
    return phrases


def _town_phrases(listing: TownListing, old_exits: frozenset[int],
                  compass: tuple[str, ...]) -> Phrases:
    if len(_TOWN_PHRASES) >= _PHRASES_KEPT:
        _TOWN_PHRASES.clear()
    phrases = _kept_pieces([((old_exits, exits, compass), exits) for _, _, _, exits, _ in listing.shapes],
                           lambda exits: _town_phrase(old_exits, exits, compass))
    _TOWN_PHRASES[(id(listing), compass)] = (listing, phrases)
    return phrases


def _kept_pieces(shapes: list[tuple[tuple, Any]],
                 phrase: Callable[[Any], tuple[str, str]]) -> Phrases:
    """The pieces of each (key, what is built) of `shapes`, from _SHAPE_PIECES or made there
    (_shape_pieces of what is built and its `phrase`)."""
    if len(_SHAPE_PIECES) >= _PHRASES_KEPT:
        _SHAPE_PIECES.clear()
    known = _SHAPE_PIECES
    pieces = []
    for kept_as, made in shapes:
        found = known.get(kept_as)
        if found is None:
            found = known[kept_as] = _shape_pieces(made, phrase(made))
        pieces.append(found)
    return tuple(pieces)


def _shape_pieces(made: object, phrase: tuple[str, str]) -> tuple[str, str, str]:
    """A shape's pieces of its builds' JSON: what it makes (tracks or exits) up to the cost,
    and its words around where the hex is."""
    a, b = phrase
    return f'{orjson.dumps(made).decode()},"cost":', _in_json(a), _in_json(b)


# A hex's builds' JSON up to the tracks, and up to the exits; where it is (a track's words),
# and its name (a town's); escaped.
HexPieces = tuple[str, str, str, str]


@once_per
def _hex_pieces(at: Places) -> dict[Hex, HexPieces]:
    """Per hex of a map, the pieces of its builds' JSON (_hex_piece): made for every hex the
    map labels at once, the first time a map's builds are listed (a worker's warm-up), so that
    a fresh worker's first listings of a game find their hexes' (made as they were listed,
    some 80 of them were made by the bench's first 102 cold listings). Kept per map: a few
    hundred hexes, some 400 bytes each."""
    return {h: _hex_piece(at, h) for h in at.label.keys() | at.named.keys()}


def _hex_piece(at: Places, h: Hex) -> HexPieces:
    head = f'{{"type":"build","hex":{{"q":{h[0]},"r":{h[1]}}},'
    return f'{head}"tracks":', f'{head}"town_exits":', _in_json(at.where(h)), _in_json(at.name(h))


def _track_phrase(had: Collection[Track], pairs: Sequence[Track]) -> tuple[str, str]:
    """A build of the tracks `pairs` (sorted pairs) on a hex holding `had`, as with_texts words
    it: (a, b) of "{who}{a}{where}{b}{price}", the price "$" and the cost on an empty hex and
    money(cost) on another."""
    name = TILE_NAMES.get(_tile(pairs) or "")
    if not had:
        if len(pairs) == 1:
            a, b = pairs[0]
            return f" builds {PIECE_NAMES[3 - abs(3 - abs(a - b))]} ", " for "
        return f" builds {name or 'track'} ", " for "
    if not set(had) <= set(pairs):
        return " redirects the track ", f" into {name or 'new track'} for "
    added = [t for t in pairs if t not in had]
    if not added:
        return " upgrades the track ", f" to {name or 'new track'} for "
    pieces = and_list(PIECE_NAMES.get(min((b - a) % 6, (a - b) % 6), "track") for a, b in added)
    made = f", making {name}," if name else ""
    return f" adds {pieces} to the track ", f"{made} for "


def _town_phrase(had: Collection[int], exits: Sequence[int],
                 compass: tuple[str, ...]) -> tuple[str, str]:
    """Town exits `exits` built on a town holding the exits `had`, as with_texts words it: (a, b)
    of "{who}{a}{town}{b}{price}", `compass` the map's name of each edge (Places)."""
    def heading(edges: Iterable[int]) -> str:
        return and_list(compass[e] for e in sorted(edges))
    if not had:
        return " builds track out of ", f" heading {heading(exits)} for "
    added = [e for e in exits if e not in had]
    if added:
        return " adds track out of ", f" heading {heading(added)} for "
    return " rebuilds the track out of ", f" to head {heading(exits)} for "


class _BuildWords:
    """The words of a listing's builds (Teller.build's sentences, from the phrases ListedBuilds
    joins: _track_phrase, _town_phrase), with what the builds on one hex share worked out once
    per hex."""

    def __init__(self, teller: Teller, who: str, state: State) -> None:
        self.teller, self.who = teller, who
        self.track, self.towns = state["track"], state["towns"]
        self.tracks: dict[Hex, tuple[frozenset[Track], str]] = {}  # per hex: its track, where
        self.exits: dict[Hex, tuple[frozenset[int], str]] = {}  # per town hex: its exits, name

    def text(self, move: GivenMove) -> str | None:
        """The sentence of a listed build; None for one of another form (Teller.move's)."""
        h, cost = move["hex"], move["cost"]
        at = (h["q"], h["r"])
        if "tracks" in move:
            frame = self.tracks.get(at)
            if frame is None:
                on_hex = self.track.get(f"{at[0]},{at[1]}", ())
                frame = self.tracks[at] = (frozenset((a, b) for a, b, _ in on_hex),
                                           self.teller.where(at))
            had, where = frame
            a, b = _track_phrase(had, [tuple(sorted(t)) for t in move["tracks"]])
            return f"{self.who}{a}{where}{b}{money(cost) if had else f'${cost}'}"
        if "town_exits" in move:
            town_frame = self.exits.get(at)
            if town_frame is None:
                exits = self.towns.get(f"{at[0]},{at[1]}", [])
                town_frame = self.exits[at] = (frozenset(e for e, _ in exits), self.teller.place(at))
            had_exits, town = town_frame
            a, b = _town_phrase(had_exits, move["town_exits"], self.teller.places.edge_direction)
            return f"{self.who}{a}{town}{b}{money(cost)}"
        return None


def _follow(stops: dict[str, tuple[Hex, Hex]], move: Mapping) -> Hex | None:
    at: Hex | None = _hex(move["from"])
    for i, link_id in enumerate(move["links"]):
        ends = stops.get(link_id)
        if ends is None or at is None:
            return None
        if i == 0 and isinstance(move.get("toward"), Mapping):
            at = _hex(move["toward"])
        else:
            at = ends[1] if ends[0] == at else ends[0] if ends[1] == at else None
    return at


# -- the sentences, by type -----------------------------------------------------------------

def _shares(t: Teller, seat: int, count: int, cash: int | None = None) -> str:
    if not count:
        return f"{t.who(seat)} issues no shares"
    plural = "s" if count != 1 else ""
    raised = f" for ${cash}" if cash is not None else ""
    return f"{t.who(seat)} issues {count} share{plural}{raised}"


def _income_list(t: Teller, amounts: Mapping[str, int]) -> str:
    return and_list(f"{t.who(s)} {money(a)}" for s, a in t.seats(amounts))


def _finished(t: Teller, e: Mapping) -> str:
    scores = sorted(e.get("scores") or [], key=lambda s: (s.get("rank") or 99, s.get("seat")))
    if not scores:
        return "The game is over"
    def points(s: Mapping) -> str:
        return "out" if s.get("points") is None else f"{s['points']} points"
    winners = [s for s in scores if s.get("rank") == 1 and s.get("points") is not None]
    rest = ", ".join(f"{t.who(s['seat'])} {points(s)}" for s in scores if s not in winners)
    if not winners:
        return f"The game is over with no winner: {rest}"
    if len(winners) == 1:
        head = f"The game is over: {t.who(winners[0]['seat'])} wins with {points(winners[0])}"
    else:
        head = (f"The game is over: {and_list(t.who(s['seat']) for s in winners)} share the win "
                f"with {points(winners[0])}")
    return f"{head}; {rest}" if rest else head


def _expenses(t: Teller, e: Mapping) -> str:
    parts = []
    for x in e.get("expenses") or []:
        part = f"{t.who(x['seat'])} ${x['paid']}"
        if x.get("shortfall"):
            part += f", ${x['shortfall']} short and taken from income"
        parts.append(part)
    return "Expenses paid: " + ("; ".join(parts) if parts else "none")


def _reduced(t: Teller, e: Mapping) -> str:
    cut = [f"{t.who(x['seat'])} {signed(-x['reduction'])} to {x['income']}"
           for x in e.get("reductions") or [] if x.get("reduction")]
    return "Income reduced: " + and_list(cut) if cut else "No income is reduced"


def _turn_order(t: Teller, e: Mapping) -> str:
    order = ", ".join(t.who(s) for s in e.get("order") or [])
    paid = [f"{t.who(p['seat'])} pays ${p['paid']}" for p in e.get("payments") or [] if p.get("paid")]
    return f"Turn order: {order}" + (f"; {and_list(paid)}" if paid else "")


def _grown(t: Teller, e: Mapping) -> str:
    moved = [f"{m['color']} to {t.place(m['city'])}" for m in e.get("moved") or []
             if isinstance(m.get("city"), Mapping)]
    side = e.get("side", "")
    return f"Goods grow on the {side} side: {and_list(moved)}" if moved else \
        f"No goods grow on the {side} side"


def _locked(t: Teller, e: Mapping) -> str:
    actions = and_list(action_name(a) for a in e.get("actions") or [])
    dice = e.get("dice")
    rolled = f" on dice {', '.join(str(d) for d in dice)}" if dice else ""
    return f"Locked this round{rolled}: {actions}" if actions else f"No action is locked this round{rolled}"


def _taken_back(t: Teller, e: Mapping) -> str:
    versions = e.get("versions") or []
    what = f"{len(versions)} version" + ("s" if len(versions) != 1 else "")
    return f"The game goes back to version {e.get('to_version')}, taking back {what}"


EVENTS: dict[str, Callable[[Teller, Mapping], str]] = {
    "shares_issued": lambda t, e: _shares(t, e["seat"], e.get("count", 0), e.get("cash")),
    "bid": lambda t, e: f"{t.who(e['seat'])} bids ${e['amount']} for turn order",
    "dropped_out": lambda t, e: f"{t.who(e['seat'])} drops out of the auction and will be "
                                f"{_ordinal(e.get('place'))} in turn order",
    "turn_order_pass": lambda t, e: f"{t.who(e['seat'])} passes with the Turn Order action",
    "turn_order_set": _turn_order,
    "action_selected": lambda t, e: f"{t.who(e['seat'])} takes {action_name(e['action'])}",
    "actions_locked": _locked,
    "locomotive_upgraded": lambda t, e: f"{t.who(e['seat'])} upgrades the locomotive to "
                                        f"{e['locomotive']}",
    "track_built": lambda t, e: t.build(e["seat"], e["hex"], e.get("tile"), e.get("kind", "new"),
                                        e.get("cost"), e.get("tracks"), e.get("town_exits")),
    "track_claimed": lambda t, e: f"{t.who(e['seat'])} takes over the unowned track from "
                                  f"{t.place(e['hexes'][0])} to {t.place(e['hexes'][-1])}"
    if e.get("hexes") else f"{t.who(e['seat'])} takes over unowned track",
    "track_unowned": lambda t, e: f"{t.who(e['seat'])}'s track through "
                                  f"{and_list(t.place(h) for h in (e.get('hexes') or [])[:3])}"
                                  " is left unowned",
    "build_ended": lambda t, e: f"{t.who(e['seat'])} ends the build",
    "city_urbanized": lambda t, e: f"{t.who(e['seat'])} urbanizes {t.place(e['hex'])} into "
                                   f"{e.get('color')} new city {e['new_city']}",
    "good_delivered": lambda t, e: t.delivery(e["seat"], e["from"], e["color"], e.get("to"),
                                              len(e.get("links") or []), e.get("income") or {}),
    "passed": lambda t, e: f"{t.who(e['seat'])} moves no goods this round",
    "income_collected": lambda t, e: "Income paid: " + (_income_list(t, e.get("income") or {})
                                                        or "none"),
    "expenses_paid": _expenses,
    "income_reduced": _reduced,
    "player_eliminated": lambda t, e: f"{t.who(e['seat'])} is out of the game with income "
                                      f"{e.get('income')}",
    "player_resigned": lambda t, e: f"{t.who(e['seat'])} resigns",
    "production_drawn": lambda t, e: f"{t.who(e['seat'])} draws {and_list(e.get('drawn') or []) or 'nothing'}"
                                     " for Production",
    "production": lambda t, e: f"{t.who(e['seat'])} places {t.placements(e['placements'])}"
    if e.get("placements") else f"{t.who(e['seat'])} places no goods",
    "dice_rolled": lambda t, e: f"Growth dice for the {e.get('side')} cities roll "
                                f"{', '.join(str(d) for d in e.get('dice') or [])}",
    "goods_grown": _grown,
    "round_started": lambda t, e: f"Round {e['round']} begins",
    "game_finished": _finished,
    "wall_removed": lambda t, e: f"{t.who(e['seat'])} removes the wall between "
                                 f"{t.place(e['edge']['a'])} and {t.place(e['edge']['b'])}",
    "wall_fallen": lambda t, e: f"The Wall falls in round {e.get('round')}: "
                                f"{len(e.get('discs') or [])} discs come down",
    "oil_drawn": lambda t, e: f"{t.who(e['seat'])} draws a black cube for an oil field",
    "oil_placed": lambda t, e: f"{t.who(e['seat'])} puts a black cube on the oil field "
                               f"{t.where(e['hex'])}",
    "oil_drum_kept": lambda t, e: f"{t.who(e['seat'])} keeps an oil drum at {e.get('flag')}, "
                                  f"{e.get('drums')} in all",
    "oil_drums_counted": lambda t, e: "Oil drums raise income: " + (
        and_list(f"{t.who(s)} +{a}" for s, a in t.seats(e.get("income") or {})) or "none"),
    "oil_field_filled": lambda t, e: f"The oil field {t.where(e['hex'])} gets {e.get('cubes')} "
                                     f"black cubes on a roll of {e.get('roll')}",
    "cube_replaced": lambda t, e: f"The {e.get('removed')} cube {t.where(e['hex'])} is replaced "
                                  f"by {e.get('placed')}",
    "move_undone": lambda t, e: f"{t.who(e['seat'])} takes back the move of version "
                                f"{e.get('version')}",
    "takeback_proposed": lambda t, e: f"{t.who(e['seat'])} asks to go back to version "
                                      f"{e.get('to_version')}",
    "takeback_accepted": lambda t, e: f"{t.who(e['seat'])} agrees to the takeback",
    "taken_back": _taken_back,
    "takeback_declined": lambda t, e: f"{t.who(e['seat'])} declines the takeback",
    "takeback_cancelled": lambda t, e: f"{t.who(e['seat'])} withdraws the takeback",
}


def _ordinal(n: object) -> str:
    if not isinstance(n, int):
        return "last"
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# The event that tells a move once it is made (a history entry's words).
OWN_EVENT = {
    "issue_shares": "shares_issued",
    "bid": "bid",
    "drop_out": "dropped_out",
    "turn_order_pass": "turn_order_pass",
    "select_action": "action_selected",
    "build": "track_built",
    "urbanize": "city_urbanized",
    "remove_wall": "wall_removed",
    "deliver": "good_delivered",
    "upgrade_locomotive": "locomotive_upgraded",
    "resign": "player_resigned",
    "undo": "move_undone",
    "takeback": "taken_back",
    "takeback_proposed": "takeback_proposed",
    "takeback_accepted": "takeback_accepted",
    "takeback_declined": "takeback_declined",
    "takeback_cancelled": "takeback_cancelled",
}


def _urbanize(t: Teller, seat: int, m: Mapping, state: State | None) -> str:
    tile = load_map(t.map_id).new_city_tiles.get(str(m.get("new_city")))
    colour = f"{tile.color} " if tile is not None else ""
    return f"{t.who(seat)} urbanizes {t.place(m.get('hex') or {})} into {colour}new city {m.get('new_city')}"


def _upgrade(t: Teller, seat: int, m: Mapping, state: State | None) -> str:
    if state is None:
        return f"{t.who(seat)} upgrades the locomotive"
    return f"{t.who(seat)} upgrades the locomotive to {state['players'][seat]['loco'] + 1}"


def _produce(t: Teller, seat: int, m: Mapping, state: State | None) -> str:
    placed = m.get("placements") or []
    text = f"{t.who(seat)} places {t.placements(placed)}" if placed else f"{t.who(seat)} places no goods"
    if isinstance(m.get("oil_field"), Mapping):
        text += f" and a black cube on the oil field {t.where(m['oil_field'])}"
    return text


MOVES: dict[str, Callable[[Teller, int, Mapping, State | None], str]] = {
    "issue_shares": lambda t, s, m, st: _shares(t, s, m.get("count", 0), m.get("count", 0) * 5),
    "bid": lambda t, s, m, st: f"{t.who(s)} bids ${m.get('amount')} for turn order",
    "drop_out": lambda t, s, m, st: f"{t.who(s)} drops out of the auction",
    "turn_order_pass": lambda t, s, m, st: f"{t.who(s)} passes with the Turn Order action",
    "select_action": lambda t, s, m, st: f"{t.who(s)} takes {action_name(m.get('action'))}",
    "urbanize": _urbanize,
    "remove_wall": lambda t, s, m, st: f"{t.who(s)} removes the wall between "
                                       f"{t.place(m['edge']['a'])} and {t.place(m['edge']['b'])}",
    "end_build": lambda t, s, m, st: f"{t.who(s)} ends the build",
    "upgrade_locomotive": _upgrade,
    "pass": lambda t, s, m, st: f"{t.who(s)} moves no goods this round",
    "produce": _produce,
    "resign": lambda t, s, m, st: f"{t.who(s)} resigns",
    "undo": lambda t, s, m, st: f"{t.who(s)} takes back their last move",
    "takeback": lambda t, s, m, st: f"{t.who(s)} goes back to version {m.get('to_version')}",
    "takeback_proposed": lambda t, s, m, st: f"{t.who(s)} asks to go back to version {m.get('to_version')}",
    "takeback_accepted": lambda t, s, m, st: f"{t.who(s)} agrees to the takeback",
    "takeback_declined": lambda t, s, m, st: f"{t.who(s)} declines the takeback",
    "takeback_cancelled": lambda t, s, m, st: f"{t.who(s)} withdraws the takeback",
}
