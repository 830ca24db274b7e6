"""Seat tokens: `<game id>.<seat>.<secret>`. Only their SHA-256 is stored; checks run in constant
time. Naming the game and seat in the token lets a wrong game be told apart from a bad token."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets

from .errors import GameError

# The seat of a token is one ASCII digit. Not str.isdigit(): it takes '²' (which int() refuses)
# and '٣' (which int() reads as 3), neither of which a token of ours holds.
SEAT_DIGIT = re.compile(r"[0-9]", re.ASCII)


def new_secret() -> str:
    return secrets.token_urlsafe(32)


def derived_secret(idempotency_key: str, salt: str, seat: int) -> str:
    """The secret of a seat of a game created under an idempotency key: a repeat of the create
    shows the same tokens, though the store never holds them."""
    mac = hmac.new(idempotency_key.encode(), f"{salt}:{seat}".encode(), hashlib.sha256)
    return base64.urlsafe_b64encode(mac.digest()).rstrip(b"=").decode()


def make_token(game_id: str, seat: int, secret: str) -> str:
    return f"{game_id}.{seat}.{secret}"


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def bearer(header: str | None) -> str:
    """The token of an `Authorization: Bearer <token>` header; 401 when there is none."""
    if not header:
        raise GameError("TOKEN_MISSING",
            "send the seat token: Authorization: Bearer <token>",
        )
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise GameError("TOKEN_INVALID",
            "the Authorization header is not a Bearer token",
        )
    return token


def token_game(token: str, game_id: str) -> tuple[str, int]:
    """Check a token's form and game before the game is loaded: (token, its seat)."""
    parts = token.split(".")
    if len(parts) != 3 or not SEAT_DIGIT.fullmatch(parts[1]):
        raise GameError("TOKEN_INVALID", "this is not a seat token"
        )
    if parts[0] != game_id:
        raise GameError("TOKEN_OTHER_GAME", "the token is for another game")
    return token, int(parts[1])


def verify(token: str, seat: int, hashes: list[str]) -> int:
    """The token's seat, if the token is that seat's; 401 otherwise."""
    expected = hashes[seat] if seat < len(hashes) else "0" * 64
    if not hmac.compare_digest(digest(token), expected) or seat >= len(hashes):
        raise GameError("TOKEN_INVALID", "the token is not this game's"
        )
    return seat
