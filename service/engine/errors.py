"""Errors the engine raises, with stable codes that name the broken rule."""

from __future__ import annotations

from typing import Any

# Every code apply() can raise, with what it means. docs/error-codes.md is made from this table.
CODES: dict[str, str] = {
    "BAD_MOVE": "the move is malformed: a field is missing, of the wrong type or out of range",
    "UNKNOWN_MOVE_TYPE": "no move has that type",
    "GAME_FINISHED": "the game is over",
    "NOT_YOUR_TURN": "another seat decides now",
    "WRONG_PHASE": "that kind of move is not made in the current phase",
    "PLAYER_ELIMINATED": "an eliminated (bankrupt or resigned) player takes no further part",
    "SHARE_LIMIT": "no more than 15 shares may be issued in all",
    "BID_TOO_LOW": "a bid must be at least $1 and above the high bid",
    "BID_ABOVE_CASH": "a bid may not exceed the bidder's cash",
    "TURN_ORDER_PASS_UNAVAILABLE": "only the Turn Order holder may pass, once, and not with two bidders left",
    "MUST_DROP_OUT": "this player must drop out of this auction",
    "ACTION_UNAVAILABLE": "that action is taken, locked or not on this map",
    "NO_TILES_LEFT": "the player has laid every tile this build turn allows (or may lay none this round)",
    "HEX_ALREADY_BUILT": "a hex may be built on only once per build turn",
    "OFF_MAP": "track may not be built off the map or point off it",
    "NOT_BUILDABLE": "no track may be built on this hex (city, water, or closed)",
    "INTO_IMPASSABLE": "track may not point into water or another closed hex",
    "TILE_UNKNOWN": "no track tile has that shape",
    "TILE_UNAVAILABLE": "every tile of that shape is in use",
    "TOWN_DISKS_EXHAUSTED": "all 8 town disks are on the board",
    "TOWN_NEEDS_TOWN_TRACK": "a town hex takes only town track, and other hexes none",
    "MUST_KEEP_TRACK": "a replacement must keep every existing track",
    "REDIRECT_NOT_ALLOWED": "only the dangling end of your own or unowned incomplete track may be redirected",
    "NOT_CONNECTED": "new track must start from a city or extend the builder's own track",
    "UNOWNED_TRACK_UNCONNECTED": ("unowned track that new track extends must run back to a city, "
                                  "or to a town where the builder has track"),
    "FIRST_TILE_SIMPLE": "a player's first tile must be simple track connected to a city",
    "INTO_OPPONENT_TRACK": "track may not be built into another player's track end",
    "LOOP": "a link may not start and end at the same city or town",
    "INSUFFICIENT_CASH": "the player cannot pay for this",
    "URBANIZE_NOT_HOLDER": "only the Urbanization holder may urbanize",
    "URBANIZE_ALREADY": "urbanization happens once, before the first tile of the build turn",
    "URBANIZE_NOT_TOWN": "a new city goes on a town hex",
    "NEW_CITY_UNAVAILABLE": "that new-city tile is placed already or not in this game",
    "NO_SUCH_LINK": "a named link does not exist or is not complete",
    "ROUTE_BROKEN": "the links do not join up from the start city",
    "NO_CUBE": "the start city has no cube of that colour",
    "ROUTE_TOO_LONG": "a delivery may use no more links than the locomotive level",
    "REVISITS_STOP": "a delivery may not visit a city or town twice",
    "PASSES_OWN_COLOUR": "a cube must stop at the first city of its colour",
    "WRONG_DESTINATION": "the delivery must end at a city that takes the cube's colour",
    "ROUTE_BLOCKED": "a map rule closes this route",
    "LOCOMOTIVE_UPGRADED": "the locomotive may be upgraded once per move-goods phase",
    "LOCOMOTIVE_MAX": "the locomotive cannot go above 6",
    "BAD_PLACEMENT": "production cubes go on empty display squares, one per drawn cube that fits",
    "REMOVE_WALL_NOT_ALLOWED": "only the Engineer holder on a wall map removes a wall disc, once, for a tile",
}

# The fields beside `code` and `detail` that a rule code carries, so that a UI can point at the
# problem: every raise of the code carries these (their meanings: service/api/error_codes.py's
# RULE_FIELDS). docs/error-codes.md renders this table; tests hold every raise site to it.
CODE_FIELDS: dict[str, tuple[str, ...]] = {
    "NOT_YOUR_TURN": ("active_seat",),
    "SHARE_LIMIT": ("amount", "have", "limit"),
    "BID_TOO_LOW": ("amount", "minimum"),
    "BID_ABOVE_CASH": ("amount", "need", "have"),
    "ACTION_UNAVAILABLE": ("action", "available"),
    "HEX_ALREADY_BUILT": ("hex",),
    "NOT_BUILDABLE": ("hex",),
    "INTO_IMPASSABLE": ("edge",),
    "TILE_UNAVAILABLE": ("tile",),
    "TOWN_NEEDS_TOWN_TRACK": ("hex",),
    "MUST_KEEP_TRACK": ("hex",),
    "REDIRECT_NOT_ALLOWED": ("hex",),
    "NOT_CONNECTED": ("hex",),
    "UNOWNED_TRACK_UNCONNECTED": ("hex", "edge"),
    "FIRST_TILE_SIMPLE": ("hex",),
    "INTO_OPPONENT_TRACK": ("edge",),
    "LOOP": ("hex",),
    "INSUFFICIENT_CASH": ("need", "have"),
    "URBANIZE_NOT_TOWN": ("hex",),
    "NO_SUCH_LINK": ("link",),
    "ROUTE_BROKEN": ("link",),
    "NO_CUBE": ("city", "color"),
    "ROUTE_TOO_LONG": ("links", "locomotive"),
    "REVISITS_STOP": ("hex",),
    "PASSES_OWN_COLOUR": ("city",),
    "WRONG_DESTINATION": ("hex",),
    "LOCOMOTIVE_MAX": ("locomotive",),
}
# Fields a code carries only in some of its cases: code -> {field: when}.
SOMETIMES_FIELDS: dict[str, dict[str, str]] = {
    "OFF_MAP": {"hex": "the hex built on is off the map", "edge": "track points off the map"},
    "BAD_PLACEMENT": {"need": "the number of cubes placed is wrong"},
    "REMOVE_WALL_NOT_ALLOWED": {"edge": "no standing wall disc is on the edge named"},
}


class IllegalMove(Exception):
    """A move that the rules forbid now. `code` is one of CODES; `extra` helps the caller."""

    def __init__(self, code: str, detail: str | None = None, **extra: Any) -> None:
        assert code in CODES, code
        self.code = code
        self.detail: str = detail or CODES[code]
        self.extra: dict[str, Any] = extra
        super().__init__(f"{code}: {self.detail}")

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "detail": self.detail, **self.extra}


class SetupError(ValueError):
    """A game that cannot be created as asked: UNKNOWN_MAP, PLAYER_COUNT or BAD_OPTION."""

    def __init__(self, code: str, detail: str) -> None:
        self.code = code
        self.detail = detail
        super().__init__(f"{code}: {detail}")
