"""The request checks (service/api/checks/shapes.py, marshmallow) take exactly the move shapes of
openapi.yaml: for every move type, examples made from the contract's own schema, valid ones at each
bound and value and invalid ones breaking one constraint each (a missing or unknown field, a wrong
type, a value past a bound, outside an enum or a pattern, a list too short or too long, a bad
item), get the same verdict from the contract (jsonschema) and from the checks. So the move
shapes are written once, in openapi.yaml, and the checks are held to them."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from jsonschema import Draft202012Validator
from marshmallow import ValidationError

from service.api.checks import compiled
from service.api.checks import shapes as schemas
from service.engine.playout import play_random_game
from tests.contract import parsed_contract

SPEC = parsed_contract()
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


def has_float(value: Any) -> bool:
    if isinstance(value, dict):
        return any(has_float(v) for v in value.values())
    if isinstance(value, list):
        return any(has_float(v) for v in value)
    return isinstance(value, float)


def test_the_compiled_checks_load_what_marshmallow_loads_and_leave_it_every_other_body() -> None:
    # compiled.py: a check either returns what the schema's load returns (the same dict, keys in
    # the same order: log entries hold moves as loaded) or stands aside. Every move type
    # compiles, and every valid example without a float (2.0, which the schema converts) takes
    # the quick way.
    assert set(schemas.MOVE_CHECKS) == set(schemas.RECORD_MOVE_SCHEMAS)
    quick = {True: 0, False: 0}
    for move_type, schema in sorted(move_types("RecordedMove").items()):
        loaded_by, check = schemas.MOVE_CHECKS[move_type]
        examples = [(m, True) for m in valid(schema)] + [(m, False) for m in invalid(schema)]
        for move, meant in examples:
            if not isinstance(move, dict) or move.get("type") != move_type:
                continue
            # The body's keys in another order too: the output follows the schema's.
            for body in (move, dict(reversed(list(move.items())))):
                try:
                    got = check(body)
                except compiled.Unsure:
                    assert not (meant and not has_float(body)), f"{move_type}: {body} not taken"
                    continue
                quick[meant] += 1
                assert orjson.dumps(got) == orjson.dumps(loaded_by.load(body)), body
                # Taken by the schema but not by the contract: a build with both tracks and
                # town_exits, or neither, which load_move refuses after the schema.
                assert meant or not checks_take(body, schemas.RECORD_MOVE_SCHEMAS), body
    assert quick[True] >= 8 * len(schemas.MOVE_CHECKS), quick


@pytest.mark.parametrize("map_id", ["rust_belt", "madagascar", "holland", "iraq", "berlin"])
def test_every_move_a_game_lists_takes_the_compiled_check(map_id: str) -> None:
    # The moves clients send are the listed ones, informational fields and all: each must be
    # loaded the quick way, to what the schema loads.
    seen: set[str] = set()

    def listed(_state, _seat, _move, options, *rest) -> None:  # type: ignore[no-untyped-def]
        for option in options[:40]:
            schema, check = schemas.MOVE_CHECKS[option["type"]]
            assert orjson.dumps(check(option)) == orjson.dumps(schema.load(option)), option
            seen.add(option["type"])

    play_random_game(map_id, 3, f"compiled-{map_id}", random.Random(3), cash=60, on_move=listed)
    assert {"bid", "build", "deliver", "select_action", "issue_shares", "pass"} <= seen, seen


def test_a_schema_with_a_field_or_rule_the_compiler_does_not_know_is_left_to_marshmallow() -> None:
    from marshmallow import fields, validate

    unknown_rule = schemas.Strict.from_dict(
        {"type": fields.String(validate=validate.ContainsOnly(["a"]))})()
    unknown_field = schemas.Strict.from_dict({"when": fields.DateTime()})()
    with_default = schemas.Strict.from_dict({"n": schemas.StrictInt(load_default=3)})()
    known = schemas.Strict.from_dict({"n": schemas.StrictInt(validate=validate.Range(0, 5))})()
    for schema in (unknown_rule, unknown_field, with_default):
        with pytest.raises(compiled.NotCompilable):
            compiled.compile_schema(schema)
    table = compiled.compile_schemas({"a": unknown_rule, "b": known})
    assert list(table) == ["b"] and table["b"][1]({"n": 5}) == {"n": 5}
    for body in ({"n": 6}, {"n": True}, {"n": 2.0}, {"m": 1}, {"n": 1, "m": 1}, [1]):
        with pytest.raises(compiled.Unsure):
            table["b"][1](body)
