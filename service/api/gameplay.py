"""What each request does with the engine and the store. No HTTP here beyond ApiError: the routes
parse the request, this module decides, the routes shape the response."""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass
from functools import cache

import orjson

from service.engine import game
from service.engine.errors import IllegalMove, SetupError
from service.store import GameExists, GameStore, IdemRecord, Outcome, Stored

from . import admin, metrics, tokens
from .config import Settings
from .problems import ApiError
from .responses import etag, etag_matches

CREATE_KEY = "create"
SEP = b"\n"


@dataclass(frozen=True)
class Created:
    game_id: str
    body: bytes


@dataclass(frozen=True)
class Applied:
    version: int
    body: bytes


@cache
def playable_maps() -> frozenset[str]:
    return frozenset(m["id"] for m in game.maps() if m.get("playable", True))


@cache
def maps_json() -> bytes:
    return orjson.dumps(game.maps())


@cache
def map_info(map_id: str) -> dict:
    return game.map_info(map_id)


@cache
def map_json(map_id: str) -> bytes:
    return orjson.dumps(map_info(map_id))


def fingerprint(obj: object) -> bytes:
    return hashlib.sha256(orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)).hexdigest().encode()


def full_view(state: dict, game_id: str, version: int) -> dict:
    # The engine's view lacks the two things only the API knows: the id and the version.
    return {"game_id": game_id, "version": version, **game.view(state)}


def illegal(exc: IllegalMove, **extra: object) -> ApiError:
    return ApiError(422, exc.code, exc.detail, **{**exc.extra, **extra})


def not_found(game_id: str) -> ApiError:
    return ApiError(404, "GAME_NOT_FOUND", f"no game {game_id!r} (never created, or expired)")


class Games:
    def __init__(self, store: GameStore, settings: Settings) -> None:
        self.store = store
        self.settings = settings

    # -- reading ------------------------------------------------------------------------------

    def load(self, game_id: str, *, with_view: bool = False) -> Stored:
        stored = self.store.load(game_id, with_view=with_view)
        if stored is None:
            raise not_found(game_id)
        return stored

    def view(self, game_id: str) -> tuple[int, bytes]:
        found = self.store.load_view(game_id)
        if found is None:
            raise not_found(game_id)
        return found

    def version(self, game_id: str) -> int:
        version = self.store.version(game_id)
        if version is None:
            raise not_found(game_id)
        return version

    def legal_moves(self, game_id: str, seat: int) -> tuple[int, bytes]:
        # Frontends, bots and spectators ask for the same turn's moves; working them out is the
        # costliest read (every build of a build turn), so one answer per version and seat is
        # kept for a while. A version never changes, so a kept answer is never stale.
        version = self.version(game_id)
        kept = self.store.cached(game_id, f"legal:{version}:{seat}")
        if kept is not None:
            return version, kept
        stored = self.load(game_id)
        state = orjson.loads(stored.state)
        if seat >= len(state["players"]):
            raise ApiError(400, "NO_SUCH_SEAT", f"this game has no seat {seat}")
        moves = game.legal_moves(state, seat)
        body = orjson.dumps(
            {"version": stored.version, "seat": seat, "phase": state["phase"], "moves": moves})
        self.store.keep(game_id, f"legal:{stored.version}:{seat}", body,
                        self.settings.legal_moves_ttl)
        return stored.version, body

    def history(self, game_id: str) -> tuple[int, bytes]:
        version = self.version(game_id)
        entries = self.store.history(game_id)
        if entries is None:
            raise not_found(game_id)
        return version, b"[" + b",".join(entries[:version]) + b"]"

    def record(self, game_id: str) -> tuple[int, dict]:
        stored = self.load(game_id)
        # The log only grows, and it grows with the version: its first `version` entries are
        # exactly the moves that made the state just read.
        entries = self.store.history(game_id) or []
        moves = [orjson.loads(entry) for entry in entries[: stored.version]]
        record = game.record_header(orjson.loads(stored.state))
        record["moves"] = [{"seat": m["seat"], "move": m["move"]} for m in moves]
        return stored.version, record

    # -- creating -----------------------------------------------------------------------------

    def create(self, body: dict, raw: object, idempotency_key: str | None) -> Created:
        """A new game from {map, players, seed?, options?} or {record}; `raw` is the body as
        sent, for the idempotency fingerprint."""
        fp = fingerprint(raw)
        if idempotency_key is not None:
            game_id = _game_id_for(idempotency_key)
            prior = self.store.idempotency_record(game_id, CREATE_KEY)
            if prior is not None:
                return self._replay_create(game_id, prior, fp, idempotency_key)
        state, log = self._new_state(body)
        salt = secrets.token_hex(8)
        ids = [game_id] if idempotency_key is not None else [_random_id() for _ in range(3)]
        for game_id in ids:
            seats, hashes = self._seats(game_id, state, idempotency_key, salt)
            admin_token, admin_hash = admin.admin_token(game_id, idempotency_key, salt)
            version = len(log)
            view = full_view(state, game_id, version)
            meta = orjson.dumps({"tokens": hashes, "admin": admin_hash})
            public = {**view, "seats": [{k: s[k] for k in ("seat", "name")} for s in seats]}
            idem = None
            if idempotency_key is not None:
                idem = IdemRecord(
                    CREATE_KEY,
                    SEP.join([fp, salt.encode(), orjson.dumps(public)]),
                    self.settings.game_ttl,
                )
            try:
                prior = self.store.create(
                    game_id,
                    state=orjson.dumps(state),
                    meta=meta,
                    view=orjson.dumps(view),
                    ttl=self._ttl(state),
                    idem=idem,
                    log=log,
                )
            except GameExists:
                if idempotency_key is not None:
                    raise ApiError(422, "IDEMPOTENCY_KEY_REUSED", "this key created a game already") from None
                continue
            if prior is not None:
                return self._replay_create(game_id, prior, fp, idempotency_key)
            metrics.GAMES_CREATED.labels(map=state["map"]).inc()
            return Created(game_id, orjson.dumps({**view, "seats": seats, "admin_token": admin_token}))
        raise ApiError(503, "STORE_UNAVAILABLE", "could not find a free game id")

    def _new_state(self, body: dict) -> tuple[dict, list[bytes]]:
        if "record" in body:
            return self._replay(body["record"])
        if body["map"] not in playable_maps():
            raise ApiError(422, "MAP_NOT_PLAYABLE", f"games on {body['map']} are not yet playable")
        seed_given = "seed" in body
        seed = body["seed"] if seed_given else secrets.token_hex(16)
        names = [p["name"] for p in body["players"]]
        try:
            state = game.new_game(body["map"], names, seed, body.get("options") or {}, seed_given=seed_given)
        except SetupError as exc:
            raise ApiError(422, exc.code, exc.detail) from None
        return state, []

    def _replay(self, record: dict) -> tuple[dict, list[bytes]]:
        if record["map"] not in playable_maps():
            raise ApiError(422, "MAP_NOT_PLAYABLE", f"games on {record['map']} are not playable")
        if record["rules_version"] != game.RULES_VERSION:
            raise ApiError(
                422,
                "RULES_VERSION_MISMATCH",
                f"the record was played under {record['rules_version']!r}; "
                f"this service plays {game.RULES_VERSION!r}",
            )
        names = [p["name"] for p in record["players"]]
        try:
            state = game.new_game(record["map"], names, record["seed"], record["options"])
        except SetupError as exc:
            raise ApiError(422, exc.code, exc.detail) from None
        if game.view(state)["seed_commitment"] != record["seed_commitment"]:
            raise ApiError(422, "SEED_COMMITMENT_MISMATCH", "the seed does not match its commitment")
        log = []
        for index, entry in enumerate(record["moves"]):
            try:
                state, events = game.apply(state, entry["seat"], entry["move"])
            except IllegalMove as exc:
                raise illegal(exc, index=index) from None
            log.append(_log_entry(index, entry["seat"], entry["move"], events))
        return state, log

    def _seats(
        self, game_id: str, state: dict, idempotency_key: str | None, salt: str
    ) -> tuple[list[dict], list[str]]:
        seats, hashes = [], []
        for player in game.view(state)["players"]:
            seat = player["seat"]
            secret = (
                tokens.derived_secret(idempotency_key, salt, seat)
                if idempotency_key is not None
                else tokens.new_secret()
            )
            token = tokens.make_token(game_id, seat, secret)
            seats.append({"seat": seat, "name": player["name"], "token": token})
            hashes.append(tokens.digest(token))
        return seats, hashes

    def _replay_create(self, game_id: str, prior: bytes, fp: bytes, key: str) -> Created:
        prior_fp, salt, public = prior.split(SEP, 2)
        if prior_fp != fp:
            raise ApiError(422, "IDEMPOTENCY_KEY_REUSED", "this key was used with another body")
        body = orjson.loads(public)
        for seat in body["seats"]:
            secret = tokens.derived_secret(key, salt.decode(), seat["seat"])
            seat["token"] = tokens.make_token(game_id, seat["seat"], secret)
        body["admin_token"] = admin.admin_token(game_id, key, salt.decode())[0]
        return Created(game_id, orjson.dumps(body))

    # -- moving -------------------------------------------------------------------------------

    def authenticate(self, stored: Stored, token: str, seat: int) -> int:
        return tokens.verify(token, seat, orjson.loads(stored.meta)["tokens"])

    def apply(
        self,
        game_id: str,
        seat: int,
        move: dict,
        *,
        if_match: str | None,
        idempotency_key: str | None,
        stored: Stored,
    ) -> Applied:
        """Apply `move` of `seat` (already authenticated against `stored`), re-judging it
        against the new state whenever another writer got in first."""
        fp = fingerprint({"seat": seat, "move": move})
        if idempotency_key is not None:
            idem_key = "move:" + hashlib.sha256(idempotency_key.encode()).hexdigest()
            idem_ttl = self.settings.idempotency_ttl
            prior = self.store.idempotency_record(game_id, idem_key)
            if prior is not None:
                return _replay_move(prior, fp)
        else:
            # The store retries a commit whose reply was lost; a key of this request's own lets
            # that retry find its first write instead of judging the move again and applying it
            # twice. It only has to outlive the retries.
            idem_key = "move:request:" + secrets.token_hex(16)
            idem_ttl = self.settings.request_replay_ttl
        for _ in range(self.settings.max_commit_attempts):
            if if_match is not None and not etag_matches(if_match, stored.version):
                raise ApiError(
                    412,
                    "VERSION_MISMATCH",
                    f"the game is at version {stored.version}",
                    headers={"ETag": etag(stored.version)},
                    version=stored.version,
                )
            try:
                state, events = game.apply(orjson.loads(stored.state), seat, move)
            except IllegalMove as exc:
                metrics.ILLEGAL_MOVES.labels(code=exc.code).inc()
                raise illegal(exc) from None
            version = stored.version + 1
            view = orjson.dumps(full_view(state, game_id, version))
            body = b'{"version":%d,"events":%b,"game":%b}' % (version, orjson.dumps(events), view)
            idem = IdemRecord(idem_key, fp + SEP + body, idem_ttl)
            result = self.store.commit(
                game_id,
                expected_version=stored.version,
                state=orjson.dumps(state),
                view=view,
                log_entry=_log_entry(stored.version, seat, move, events),
                ttl=self._ttl(state),
                idem=idem,
            )
            if result.outcome is Outcome.APPLIED:
                metrics.MOVES_APPLIED.labels(map=state["map"], type=move["type"]).inc()
                return Applied(version, body)
            if result.outcome is Outcome.REPLAYED:
                return _replay_move(result.replay, fp)
            if result.outcome is Outcome.MISSING:
                raise not_found(game_id)
            # Another writer got in first: judge the move again against the game as it is now.
            metrics.STORE_RETRIES.labels(op="commit", reason="version_conflict").inc()
            stored = self.load(game_id)
        raise ApiError(
            429,
            "CONTENTION",
            "too many concurrent moves on this game; retry",
            headers={"Retry-After": "1"},
        )

    def validate(self, state: dict, seat: int, move: dict) -> dict:
        return game.validate(state, seat, move)

    def _ttl(self, state: dict) -> int:
        return self.settings.finished_ttl if game.is_finished(state) else self.settings.game_ttl


def _replay_move(prior: bytes, fp: bytes | None) -> Applied:
    prior_fp, body = prior.split(SEP, 1)
    if prior_fp != fp:
        raise ApiError(422, "IDEMPOTENCY_KEY_REUSED", "this key was used with another move")
    return Applied(orjson.loads(body)["version"], body)


def _log_entry(index: int, seat: int, move: dict, events: list) -> bytes:
    entry = {"index": index, "seat": seat, "move": move, "events": events, "version": index + 1}
    return orjson.dumps(entry)


def _random_id() -> str:
    return secrets.token_urlsafe(12)


def _game_id_for(idempotency_key: str) -> str:
    # A create with a key always names the same game, so its idempotency record can live in
    # the game's own hash slot and be written in the same atomic step as the game.
    digest = hashlib.sha256(b"aos-create:" + idempotency_key.encode()).digest()
    return base64.urlsafe_b64encode(digest[:12]).decode()
