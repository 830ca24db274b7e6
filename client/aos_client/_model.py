# Hand-written (not generated): what every generated model has; tools/generate_client.py uses it.
"""The base of the generated models: JSON in and out, driven by each dataclass's own fields.

A model's fields are declared once, as dataclass fields: the annotation says how a JSON value
decodes (a model, a list or dict of them, or a plain value), `json_name()` metadata gives the JSON
name where it is not the attribute's (`from_` <- `from`), and a field with no default, or with a
constant default such as a move's `type`, is required. `from_dict`, `to_dict`, `get` and the
variant choice of a `OneOf` all read that one declaration.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeVar

M = TypeVar("M", bound="Model")
V = TypeVar("V")
Decoder = Callable[[Any], Any]


class ModelError(ValueError):
    """JSON that is not the model it should be (a required field is missing, an unknown variant)."""


def json_name(name: str) -> dict[str, str]:
    """Field metadata naming the JSON key of an attribute that cannot be named so in Python."""
    return {"json": name}


@dataclasses.dataclass(frozen=True)
class Field:
    attr: str
    json: str
    required: bool  # written even when None; needed in from_dict unless constant
    constant: bool  # a fixed value such as a move's `type`: never read from the JSON
    nullable: bool  # may be null (None)
    decode: Decoder | None  # None: the JSON value is already the Python value


def _decoder(hint: Any) -> Decoder | None:
    """How to decode a JSON value into `hint` (None when no decoding is needed)."""
    if isinstance(hint, type) and issubclass(hint, Model):
        return hint.from_dict
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is list:
        item = _decoder(args[0])
        return None if item is None else lambda values: [item(v) for v in values]
    if origin is dict:
        value = _decoder(args[1])
        return None if value is None else lambda values: {k: value(v) for k, v in values.items()}
    if origin is typing.Union or origin is types.UnionType:
        options = [a for a in args if a is not type(None)]
        decoders = [d for d in map(_decoder, options) if d is not None]
        if not decoders:
            return None
        if len(options) > 1:
            raise TypeError(f"no decoder for a union of models: {hint}")
        inner = decoders[0]
        return lambda value: None if value is None else inner(value)
    return None


def _field(f: dataclasses.Field[Any], hint: Any) -> Field:
    constant = f.default is not dataclasses.MISSING and f.default is not None
    no_default = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    nullable = hint is Any or type(None) in typing.get_args(hint)
    return Field(
        f.name, f.metadata.get("json", f.name), no_default or constant, constant, nullable, _decoder(hint)
    )


class Model:
    """What every model has: `from_dict()`, `to_dict()` (the JSON object, unknown fields kept in
    `extra` included) and `get()` by JSON name."""

    _fields_cache: ClassVar[dict[type, tuple[Field, ...]]] = {}
    _plans: ClassVar[dict[type, tuple[tuple[Field, ...], frozenset[str]]]] = {}

    @classmethod
    def json_fields(cls) -> tuple[Field, ...]:
        """The model's fields, from its dataclass declaration (computed once per class)."""
        cached = Model._fields_cache.get(cls)
        if cached is None:
            hints = typing.get_type_hints(cls)
            cached = tuple(
                _field(f, hints[f.name])
                for f in dataclasses.fields(cls)  # type: ignore[arg-type]
                if f.name != "extra"
            )
            Model._fields_cache[cls] = cached
        return cached

    @classmethod
    def required_names(cls) -> tuple[str, ...]:
        return tuple(f.json for f in cls.json_fields() if f.required)

    @classmethod
    def _read_plan(cls) -> tuple[tuple[Field, ...], frozenset[str]]:
        """The fields from_dict reads (the constant ones left out) and every JSON name the model
        knows, once per class: a build turn's listing decodes some 400 moves."""
        plan = Model._plans.get(cls)
        if plan is None:
            fields = cls.json_fields()
            plan = Model._plans[cls] = (tuple(f for f in fields if not f.constant),
                                        frozenset(f.json for f in fields))
        return plan

    @classmethod
    def from_dict(cls: type[M], d: Mapping[str, Any]) -> M:
        # A JSON object decodes to a dict: the ABC's slower check only for other mappings.
        if type(d) is not dict and not isinstance(d, Mapping):
            raise ModelError(f"{cls.__name__} is a JSON object, not {type(d).__name__}")
        values: dict[str, Any] = {}
        fields, known = cls._read_plan()
        for f in fields:
            if f.json in d:
                value = d[f.json]
                if value is None and not f.nullable:
                    raise ModelError(f"{cls.__name__}.{f.json} may not be null")
                values[f.attr] = value if f.decode is None or value is None else f.decode(value)
            elif f.required:
                raise ModelError(f"{cls.__name__} needs the field {f.json!r}, which is missing")
        make: Callable[..., M] = cls  # every concrete model is a dataclass with `extra`
        return make(**values, extra={k: v for k, v in d.items() if k not in known})

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in self.json_fields():
            value = getattr(self, f.attr)
            if f.required or value is not None:
                out[f.json] = _encode(value)
        for key, value in getattr(self, "extra", {}).items():
            out.setdefault(key, _encode(value))
        return out

    def get(self, json_name: str, default: Any = None) -> Any:
        """A field by its JSON name, known or not (e.g. an event's `income`)."""
        for f in self.json_fields():
            if f.json == json_name:
                value = getattr(self, f.attr)
                return default if value is None else value
        return getattr(self, "extra", {}).get(json_name, default)


class OneOf(Model):
    """A schema that is one of several models. Its `from_dict` picks the variant by the
    `DISCRIMINATOR` field's value (a move's `type`), or else the first variant whose required
    fields are all present; a variant's own `from_dict` decodes it."""

    DISCRIMINATOR: ClassVar[str | None] = None
    VARIANTS: ClassVar[dict[str, type[Model]]] = {}

    @classmethod
    def from_dict(cls: type[M], d: Mapping[str, Any]) -> M:
        if "VARIANTS" not in cls.__dict__:  # a variant: decode its own fields
            return super().from_dict(d)
        if not isinstance(d, Mapping):
            raise ModelError(f"{cls.__name__} is a JSON object, not {type(d).__name__}")
        union: Any = cls
        if union.DISCRIMINATOR is not None:
            kind = d.get(union.DISCRIMINATOR)
            variant = union.VARIANTS.get(kind)
            if variant is None:
                raise ModelError(f"unknown {cls.__name__} {union.DISCRIMINATOR}: {kind!r}")
            return variant.from_dict(d)  # type: ignore[no-any-return]
        for variant in union.VARIANTS.values():
            if all(name in d for name in variant.required_names()):
                return variant.from_dict(d)  # type: ignore[no-any-return]
        raise ModelError(f"not any {cls.__name__}: {sorted(d)}")


def _encode(value: Any) -> Any:
    if isinstance(value, Model):
        return value.to_dict()
    if isinstance(value, list | tuple):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    return value


# Decoders of containers, for the client's methods (a response that is a list of models).
def optional(decode: Callable[[Any], V]) -> Callable[[Any], V | None]:
    return lambda value: None if value is None else decode(value)


def list_of(decode: Callable[[Any], V]) -> Callable[[Any], list[V]]:
    return lambda values: [decode(v) for v in values]


def dict_of(decode: Callable[[Any], V]) -> Callable[[Any], dict[str, V]]:
    return lambda values: {k: decode(v) for k, v in values.items()}
