"""marshmallow schemas for request bodies: the same shapes as openapi.yaml, unknown fields refused.

Loading gives plain dicts in the engine's move format. Responses are never loaded or dumped
through marshmallow: they are built as dicts and dumped with orjson.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from marshmallow import RAISE, Schema, ValidationError, fields, validate

from service.engine import game
from service.referee import bots, clocks, whatif

from ..responses import ApiError
from . import compiled
from .names import validate_name

# The engine's own names, so the request schemas cannot drift from the rules.
MAP_IDS = game.MAP_IDS
COLOURS = game.COLOURS
NEW_CITIES = game.NEW_CITY_LETTERS
ACTIONS = game.action_ids()
DISPLAY_COLUMN = r"^(light-[1-6]|dark-[1-6]|[A-H])$"
SHA256_HEX = r"^[0-9a-f]{64}$"
# Fields legal-moves adds for information; accepted on input and dropped before the engine.
INFORMATIONAL = ("cost", "income", "text")


def json_integer(value: Any) -> int | None:
    """`value` as an integer if JSON Schema counts it as one (2 and 2.0 alike, never true or
    "2"), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


class StrictInt(fields.Integer):
    """An integer in the JSON sense: 2 and 2.0 (JSON Schema counts both as integers) are the
    integer 2; 1.5, "1" and true are refused."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(strict=True, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> int:
        integer = json_integer(value)
        if integer is None:
            raise self.make_error("invalid")
        return super()._deserialize(integer, attr, data, **kwargs)


class StrictBool(fields.Boolean):
    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> bool:
        if not isinstance(value, bool):
            raise self.make_error("invalid")
        return value


class OptionValue(fields.Field):
    """A map option's value: a boolean, an integer, a string, or null for "not chosen"."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if isinstance(value, float) and json_integer(value) is not None:
            return json_integer(value)
        if isinstance(value, bool | int | str) and not (isinstance(value, str) and len(value) > 64):
            return value
        raise ValidationError("an option is a boolean, an integer or a short string")


class Strict(Schema):
    class Meta:
        unknown = RAISE


def seat_field(**kwargs: Any) -> StrictInt:
    return StrictInt(validate=validate.Range(0, 5), **kwargs)


def edge_field() -> StrictInt:
    return StrictInt(validate=validate.Range(0, 5))


def choice(values: tuple[str, ...], **kwargs: Any) -> fields.String:
    return fields.String(validate=validate.OneOf(values), **kwargs)


class HexSchema(Strict):
    q = StrictInt(required=True, validate=validate.Range(-1000, 1000))
    r = StrictInt(required=True, validate=validate.Range(-1000, 1000))


def hex_field(**kwargs: Any) -> fields.Nested:
    return fields.Nested(HexSchema, **kwargs)


class WallEdgeSchema(Strict):
    a = hex_field(required=True)
    b = hex_field(required=True)


class PlacementSchema(Strict):
    color = choice(COLOURS, required=True)
    column = fields.String(required=True, validate=validate.Regexp(DISPLAY_COLUMN))


def _move_schema(move_type: str, **extra: fields.Field) -> Schema:
    declared: dict[str, Any] = {
        "type": fields.String(required=True, validate=validate.Equal(move_type)),
        "seat": seat_field(),
        "text": fields.String(validate=validate.Length(max=1000)),
        **extra,
    }
    return Strict.from_dict(declared, name=f"{move_type}_move")()


MOVE_SCHEMAS: dict[str, Schema] = {
    "issue_shares": _move_schema(
        "issue_shares", count=StrictInt(required=True, validate=validate.Range(0, 15))
    ),
    "bid": _move_schema("bid", amount=StrictInt(required=True, validate=validate.Range(1, 10000))),
    "drop_out": _move_schema("drop_out"),
    "turn_order_pass": _move_schema("turn_order_pass"),
    "select_action": _move_schema("select_action", action=choice(ACTIONS, required=True)),
    "urbanize": _move_schema(
        "urbanize", hex=hex_field(required=True), new_city=choice(NEW_CITIES, required=True)
    ),
    "build": _move_schema(
        "build",
        hex=hex_field(required=True),
        tracks=fields.List(
            fields.List(edge_field(), validate=validate.Length(2, 2)),
            validate=validate.Length(1, 3),
        ),
        town_exits=fields.List(edge_field(), validate=validate.Length(1, 6)),
        cost=StrictInt(),
    ),
    "remove_wall": _move_schema("remove_wall", edge=fields.Nested(WallEdgeSchema, required=True)),
    "end_build": _move_schema("end_build"),
    "deliver": _move_schema(
        "deliver",
        **{
            "from": hex_field(required=True),
            "color": choice(COLOURS, required=True),
            "links": fields.List(
                fields.String(validate=validate.Length(1, 64)),
                required=True,
                validate=validate.Length(1, 12),
            ),
            "income": fields.Dict(
                keys=fields.String(validate=validate.Regexp(r"^[0-5]$")), values=StrictInt()
            ),
            "toward": hex_field(),
        },
    ),
    "upgrade_locomotive": _move_schema("upgrade_locomotive"),
    "pass": _move_schema("pass"),
    "produce": _move_schema(
        "produce",
        placements=fields.List(
            fields.Nested(PlacementSchema), required=True, validate=validate.Length(max=6)
        ),
        oil_field=hex_field(),
    ),
}


# A record also holds the moves made by routes of their own: a seat's resignation.
RECORD_MOVE_SCHEMAS: dict[str, Schema] = {**MOVE_SCHEMAS, "resign": _move_schema("resign")}


class UnknownMoveType(ValidationError):
    pass


# The well-formed moves, loaded without marshmallow (compiled.py); the same schemas judge the rest.
MOVE_CHECKS = compiled.compile_schemas(RECORD_MOVE_SCHEMAS)


def load_move(data: Any, schemas: dict[str, Schema] = MOVE_SCHEMAS) -> tuple[dict, int | None]:
    """A move body as (the engine's move, the body's `seat` or None). Raises ValidationError."""
    if not isinstance(data, dict):
        raise ValidationError({"_schema": ["a move is a JSON object"]})
    move_type = data.get("type")
    schema = schemas.get(move_type) if isinstance(move_type, str) else None
    if schema is None:
        raise UnknownMoveType({"type": [f"must be one of: {', '.join(schemas)}"]})
    move = quick_load(schema, data)
    if move_type == "build" and ("tracks" in move) == ("town_exits" in move):
        raise ValidationError({"_schema": ["a build names exactly one of tracks and town_exits"]})
    seat = move.pop("seat", None)
    for name in INFORMATIONAL:
        move.pop(name, None)
    return move, seat


def quick_load(schema: Schema, data: dict) -> dict:
    """`schema.load(data)`, by its compiled check when that vouches for the body."""
    compiled_check = MOVE_CHECKS.get(data["type"])
    if compiled_check is not None and compiled_check[0] is schema:
        try:
            return compiled_check[1](data)
        except compiled.Unsure:
            pass
    return schema.load(data)


class MoveField(fields.Field):
    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> dict:
        move, seat = load_move(value, RECORD_MOVE_SCHEMAS)
        if seat is not None:
            raise ValidationError({"seat": ["a record names the seat beside the move"]})
        return move


class PlayerSchema(Strict):
    name = fields.String(required=True, validate=validate_name)


class BotSchema(Strict):
    level = StrictInt(required=True, validate=validate.Range(bots.MIN_LEVEL, bots.MAX_LEVEL))


class NewPlayerSchema(PlayerSchema):
    """A new game's player: a person, or with `bot` a computer seat the worker plays."""

    bot = fields.Nested(BotSchema)


def players_field(schema: type[Schema] = PlayerSchema) -> fields.List:
    return fields.List(fields.Nested(schema), required=True, validate=validate.Length(1, 6))


class ClockSchema(Strict):
    turn_seconds = StrictInt(required=True,
                             validate=validate.Range(clocks.MIN_TURN_SECONDS, clocks.MAX_TURN_SECONDS))


CLOCK = ClockSchema()


class GameOptions(fields.Dict):
    """A game's options: the map's by name, and the service's own `clock: {turn_seconds}`."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> dict:
        if not isinstance(value, dict) or clocks.OPTION not in value:
            return super()._deserialize(value, attr, data, **kwargs)
        options = super()._deserialize(
            {k: v for k, v in value.items() if k != clocks.OPTION}, attr, data, **kwargs)
        try:
            options[clocks.OPTION] = CLOCK.load(value[clocks.OPTION])
        except ValidationError as exc:
            raise ValidationError({clocks.OPTION: exc.messages}) from None
        return options


def options_field(**kwargs: Any) -> fields.Dict:
    return GameOptions(
        keys=fields.String(validate=validate.Length(max=64)),
        # null is an option's "not chosen" (Holland's blocked_action), as records carry it.
        values=OptionValue(allow_none=True),
        validate=validate.Length(max=16),
        **kwargs,
    )


class NewGameSchema(Strict):
    map = choice(MAP_IDS, required=True)
    players = players_field(NewPlayerSchema)
    seed = fields.String(validate=validate.Length(1, 128))
    options = options_field()
    private = StrictBool()  # AOS_TENANCY=required only: hidden from other tenants


class RecordMoveSchema(Strict):
    seat = seat_field(required=True)
    move = MoveField(required=True)


RECORD_MOVE = RecordMoveSchema()
# The most moves a record may hold: four times the longest game measured (about 310 moves, six
# players on funded random play), so that replaying one stays a bounded amount of work.
MAX_RECORD_MOVES = 2000


class RecordMoves(Sequence):
    """A record's moves, each read (schema-checked) only when it is first used: the replay reads
    them in order, so a record that fails at move 0 costs one move's reading, not 2,000. A move
    that does not match the contract is a 400 naming its index, found when the replay gets there.
    """

    def __init__(self, entries: list) -> None:
        self._entries = entries
        self._loaded: dict[int, dict] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def __getitem__(self, index: int) -> dict:  # type: ignore[override]
        if index not in self._loaded:
            try:
                self._loaded[index] = RECORD_MOVE.load(self._entries[index])
            except ValidationError as exc:
                errors = {"record": {"moves": {str(index): exc.messages}}}
                raise ApiError(400, "VALIDATION_ERROR", "the body does not match the contract",
                               errors=errors, index=index) from None
        return self._loaded[index]

    def __iter__(self):  # type: ignore[no-untyped-def]
        return (self[index] for index in range(len(self._entries)))


class RecordMovesField(fields.Field):
    """The list and its length are checked at once; its moves, lazily (RecordMoves)."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> RecordMoves:
        if not isinstance(value, list):
            raise ValidationError("the moves are a list")
        if len(value) > MAX_RECORD_MOVES:
            raise ValidationError(f"a record holds at most {MAX_RECORD_MOVES} moves")
        return RecordMoves(value)


class RecordSchema(Strict):
    format = fields.String(required=True, validate=validate.Equal("aos-record/1"))
    rules_version = fields.String(required=True, validate=validate.Length(max=64))
    map = choice(MAP_IDS, required=True)
    players = players_field()
    options = options_field(required=True)
    seed_commitment = fields.String(required=True, validate=validate.Regexp(SHA256_HEX))
    seed = fields.String(required=True, validate=validate.Length(1, 128))
    moves = RecordMovesField(required=True)


class ImportGameSchema(Strict):
    record = fields.Nested(RecordSchema, required=True)
    private = StrictBool()


class SimulateStepSchema(Strict):
    seat = seat_field(required=True)
    move = MoveField(required=True)


class SimulateSchema(Strict):
    """POST …/simulate: the moves by seats (how many is bounded before they are read:
    referee/whatif.check_count), where to start, and how a random step is met."""

    moves = fields.List(fields.Nested(SimulateStepSchema), required=True)
    from_version = StrictInt(allow_none=True, load_default=None)
    random = choice(whatif.MODES, load_default="stop")
    seed = fields.String(allow_none=True, load_default=None, validate=validate.Length(1, 200))


NEW_GAME = NewGameSchema()
IMPORT_GAME = ImportGameSchema()
SIMULATE = SimulateSchema()


def load_create(data: Any) -> dict:
    """A POST /v1/games body: a new game, or {"record": ...}. Raises ValidationError."""
    if not isinstance(data, dict):
        raise ValidationError({"_schema": ["the body is a JSON object"]})
    return (IMPORT_GAME if "record" in data else NEW_GAME).load(data)


def load_simulate(data: Any) -> whatif.Question:
    """A POST …/simulate body. Raises ValidationError."""
    if not isinstance(data, dict):
        raise ValidationError({"_schema": ["the body is a JSON object"]})
    body = SIMULATE.load(data)
    return whatif.Question(body["moves"], body["from_version"], body["random"], body["seed"])
