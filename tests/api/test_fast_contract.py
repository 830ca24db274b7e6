"""The contract check's fast first pass (tests/api/fast_contract.py) decides as openapi-core
alone does: on real requests and responses, and on responses broken on purpose (a field of the
wrong type, a missing field, a value outside an enum or pattern or format, a wrong content
type, an undocumented status, a missing header), both accept or reject the same ones, with
the same error."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask, Response, request
from openapi_core import OpenAPI
from openapi_core.contrib.flask import FlaskOpenAPIRequest, FlaskOpenAPIResponse
from openapi_core.exceptions import OpenAPIError

from service.store import MemoryStore
from tests.api.conftest import NAMES, SPEC, Api, make_app, openapi_config
from tests.api.fast_contract import _fast

Verdict = str | None


def _verdict(check: Any, *args: Any) -> Verdict:
    try:
        check(*args)
    except OpenAPIError as exc:
        return f"{exc!r} {exc.__cause__}"
    return None


def _leaves(node: Any, path: tuple = ()) -> Iterator[tuple]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node[:2]):
            yield from _leaves(value, (*path, index))
    else:
        yield path


def _containers(node: Any, path: tuple = ()) -> Iterator[tuple]:
    """Paths of the keys of objects (to delete), the first two items of arrays deep."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield (*path, key)
            yield from _containers(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node[:2]):
            yield from _containers(value, (*path, index))


def _set(body: Any, path: tuple, value: Any) -> Any:
    body = copy.deepcopy(body)
    node = body
    for part in path[:-1]:
        node = node[part]
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return body


_DELETE = object()
_WRONG = {str: [12345, "zz-no-such-value", " padded", "2026-13-45T99:00:00Z"],
          bool: ["true"], int: ["7", 1.5, -1, 10**20], float: ["1.5"], type(None): [0]}


def _spread(items: list, most: int) -> list:
    """At most `most` items, spread over the list (deterministic)."""
    if len(items) <= most:
        return items
    step = len(items) / most
    return [items[int(i * step)] for i in range(most)]


def _broken(response: Response) -> Iterator[tuple[str, Response]]:
    """The response, then copies of it broken on purpose."""
    yield "as sent", response

    def copy_with(data: bytes | None = None, status: int | None = None,
                  drop: str | None = None, content_type: str | None = None) -> Response:
        headers = [(k, v) for k, v in response.headers.items() if k != drop]
        broken = Response(response.get_data() if data is None else data,
                          status=status or response.status_code, headers=headers)
        if content_type is not None:
            broken.headers["Content-Type"] = content_type
        return broken

    for status in (299, 418, 204, 200, 404):
        if status != response.status_code:
            yield f"status {status}", copy_with(status=status)
    for content_type in ("text/plain", "application/json", "application/problem+json"):
        if content_type != response.mimetype:
            yield f"content type {content_type}", copy_with(content_type=content_type)
    for name in dict.fromkeys(response.headers.keys()):
        yield f"without header {name}", copy_with(drop=name)
    yield "empty body", copy_with(data=b"")
    if not response.is_json:
        return
    body = response.get_json()
    yield "not JSON", copy_with(data=b"{not json")
    yield "array for object", copy_with(data=_dumps([body]))
    for path in _spread(list(_containers(body)), 10):
        yield f"without {path}", copy_with(data=_dumps(_set(body, path, _DELETE)))
    for path in _spread(list(_leaves(body)), 10):
        if not path:
            continue
        value = _get(body, path)
        for wrong in _WRONG[type(value)]:
            yield f"{path} = {wrong!r}", copy_with(data=_dumps(_set(body, path, wrong)))
    if isinstance(body, dict):
        yield "unknown field", copy_with(data=_dumps({**body, "zz_unknown": 1}))


def _dumps(body: Any) -> bytes:
    return json.dumps(body).encode()


def _get(body: Any, path: tuple) -> Any:
    for part in path:
        body = body[part]
    return body


@pytest.fixture(scope="module")
def plain_openapi() -> OpenAPI:
    return OpenAPI.from_file_path(str(SPEC), config=openapi_config(fast=False))


def test_the_fast_pass_decides_as_openapi_core(
        openapi: OpenAPI, plain_openapi: OpenAPI, violations: list[str]) -> None:
    seen: list[tuple[str, str, Verdict, Verdict]] = []
    kinds: set[tuple] = set()

    def compare(response: Response) -> Response:
        label = f"{request.method} {request.full_path.rstrip('?')} -> {response.status_code}"
        if response.is_streamed:
            return response
        openapi_request = FlaskOpenAPIRequest(request)
        seen.append((label, "request", _verdict(plain_openapi.validate_request, openapi_request),
                     _verdict(openapi.validate_request, openapi_request)))
        # Each kind of response (operation and status) broken once; the rest as sent.
        rule = request.url_rule.rule if request.url_rule else request.path
        kind = (request.method, rule, response.status_code)
        variants = _broken(response) if kind not in kinds else iter([("as sent", response)])
        kinds.add(kind)
        for what, broken in variants:
            old = _verdict(plain_openapi.validate_response, openapi_request,
                           FlaskOpenAPIResponse(broken))
            new = _verdict(openapi.validate_response, openapi_request,
                           FlaskOpenAPIResponse(broken))
            seen.append((label, what, old, new))
        return response

    app: Flask = make_app(openapi, violations, MemoryStore())
    app.after_request_funcs.setdefault(None, []).insert(0, compare)
    api = Api(app)
    client = api.client

    game = api.create(players=3)
    game_id, token = game["game_id"], game["seats"][0]["token"]
    api.play(game, 4)
    client.get(f"/v1/games/{game_id}/history")
    client.get(f"/v1/games/{game_id}/record")
    client.get(f"/v1/games/{game_id}/seats")
    client.get("/v1/maps")
    client.get("/v1/maps/rust_belt")
    client.get("/v1/health")
    # Requests outside the contract, and their refusals.
    client.get("/v1/games/no-such-game")
    client.get(f"/v1/games/{game_id}/legal-moves", query_string={"seat": "x"})
    client.get(f"/v1/games/{game_id}/legal-moves", query_string={"seat": 99})
    client.post("/v1/games", json={"map": "rust_belt", "players": [{"name": NAMES[0]}]})
    client.post("/v1/games", json={"map": "no_such_map",
                                   "players": [{"name": n} for n in NAMES[:3]]})
    client.post("/v1/games", json={"map": "rust_belt", "players": [{"name": " Ann"}] * 3})
    client.post("/v1/games", data=b"{", content_type="application/json")
    api.move(game_id, token, {"type": "no_such_move"})
    api.move(game_id, token, {"type": "bid"})
    api.move(game_id, "not-a-token", {"type": "pass"})
    client.delete("/v1/maps")
    client.get("/v1/no-such-path")

    assert len(seen) > 500
    differ = [row for row in seen if row[2] != row[3]]
    assert not differ, "\n".join(map(str, differ[:20]))
    accepted = [row for row in seen if row[2] is None]
    rejected = [row for row in seen if row[2] is not None]
    # Both kinds in plenty: every response as sent is accepted, and broken ones rejected.
    unknown = ("/v1/no-such-path", "DELETE /v1/maps")
    sent = [row for row in seen if row[1] == "as sent" and not any(u in row[0] for u in unknown)]
    assert [row for row in sent if row[2] is not None] == []
    assert len(accepted) > 50 and len(rejected) > 300
    for kind in ("status ", "content type", "without header", "without (", "= 12345",
                 "= 'zz-no-such-value'", "= ' padded'", "2026-13-45"):
        assert any(kind in row[1] for row in rejected), kind
    assert any(row[1] == "request" for row in rejected)
    # And the fast pass was on, and judged the schemas it met itself.
    fast = _fast(openapi.spec)
    assert fast.enabled
    assert fast._validators and None not in fast._validators.values()
