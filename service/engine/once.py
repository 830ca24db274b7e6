"""What is worked out once per object of the map's data (a MapData, a Rules) and kept.

functools.cache cannot key these: the map's dataclasses compare by value, so they are not
hashable, and hashing a whole map per call would cost more than what is kept. So the kept
value is filed under the object's id, with the object itself beside it: held, its id is never
another object's, and an object made again (another MapData of the same map) gets its own.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

V = TypeVar("V")


def once_per(make: Callable[[Any], V]) -> Callable[[Any], V]:
    """`make(obj)`, worked out at the first call for each object and kept for good."""
    kept: dict[int, tuple[object, V]] = {}

    @functools.wraps(make)
    def known(obj: Any) -> V:
        found = kept.get(id(obj))
        if found is None or found[0] is not obj:
            found = kept[id(obj)] = (obj, make(obj))
        return found[1]

    known.kept = kept  # type: ignore[attr-defined]  # what is kept, for a test to look at
    return known
