"""Requests the contract's schemas allow that the service still refuses, because the condition
is not one a schema can say (a seat the game does not have; a seat token or a `seat`, one of the
two): each answer's status is documented for its operation, and that response names the code."""

from __future__ import annotations

import pytest

from tests.api.conftest import Api
from tests.contract import parsed_contract

SPEC = parsed_contract()


def documented(path: str, method: str, status: int) -> str:
    """The description of an operation's response for `status` (a $ref's, followed)."""
    response = SPEC["paths"][path][method]["responses"][str(status)]
    if "$ref" in response:
        response = SPEC["components"]["responses"][response["$ref"].rsplit("/", 1)[-1]]
    return response["description"]


@pytest.mark.parametrize("case", ["legal_moves_of_seat_4", "validate_without_a_seat",
                                  "reissue_seat_4", "validate_for_seat_4"])
def test_a_schema_valid_refusal_is_the_answer_the_contract_documents(api: Api, case: str) -> None:
    game = api.create(players=3)
    gid, admin = game["game_id"], game["admin_token"]
    before = api.snapshot(gid)
    move = {"type": "issue_shares", "count": 0}
    request, path, method, status, code = {
        "legal_moves_of_seat_4": (lambda: api.client.get(f"/v1/games/{gid}/legal-moves?seat=4"),
                                  "/v1/games/{game_id}/legal-moves", "get", 400, "NO_SUCH_SEAT"),
        "validate_without_a_seat": (
            lambda: api.client.post(f"/v1/games/{gid}/moves/validate", json=move),
            "/v1/games/{game_id}/moves/validate", "post", 400, "SEAT_REQUIRED"),
        "reissue_seat_4": (
            lambda: api.client.post(f"/v1/games/{gid}/seats/4/token",
                                    headers={"Authorization": f"Bearer {admin}"}),
            "/v1/games/{game_id}/seats/{seat}/token", "post", 400, "NO_SUCH_SEAT"),
        "validate_for_seat_4": (
            lambda: api.client.post(f"/v1/games/{gid}/moves/validate", json={**move, "seat": 4}),
            "/v1/games/{game_id}/moves/validate", "post", 200, "BAD_MOVE"),
    }[case]
    response = request()
    assert response.status_code == status, response.get_json()
    assert response.get_json()["code"] == code
    text = documented(path, method, status) if status != 200 else SPEC["paths"][path][method]["description"]
    assert f"`{code}`" in text, f"{method.upper()} {path} {status} does not name {code}"
    assert api.snapshot(gid) == before
