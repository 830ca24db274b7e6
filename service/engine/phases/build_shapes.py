"""What a build does on one hex, judged from the hex's surroundings alone.

A build's legality splits in two. The part that depends only on what the hex holds (its tracks
or town exits, which of them the builder may turn), on what lies across each edge (the
`edge_statuses` of build.py) and on whether the builder owns any track, is a pure function of those few
values: it is computed here, and the shapes a hex may take are kept per distinct surrounding
(the same small set recurs on every hex of every map). The part that depends on the rest of
the state (tile supply, loops, costs, cash) is judged in `build.py` each time.

Every refusal raises a Refusal naming the rule, in the order the rules are checked; the
listing keeps the refusals as values so it never pays for raising them, and `judge_track` /
`judge_town` raise them as the IllegalMove of the hex judged (with its `hex` where the code
names one: the geometry itself never knows which hex it is).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, partial
from typing import Any, NamedTuple, TypeVar, get_args

from service.engine import rules_data as R
from service.engine import tiles as T
from service.engine.errors import CODE_FIELDS, IllegalMove
from service.engine.hexgrid import Hex, as_dict
from service.engine.layout import EdgeStatus

# An edge's status (build.edge_statuses) anchors new track when it meets a city, the builder's
# own track end, or an unowned track end whose route runs back to a city or to a town where the
# builder has track; "stranded" is an unowned end whose route does neither: it joins (a build
# there takes its route, and may close a loop through it) but anchors nothing.
ANCHORS = frozenset({"city", "own", "unowned"})
OPEN = frozenset({"free", "off", "closed"})
BARRED = frozenset({"off", "closed", "opponent"})

Track = T.Track
Status = tuple[EdgeStatus, ...]


# The geometries (and the listings below) are NamedTuples, not frozen dataclasses: a new
# surrounding of a listing makes a few of them, and a frozen dataclass's __init__
# (object.__setattr__ per field) cost 3.6 us a TrackGeometry, a NamedTuple's 0.3 us; both
# compare by value (test_build_shape_classes).
class TrackGeometry(NamedTuple):
    """A track shape on a plain hex: what it adds, what it turns, and how it is priced."""

    tile: str
    kind: str  # simple | coexisting | crossing
    fresh: tuple[Track, ...]  # tracks that are the builder's after it (added, or the redirected one)
    redirect_from: Track | None  # the track a redirect turns, None otherwise
    upgrade: bool  # the hex held track before (and this is no redirect)
    joined: tuple[Track, ...]  # fresh tracks with both ends joined: only these may close a loop
    pairs: tuple[tuple[int, int], ...]  # every track of the hex afterwards, sorted (the move's form)
    pricing: tuple[bool, bool, str]  # (redirect?, upgrade?, kind): one price


class TownGeometry(NamedTuple):
    """Town exits on a town hex: what they add and how they are priced."""

    shape: T.TownShape
    fresh: tuple[int, ...]  # exits added
    joined: tuple[int, ...]
    base_cost: int
    exits: tuple[int, ...]  # every exit afterwards, sorted (the move's form)


# The geometries made from their fields in order, without the NamedTuple's __new__ (a Python
# function, a frame per geometry: a fresh worker makes a few hundred in its first listings).
_new_track_geometry = partial(tuple.__new__, TrackGeometry)
_new_town_geometry = partial(tuple.__new__, TownGeometry)


class Refusal(Exception):
    """A rule a build breaks, as a value: the geometry's (whatever hex it is on) and build.judge_price's.
    `refused` makes it the IllegalMove of the hex judged; `code` is one of errors.CODES."""

    def __init__(self, code: str, detail: str | None = None, **extra: object) -> None:
        super().__init__(code)
        self.code, self.detail, self.extra = code, detail, extra


def _check_edges(status: Status, edges) -> None:
    for e in edges:
        s = status[e]
        if s == "off":
            raise Refusal("OFF_MAP", f"track would point off the map through edge {e}", edge=e)
        if s == "closed":
            raise Refusal("INTO_IMPASSABLE", f"track would point into a closed hex through edge {e}",
                          edge=e)
        if s == "opponent":
            raise Refusal("INTO_OPPONENT_TRACK", f"edge {e} meets another player's track end", edge=e)


def _check_connected(status: Status, ends, detail: str) -> None:
    """The one connection rule (seed 000, rule 5: "later construction must ultimately reach a
    city through that player's track"), for new track, new town exits and a redirected track
    alike: one of `ends` meets a city, the builder's own track end, or an unowned track end whose
    route runs back to a city or to a town where the builder has track."""
    for e in ends:  # a loop, not any() over a generator: the listing asks it of every shape
        if status[e] in ANCHORS:
            return
    for e in ends:
        if status[e] == "stranded":
            raise Refusal("UNOWNED_TRACK_UNCONNECTED",
                          f"the unowned track met through edge {e} runs back to no city and to no "
                          "town where you have track", edge=e)
    raise Refusal("NOT_CONNECTED", detail)


def town_geometry(exits: frozenset[int], old_exits: frozenset[int], mine: bool, status: Status,
                  owns: bool) -> TownGeometry:
    """`mine`: the builder owns track on this hex; `owns`: the builder owns track anywhere."""
    shape = T.TOWN_SHAPES.get(exits)
    if shape is None:
        raise Refusal("TILE_UNKNOWN", f"no town tile has exits {sorted(exits)}")
    if not old_exits <= exits:
        raise Refusal("MUST_KEEP_TRACK", "a town's existing exits stay")
    added = tuple(sorted(exits - old_exits))
    if not added:
        raise Refusal("BAD_MOVE", "the build changes nothing")
    for e in added:  # _check_edges only where it refuses (its refusal names the first edge)
        if status[e] in BARRED:
            _check_edges(status, added)
    if not mine:
        _check_connected(status, added, "town track must connect to a city or your own track")
    if not owns:
        raise Refusal("FIRST_TILE_SIMPLE")
    b = R.BUILD_COSTS
    cost = b["town_base"] + b["town_per_exit"] * len(exits) if not old_exits else b["upgrade_town"]
    joined = tuple([e for e in added if status[e] not in OPEN])
    return _new_town_geometry((shape, added, joined, cost, tuple(sorted(exits))))


def track_geometry(tracks: frozenset[Track], old_tracks: frozenset[Track],
                   turnable: frozenset[Track], status: Status, owns: bool) -> TrackGeometry:
    """`turnable`: the old tracks the builder may redirect (its own or unowned)."""
    shape = T.TRACK_SHAPES.get(tracks)
    if shape is None:
        raise Refusal("TILE_UNKNOWN", f"no track tile holds {sorted(tracks)}")
    if old_tracks:
        removed = [t for t in old_tracks if t not in tracks]
        added = [t for t in tracks if t not in old_tracks]
    else:  # a new tile, most of a listing's shapes: nothing to compare
        removed, added = [], list(tracks)
    if not added:
        raise Refusal("BAD_MOVE", "the build changes nothing")
    redirect_from = None
    if removed:
        redirect_from, turned = _check_redirect(removed, added, turnable, status)
        fresh: tuple[Track, ...] = (turned,)
    else:
        for a, b in added:  # _check_edges only where it refuses (it names the first edge)
            if status[a] in BARRED or status[b] in BARRED:
                _check_edges(status, [e for t in added for e in t])
        for t in added:
            if status[t[0]] not in ANCHORS and status[t[1]] not in ANCHORS:  # else no text to make
                _check_connected(status, t,
                                 f"track {list(t)} must start from a city or extend your track")
        if not owns and (
                old_tracks or shape.kind != "simple" or not any(status[e] == "city" for e in added[0])):
            raise Refusal("FIRST_TILE_SIMPLE")
        fresh = tuple(added)
    joined = tuple([t for t in fresh if status[t[0]] not in OPEN and status[t[1]] not in OPEN])
    upgrade = bool(old_tracks) and redirect_from is None
    return _new_track_geometry((shape.tile, shape.kind, fresh, redirect_from, upgrade, joined,
                                tuple(sorted(tracks)), (redirect_from is not None, upgrade, shape.kind)))


def _check_redirect(removed: list[Track], added: list[Track], turnable: frozenset[Track],
                    status: Status) -> tuple[Track, Track]:
    if len(removed) != 1 or len(added) != 1:
        raise Refusal("MUST_KEEP_TRACK", "a replacement keeps every track but one redirected end")
    (x, y), new = removed[0], added[0]
    if not {x, y} & set(new):
        raise Refusal("MUST_KEEP_TRACK", "a replacement keeps every track but one redirected end")
    if (x, y) not in turnable:
        raise Refusal("REDIRECT_NOT_ALLOWED", "that track belongs to another player")
    joined = {e for e in (x, y) if status[e] not in OPEN}
    if len(joined) != 1:
        raise Refusal("REDIRECT_NOT_ALLOWED", "only a dangling end of incomplete track turns")
    kept = joined.pop()
    if kept not in new:
        raise Refusal("MUST_KEEP_TRACK", "a redirect keeps the end that joins the rest of the track")
    turned = new[0] if new[1] == kept else new[1]
    _check_edges(status, [turned])
    # The redirected track is the builder's afterwards, like new track: it connects the same way.
    if status[kept] not in ANCHORS and status[turned] not in ANCHORS:  # else no text to make
        _check_connected(status, (kept, turned), f"the redirected track {sorted(new)} must start "
                                                 "from a city or extend your track")
    return (x, y), T.norm(kept, turned)


# -- the shapes a hex may take ------------------------------------------------------------------

def _mask(edges) -> int:
    m = 0
    for e in edges:
        m |= 1 << e
    return m


# Each track shape with the edge mask of each of its tracks and, when it is a simple tile (one
# track), that track's (0 otherwise: see Candidate), and each town shape with its mask.
_TRACK_MASKS = [(tracks, tuple(_mask(t) for t in tracks),
                 _mask(next(iter(tracks))) if T.TRACK_SHAPES[tracks].kind == "simple" else 0)
                for tracks in T.TRACK_SHAPES]
_TOWN_MASKS = [(exits, _mask(exits)) for exits in T.TOWN_SHAPES]
# The edges of each track shape (what a hex holds): the mask of their edges.
_EDGES_OF = {tracks: _mask(e for t in tracks for e in t) for tracks in T.TRACK_SHAPES}
# By the mask of a town's exits, the town shapes that add to them (in _TOWN_MASKS' order), each
# with the mask of the exits it adds: _candidate_towns looks at these alone.
_TOWNS_OVER = tuple([(exits, mask & ~old) for exits, mask in _TOWN_MASKS
                     if mask & old == old and mask != old] for old in range(64))

# The tracks of a tile share no edge (track_options' masks for _candidate_tracks rely on it).
if any(len({e for t in tracks for e in t}) != 2 * len(tracks) for tracks in T.TRACK_SHAPES):
    raise RuntimeError("two tracks of a tile share an edge: _candidate_tracks' masks leave it out")

# A simple tile holds one track (a first tile's, FIRST_TILE_SIMPLE, is the one its Candidate gives).
if any(shape.kind == "simple" and len(tracks) != 1 for tracks, shape in T.TRACK_SHAPES.items()):
    raise RuntimeError("a simple tile with more than one track: _TRACK_MASKS gives one")

# build.list_builds writes a move's tracks unrolled, for a tile of one track or two.
if max(map(len, T.TRACK_SHAPES)) > 2:
    raise RuntimeError("a track tile with more than two tracks: build.list_builds lists two at most")


# A surrounding's statuses as one whole number, three bits an edge (edge e's at bit 3e), so that
# the statuses a shape's geometry reads are its code masked (_shape_geometry's keys: _status_masks).
_STATUS_CODES: dict[str, int] = {s: i for i, s in enumerate(get_args(EdgeStatus))}
# The status code's bits of each set of edges, by its edge mask (bit e: edge e).
_WIDE = tuple(sum(7 << 3 * e for e in range(6) if m >> e & 1) for m in range(64))


def _reads(tracks: frozenset[Track]) -> int:
    """The status code's bits of the edges of `tracks`."""
    return _WIDE[_mask(e for t in tracks for e in t)]


# A candidate shape of a plain hex (_candidate_tracks): its tracks, the old track it turns (a
# redirect; None for a new tile or an upgrade), the edge mask of its track when it is a new
# simple tile (0 otherwise: the only shape a builder with no track may start with, when that
# track meets a city, FIRST_TILE_SIMPLE), and the status code's bits (_status_masks) of the
# edges whose statuses its geometry reads (_shape_geometry).
Candidate = tuple[frozenset[Track], Track | None, int, int]


@lru_cache(maxsize=1 << 14)
def _candidate_tracks(old_tracks: frozenset[Track], anchored: int, bad: int,
                      loose: int) -> tuple[Candidate, ...]:
    """A superset of the shapes a plain hex may take: new tiles or upgrades whose added tracks
    are anchored and not barred, and the one-track redirects that keep a joined end whose other
    end is loose (`loose`: the edges whose status is open) and turn it to an edge not barred
    (the others _check_redirect refuses). What else track_options reads of a candidate before
    it judges it comes with it (Candidate): whose track may be turned and whether the builder
    owns track differ between surroundings that share these masks. Kept per argument set: many
    classes of surrounding share their masks (the bound only guards memory; a few thousand
    met, a short tuple each)."""
    out: list[Candidate] = []
    if not old_tracks and not anchored:
        return ()
    for tracks, masks, simple in _TRACK_MASKS:
        if old_tracks:
            if not old_tracks < tracks:
                continue
            masks = tuple([_mask(t) for t in tracks - old_tracks])
            simple = 0
        for m in masks:  # a loop, not all() over a generator: some 50 shapes a surrounding
            if m & bad or not m & anchored:
                break
        else:
            out.append((tracks, None, simple, _reads(tracks ^ old_tracks)))
    for t in old_tracks:
        rest = old_tracks - {t}
        used = {e for r in rest for e in r}
        for kept in t:
            if loose >> kept & 1 or not loose >> (t[1] if kept == t[0] else t[0]) & 1:
                continue
            for turned in range(6):
                if turned in used or turned in t or bad >> turned & 1:
                    continue
                tracks = rest | {T.norm(kept, turned)}
                if tracks in T.TRACK_SHAPES:
                    out.append((tracks, t, 0, _reads(tracks ^ old_tracks)))
    return tuple(out)


@lru_cache(maxsize=1 << 12)
def _candidate_towns(old_mask: int, mine: bool, anchored: int,
                     bad: int) -> tuple[tuple[frozenset, int], ...]:
    """The sets of exits a town hex may take whose added exits are not barred and, unless the
    builder has track there, anchored, each with the status code's bits of its added exits (what
    its geometry reads of the statuses: _shape_geometry). Kept per argument set (at most 2^19,
    a few hundred met)."""
    out = []
    for exits, added in _TOWNS_OVER[old_mask]:
        if not added & bad and (mine or added & anchored):
            out.append((exits, _WIDE[added]))
    return tuple(out)


@lru_cache(maxsize=1 << 15)
def _status_masks(status: Status) -> tuple[int, int, int, int, int]:
    """What track_options and town_options read of a surrounding's statuses, in one loop: the
    edges that anchor, those barred (ANCHORS and BARRED are disjoint), those open, those that
    meet a city (bit e: edge e), and its status code (_STATUS_CODES, three bits an edge). Kept
    per statuses (most of them classes' representatives, which many surroundings share: a few
    thousand)."""
    anchored = bad = loose = cities = code = 0
    for e, s in enumerate(status):
        bit = 1 << e
        if s in ANCHORS:
            anchored |= bit
            if s == "city":
                cities |= bit
        elif s in BARRED:
            bad |= bit
        if s in OPEN:
            loose |= bit
        code |= _STATUS_CODES[s] << 3 * e
    return anchored, bad, loose, cities, code


if ANCHORS & BARRED:
    raise RuntimeError("an edge status both anchors and is barred: _status_masks reads them apart")


# -- one shape, judged once per distinct surrounding ---------------------------------------------

@lru_cache(maxsize=1 << 15)
def _track_outcome(tracks: frozenset[Track], old_tracks: frozenset[Track],
                   turnable: frozenset[Track], status: Status,
                   owns: bool) -> TrackGeometry | Refusal:
    try:
        return track_geometry(tracks, old_tracks, turnable, status, owns)
    except Refusal as refusal:
        refusal.__traceback__ = None
        return refusal


@lru_cache(maxsize=1 << 14)
def _town_outcome(exits: frozenset[int], old_exits: frozenset[int], mine: bool, status: Status,
                  owns: bool) -> TownGeometry | Refusal:
    try:
        return town_geometry(exits, old_exits, mine, status, owns)
    except Refusal as refusal:
        refusal.__traceback__ = None
        return refusal


def refused(refusal: Refusal, at: Hex) -> IllegalMove:
    """The rule error of a kept refusal, on the hex it was judged for (when its code names one)."""
    where = {"hex": as_dict(at)} if "hex" in CODE_FIELDS.get(refusal.code, ()) else {}
    return IllegalMove(refusal.code, refusal.detail, **refusal.extra, **where)


def judge_track(tracks: frozenset[Track], old_tracks: frozenset[Track],
                turnable: frozenset[Track], status: Status, owns: bool, at: Hex) -> TrackGeometry:
    """track_geometry, kept per distinct argument set (apply judges one shape per move)."""
    out = _track_outcome(tracks, old_tracks, turnable, status, owns)
    if isinstance(out, Refusal):
        raise refused(out, at)
    return out


def judge_town(exits: frozenset[int], old_exits: frozenset[int], mine: bool, status: Status,
               owns: bool, at: Hex) -> TownGeometry:
    """town_geometry, kept per distinct argument set."""
    out = _town_outcome(exits, old_exits, mine, status, owns)
    if isinstance(out, Refusal):
        raise refused(out, at)
    return out


# -- the shapes a hex may take, for the listing ---------------------------------------------------
#
# The listing keeps only the shapes a surrounding accepts, and for those the rules above read an
# edge's status through six classes alone: a city (anchors, joins, and lets a first tile start);
# own or unowned track (anchors and joins); stranded unowned track (joins, anchors nothing); free
# (neither); off the map or closed (barred, open); an opponent's track end (barred, and joins: a
# redirect reads it). Which refusal a barred edge gives (OFF_MAP, INTO_IMPASSABLE...) differs, but
# the listing keeps no refusal. So the accepted shapes are worked out once per class of
# surrounding, on a representative of its statuses, and a worker meets far fewer new ones: 6^6
# classes of edges instead of 8^6 statuses.

_CLASS_OF: dict[str, EdgeStatus] = {"city": "city", "own": "own", "unowned": "own",
                                    "stranded": "stranded", "free": "free", "off": "off",
                                    "closed": "off", "opponent": "opponent"}


def _class_of(status: Status) -> Status:
    """The representative status of status's class (the same accepted shapes, see above)."""
    return tuple([_CLASS_OF[s] for s in status])


# Each candidate's geometry (None: refused) by what it reads: its shape, what the hex holds, the
# statuses of the edges its new track meets (Candidate's, _candidate_towns' bits of the status
# code) and, for a track, whether the builder owns track (a town's options need it). A class of
# surrounding met for the first time shares most of its shapes with classes met before, which
# differ on other edges: a fresh worker's first listings judge a third of them, not all (the
# bench's). The keys leave out what track_options has already checked: whose track a redirect
# turns. Filled by track_options and town_options; the bound only guards memory (the warm-up
# keeps some 1,500).
_KEPT_TRACKS: dict[tuple, TrackGeometry | None] = {}
_KEPT_TOWNS: dict[tuple, TownGeometry | None] = {}
_SHAPES_KEPT = 1 << 15
_UNSEEN: Any = object()  # what a key not kept gets (Any: mypy narrows no sentinel object)
G = TypeVar("G", TrackGeometry, TownGeometry)


def _shape_geometry(kept: dict[tuple, G | None], key: tuple, judge: Callable[..., G],
                    *args: object) -> G | None:
    """judge(*args), track_geometry's or town_geometry's, None when it refuses: kept under key."""
    try:
        geo = judge(*args)
    except Refusal:
        geo = None
    if len(kept) >= _SHAPES_KEPT:
        kept.clear()
    kept[key] = geo
    return geo


# The distinct surroundings met in play number in the thousands; the bound only guards memory.
@lru_cache(maxsize=1 << 15)
def track_options(old_tracks: frozenset[Track], turnable: frozenset[Track], status: Status,
                  owns: bool) -> tuple[tuple[frozenset[Track], TrackGeometry], ...]:
    """Every track shape a plain hex with these surroundings may take, with its geometry."""
    out = []
    # `cities`: a builder with no track starts with a new simple tile whose track meets a city.
    anchored, bad, loose, cities, code = _status_masks(status)
    if old_tracks:
        # _candidate_tracks reads the old tracks' edges only for whether they are loose (the
        # tracks of a tile share no edge: an upgrade adds tracks on the other edges, a redirect
        # turns to one): the masks keep only what it reads, so that more surroundings share
        # them and a fresh worker finds more of them kept.
        used = _EDGES_OF.get(old_tracks) or _mask(e for t in old_tracks for e in t)
        loose &= used
        anchored, bad = anchored & ~used, bad & ~used
    else:
        loose = 0
    for tracks, turns, first, reads in _candidate_tracks(old_tracks, anchored, bad, loose):
        # What track_geometry would refuse for these alone (REDIRECT_NOT_ALLOWED of a track
        # the builder may not turn, FIRST_TILE_SIMPLE) is not judged: a refusal costs as much
        # as a geometry. The rest of what it reads is the key of _shape_geometry.
        if turns is not None:
            if turns not in turnable:
                continue
        elif not owns and not first & cities:
            continue
        geo = _KEPT_TRACKS.get((tracks, old_tracks, code & reads, owns), _UNSEEN)
        if geo is _UNSEEN:
            geo = _shape_geometry(_KEPT_TRACKS, (tracks, old_tracks, code & reads, owns),
                                  track_geometry, tracks, old_tracks, turnable, status, owns)
        if geo is None:
            continue
        out.append((tracks, geo))
    return tuple(out)


@lru_cache(maxsize=1 << 14)
def town_options(old_exits: frozenset[int], mine: bool, status: Status,
                 owns: bool) -> tuple[tuple[frozenset[int], TownGeometry], ...]:
    """Every set of exits a town hex with these surroundings may take, with its geometry."""
    if not owns:  # town_geometry refuses every set of exits to a builder with no track
        return ()
    out = []
    # _candidate_towns reads the masks on the added exits alone, and `anchored` only when the
    # builder has no track here: they keep only that, so that more surroundings share them.
    old = _mask(old_exits)
    anchored, bad, _, _, code = _status_masks(status)
    anchored = 0 if mine else anchored & ~old
    for exits, reads in _candidate_towns(old, mine, anchored, bad & ~old):
        town = _KEPT_TOWNS.get((exits, old_exits, mine, code & reads), _UNSEEN)
        if town is _UNSEEN:
            town = _shape_geometry(_KEPT_TOWNS, (exits, old_exits, mine, code & reads),
                                   town_geometry, exits, old_exits, mine, status, owns)
        if town is not None:
            out.append((exits, town))
    return tuple(out)


class TrackListing(NamedTuple):
    """track_options laid out for the listing. Every shape of one kind of build (new, upgrade
    or redirect; simple, coexisting or crossing) costs the same on a hex, so the listing
    prices each `kind` once and judges per shape only what differs: its tile's supply, and the
    loop check for the shapes whose new track joins something at both ends."""

    kinds: tuple[TrackGeometry, ...]  # one geometry of each pricing, in the order met
    # Per shape, in track_options' order: its index in `kinds`, its tile, the edges of its
    # tracks in the move's order (flat: (a, b) or (a, b, c, d)), the tracks as pairs (the
    # move's form, as tuples), and its geometry when it may close a loop (None when it cannot).
    shapes: tuple[tuple[int, str, tuple[int, ...], tuple[Track, ...], TrackGeometry | None], ...]


@lru_cache(maxsize=1 << 15)
def track_listing(old_tracks: frozenset[Track], turnable: frozenset[Track], status: Status,
                  owns: bool) -> TrackListing:
    """The track shapes a plain hex with these surroundings may take, grouped by how they are
    priced: kept per surrounding, and worked out once per class of surrounding."""
    return _track_listing(old_tracks, turnable, _class_of(status), owns)


@lru_cache(maxsize=1 << 15)
def _track_listing(old_tracks: frozenset[Track], turnable: frozenset[Track], status: Status,
                   owns: bool) -> TrackListing:
    index: dict[tuple[bool, bool, str], int] = {}
    kinds: list[TrackGeometry] = []
    shapes = []
    for _, geo in track_options(old_tracks, turnable, status, owns):
        k = index.setdefault(geo.pricing, len(kinds))
        if k == len(kinds):
            kinds.append(geo)
        # flat, (a, b) or (a, b, c, d): two tracks at most (checked at _TRACK_MASKS)
        edges = geo.pairs[0] + geo.pairs[1] if len(geo.pairs) > 1 else geo.pairs[0]
        shapes.append((k, geo.tile, edges, geo.pairs,
                       geo if geo.joined else None))
    return TrackListing(tuple(kinds), tuple(shapes))


class TownListing(NamedTuple):
    """town_options laid out for the listing: per set of exits, what judge_price reads."""

    # Per set of exits, in town_options' order: the tiles that make it (in the order they are
    # taken), whether it takes a town disk, its cost before the map's surcharge, the exits (the
    # move's form), and its geometry when it may close a loop (None when it cannot).
    shapes: tuple[tuple[tuple[str, ...], bool, int, tuple[int, ...], TownGeometry | None], ...]
    most: int = 0  # the dearest shape's cost before the surcharge (0 with none)
    least: int = 0  # the cheapest's (0 with none)


@lru_cache(maxsize=1 << 14)
def town_listing(old_exits: frozenset[int], mine: bool, status: Status, owns: bool) -> TownListing:
    """The sets of exits a town hex with these surroundings may take, as the listing reads them:
    kept per surrounding, and worked out once per class of surrounding."""
    return _town_listing(old_exits, mine, _class_of(status), owns)


@lru_cache(maxsize=1 << 14)
def _town_listing(old_exits: frozenset[int], mine: bool, status: Status, owns: bool) -> TownListing:
    options = town_options(old_exits, mine, status, owns)
    if not options:
        return _NO_TOWNS
    # Lists, not generators: a fresh worker's first listings lay out some 65 of these.
    shapes = tuple([(geo.shape.tiles, geo.shape.uses_disk, geo.base_cost, geo.exits,
                     geo if geo.joined else None) for _, geo in options])
    bases = [geo.base_cost for _, geo in options]
    return TownListing(shapes, max(bases), min(bases))


_NO_TOWNS = TownListing(())
