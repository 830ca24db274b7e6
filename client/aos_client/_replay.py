# Hand-written (not generated): what `AosClient` adds to the operations; tools/generate_client.py uses it.
"""`Replays`: `AosClient.replay(record)` replays a finished game's record into a new game."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._model import ModelError
from .models import CreatedGame, ImportGame, Record, RecordInput


class RecordNotFinished(ModelError):
    """The record is of a game still being played: it has no `seed` yet, so it cannot replay."""


class Replays:
    """Needs `create_game` (the generated operation)."""

    def replay(
        self, record: Record | Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> CreatedGame:
        """A new game made by replaying `record` (as `get_record` returns it) move by move; the
        service checks every move, and an illegal one raises `IllegalMove` with the move's
        `index`. Only a finished game's record replays: until the last round is scored its seed
        is secret (the record carries only its commitment), and without the seed the dice and
        draws cannot be made again. That raises `RecordNotFinished` here, before any request."""
        data = record.to_dict() if isinstance(record, Record) else dict(record)
        if not data.get("seed"):
            raise RecordNotFinished(
                "only a finished game's record replays: this one has no seed yet (it stays secret "
                "until the game is over). Replay it once the game has finished."
            )
        body = ImportGame(record=RecordInput.from_dict(data))
        return self.create_game(body, idempotency_key=idempotency_key)  # type: ignore[attr-defined,no-any-return]
