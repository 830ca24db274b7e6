# Hand-written (not generated): the base of the generated errors; tools/generate_client.py uses it.
"""`ApiError`, the exception of every non-2xx answer, carrying the problem+json body."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import requests

from .models import Problem


class ApiError(Exception):
    """A non-2xx answer. `status`, and from the problem+json body: `code` (stable, branch on it),
    `title`, `detail`, `problem` (the parsed `Problem`, or None) and `body` (the raw JSON)."""

    status: int = 0

    def __init__(self, status: int, body: Any = None, response: requests.Response | None = None) -> None:
        self.status = status
        self.body = body
        self.response = response
        self.problem: Problem | None = None
        if isinstance(body, dict) and "code" in body:
            try:
                self.problem = Problem.from_dict(body)
            except (KeyError, TypeError, ValueError):
                self.problem = None
        data = body if isinstance(body, dict) else {}
        self.code: str | None = data.get("code")
        self.title: str | None = data.get("title")
        self.detail: str | None = data.get("detail")
        super().__init__(f"{status} {self.code or self.title or ''}: {self.detail or body!r}".strip())

    def get(self, key: str, default: Any = None) -> Any:
        """A field of the problem body, e.g. `need` and `have` of `INSUFFICIENT_CASH`."""
        return self.body.get(key, default) if isinstance(self.body, dict) else default

    @property
    def version(self) -> int | None:
        """The game's current version, when the problem says it (412)."""
        version = self.get("version")
        return version if isinstance(version, int) else None

    @property
    def request_id(self) -> str | None:
        """The service's `X-Request-Id` for the failed request: quote it in a bug report."""
        return self.response.headers.get("X-Request-Id") if self.response is not None else None

    @property
    def retry_after(self) -> float | None:
        """Seconds to wait, from `Retry-After` (429, 503)."""
        value = self.response.headers.get("Retry-After") if self.response is not None else None
        try:
            return float(value) if value is not None else None
        except ValueError:
            return None


def error_from(response: requests.Response, by_status: Mapping[int, type[ApiError]]) -> ApiError:
    """The exception for a non-2xx response: the class for its status, else `ApiError`."""
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    cls = by_status.get(response.status_code, ApiError)
    return cls(response.status_code, body, response)
