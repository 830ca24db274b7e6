"""The HTTP resources of openapi.yaml, a module each: games and their moves (`games`),
correspondence play (`correspondence`: undo, takeback, orders), seats, webhooks, hints (`hints`),
a tenant's games (`tenants`), live updates (`live`: streams, long-polls, the spectator page)
and the pages (`docs`, `play`). Each reads its request through `..checks` and answers through
`..responses`; the game logic is the core's (service.referee)."""

from __future__ import annotations

from flask import Blueprint

from . import correspondence, docs, games, hints, play, seats, tenants, webhooks

# In the order they were registered before the move into rooms: Flask tries a URL's rules in
# registration order, so it is kept.
BLUEPRINTS: tuple[Blueprint, ...] = (
    games.bp, seats.bp, docs.bp, correspondence.bp, webhooks.bp, hints.bp, tenants.bp, play.bp,
)
