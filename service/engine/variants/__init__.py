"""One module per map: the rule changes that map makes, as overrides of the base hooks."""

from __future__ import annotations

from functools import cache

from service.engine.maps import load_map
from service.engine.variants.base import Rules


@cache
def rules_for(map_id: str) -> Rules:
    from service.engine.variants import registry

    return registry.VARIANTS[map_id](load_map(map_id))
