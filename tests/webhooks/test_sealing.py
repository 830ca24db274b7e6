"""Webhook secrets sealed at rest with AOS_SECRET_KEY: what is stored is not the secret, only the
keys named open it, a rotated key list still opens what the old key sealed, and secrets stored in
plain text before sealing still open as themselves."""

from __future__ import annotations

import subprocess
import sys

import pytest
from cryptography.fernet import Fernet

from service.webhooks.sealing import PREFIX, Sealer, SealError

SECRET = "whsec_" + "A" * 43


def test_a_sealed_secret_is_not_the_secret_and_opens_to_it() -> None:
    key = Fernet.generate_key().decode()
    sealer = Sealer.from_env({"AOS_SECRET_KEY": key})
    stored = sealer.seal(SECRET)
    assert stored.startswith(PREFIX) and SECRET not in stored
    assert sealer.seal(SECRET) != stored  # a fresh IV each time
    assert sealer.open(stored) == SECRET


def test_rotation_new_key_first_opens_what_the_old_one_sealed() -> None:
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    sealed_before = Sealer.from_env({"AOS_SECRET_KEY": old}).seal(SECRET)
    rotated = Sealer.from_env({"AOS_SECRET_KEY": f"{new}, {old}"})
    assert rotated.open(sealed_before) == SECRET
    assert Sealer.from_env({"AOS_SECRET_KEY": new}).open(rotated.seal(SECRET)) == SECRET


def test_a_wrong_or_missing_key_cannot_open_and_says_so() -> None:
    stored = Sealer.from_env({"AOS_SECRET_KEY": Fernet.generate_key().decode()}).seal(SECRET)
    with pytest.raises(SealError, match="not in AOS_SECRET_KEY"):
        Sealer.from_env({"AOS_SECRET_KEY": Fernet.generate_key().decode()}).open(stored)
    with pytest.raises(SealError, match="no AOS_SECRET_KEY"):
        Sealer.from_env({}).open(stored)


def test_plain_secrets_from_before_open_as_themselves_and_no_key_seals_nothing() -> None:
    assert Sealer.from_env({"AOS_SECRET_KEY": Fernet.generate_key().decode()}).open(SECRET) == SECRET
    assert not Sealer.from_env({}).enabled and Sealer.from_env({}).seal(SECRET) == SECRET


def test_a_malformed_key_is_refused_at_start() -> None:
    with pytest.raises(ValueError, match="Fernet keys"):
        Sealer.from_env({"AOS_SECRET_KEY": "not-a-key"})


def test_the_module_makes_a_key() -> None:
    out = subprocess.run([sys.executable, "-m", "service.webhooks.sealing"], capture_output=True,
                         text=True, check=True, timeout=30).stdout.strip()
    assert Sealer.from_env({"AOS_SECRET_KEY": out}).enabled
