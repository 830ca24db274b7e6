"""A cheaper contract check that decides exactly as openapi-core does.

openapi-core keeps choosing the operation, the response object (exact status, then range,
then default), the media type, and deserialising bodies, parameters and headers. Only its
schema check (`_validate_schema`, where jsonschema walks the schema and resolves every $ref
through jsonschema-path: ~75 % of the check's CPU) gets a fast first pass: a jsonschema_rs
validator built once per schema over the whole openapi.yaml document. A value it accepts is
one openapi-core accepts (see below); any value it does not accept (or cannot judge) goes to
openapi-core's own check, which then decides and reports exactly as before.

Why "accepted by the fast pass" implies "accepted by openapi-core" (OAS 3.1, no $schema and
no jsonSchemaDialect in openapi.yaml, so openapi-core's validator is OAS31Validator, i.e.
Draft 2020-12 plus):
- `pattern` and `format` are not judged by jsonschema_rs: they are renamed in the fast pass's
  copy of the document to keywords that call openapi-core's own functions (its ECMA-regex
  `pattern`, and the very format checker openapi-core builds), so they decide identically.
- `description`, `xml`, `externalDocs`, `example`: no-ops in both.
- `discriminator` (on oneOf/anyOf/allOf): openapi-core checks the value only against the
  schema its `propertyName` maps to; jsonschema_rs ignores it and checks plain oneOf/anyOf.
  `_discriminators_agree` proves at start-up that, for each discriminator in the document,
  every member requires the property with a `const` equal to its own mapping key (and the
  mapping names exactly the members), so a value matching exactly one member (oneOf) or any
  member (anyOf) matches the mapped one. If that does not hold the fast pass is off.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import jsonschema_rs
from jsonschema_path import SchemaPath
from openapi_core.casting.schemas import oas31_schema_casters_factory
from openapi_core.casting.schemas.factories import SchemaCastersFactory
from openapi_core.validation.request.validators import V31RequestValidator
from openapi_core.validation.response.validators import (
    V31ResponseHeadersValidator,
    V31ResponseValidator,
)
from openapi_core.validation.schemas import oas31_schema_validators_factory
from openapi_core.validation.schemas.factories import DialectSchemaValidatorsFactory
from openapi_core.validation.schemas.validators import SchemaValidator
from openapi_schema_validator import OAS31Validator
from openapi_schema_validator import _keywords as oas_keywords

BASE = "urn:aos-rules:openapi"
# Values that are data, not schemas: nothing under them is renamed.
_DATA = frozenset({"const", "enum", "default", "example", "examples"})
# Maps from names (which may be "default", "format", ...) to schemas.
_NAMED = frozenset({"properties", "$defs", "dependentSchemas", "patternProperties"})
_PATTERN = "x-oas-pattern"
_FORMAT = "x-oas-format"


def _pointer(parts: list[str]) -> str:
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def _renamed(node: Any) -> Any:
    """The document with `pattern` and `format` keywords renamed for the Python keywords."""
    if isinstance(node, list):
        return [_renamed(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _NAMED and isinstance(value, dict):
            out[key] = {name: _renamed(schema) for name, schema in value.items()}
        elif key in _DATA:
            out[key] = value
        elif key == "pattern" and isinstance(value, str):
            out[_PATTERN] = value
        elif key == "format" and isinstance(value, str):
            out[_FORMAT] = value
        else:
            out[key] = _renamed(value)
    return out


def _pointers(node: Any, parts: list[str], found: dict[int, str]) -> None:
    if isinstance(node, dict):
        found.setdefault(id(node), _pointer(parts))
        for key, value in node.items():
            _pointers(value, [*parts, key], found)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            _pointers(value, [*parts, str(index)], found)


def _lookup(document: dict, ref: str) -> Any:
    assert ref.startswith("#/"), ref
    node: Any = document
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


# Keywords whose meaning jsonschema_rs might not share exactly (e.g. its float multipleOf is
# more lenient) or that would change how $refs resolve: openapi.yaml uses none of them; if it
# ever does, the fast pass is off.
_UNVETTED = frozenset({
    "multipleOf", "patternProperties", "$schema", "$id", "$anchor", "$dynamicRef",
    "$dynamicAnchor", "$vocabulary", "jsonSchemaDialect", "nullable",
})


def _discriminators_agree(document: dict) -> bool:
    """Every discriminator's members pin its property to their own mapping key (see above),
    and no keyword of _UNVETTED is used."""
    ok = True

    def walk(node: Any) -> None:
        nonlocal ok
        if isinstance(node, list):
            for item in node:
                walk(item)
            return
        if not isinstance(node, dict):
            return
        if _UNVETTED.intersection(node):
            ok = False
        if "discriminator" in node:
            disc = node["discriminator"]
            members = [key for key in ("oneOf", "anyOf", "allOf") if key in node]
            if members != ["oneOf"] and members != ["anyOf"]:
                ok = False
                return
            prop = disc["propertyName"]
            mapping = disc.get("mapping", {})
            refs = [m.get("$ref") for m in node[members[0]]]
            if sorted(refs) != sorted(mapping.values()) or len(set(refs)) != len(refs):
                ok = False
            for key, ref in mapping.items():
                target = _lookup(document, ref)
                if not (isinstance(key, str) and key and prop in target.get("required", [])
                        and target.get("properties", {}).get(prop, {}).get("const") == key):
                    ok = False
        for key, value in node.items():
            if key in _NAMED and isinstance(value, dict):
                walk(list(value.values()))
            elif key not in _DATA:
                walk(value)

    walk(document)
    return ok


class FastSchemas:
    """jsonschema_rs validators over openapi.yaml, one per schema, built on first use."""

    def __init__(self, spec: SchemaPath, format_checker: Any) -> None:
        with spec.resolve() as resolved:
            document = resolved.contents
        self.enabled = _discriminators_agree(document)
        self._ids: dict[int, str] = {}
        _pointers(document, [], self._ids)
        self._registry = jsonschema_rs.Registry(
            [(BASE, _renamed(document))], draft=jsonschema_rs.Draft202012)
        self._validators: dict[tuple[str, ...], Any] = {}
        python = OAS31Validator({}, format_checker=format_checker)

        class Pattern:
            def __init__(self, parent: dict, value: str, path: list) -> None:
                self.schema = {**parent, "pattern": value}
                self.value = value

            def validate(self, instance: Any) -> None:
                for error in oas_keywords.pattern(python, self.value, instance, self.schema):
                    raise ValueError(error.message)

        class Format:
            def __init__(self, parent: dict, value: str, path: list) -> None:
                self.value = value

            def validate(self, instance: Any) -> None:
                if not format_checker.conforms(instance, self.value):
                    raise ValueError(f"{instance!r} is not a {self.value!r}")

        self._keywords = {_PATTERN: Pattern, _FORMAT: Format}

    def _build(self, schema: SchemaPath) -> Any:
        with schema.resolve() as resolved:
            pointer = self._ids.get(id(resolved.contents))
        if pointer is None:
            return None
        try:
            return jsonschema_rs.Draft202012Validator(
                {"$ref": f"{BASE}#{quote(pointer, safe='/~')}"}, registry=self._registry,
                keywords=self._keywords, validate_formats=False)
        except jsonschema_rs.ValidationError:  # a schema it cannot take: openapi-core decides
            return None

    def accepts(self, schema: SchemaPath, value: Any) -> bool:
        """True only if openapi-core's check would accept the value too."""
        if not self.enabled:
            return False
        key = schema.parts
        try:
            validator = self._validators[key]
        except KeyError:
            validator = self._validators[key] = self._build(schema)
        if validator is None:
            return False
        try:
            return bool(validator.is_valid(value))
        except Exception:  # a value jsonschema_rs cannot take: openapi-core decides
            return False


def _fast(spec: SchemaPath) -> FastSchemas:
    fast = _CACHE.get(id(spec))
    if fast is None or fast[0] is not spec:
        # The format checker openapi-core builds for every schema check (a copy of this one).
        checker = oas31_schema_validators_factory.get_format_checker(None, None)
        fast = _CACHE[id(spec)] = (spec, FastSchemas(spec, checker))
    return fast[1]


_CACHE: dict[int, tuple[SchemaPath, FastSchemas]] = {}


class _CachedSchemaValidators(DialectSchemaValidatorsFactory):
    """openapi-core's OAS 3.1 schema-validator factory, each validator built once per schema.

    openapi-core builds a SchemaValidator (a deep copy of its format checker, a jsonschema-path
    resolution, a jsonschema validator) for every parameter, header and body it checks, and
    for every parameter's caster; these objects are not changed by use, so the one built the
    first time for a schema serves every later check of it."""

    def __init__(self, factory: DialectSchemaValidatorsFactory) -> None:
        super().__init__(factory.schema_validator_cls, factory.default_jsonschema_dialect_id,
                         format_checker=factory.format_checker)
        self._built: dict[tuple, tuple[SchemaPath, SchemaValidator]] = {}

    def create(self, spec: SchemaPath, schema: SchemaPath, format_validators: Any = None,
               extra_format_validators: Any = None,
               forbid_unspecified_additional_properties: bool = False,
               enforce_properties_required: bool = False) -> SchemaValidator:
        if format_validators is not None or extra_format_validators is not None:
            return super().create(spec, schema, format_validators, extra_format_validators,
                                  forbid_unspecified_additional_properties,
                                  enforce_properties_required)
        key = (id(spec), id(schema.accessor), schema.parts,
               forbid_unspecified_additional_properties, enforce_properties_required)
        built = self._built.get(key)
        if built is None or built[0] is not spec:
            built = self._built[key] = (spec, super().create(
                spec, schema, None, None, forbid_unspecified_additional_properties,
                enforce_properties_required))
        return built[1]


_validators_factory = _CachedSchemaValidators(oas31_schema_validators_factory)
_casters_factory = SchemaCastersFactory(
    _validators_factory, oas31_schema_casters_factory.types_caster)


class _FastSchemaCheck:
    schema_validators_factory = _validators_factory
    schema_casters_factory = _casters_factory

    def _validate_schema(self, schema: SchemaPath, value: Any) -> None:
        if (self.schema_validators_factory is _validators_factory
                and not self.forbid_unspecified_additional_properties  # type: ignore[attr-defined]
                and not self.enforce_properties_required  # type: ignore[attr-defined]
                and self.format_validators is None  # type: ignore[attr-defined]
                and self.extra_format_validators is None  # type: ignore[attr-defined]
                and _fast(self.spec).accepts(schema, value)):
            return
        super()._validate_schema(schema, value)  # type: ignore[misc]


class FastRequestValidator(_FastSchemaCheck, V31RequestValidator):
    pass


class FastResponseValidator(_FastSchemaCheck, V31ResponseValidator):
    pass


class FastResponseHeadersValidator(_FastSchemaCheck, V31ResponseHeadersValidator):
    pass
