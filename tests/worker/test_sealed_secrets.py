"""Webhook secrets sealed at rest (AOS_SECRET_KEY on the API and the worker): Redis holds no
secret in plain text, the seat gets it once in plain text, and the worker signs with it."""

from __future__ import annotations

import pytest
from cryptography.fernet import Fernet

from service.store.keys import game_keys
from tests.worker.conftest import Api


def test_a_sealed_secret_is_not_in_redis_and_deliveries_are_signed_with_it(
    redis_url: str, redis_server, start_worker, receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = Fernet.generate_key().decode()
    monkeypatch.setenv("AOS_SECRET_KEY", key)
    monkeypatch.setenv("AOS_WEBHOOKS_ALLOW_PRIVATE", "1")
    api = Api(redis_url)
    try:
        start_worker(AOS_SECRET_KEY=key)
        game = api.create()
        hook = api.register(game, 0, receiver.url("s0"), ["move"])
        secret = hook["secret"]
        assert secret.startswith("whsec_")
        receiver.secrets["s0"] = secret
        with redis_server.client() as client:
            meta = client.hget(game_keys(game["game_id"]).state, "meta")
        assert secret.encode() not in meta and secret.split("_", 1)[1].encode() not in meta
        assert b"sealed:v1:" in meta
        api.move(game, {"type": "issue_shares", "count": 0})
        receiver.wait_for(lambda: len(receiver.ids()) == 1)
        assert receiver.received[0]["valid"]  # signed with the secret the seat was given
    finally:
        api.store.close()
