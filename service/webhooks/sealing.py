"""Webhook secrets at rest: sealed with AOS_SECRET_KEY before they are stored (in Redis, in the
game's metadata, and so in the archive's copy of it), opened only where a delivery is signed.

AOS_SECRET_KEY holds one or more Fernet keys (AES-128-CBC with HMAC-SHA256, from `cryptography`),
comma-separated: the first seals, every one opens, so a key is rotated by putting the new one
first and dropping the old one once no game sealed with it is left (games expire; see the
runbook). Make a key with `python -m service.webhooks.sealing`. A sealed secret is
`sealed:v1:<token>`; a secret stored before sealing (or with no key set, which the runbook
forbids in production) is its plain text and still opens, as itself.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

SECRET_KEY = "AOS_SECRET_KEY"
PREFIX = "sealed:v1:"


class SealError(Exception):
    """A sealed secret that cannot be opened: no key, or none of the keys sealed it."""


class Sealer:
    def __init__(self, keys: list[str]) -> None:
        self._fernet = MultiFernet([Fernet(k.encode()) for k in keys]) if keys else None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Sealer:
        env = os.environ if env is None else env
        raw = env.get(SECRET_KEY, "")
        try:
            return cls([k.strip() for k in raw.split(",") if k.strip()])
        except ValueError as exc:
            raise ValueError(f"{SECRET_KEY} must be Fernet keys (32 url-safe base64 bytes), "
                             f"comma-separated: {exc}") from None

    @property
    def enabled(self) -> bool:
        return self._fernet is not None

    def seal(self, secret: str) -> str:
        if self._fernet is None:
            return secret
        return PREFIX + self._fernet.encrypt(secret.encode()).decode()

    def open(self, stored: str) -> str:
        if not stored.startswith(PREFIX):
            return stored
        if self._fernet is None:
            raise SealError(f"a sealed webhook secret, and no {SECRET_KEY} to open it")
        try:
            return self._fernet.decrypt(stored[len(PREFIX):].encode()).decode()
        except InvalidToken:
            raise SealError(f"a webhook secret sealed with a key not in {SECRET_KEY}") from None


def main() -> None:
    print(Fernet.generate_key().decode())


if __name__ == "__main__":
    main()
