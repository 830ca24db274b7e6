"""Live updates: a game's versions as events, fanned out to every watcher in the process from
one subscription. Knows bytes and versions, never rules: the events themselves come from a
`Source` (the API's, service/referee/live_source.py)."""

from .hub import Batch, Event, Feed, GameGone, Hub, Source, VersionAhead, Watch, stop_watching
from .notices import RedisNotices, notices_for
from .stream import FRAMINGS, NDJSON, SSE, follow

__all__ = [
    "FRAMINGS",
    "NDJSON",
    "SSE",
    "Batch",
    "Event",
    "Feed",
    "GameGone",
    "Hub",
    "RedisNotices",
    "Source",
    "VersionAhead",
    "Watch",
    "follow",
    "notices_for",
    "stop_watching",
]
