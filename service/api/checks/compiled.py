"""The move schemas compiled to plain checks, for the bodies that pass them.

marshmallow spends 10-60 us loading one move (a build's nested hex and track lists the most),
a twentieth of a whole POST move. Most bodies are well formed, and for those the answer is known
without marshmallow's machinery: the same dict, fields in the schema's order. So each schema is
compiled once, from its own fields and validators, into a check that either returns exactly
what `schema.load` would or says it cannot vouch for the body (`Unsure`); then the schema
itself judges it and words the error. The schemas stay the one source of what a move is: a
field or validator this module does not know makes its whole schema uncompiled (always judged
by marshmallow), never a laxer check.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from marshmallow import Schema, fields, validate
from marshmallow.utils import missing

Check = Callable[[Any], Any]


class Unsure(Exception):
    """The compiled check cannot vouch for a value: the schema judges it."""


class NotCompilable(Exception):
    """A field or validator this module does not compile."""


def compile_schema(schema: Schema) -> Check:
    """A check of a dict body against `schema` (unknown fields refused, as Strict does)."""
    # A schema's pre_load, post_load and validates_schema hooks (marshmallow keeps them in
    # _hooks) could change or refuse what its fields take: such a schema is not compiled.
    if schema.many or schema.unknown != "raise" or any(schema._hooks.values()):
        raise NotCompilable(type(schema).__name__)
    declared = [(field.data_key or name, name, compile_field(field), field.required)
                for name, field in schema.load_fields.items()]
    allowed = frozenset(key for key, *_ in declared)
    required = frozenset(key for key, _, _, needed in declared if needed)

    def check(value: Any) -> dict:
        if type(value) is not dict or not allowed.issuperset(value) or not required.issubset(value):
            raise Unsure
        # marshmallow's output follows the declared fields, whatever the body's order.
        return {name: field_check(value[key]) for key, name, field_check, _ in declared
                if key in value}

    return check


def compile_field(field: fields.Field) -> Check:
    if field.allow_none or field.load_default is not missing:
        raise NotCompilable(type(field).__name__)
    base = _base_check(field)
    tests = [_validator(v) for v in field.validators]
    if not tests:
        return base

    def check(value: Any) -> Any:
        loaded = base(value)
        for test in tests:
            if not test(loaded):
                raise Unsure
        return loaded

    return check


def _base_check(field: fields.Field) -> Check:
    from .shapes import StrictInt  # the project's own integer field

    kind = type(field)  # exact types: a subclass may load differently
    if kind is StrictInt:
        return _integer
    if kind is fields.String:
        return _string
    if kind is fields.List and isinstance(field, fields.List):
        inner = compile_field(field.inner)
        return lambda value: [inner(item) for item in _list(value)]
    if (kind is fields.Nested and isinstance(field, fields.Nested) and isinstance(field.nested, type)
            and issubclass(field.nested, Schema) and not field.many and field.only is None
            and not field.exclude):
        return compile_schema(field.schema)
    if (kind is fields.Dict and isinstance(field, fields.Dict) and field.key_field is not None
            and field.value_field is not None):
        key_check, value_check = compile_field(field.key_field), compile_field(field.value_field)

        def mapping(value: Any) -> dict:
            if type(value) is not dict:
                raise Unsure
            return {key_check(k): value_check(v) for k, v in value.items()}

        return mapping
    raise NotCompilable(kind.__name__)


def _integer(value: Any) -> int:
    # A float such as 2.0 is an integer to StrictInt too: the schema converts it.
    if type(value) is not int:
        raise Unsure
    return value


def _string(value: Any) -> str:
    if type(value) is not str:
        raise Unsure
    return value


def _list(value: Any) -> list:
    if type(value) is not list:
        raise Unsure
    return value


def _validator(validator: Any) -> Callable[[Any], bool]:
    kind = type(validator)
    if kind is validate.Range:
        low, high = validator.min, validator.max
        if not (validator.min_inclusive and validator.max_inclusive):
            raise NotCompilable("Range with an exclusive end")
        return lambda v: (low is None or v >= low) and (high is None or v <= high)
    if kind is validate.Length:
        low, high, equal = validator.min, validator.max, validator.equal
        if equal is not None:
            return lambda v: len(v) == equal
        return lambda v: (low is None or len(v) >= low) and (high is None or len(v) <= high)
    if kind is validate.OneOf:
        choices = frozenset(validator.choices)
        return lambda v: v in choices
    if kind is validate.Equal:
        comparable = validator.comparable
        return lambda v: v == comparable
    if kind is validate.Regexp:
        regex = validator.regex
        return lambda v: regex.match(v) is not None
    raise NotCompilable(kind.__name__)


def compile_schemas(schemas: dict[str, Schema]) -> dict[str, tuple[Schema, Check]]:
    """Each schema that compiles, by name, with its check; the others are left to marshmallow."""
    compiled: dict[str, tuple[Schema, Check]] = {}
    for name, schema in schemas.items():
        try:
            compiled[name] = (schema, compile_schema(schema))
        except NotCompilable:
            continue
    return compiled
