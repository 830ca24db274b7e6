"""The HTTP load generator's own honesty: a run whose connections run out of requests before its
time is up says so (its req/s is the load's, not the server's), and the move runs are given
enough games not to."""

from __future__ import annotations

from benchmarks.http.load import run
from benchmarks.http.run import MOVES_PER_SECOND_BOUND, games_enough


def _plan_of(count: int | None):
    """A plan of `count` GETs per connection, or of GETs without end (None)."""
    def factory(i: int):
        sent = iter(range(count)) if count is not None else iter(int, 1)
        return lambda last: ("GET", f"/{i}", None, {}) if next(sent, None) is not None else None
    return factory


def test_connections_that_run_out_of_requests_before_the_time_is_up_are_counted(server: int) -> None:
    result = run("dry", "127.0.0.1", server, _plan_of(3), connections=2, seconds=2, processes=1)
    assert result.requests == 6
    assert result.statuses == {200: 6}
    assert result.ran_dry == 2
    # Its req/s is over the whole time asked for, which is why ran_dry must be read with it.
    assert result.rps == 3.0


def test_connections_busy_to_the_end_are_not_counted_as_dry(server: int) -> None:
    result = run("busy", "127.0.0.1", server, _plan_of(None), connections=2, seconds=0.3,
                 processes=2)
    assert result.ran_dry == 0
    assert result.requests > 2
    assert set(result.statuses) == {200}


def test_each_move_connection_gets_games_enough_for_the_bound_rate() -> None:
    # 10 s at 16 connections, games of 123 moves: 3,125 moves a connection at the bound's
    # 5,000 a second in all, 25.4 games, so 26 and one to spare. The six a connection had
    # before ran dry after ~6 s at 1,800 moves a second.
    assert MOVES_PER_SECOND_BOUND == 5000
    assert games_enough(10, 16, 123) == 27
    assert games_enough(5, 16, 123) == 14
    assert games_enough(3, 1, 123) == 123
    for seconds, connections, moves in ((10, 16, 123), (5, 16, 123), (3, 1, 130), (20, 64, 90)):
        games = games_enough(seconds, connections, moves)
        assert games * moves >= seconds * MOVES_PER_SECOND_BOUND / connections + moves
