"""Metric labels come from closed sets: no request can add a time series of its own.

gunicorn passes on any method of 3-20 capital letters; each new one used to become a label of
the request counter and the duration histogram (10,000 random methods grew a scrape from 64 KB
to 17 MB). Unknown methods fold into `OTHER`, unmatched paths into `unmatched`.
"""

from __future__ import annotations

import random
import re
import string

from service.api.plumbing.instrumentation import METHODS, UNMATCHED
from service.observability import metrics

LABEL = re.compile(r'(\w+)="([^"]*)"')


def label_values(text: str, family: str, label: str) -> set[str]:
    values = set()
    for line in text.splitlines():
        if line.startswith(family + "{") or line.startswith(family + "_count{"):
            values.update(v for k, v in LABEL.findall(line) if k == label)
    return values


def random_method(rng: random.Random) -> str:
    return "".join(rng.choices(string.ascii_uppercase, k=rng.randint(3, 20)))


def test_random_methods_do_not_grow_the_metrics(api) -> None:
    rng = random.Random(11)
    paths = ["/v1/health", "/v1/games", "/v1/games/abc/moves", "/no/such/path"]
    for _ in range(100):  # every (route, status) pair of these paths exists before measuring
        api.client.open(rng.choice(paths), method=random_method(rng))
    before, _ = metrics.exposition()
    # 500 fresh methods: one that became a label would add a series (about 2 KB with its
    # histogram's buckets), far over the bound below, and the label check names it.
    for _ in range(500):
        response = api.client.open(rng.choice(paths), method=random_method(rng))
        assert response.status_code in (404, 405)
    after, _ = metrics.exposition()
    # Only numbers changed (a count gains a digit, a sum of seconds its decimals): no new series.
    assert len(after) - len(before) < 2000, (len(before), len(after))
    text = after.decode()
    for family in ("aos_http_requests_total", "aos_http_request_duration_seconds"):
        methods = label_values(text, family, "method")
        assert methods <= METHODS | {"OTHER"}, methods - METHODS
        assert "OTHER" in methods


def test_known_methods_keep_their_label_and_unmatched_paths_fold(api) -> None:
    for method in ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"):
        api.client.open(f"/no/such/{method.lower()}/{random.random()}", method=method)
    text = metrics.exposition()[0].decode()
    routes = label_values(text, "aos_http_requests_total", "route")
    assert not [r for r in routes if "/no/such" in r]
    assert UNMATCHED in routes
    assert {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} <= label_values(
        text, "aos_http_requests_total", "method"
    )
