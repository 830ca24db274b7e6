# Hand-written (not generated): the HTTP side of `AosClient`; tools/generate_client.py uses it.
"""`Transport`: a `requests.Session` with timeouts, retries and an `Idempotency-Key` on every POST.

Every POST carries an `Idempotency-Key` (a fresh uuid4 unless you give one), so a POST is safe to
retry: a repeat returns the first answer and applies nothing. GETs and POSTs are retried with
exponential backoff on connection errors, timeouts, 429 and 503 (`retries` times). Non-2xx answers
raise the exceptions of `aos_client.errors`.
"""

from __future__ import annotations

import contextlib
import random
import time
import uuid
from collections.abc import Mapping
from typing import Any, TypeVar
from urllib.parse import quote

import requests

from .errors import error_for

DEFAULT_TIMEOUT = 10.0
RETRY_STATUSES = frozenset({429, 503})
TransportT = TypeVar("TransportT", bound="Transport")


def quote_path(value: Any) -> str:
    """A path parameter, URL-quoted whole (a `/` in it stays inside the parameter)."""
    return quote(str(value), safe="")


def etag_of(value: int | str | None) -> str | None:
    """A version as an entity tag: 7 -> '"7"'; a string is sent as it is."""
    if value is None or isinstance(value, str):
        return value
    return f'"{int(value)}"'


def _encode_body(body: Any) -> Any:
    to_dict = getattr(body, "to_dict", None)
    return to_dict() if callable(to_dict) else body


class Transport:
    """`timeout` (seconds) applies to each attempt; `retries` and `backoff` (seconds, doubled each
    time, with jitter) govern retries of requests that are safe to repeat. `last_response` is the
    last `requests.Response` (for headers such as `ETag` and `Location`)."""

    API_VERSION = ""

    def __init__(
        self,
        base_url: str,
        *,
        session: requests.Session | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = 3,
        backoff: float = 0.2,
        max_backoff: float = 5.0,
        user_agent: str | None = None,
        api_key: str | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        # A host's tenant key (`aos_…`): sent as X-API-Key with every request when given.
        self.api_key = api_key
        self.session = session or requests.Session()
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.user_agent = user_agent or "aos-client/" + self.API_VERSION
        self.last_response: requests.Response | None = None

    def close(self) -> None:
        """Closes the session's pooled connections (leaving a `with AosClient(...)` block does it).
        The client stays usable: a later request opens a new connection."""
        self.session.close()

    def __enter__(self: TransportT) -> TransportT:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _sleep_before_retry(self, attempt: int, response: requests.Response | None) -> None:
        delay = min(self.max_backoff, self.backoff * (2**attempt)) * (0.5 + random.random() / 2)
        if response is not None:
            with contextlib.suppress(ValueError):
                delay = max(delay, min(self.max_backoff, float(response.headers.get("Retry-After", 0))))
        time.sleep(delay)

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str | None] | None = None,
        body: Any = None,
        token: str | None = None,
        idempotency_key: str | None = None,
        expect: str | None = "json",
        not_modified: bool = False,
        timeout: float | None = None,
    ) -> Any:
        sent = {"User-Agent": self.user_agent, "Accept": "application/json, application/problem+json"}
        if self.api_key is not None:
            sent["X-API-Key"] = self.api_key
        if expect == "text":
            sent["Accept"] = "*/*"
        for name, value in (headers or {}).items():
            if value is not None:
                sent[name] = value
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        if method == "POST":
            sent["Idempotency-Key"] = idempotency_key or str(uuid.uuid4())
        safe = method in ("GET", "HEAD") or "Idempotency-Key" in sent
        query = {k: v for k, v in (params or {}).items() if v is not None}
        json_body = None if body is None else _encode_body(body)
        attempt = 0
        while True:
            try:
                response = self.session.request(
                    method,
                    self.base_url + path,
                    params=query or None,
                    json=json_body,
                    headers=sent,
                    timeout=timeout or self.timeout,
                )
            except (requests.ConnectionError, requests.Timeout):
                if not safe or attempt >= self.retries:
                    raise
                self._sleep_before_retry(attempt, None)
                attempt += 1
                continue
            self.last_response = response
            if response.status_code in RETRY_STATUSES and safe and attempt < self.retries:
                self._sleep_before_retry(attempt, response)
                attempt += 1
                continue
            break
        if response.status_code == 304 and not_modified:
            return None
        if not 200 <= response.status_code < 300:
            raise error_for(response)
        if expect == "json":
            return response.json()
        if expect == "text":
            return response.text
        return None
