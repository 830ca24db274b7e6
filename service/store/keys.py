"""Redis key names. One hash tag per game keeps all of a game's keys in one Cluster slot, which
the Lua scripts need (every key a script touches must be in one slot)."""

from __future__ import annotations

PREFIX = "aos:v1"


def game_keys(game_id: str, prefix: str = PREFIX) -> tuple[str, str]:
    """The game's state hash and its move-log list."""
    base = f"{prefix}:{{game:{game_id}}}"
    return f"{base}:state", f"{base}:log"


def idem_key(game_id: str, key: str, prefix: str = PREFIX) -> str:
    return f"{prefix}:{{game:{game_id}}}:idem:{key}"


def kept_key(game_id: str, name: str, prefix: str = PREFIX) -> str:
    return f"{prefix}:{{game:{game_id}}}:kept:{name}"
