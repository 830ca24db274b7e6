"""Webhook registrations: `POST|GET /v1/games/{id}/webhooks`, `DELETE …/webhooks/{hook}`.

A seat (its token) registers URLs for its game; the worker sends them the game's news, signed
(service/webhooks). A registration lives in the game's metadata, written by a metadata-only
commit (the game's version does not move: registering changes nothing of the game), so it lasts
as long as the game and goes with it. It holds what signing needs: the secret itself, shown
once, in the answer to the POST (and to a retry of that POST with its Idempotency-Key).
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

import orjson
from flask import Blueprint, Response, current_app, request
from marshmallow import ValidationError, fields, validate

from service.referee import clocks, tokens
from service.referee.errors import not_found
from service.referee.games import SEP, Games, fingerprint
from service.store import CommitResult, IdemRecord, Outcome, Stored
from service.webhooks import addresses, events, signing
from service.webhooks.sealing import Sealer

from ..checks.parts import game_id_of, games, idempotency_key, invalid, json_body
from ..checks.shapes import Strict
from ..responses import ApiError, json_response

bp = Blueprint("webhooks", __name__, url_prefix="/v1")

MAX_PER_SEAT = 5


class WebhookSchema(Strict):
    url = fields.String(required=True, validate=validate.Length(1, addresses.MAX_URL_LENGTH))
    events = fields.List(fields.String(validate=validate.OneOf(events.EVENTS)), required=True,
                         validate=validate.Length(1, len(events.EVENTS)))


WEBHOOK = WebhookSchema()


def shown(hook: dict) -> dict:
    """A registration as GET shows it: everything but the secret."""
    return {k: hook[k] for k in ("id", "seat", "url", "events", "created_at")}


def hooks_of(meta: dict) -> list[dict]:
    return meta.get("webhooks") or []


class Webhooks:
    def __init__(self, games: Games, *, private_ok: bool) -> None:
        self.games = games
        self.store = games.store
        self.private_ok = private_ok
        # Secrets are stored sealed with AOS_SECRET_KEY (service/webhooks/sealing.py): shown to
        # the seat once, opened only to answer the POST and to sign deliveries.
        self.sealer = Sealer.from_env()

    def register(self, game_id: str, seat: int, stored: Stored, body: dict,
                 idempotency_key: str | None) -> dict:
        target = self._checked(body["url"])
        wanted = [e for e in events.EVENTS if e in body["events"]]  # in one order, once each
        fp = fingerprint({"seat": seat, "url": target.url, "events": wanted})
        settings = self.games.settings
        if idempotency_key is not None:
            digest = hashlib.sha256(f"{seat}:{idempotency_key}".encode()).hexdigest()
            idem_key, idem_ttl = "hook:" + digest, settings.idempotency_ttl
            prior = self.store.idempotency_record(game_id, idem_key)
            if prior is not None:
                return self._replay(game_id, prior, fp)
        else:
            # As for moves: lets the store's retry of a commit whose reply was lost find it.
            idem_key, idem_ttl = "hook:request:" + secrets.token_hex(16), settings.request_replay_ttl
        hook_id = "hook_" + secrets.token_urlsafe(12)
        hosted = self.games.tenancy
        first = orjson.loads(stored.meta)
        if hosted is not None:
            for_seat = sum(1 for h in hooks_of(first) if h["seat"] == seat)
            if for_seat < MAX_PER_SEAT:  # else refused below, for the seat, spending nothing
                hosted.hold_webhook(first, game_id, hook_id, self._alive)
        registered = False
        try:
            hook = self._register(game_id, seat, stored, target.url, wanted, hook_id,
                                  IdemRecord(idem_key, b"", idem_ttl), fp)
            registered = hook["id"] == hook_id
            return hook
        finally:
            if hosted is not None and not registered:
                hosted.release_webhook(first, game_id, hook_id)

    def _register(self, game_id: str, seat: int, stored: Stored, url: str, wanted: list[str],
                  hook_id: str, idem: IdemRecord, fp: bytes) -> dict:
        for _ in range(self.games.settings.max_commit_attempts):
            meta = orjson.loads(stored.meta)
            hooks = hooks_of(meta)
            if sum(1 for h in hooks if h["seat"] == seat) >= MAX_PER_SEAT:
                raise ApiError(422, "TOO_MANY_WEBHOOKS",
                               f"a seat registers at most {MAX_PER_SEAT} webhooks per game")
            hook: dict[str, Any] = {
                    "id": hook_id, "seat": seat, "url": url,
                    "events": wanted, "created_at": clocks.rfc3339(clocks.now_ms()),
                    "secret": self.sealer.seal(signing.new_secret())}
            meta["webhooks"] = [*hooks, hook]
            result = self._commit(game_id, stored, meta,
                                  IdemRecord(idem.key, fp + SEP + hook["id"].encode(), idem.ttl))
            if result.outcome is Outcome.APPLIED:
                return hook
            if result.outcome is Outcome.REPLAYED:
                return self._replay(game_id, result.replay or b"", fp)
            stored = self.games.load(game_id)  # the game moved on meanwhile: add it to what it is now
        raise ApiError(429, "CONTENTION", "too many concurrent changes of this game; retry",
                       headers={"Retry-After": "1"})

    def listed(self, stored: Stored, seat: int) -> list[dict]:
        return [shown(h) for h in hooks_of(orjson.loads(stored.meta)) if h["seat"] == seat]

    def delete(self, game_id: str, seat: int, stored: Stored, hook_id: str) -> list[dict]:
        """Deletes one of the seat's registrations; returns the seat's others."""
        for _ in range(self.games.settings.max_commit_attempts):
            meta = orjson.loads(stored.meta)
            hooks = hooks_of(meta)
            kept = [h for h in hooks if not (h["id"] == hook_id and h["seat"] == seat)]
            if len(kept) == len(hooks):
                raise ApiError(404, "WEBHOOK_NOT_FOUND", f"seat {seat} has no webhook {hook_id!r} here")
            meta["webhooks"] = kept
            if self._commit(game_id, stored, meta, None).outcome is Outcome.APPLIED:
                if self.games.tenancy is not None:
                    self.games.tenancy.release_webhook(meta, game_id, hook_id)
                return [shown(h) for h in kept if h["seat"] == seat]
            stored = self.games.load(game_id)
        raise ApiError(429, "CONTENTION", "too many concurrent changes of this game; retry",
                       headers={"Retry-After": "1"})

    def _alive(self, game_id: str, hook_id: str) -> bool:
        """Whether a registration a tenant's quota counts is still there (its game may have
        expired or been deleted, taking it along)."""
        found = self.store.meta(game_id)
        return found is not None and any(h["id"] == hook_id for h in hooks_of(orjson.loads(found[1])))

    def _checked(self, url: str) -> addresses.Target:
        try:
            target = addresses.parse(url)
            addresses.resolve(target, private_ok=self.private_ok)
        except addresses.Refused as exc:
            raise ApiError(422, "WEBHOOK_URL_REFUSED", str(exc)) from None
        return target

    def _commit(self, game_id: str, stored: Stored, meta: dict, idem: IdemRecord | None) -> CommitResult:
        # The version stays: a registration is no move. The commit compares the version and the
        # meta read, so a registration never overwrites metadata another change wrote meanwhile
        # (a seat's orders, a claim: they keep the version too).
        result = self.store.commit(game_id, expected_version=stored.version, expected_meta=stored.meta,
                                   ttl=self.games.ttl_of(stored), meta=orjson.dumps(meta), idem=idem)
        if result.outcome is Outcome.MISSING:
            raise not_found(game_id)
        return result

    def _replay(self, game_id: str, prior: bytes, fp: bytes) -> dict:
        prior_fp, _, hook_id = prior.partition(SEP)
        if prior_fp != fp:
            raise ApiError(422, "IDEMPOTENCY_KEY_REUSED", "this key was used with another webhook")
        hooks = hooks_of(orjson.loads(self.games.load(game_id).meta))
        hook = next((h for h in hooks if h["id"] == hook_id.decode()), None)
        if hook is None:
            raise ApiError(404, "WEBHOOK_NOT_FOUND", "the webhook this key registered has been deleted")
        return hook


def webhooks() -> Webhooks:
    return current_app.extensions["aos.webhooks"]


def _authorized(game_id: str) -> tuple[str, int, Stored]:
    token = tokens.bearer(request.headers.get("Authorization"))
    game_id = game_id_of(game_id)
    token, token_seat = tokens.token_game(token, game_id)
    stored = games().load(game_id)
    return game_id, games().authenticate(stored, token, token_seat), stored


@bp.post("/games/<game_id>/webhooks")
def register_webhook(game_id: str) -> Response:
    game_id, seat, stored = _authorized(game_id)
    key = idempotency_key()
    try:
        body = WEBHOOK.load(json_body())
    except ValidationError as exc:
        raise invalid(exc) from None
    hook = webhooks().register(game_id, seat, stored, body, key)
    headers = {"Location": f"/v1/games/{game_id}/webhooks/{hook['id']}"}
    return json_response({**shown(hook), "secret": webhooks().sealer.open(hook["secret"])}, 201, headers)


@bp.get("/games/<game_id>/webhooks")
def list_webhooks(game_id: str) -> Response:
    _, seat, stored = _authorized(game_id)
    return json_response(webhooks().listed(stored, seat))


@bp.delete("/games/<game_id>/webhooks/<hook>")
def delete_webhook(game_id: str, hook: str) -> Response:
    game_id, seat, stored = _authorized(game_id)
    return json_response(webhooks().delete(game_id, seat, stored, hook))
