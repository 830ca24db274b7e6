"""A seat's legal moves as the API answers them, and how they are kept with their version.

A listing is kept under `legal:<seat>` at the version it was worked out for (GameStore.keep),
behind the digest of the state it was worked out from: a kept listing is served only for that
very state, so a version that came back some other way than a move (a game put back from the
archive, any change of state that kept the version) is listed afresh, never answered from
another state's listing. An undo or a takeback makes a new version, whose listing is its own.
"""

from __future__ import annotations

import hashlib

import orjson

from service.engine import game, words
from service.engine.layout import State

DIGEST_BYTES = 16  # hex of an 8-byte BLAKE2b: collisions matter only within one version
# Kept while a listing is being worked out ahead (Games.list_ahead): its reader waits for it
# rather than work it out a second time. Shorter than a digest, so never taken for a listing.
PENDING = b"pending"
PENDING_TTL = 5  # seconds: a lister that died leaves its readers to list for themselves


def name(seat: int) -> str:
    return f"legal:{seat}"


def digest(state: bytes) -> bytes:
    return hashlib.blake2b(state, digest_size=DIGEST_BYTES // 2).hexdigest().encode()


def body(state: State, seat: int, version: int) -> bytes:
    """The answer of GET legal-moves for `seat` at `version`: every move with its words."""
    moves = words.with_texts(state, seat, game.legal_moves(state, seat))
    return orjson.dumps({"version": version, "seat": seat, "phase": state["phase"], "moves": moves})


def kept_value(state: bytes, answer: bytes) -> bytes:
    """What is kept for a listing worked out from the stored state `state`."""
    return digest(state) + answer


def kept_answer(kept: bytes | None, state: bytes) -> bytes | None:
    """The kept listing, if it was worked out from exactly the stored state `state`."""
    if kept is None or len(kept) <= DIGEST_BYTES or kept[:DIGEST_BYTES] != digest(state):
        return None
    return kept[DIGEST_BYTES:]
