"""A seat's legal moves as the API answers them, and how they are kept with their version.

A listing is kept under `legal:<seat>` at the version it was worked out for (GameStore.keep),
behind the digest of the state it was worked out from: a kept listing is served only for that
very state, so a version that came back some other way than a move (a game put back from the
archive, any change of state that kept the version) is listed afresh, never answered from
another state's listing. An undo or a takeback makes a new version, whose listing is its own.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

from service.engine import words
from service.engine.layout import State

DIGEST_BYTES = 16  # hex of an 8-byte BLAKE2b: collisions matter only within one version
# Kept while a listing is being worked out ahead (Games.list_ahead): its reader waits for it
# rather than work it out a second time. Shorter than a digest, so never taken for a listing.
PENDING = b"pending"
PENDING_TTL = 5  # seconds: a lister that died leaves its readers to list for themselves
# Listings a process keeps at hand besides the store (ListedHere): a few dozen of ~40 KB.
LISTED_HERE = 64


def name(seat: int) -> str:
    return f"legal:{seat}"


def digest(state: bytes) -> bytes:
    return hashlib.blake2b(state, digest_size=DIGEST_BYTES // 2).hexdigest().encode()


def body(state: State, seat: int, version: int) -> bytes:
    """The answer of GET legal-moves for `seat` at `version`: every move with its words."""
    return words.listing_json(state, seat, {"version": version, "seat": seat, "phase": state["phase"]})


def kept_value(state: bytes, answer: bytes) -> bytes:
    """What is kept for a listing worked out from the stored state `state`."""
    return digest(state) + answer


def kept_answer(kept: bytes | None, state: bytes) -> bytes | None:
    """The kept listing, if it was worked out from exactly the stored state `state`."""
    if kept is None or len(kept) <= DIGEST_BYTES or kept[:DIGEST_BYTES] != digest(state):
        return None
    return kept[DIGEST_BYTES:]


class ListedHere:
    """The kept values of the listings this process worked out last, by game and kept name.

    A client on a kept-alive connection sends its next request to the process that answered its
    move, which has just listed the next seat's moves ahead: found here, they are not read back
    from the store (a second round trip and ~40 KB for a build turn). It is looked for where
    the store's would be (a seat read lately: Games.legal_moves), and `kept_answer` checks it
    against the state read, so a value here is served only for the very state it was worked
    out from."""

    def __init__(self, size: int = LISTED_HERE) -> None:
        self._size = size
        self._values: OrderedDict[tuple[str, str], tuple[int, bytes]] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, game_id: str, name: str, version: int, value: bytes) -> None:
        with self._lock:
            self._values[(game_id, name)] = (version, value)
            self._values.move_to_end((game_id, name))
            while len(self._values) > self._size:
                self._values.popitem(last=False)

    def get(self, game_id: str, name: str, version: int) -> bytes | None:
        with self._lock:
            found = self._values.get((game_id, name))
        return found[1] if found is not None and found[0] == version else None
