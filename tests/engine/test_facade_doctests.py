"""The examples in the facade's docstrings (service/engine/game.py), the first thing a user of
the library reads, run as written."""

from __future__ import annotations

import doctest

from service.engine import game


def test_the_facade_examples_run_as_written():
    result = doctest.testmod(game, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    # Every public function a user starts from carries an example.
    finder = doctest.DocTestFinder()
    with_examples = {t.name.rsplit(".", 1)[-1] for t in finder.find(game) if t.examples}
    assert {"game", "new_game", "legal_moves", "apply", "view", "active_seat"} <= with_examples
