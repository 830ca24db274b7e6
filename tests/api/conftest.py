"""The API under test: every request and response is checked against openapi.yaml."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from flask import Flask, request
from jsonschema_path import SchemaPath
from openapi_core import Config, OpenAPI
from openapi_core.contrib.flask import FlaskOpenAPIRequest, FlaskOpenAPIResponse
from openapi_core.exceptions import OpenAPIError
from openapi_core.templating.paths.exceptions import OperationNotFound, PathNotFound
from werkzeug.exceptions import RequestEntityTooLarge

from service.api import create_app
from service.referee.settings import Settings
from service.store import GameStore, MemoryStore, RedisStore
from tests.api.fast_contract import (
    FastRequestValidator,
    FastResponseHeadersValidator,
    FastResponseValidator,
)

SPEC = Path(__file__).parents[2] / "openapi.yaml"
NAMES = ["Ada", "Brunel", "Cugnot", "Daimler", "Ericsson", "Fairlie"]


def _text(data: bytes, **_: object) -> str:
    return data.decode("utf-8")


def openapi_config(fast: bool = True) -> Config:
    """The contract checker's configuration; `fast` adds the fast first pass of
    tests/api/fast_contract.py to openapi-core's schema checks (test_fast_contract.py shows
    both decide alike)."""
    # The SVG and YAML bodies are text; openapi-core has no deserializer of its own for them.
    text = {
        "image/svg+xml": _text,
        "application/yaml": _text,
        "text/plain": _text,
        "text/html": _text,
        "text/css": _text,
        "application/javascript": _text,
        "text/javascript": _text,
        "application/problem+json": lambda data, **_: orjson.loads(data),
    }
    if not fast:
        return Config(extra_media_type_deserializers=text)
    return Config(extra_media_type_deserializers=text, request_validator_cls=FastRequestValidator,
                  response_validator_cls=FastResponseValidator)


# Paths into openapi.yaml that the checker keeps resolved ($refs followed), by jsonschema-path's
# own cache (off unless sized; openapi-core takes the SchemaPath as made here). Without it every
# request and response was checked by walking the document from its root again, some 100 walks
# a request: the check was 65 % of test_games.py's, test_undo.py's and test_takeback.py's time
# under a profiler, and is half that now.
RESOLVED_PATHS = 1 << 14


@pytest.fixture(scope="session")
def openapi() -> OpenAPI:
    spec = SchemaPath.from_file_path(str(SPEC), resolved_cache_maxsize=RESOLVED_PATHS)
    return OpenAPI(spec, config=openapi_config())


def check_contract(app: Flask, openapi: OpenAPI, violations: list[str]) -> None:
    """Every functional test becomes a contract test: a request outside the contract must get a
    4xx, and every response must be one the contract describes."""

    def _check(response):  # type: ignore[no-untyped-def]
        label = f"{request.method} {request.full_path.rstrip('?')} -> {response.status_code}"
        if response.status_code >= 500 and response.status_code != 503:
            violations.append(f"{label}: server error {response.get_data()[:300]!r}")
        try:
            openapi_request = FlaskOpenAPIRequest(request)
            openapi.validate_request(openapi_request)
        # A body over the limit cannot be read; one too deep for the stdlib json parser that
        # openapi-core uses is invalid too.
        except (OpenAPIError, RecursionError, RequestEntityTooLarge) as exc:
            if response.status_code < 400:
                violations.append(f"{label}: accepted an invalid request: {exc!r} {exc.__cause__}")
            if isinstance(exc, PathNotFound | OperationNotFound):
                # Outside the contract's paths and methods: only a problem 404 or 405 will do.
                if response.status_code not in (404, 405) or not response.is_json:
                    violations.append(f"{label}: an unknown path or method must be 404/405")
                return response
        if response.status_code == 413:
            openapi_request = _Unread(request)
        try:
            if response.is_streamed:
                # An events stream has no end: its status and headers are checked here, its
                # events by the stream tests, which read them.
                FastResponseHeadersValidator(openapi.spec).validate(
                    openapi_request, FlaskOpenAPIResponse(response))
            else:
                openapi.validate_response(openapi_request, FlaskOpenAPIResponse(response))
        except OpenAPIError as exc:
            detail = f"{exc!r} {exc.__cause__}"[:2000]
            violations.append(f"{label}: response outside the contract: {detail}")
        return response

    # Flask runs after_request hooks last-registered first: put this one at the front of the
    # list so that it runs last and sees the response as sent (with the app's X-Request-Id).
    app.after_request_funcs.setdefault(None, []).insert(0, _check)


class _Unread(FlaskOpenAPIRequest):
    """The request of a 413: its body is never read (it is over the limit)."""

    @property
    def body(self) -> bytes:
        return b""


def make_app(openapi: OpenAPI, violations: list[str], store: GameStore, **settings) -> Flask:
    app = create_app(store=store, settings=Settings(**settings))
    app.config["TESTING"] = True
    check_contract(app, openapi, violations)
    return app


@pytest.fixture
def violations() -> Iterator[list[str]]:
    found: list[str] = []
    yield found
    assert not found, "\n".join(found)


@pytest.fixture
def app(openapi: OpenAPI, violations: list[str]) -> Flask:
    return make_app(openapi, violations, MemoryStore())


@pytest.fixture
def redis_store(redis_url: str) -> Iterator[RedisStore]:
    store = RedisStore(redis_url)
    yield store
    store.close()


class Api:
    """A thin test client speaking the contract."""

    def __init__(self, app: Flask) -> None:
        self.app = app
        self.client = app.test_client()

    def create(self, players: int = 3, seed: str | None = "test-seed", **extra) -> dict:
        body = {"map": "rust_belt", "players": [{"name": n} for n in NAMES[:players]], **extra}
        if seed is not None:
            body["seed"] = seed
        response = self.client.post("/v1/games", json=body)
        assert response.status_code == 201, response.get_json()
        return response.get_json()

    def view(self, game_id: str) -> dict:
        response = self.client.get(f"/v1/games/{game_id}")
        assert response.status_code == 200, response.get_json()
        return response.get_json()

    def legal(self, game_id: str, seat: int) -> list[dict]:
        response = self.client.get(f"/v1/games/{game_id}/legal-moves", query_string={"seat": seat})
        assert response.status_code == 200, response.get_json()
        return response.get_json()["moves"]

    def move(self, game_id: str, token: str, move: object, **headers: str):
        headers = {k.replace("_", "-"): v for k, v in headers.items()}
        return self.client.post(
            f"/v1/games/{game_id}/moves",
            json=move,
            headers={"Authorization": f"Bearer {token}", **headers},
        )

    def snapshot(self, game_id: str) -> tuple[bytes, bytes]:
        """The view and history as bytes: to show a request changed nothing."""
        view = self.client.get(f"/v1/games/{game_id}").get_data()
        history = self.client.get(f"/v1/games/{game_id}/history").get_data()
        return view, history

    def play(self, game: dict, moves: int, rng: random.Random | None = None) -> dict:
        """Play up to `moves` legal moves (random but deterministic); returns the last view."""
        rng = rng or random.Random(7)
        tokens = [s["token"] for s in game["seats"]]
        view = self.view(game["game_id"])
        for _ in range(moves):
            seat = view["active_seat"]
            if seat is None:
                break
            move = rng.choice(self.legal(game["game_id"], seat))
            response = self.move(game["game_id"], tokens[seat], move)
            assert response.status_code == 200, response.get_json()
            view = response.get_json()["game"]
        return view


@pytest.fixture
def api(app: Flask) -> Api:
    return Api(app)


@pytest.fixture
def api_on(openapi: OpenAPI, violations: list[str]):
    """A factory: an Api over its own app instance on the given store."""

    def build(store: GameStore, **settings) -> Api:
        return Api(make_app(openapi, violations, store, **settings))

    return build
