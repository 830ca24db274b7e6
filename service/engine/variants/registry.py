"""Which variant module plays which map."""

from __future__ import annotations

from service.engine.variants.base import Rules
from service.engine.variants.berlin import Berlin
from service.engine.variants.holland import Holland
from service.engine.variants.iraq import Iraq
from service.engine.variants.madagascar import Madagascar
from service.engine.variants.rust_belt import RustBelt

VARIANTS: dict[str, type[Rules]] = {
    "rust_belt": RustBelt,
    "madagascar": Madagascar,
    "holland": Holland,
    "iraq": Iraq,
    "berlin": Berlin,
}
