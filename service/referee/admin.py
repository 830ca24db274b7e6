"""The game-admin token, and which seats are claimed.

The creator of a game gets, beside the seat tokens, one game-admin token `<game id>.admin.<secret>`
that can reissue a seat's token and read which seats are claimed. Like a seat token it is shown
once and only its SHA-256 is stored, in the game's metadata beside the seat tokens' hashes:

    {"tokens": [seat token hash, ...], "admin": admin token hash, "claimed": [seat, ...]}

A seat is *claimed* once its current token has been used in an authenticated request (a move, or
a `moves/validate` with the token): a player has it and has used it. A reissue makes the seat
unclaimed again until the new token is used.
"""

from __future__ import annotations

import base64
import hashlib
import hmac

import orjson

from service.store import GameStore, Outcome, Stored

from . import tokens
from .errors import GameError

ADMIN = "admin"
CLAIM_ATTEMPTS = 4  # compare-and-sets of the metadata before a claim is given up as contended


def admin_token(game_id: str, idempotency_key: str | None, salt: str) -> tuple[str, str]:
    """A new game's admin token and its hash. Under an idempotency key it is derived from the
    key (as the seat tokens are), so a repeat of the create shows the same token."""
    if idempotency_key is None:
        secret = tokens.new_secret()
    else:
        mac = hmac.new(idempotency_key.encode(), f"{salt}:{ADMIN}".encode(), hashlib.sha256)
        secret = base64.urlsafe_b64encode(mac.digest()).rstrip(b"=").decode()
    token = f"{game_id}.{ADMIN}.{secret}"
    return token, tokens.digest(token)


def _invalid(detail: str) -> GameError:
    return GameError("TOKEN_INVALID", detail)


def admin_bearer(header: str | None, game_id: str) -> str:
    """The admin token of an `Authorization: Bearer` header, checked for form and game."""
    token = tokens.bearer(header)
    parts = token.split(".")
    if len(parts) != 3:
        raise _invalid("this is not a game-admin token")
    if parts[0] != game_id:
        raise GameError("TOKEN_OTHER_GAME", "the token is for another game")
    if parts[1] != ADMIN:
        raise GameError("ADMIN_TOKEN_REQUIRED", "this needs the game-admin token, not a seat token")
    return token


def verify_admin(token: str, meta: dict) -> None:
    expected = meta.get("admin") or "0" * 64  # a game made before admin tokens has none
    if not hmac.compare_digest(tokens.digest(token), expected) or "admin" not in meta:
        raise _invalid("the token is not this game's admin token")


def claimed(meta: dict) -> set[int]:
    return set(meta.get("claimed", ()))


def claim_in(meta: bytes, seat: int, token: str) -> bytes | None:
    """The metadata with `seat` claimed, for a commit that writes it with the move: None when
    it is claimed already. Refuses a token that is not the seat's current one (reissued since
    it was checked): each attempt of a commit calls this on the metadata it compares with."""
    claimed_meta = claim_of(orjson.loads(meta), seat, token)
    return None if claimed_meta is None else orjson.dumps(claimed_meta)


def claim_of(meta: dict, seat: int, token: str) -> dict | None:
    """claim_in on the decoded metadata: the new metadata decoded, or None."""
    hashes = meta["tokens"]
    if seat >= len(hashes) or not hmac.compare_digest(hashes[seat], tokens.digest(token)):
        raise _invalid("the token is not this game's (it was reissued)")
    if seat in claimed(meta):
        return None
    return {**meta, "claimed": sorted(claimed(meta) | {seat})}


def note_claimed(store: GameStore, game_id: str, stored: Stored, seat: int, token: str) -> None:
    """Marks an authenticated seat as claimed (one write, on the token's first use), for a
    request that writes nothing else (a dry run). A move claims in its own commit (claim_in).
    Should the token be reissued meanwhile, the request is refused: the old token stops
    working at once."""
    raw = stored.meta
    for _ in range(CLAIM_ATTEMPTS):
        meta = orjson.loads(raw)
        hashes = meta["tokens"]
        if seat >= len(hashes) or not hmac.compare_digest(hashes[seat], tokens.digest(token)):
            raise _invalid("the token is not this game's (it was reissued)")
        if seat in claimed(meta):
            return
        new = orjson.dumps({**meta, "claimed": sorted(claimed(meta) | {seat})})
        outcome = store.replace_meta(game_id, expected=raw, meta=new)
        if outcome is Outcome.APPLIED:
            return
        reloaded = store.load(game_id)
        if outcome is Outcome.MISSING or reloaded is None:
            raise GameError("GAME_NOT_FOUND", f"no game {game_id!r} (never created, or expired)")
        raw = reloaded.meta
    # Only a storm of reissues gets here; the token was valid at each look, so let it through
    # unmarked rather than refuse a legitimate move.
