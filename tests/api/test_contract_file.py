"""openapi.yaml is valid, served as is, and names exactly the routes the app has."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

from openapi_spec_validator import validate

from tests.contract import parsed_contract

SPEC = Path(__file__).parents[2] / "openapi.yaml"


def test_spec_is_valid_openapi() -> None:
    validate(parsed_contract())


def test_service_serves_its_contract(api) -> None:
    response = api.client.get("/v1/openapi.yaml")
    assert response.status_code == 200
    assert response.content_type.startswith("application/yaml")
    assert response.get_data() == SPEC.read_bytes()


def test_every_route_is_in_the_contract_and_back(app) -> None:
    spec = parsed_contract()
    documented = {
        (method.upper(), path)
        for path, item in spec["paths"].items()
        for method in item
        if method in {"get", "post", "put", "patch", "delete"}
    }
    served = set()
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule)
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            served.add((method, path))
    assert served == documented


def test_the_contracts_names_are_the_engines() -> None:
    from service.engine import game

    schemas = parsed_contract()["components"]["schemas"]
    assert tuple(schemas["MapId"]["enum"]) == game.MAP_IDS
    assert set(schemas["Colour"]["enum"]) == set(game.COLOURS)
    assert tuple(schemas["NewCityLetter"]["enum"]) == game.NEW_CITY_LETTERS
    assert tuple(schemas["ActionId"]["enum"]) == game.action_ids()
    move_types = set(schemas["Move"]["discriminator"]["mapping"])
    assert move_types == set(game.ALL_MOVE_TYPES)


def test_every_event_the_engine_emits_has_its_schema() -> None:
    import random

    from jsonschema import Draft202012Validator

    from service.engine.playout import play_random_game

    spec = parsed_contract()
    schemas = spec["components"]["schemas"]
    mapping = schemas["Event"]["discriminator"]["mapping"]
    # Event is a oneOf of 40 branches, each requiring `type` pinned to its mapping's name (checked
    # here): an event valid against its own branch matches no other, so the oneOf holds without
    # trying every branch for each of the ~900 events (3/4 of this test's time when it did).
    assert sorted(branch["$ref"] for branch in schemas["Event"]["oneOf"]) == sorted(mapping.values())
    branches = {}
    for name, ref in mapping.items():
        schema = schemas[ref.rsplit("/", 1)[-1]]
        assert "type" in schema["required"] and schema["properties"]["type"] == {"const": name}, name
        branches[name] = Draft202012Validator({"components": spec["components"], "$ref": ref})
    seen: dict[str, dict] = {}
    stop_after_round = [4]

    class Enough(Exception):
        pass

    def note(before, seat, move, options, state, events) -> None:  # type: ignore[no-untyped-def]
        for e in events:
            seen.setdefault(e["type"], e)
            assert e["type"] in mapping, f"{e['type']} is not in openapi.yaml's Event"
            errors = list(branches[e["type"]].iter_errors(e))
            assert not errors, f"{e}: {errors[0].message}"
        if state["round"] > stop_after_round[0]:  # every phase has run a few times: enough, and quick
            raise Enough

    for map_id in ("rust_belt", "madagascar", "holland", "iraq", "berlin"):
        with contextlib.suppress(Enough):
            play_random_game(map_id, 3, f"events-{map_id}", random.Random(1), on_move=note, cash=300)
    # Unfunded, a game ends soon (bankruptcies) and is scored.
    stop_after_round[0] = 99
    play_random_game("rust_belt", 3, "events-end", random.Random(2), on_move=note)
    assert "game_finished" in seen and len(seen) >= 25  # the common ones and the maps' own



def test_the_contract_allows_the_if_match_values_the_server_takes_and_no_other() -> None:
    import re

    from service.api.responses import well_formed_etags

    contract = parsed_contract()
    patterns = {contract["components"]["parameters"]["IfMatch"]["schema"]["pattern"]}
    for item in contract["paths"].values():
        for operation in item.values():
            for parameter in operation.get("parameters", []) if isinstance(operation, dict) else []:
                if parameter.get("name") == "If-None-Match":
                    patterns.add(parameter["schema"]["pattern"])
    assert len(patterns) == 1
    pattern = re.compile(patterns.pop())
    for value in ['"3"', 'W/"3"', '"1", "2"', "*", ' "7" ', '"1",W/"2"']:
        assert pattern.search(value) and well_formed_etags(value), value
    for value in ["3", "abc", '"3', '3"', '"1" "2"', "**", ""]:
        assert not pattern.search(value) and not well_formed_etags(value), value
