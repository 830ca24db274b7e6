"""Every example in openapi.yaml is an instance of its schema: a schema's own `example`, a
property's, a parameter's, and each request or response body's `example`/`examples`. An example
is what a reader copies, so a wrong one is a bug of the contract."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.contract import parsed_contract

SPEC = Path(__file__).parents[2] / "openapi.yaml"
spec = parsed_contract()


def resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        *_, kind, name = node["$ref"].split("/")
        node = spec["components"][kind][name]
    return node


def in_schema(schema: dict[str, Any], where: str) -> Iterator[tuple[str, dict[str, Any], Any]]:
    """(where, schema, example) of a schema and of the schemas inside it."""
    if not isinstance(schema, dict):
        return
    if "example" in schema:
        yield where, schema, schema["example"]
    for i, example in enumerate(schema.get("examples") or []):
        yield f"{where} examples[{i}]", schema, example
    for name, sub in (schema.get("properties") or {}).items():
        yield from in_schema(sub, f"{where}.{name}")
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            yield from in_schema(schema[key], f"{where}[{key}]")
    for key in ("allOf", "oneOf", "anyOf"):
        for i, sub in enumerate(schema.get(key) or []):
            yield from in_schema(sub, f"{where} {key}[{i}]")


def in_content(content: dict[str, Any], where: str) -> Iterator[tuple[str, dict[str, Any], Any]]:
    for media, body in (content or {}).items():
        schema = body.get("schema")
        if schema is None:
            continue
        if "example" in body:
            yield f"{where} {media}", schema, body["example"]
        for name, example in (body.get("examples") or {}).items():
            example = resolve(example)
            if "value" in example:
                yield f"{where} {media} examples.{name}", schema, example["value"]


def every_example() -> Iterator[tuple[str, dict[str, Any], Any]]:
    for name, schema in spec["components"]["schemas"].items():
        yield from in_schema(schema, name)
    for name, parameter in spec["components"].get("parameters", {}).items():
        if "example" in parameter and "schema" in parameter:
            yield f"parameters.{name}", parameter["schema"], parameter["example"]
    for name, response in spec["components"].get("responses", {}).items():
        yield from in_content(response.get("content"), f"responses.{name}")
    for path, item in spec["paths"].items():
        for method, op in item.items():
            if not isinstance(op, dict):
                continue
            where = f"{method.upper()} {path}"
            for parameter in [*item.get("parameters", []), *op.get("parameters", [])]:
                parameter = resolve(parameter)
                if "example" in parameter and "schema" in parameter:
                    yield f"{where} {parameter['name']}", parameter["schema"], parameter["example"]
            if "requestBody" in op:
                yield from in_content(resolve(op["requestBody"]).get("content"), f"{where} body")
            for status, response in (op.get("responses") or {}).items():
                yield from in_content(resolve(response).get("content"), f"{where} {status}")


EXAMPLES = list(every_example())


def test_the_contract_has_examples_to_check() -> None:
    # Every named schema that is an object or a union shows one (what Swagger UI shows first).
    assert len(EXAMPLES) > 150, len(EXAMPLES)


@pytest.mark.parametrize(("where", "schema", "example"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_every_example_is_an_instance_of_its_schema(where: str, schema: dict[str, Any], example: Any) -> None:
    validator = Draft202012Validator({**schema, "components": spec["components"]})
    errors = sorted(validator.iter_errors(example), key=lambda e: list(e.absolute_path))
    assert not errors, f"{where}: {errors[0].message} at {list(errors[0].absolute_path)}"


def test_the_share_issue_examples_say_what_the_rules_do() -> None:
    """The examples of Cat (seat 2, first in turn order) issuing one share show the event the
    engine makes ($5 a share), in the service's words, and the view after it: Cat at $15 with 3
    shares, Bob to decide."""
    from service.engine import game, words

    state = game.new_game("rust_belt", ["Ann", "Bob", "Cat"], seed="e")  # a seed that puts Cat first
    assert state["turn_order"] == [2, 1, 0]
    after, events = game.apply(state, 2, {"type": "issue_shares", "count": 1})
    assert events == [{"type": "shares_issued", "seat": 2, "count": 1, "cash": 5}]
    words.Teller.of(state).events(events)
    assert events[0]["text"] == "Cat issues 1 share for $5"
    schemas = spec["components"]["schemas"]
    assert schemas["HistoryEntry"]["example"]["events"] == events
    for name in ("MoveResult", "GameEvent"):
        example = schemas[name]["example"]
        assert example["events"] == events, name
        view = example["game"]
        assert view["version"] == 1 and view["active_seat"] == game.active_seat(after) == 1, name
        assert [(p["cash"], p["shares"]) for p in view["players"]] == [
            (p["cash"], p["shares"]) for p in after["players"]
        ] == [(10, 2), (10, 2), (15, 3)], name
