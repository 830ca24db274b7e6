"""The game core's refusals, as codes: `GameError("VERSION_MISMATCH", detail, version=3)`.

The core never speaks HTTP. The API answers each code with the status of its one table
(service/api/error_codes.py), which docs/error-codes.md is made from; the worker and the archive
read the code itself."""

from __future__ import annotations

from typing import Any


class GameError(Exception):
    """A refusal the client can act on: a stable `code`, a sentence for people, and the fields
    the code carries (`extra`: the problem document's fields beside `code` and `detail`)."""

    def __init__(self, code: str, detail: str, **extra: Any) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail
        self.extra = extra


def not_found(game_id: str) -> GameError:
    return GameError("GAME_NOT_FOUND", f"no game {game_id!r} (never created, or expired)")


def deleted(game_id: str) -> GameError:
    return GameError("GAME_DELETED", f"game {game_id!r} was deleted at its owner's request")
