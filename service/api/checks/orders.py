"""The shapes of a seat's programmed orders, as a `PUT .../orders` body sends them (the orders
themselves, and what carries them out: service/referee/orders.py)."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate

from service.referee.orders import MAX_BID, MAX_ORDERS

from .shapes import ACTIONS, Strict, StrictInt, choice


def _order_schema(kind: str, **extra: fields.Field) -> Schema:
    declared = {"type": fields.String(required=True, validate=validate.Equal(kind)), **extra}
    return Strict.from_dict(declared, name=f"{kind}_order")()


ORDER_SCHEMAS: dict[str, Schema] = {
    "issue_shares": _order_schema("issue_shares",
                                  count=StrictInt(required=True, validate=validate.Range(0, 15))),
    "bid_up_to": _order_schema("bid_up_to",
                               max=StrictInt(required=True, validate=validate.Range(0, MAX_BID))),
    "drop_out": _order_schema("drop_out"),
    "select_action": _order_schema(
        "select_action",
        actions=fields.List(choice(ACTIONS), required=True,
                            validate=validate.Length(1, len(ACTIONS))),
    ),
    "end_build": _order_schema("end_build"),
    "upgrade_locomotive": _order_schema("upgrade_locomotive"),
    "pass": _order_schema("pass"),
}


def load_orders(data: Any) -> list[dict]:
    """A PUT body {"orders": [...]} as the list to store. Raises ValidationError."""
    if not isinstance(data, dict) or set(data) != {"orders"}:
        raise ValidationError({"_schema": ['the body is {"orders": [order, ...]}']})
    items = data["orders"]
    if not isinstance(items, list) or len(items) > MAX_ORDERS:
        raise ValidationError({"orders": [f"a list of at most {MAX_ORDERS} orders"]})
    loaded = []
    for n, item in enumerate(items):
        kind = item.get("type") if isinstance(item, dict) else None
        schema = ORDER_SCHEMAS.get(kind) if isinstance(kind, str) else None
        if schema is None:
            raise ValidationError({"orders": {n: [f"type must be one of: {', '.join(ORDER_SCHEMAS)}"]}})
        try:
            order = schema.load(item)
        except ValidationError as exc:
            raise ValidationError({"orders": {n: exc.messages}}) from None
        if kind == "select_action" and len(set(order["actions"])) != len(order["actions"]):
            raise ValidationError({"orders": {n: {"actions": ["each action once"]}}})
        loaded.append(order)
    return loaded
