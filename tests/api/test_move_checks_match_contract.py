"""The request checks (service/api/checks/shapes.py, marshmallow) take exactly the move shapes of
openapi.yaml: for every move type, examples made from the contract's own schema, valid ones at each
bound and value and invalid ones breaking one constraint each (a missing or unknown field, a wrong
type, a value past a bound, outside an enum or a pattern, a list too short or too long, a bad
item), get the same verdict from the contract (jsonschema) and from the checks. So the move
shapes are written once, in openapi.yaml, and the checks are held to them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator
from marshmallow import ValidationError

from service.api.checks import shapes as schemas

SPEC = yaml.safe_load((Path(__file__).resolve().parents[2] / "openapi.yaml").read_text())
COMPONENTS = SPEC["components"]["schemas"]
# A value of each JSON type, to try where the schema wants another.
OTHER_TYPES: dict[str, list[Any]] = {
    "integer": [1.5, "1", True, None, [], {}],
    "string": [5, None, True, [], {}],
    "array": ["x", 5, None, {}],
    "object": ["x", 5, None, []],
}


def resolve(schema: dict) -> dict:
    while "$ref" in schema:
        schema = COMPONENTS[schema["$ref"].rsplit("/", 1)[-1]]
    if "allOf" in schema and len(schema["allOf"]) == 1:
        return resolve(schema["allOf"][0])
    return schema


def kind(schema: dict) -> str:
    if "type" in schema:
        return schema["type"]
    if "const" in schema or "enum" in schema:
        return "string" if isinstance((schema.get("enum") or [schema.get("const")])[0], str) else "integer"
    return "object" if "properties" in schema else "any"


def valid(schema: dict) -> list[Any]:
    """Values the schema takes: each bound, each enum value, the shortest and longest lists."""
    schema = resolve(schema)
    if "const" in schema:
        return [schema["const"]]
    if "enum" in schema:
        return list(schema["enum"])
    t = kind(schema)
    if t == "integer":
        low, high = schema.get("minimum", -7), schema.get("maximum", 7)
        return sorted({low, high, float(low)}, key=repr)  # 2.0 is an integer to JSON Schema too
    if t == "string":
        if "pattern" in schema:
            return [example for example in PATTERN_EXAMPLES[schema["pattern"]][0]]
        return ["x" * max(schema.get("minLength", 0), 1), "x" * schema.get("maxLength", 20)]
    if t == "array":
        item = valid(schema["items"])
        low, high = schema.get("minItems", 0), schema.get("maxItems", 3)
        return [[item[i % len(item)] for i in range(n)] for n in sorted({low, high})]
    if t == "object" and "properties" in schema:
        return [value for value in objects(schema)]
    if t == "object":  # a map of values: keys by propertyNames
        names = PATTERN_EXAMPLES[schema["propertyNames"]["pattern"]][0]
        return [{}, {name: valid(schema["additionalProperties"])[0] for name in names}]
    raise AssertionError(f"no examples for {schema}")


def invalid(schema: dict) -> list[Any]:
    """Values the schema refuses, each breaking one of its constraints."""
    schema = resolve(schema)
    t = kind(schema)
    out = list(OTHER_TYPES.get(t, []))
    if "const" in schema or "enum" in schema:
        return out + ["nope", ""] if t == "string" else out + [99]
    if t == "integer":
        if "minimum" in schema:
            out.append(schema["minimum"] - 1)
        if "maximum" in schema:
            out.append(schema["maximum"] + 1)
    elif t == "string":
        if "pattern" in schema:
            out += PATTERN_EXAMPLES[schema["pattern"]][1]
        if "maxLength" in schema:
            out.append("x" * (schema["maxLength"] + 1))
        if schema.get("minLength", 0) > 0:
            out.append("")
    elif t == "array":
        item, bad = valid(schema["items"])[0], invalid(schema["items"])
        if schema.get("minItems", 0) > 0:
            out.append([item] * (schema["minItems"] - 1))
        if "maxItems" in schema:
            out.append([item] * (schema["maxItems"] + 1))
        out += [[item, b] for b in bad]
    elif t == "object" and "properties" in schema:
        base = next(objects(schema))
        for name in schema.get("required", []):
            out.append({k: v for k, v in base.items() if k != name})
        if schema.get("additionalProperties") is False:
            out.append({**base, "unknown": 1})
        branches = [b["required"] for b in schema.get("oneOf", [])]
        if branches:  # exactly one of the branches: both at once, and neither
            every = {name: valid(schema["properties"][name])[0] for branch in branches for name in branch}
            out += [{**base, **every}, {k: v for k, v in base.items() if k not in every}]
        for name, sub in schema["properties"].items():
            out += [{**base, name: bad} for bad in invalid(sub)]
    elif t == "object":
        names, bad_names = PATTERN_EXAMPLES[schema["propertyNames"]["pattern"]]
        good = valid(schema["additionalProperties"])[0]
        out += [{name: good} for name in bad_names]
        out += [{names[0]: bad} for bad in invalid(schema["additionalProperties"])]
    return out


def objects(schema: dict) -> Iterator[dict]:
    """An object schema's valid examples: its required fields first, then each property at each
    of its valid values (one branch of a oneOf of required sets at a time)."""
    required = list(schema.get("required", []))
    branches = [b.get("required", []) for b in schema.get("oneOf", [])] or [[]]
    for branch in branches:
        base = {name: valid(schema["properties"][name])[0] for name in required + branch}
        yield base
        for name, sub in schema["properties"].items():
            if any(name in other for other in branches if other is not branch):
                continue
            for value in valid(sub):
                yield {**base, name: value}


# Each pattern of the move schemas, with values it takes and values it refuses.
PATTERN_EXAMPLES: dict[str, tuple[list[str], list[str]]] = {
    "^(light-[1-6]|dark-[1-6]|[A-H])$": (["light-1", "dark-6", "A", "H"],
                                          ["light-0", "dark-7", "I", "a", "light-1 "]),
    "^[0-5]$": (["0", "5"], ["6", "00", "-1", "x"]),
}


def move_types(union: str) -> dict[str, dict]:
    mapping = COMPONENTS[union].get("discriminator", {}).get("mapping")
    if mapping is None:  # a union of unions (RecordedMove: Move, or a resignation): its leaves
        out: dict[str, dict] = {}
        for branch in COMPONENTS[union]["oneOf"]:
            name = branch["$ref"].rsplit("/", 1)[-1]
            if "properties" in COMPONENTS[name]:
                out[COMPONENTS[name]["properties"]["type"]["const"]] = COMPONENTS[name]
            else:
                out.update(move_types(name))
        return out
    return {t: COMPONENTS[ref.rsplit("/", 1)[-1]] for t, ref in mapping.items()}


def checks_take(move: Any, table: dict) -> bool:
    try:
        schemas.load_move(move, table)
    except ValidationError:
        return False
    return True


CASES = [("Move", schemas.MOVE_SCHEMAS), ("RecordedMove", schemas.RECORD_MOVE_SCHEMAS)]


@pytest.mark.parametrize(("union", "table"), CASES, ids=[c[0] for c in CASES])
def test_the_checks_know_the_contract_s_move_types_and_no_other(union: str, table: dict) -> None:
    assert set(table) == set(move_types(union))


@pytest.mark.parametrize(("union", "table"), CASES, ids=[c[0] for c in CASES])
def test_the_checks_take_and_refuse_every_move_shape_as_the_contract_does(union: str, table: dict) -> None:
    contract = Draft202012Validator({"components": SPEC["components"],
                                     "$ref": f"#/components/schemas/{union}"})
    tried = {True: 0, False: 0}
    differ = []
    for move_type, schema in sorted(move_types(union).items()):
        examples = [(m, True) for m in valid(schema)] + [(m, False) for m in invalid(schema)]
        for move, meant in examples:
            if isinstance(move, dict) and move.get("type") != move_type:
                continue  # the type itself broken: another type's shape, or none (below)
            verdict = contract.is_valid(move)
            assert verdict == meant, f"the examples are wrong about {move} ({move_type})"
            tried[verdict] += 1
            if checks_take(move, table) != verdict:
                differ.append((move_type, move, "contract takes it" if verdict else "contract refuses it"))
    for move in ({"type": "nope"}, {"type": 5}, {}, [], "pass", None):
        assert not contract.is_valid(move) and not checks_take(move, table)
    assert not differ, "\n".join(map(str, differ))
    # Enough of each to mean something: every type at its bounds, every constraint broken.
    assert tried[True] >= 4 * len(table) and tried[False] >= 10 * len(table), tried
