"""Webhooks: signed deliveries of a game's news to the URLs its seats registered.

`addresses` guards where a delivery may go (no loopback, private, link-local... unless the
operator allows it), `signing` signs per the Standard Webhooks scheme, `sender` makes the one
bounded HTTP request, `events` says which deliveries a change of a game makes. The API registers
the URLs (service/api/routes/webhooks.py); the worker derives and sends the deliveries
(service/worker/webhooks.py).
"""
