"""engine/once.py: a value worked out once per object of the map's data, even when the object
is unhashable, and never handed to another object that happens to be equal."""

from __future__ import annotations

from dataclasses import dataclass

from service.engine.once import once_per


@dataclass
class Board:  # compares by value and is unhashable, as the map's data is
    cells: list[int]


def test_a_value_is_made_once_per_object_and_an_equal_object_gets_its_own() -> None:
    made: list[int] = []

    @once_per
    def total(board: Board) -> int:
        made.append(1)
        return sum(board.cells)

    first, again = Board([1, 2]), Board([1, 2])
    assert total(first) == total(first) == 3 and len(made) == 1
    assert total(again) == 3 and len(made) == 2  # equal, but another object
    first.cells.append(4)
    assert total(first) == 3  # kept for good: the map's data does not change
