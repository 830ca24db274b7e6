"""Rust Belt, the standard map: the base rules as they are."""

from __future__ import annotations

from service.engine.variants.base import Rules


class RustBelt(Rules):
    pass
