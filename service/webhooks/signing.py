"""Signatures per the Standard Webhooks scheme (standardwebhooks.com), with its reference library.

Each delivery carries `webhook-id` (the same on every attempt, so a receiver can drop repeats),
`webhook-timestamp` (unix seconds of this attempt) and `webhook-signature: v1,<base64 of
HMAC-SHA256 over "<id>.<timestamp>.<body>">`, keyed with the registration's secret
`whsec_<base64 of 32 random bytes>`.
"""

from __future__ import annotations

import base64
import secrets
from datetime import UTC, datetime

from standardwebhooks.webhooks import Webhook

SECRET_PREFIX = "whsec_"


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def signed_headers(secret: str, message_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    signature = Webhook(secret).sign(message_id, datetime.fromtimestamp(timestamp, UTC), body.decode())
    return {"webhook-id": message_id, "webhook-timestamp": str(timestamp), "webhook-signature": signature}
