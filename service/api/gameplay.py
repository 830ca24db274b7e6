"""What each request does with the engine and the store. No HTTP here beyond ApiError: the routes
parse the request, this module decides, the routes shape the response."""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import TypeVar

import orjson

from service.engine import game
from service.engine.errors import IllegalMove, SetupError
from service.store import CreateRecord, GameExists, GameStore, IdemRecord, Outcome, Stored
from service.store.keys import SHARDS, shard_of

from . import archiving, metrics, timeline, tokens
from .config import Settings
from .problems import ApiError
from .responses import etag, etag_matches

T = TypeVar("T")

SEP = b"\n"
# An Idempotency-Key on a create stands for the seats' tokens (a retry shows them again), so it
# must be a secret: long enough that it cannot be guessed. A UUID is 36 characters.
MIN_CREATE_KEY_LENGTH = 16


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
        # With an archive, a game that left the store is put back from it (archiving.py).
        self.restore = archiving.restorer(
            store, settings, lambda state, game_id, version: orjson.dumps(full_view(state, game_id, version)))

    # -- reading ------------------------------------------------------------------------------

    def found(self, game_id: str, read: Callable[[], T | None]) -> T:
        """`read()` of a game from the store; a game not there (expired, evicted, flushed) is
        put back from the archive, if there is one, and read again before the answer is 404."""
        value = read()
        if value is None and self.restore(game_id):
            value = read()
        if value is None:
            raise not_found(game_id)
        return value

    def load(self, game_id: str, *, with_view: bool = False) -> Stored:
        return self.found(game_id, lambda: self.store.load(game_id, with_view=with_view))

    def view(self, game_id: str) -> tuple[int, bytes]:
        return self.found(game_id, lambda: self.store.load_view(game_id))

    def version(self, game_id: str) -> int:
        return self.found(game_id, lambda: self.store.version(game_id))

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
        entries = self.store.history(game_id, 0, version)
        if entries is None:
            raise not_found(game_id)
        return version, b"[" + b",".join(entries) + b"]"

    def record(self, game_id: str) -> tuple[int, dict]:
        stored = self.load(game_id)
        # The log only grows, and it grows with the version: its first `version` entries are
        # exactly the versions that made the state just read.
        entries = timeline.entries_of(self.store.history(game_id, 0, stored.version) or [])
        record = game.record_header(orjson.loads(stored.state))
        record["moves"] = [{"seat": e["seat"], "move": e["move"]} for e in timeline.in_effect(entries)]
        return stored.version, record

    def view_at(self, game_id: str, version: int) -> bytes:
        """The game view as it was at `version` (made again from the log when the game has
        moved on since)."""
        stored = self.load(game_id, with_view=True)
        if stored.version == version:
            return stored.view
        entries = timeline.entries_of(self.store.history(game_id, 0, version) or [])
        state = timeline.state_at(orjson.loads(stored.state), entries, version)
        return orjson.dumps(full_view(state, game_id, version))

    # -- creating -----------------------------------------------------------------------------

    def create(self, body: dict, raw: object, idempotency_key: str | None) -> Created:
        """A new game from {map, players, seed?, options?} or {record}; `raw` is the body as
        sent, for the idempotency fingerprint.

        Game ids are random. A create with an Idempotency-Key keeps a record under the key's
        digest for a short while, in the shard its game is created in; the record names the game
        and a salt, and the seats' tokens are derived from the key and the salt, so only a retry
        that knows the key (the creator's) is shown them again."""
        fp = fingerprint(raw)
        key = None
        if idempotency_key is not None:
            key = CreateKey.of(idempotency_key)
            prior = self.store.create_record(key.shard, key.digest)
            if prior is not None:
                replayed = self._replay_create(prior, fp, key)
                if replayed is not None:
                    return replayed
                self.store.drop_create_record(key.shard, key.digest)  # its game is gone
        state, log = self._new_state(body)
        salt = secrets.token_hex(8)
        version = len(log)
        for _ in range(3):
            game_id = _random_id(None if key is None else key.shard)
            seats, hashes = self._seats(game_id, state, key, salt)
            view = full_view(state, game_id, version)
            record = None
            if key is not None:
                value = SEP.join([fp, salt.encode(), game_id.encode(), str(version).encode()])
                record = CreateRecord(key.digest, value, self._create_retry_ttl())
            try:
                prior = self.store.create(
                    game_id,
                    state=orjson.dumps(state),
                    meta=orjson.dumps({"tokens": hashes}),
                    view=orjson.dumps(view),
                    ttl=self._ttl(state),
                    log=log,
                    record=record,
                )
            except GameExists:
                continue  # 72 random bits taken: pick again
            if prior is not None:  # a retry of this create got in first
                replayed = self._replay_create(prior, fp, key)
                if replayed is None:
                    raise ApiError(503, "STORE_UNAVAILABLE", "the create's record names no game; retry")
                return replayed
            metrics.GAMES_CREATED.labels(map=state["map"]).inc()
            return Created(game_id, orjson.dumps({**view, "seats": seats}))
        raise ApiError(503, "STORE_UNAVAILABLE", "could not find a free game id")

    def _create_retry_ttl(self) -> int:
        # A record never outlives its game, so a retry never points at a game that is gone.
        return min(self.settings.create_retry_ttl, self.settings.game_ttl, self.settings.finished_ttl)

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
                state, events = timeline.apply_entry(state, entry["seat"], entry["move"])
            except IllegalMove as exc:
                raise illegal(exc, index=index) from None
            log.append(log_entry(index, entry["seat"], entry["move"], events))
        return state, log

    def _seats(
        self, game_id: str, state: dict, key: CreateKey | None, salt: str
    ) -> tuple[list[dict], list[str]]:
        seats, hashes = [], []
        for player in game.view(state)["players"]:
            seat = player["seat"]
            secret = tokens.derived_secret(key.secret, salt, seat) if key is not None else tokens.new_secret()
            token = tokens.make_token(game_id, seat, secret)
            seats.append({"seat": seat, "name": player["name"], "token": token})
            hashes.append(tokens.digest(token))
        return seats, hashes

    def _replay_create(self, prior: bytes, fp: bytes, key: CreateKey) -> Created | None:
        """The first answer to a create, for its retry; None when its game is gone."""
        prior_fp, salt, game_id, version = prior.split(SEP, 3)
        if prior_fp != fp:
            raise ApiError(422, "IDEMPOTENCY_KEY_REUSED", "this key was used with another body")
        game_id = game_id.decode()
        try:
            view = orjson.loads(self.view_at(game_id, int(version)))
        except ApiError as exc:
            if exc.code == "GAME_NOT_FOUND":
                return None
            raise
        seats = [{"seat": p["seat"], "name": p["name"],
                  "token": tokens.make_token(game_id, p["seat"],
                                             tokens.derived_secret(key.secret, salt.decode(), p["seat"]))}
                 for p in view["players"]]
        return Created(game_id, orjson.dumps({**view, "seats": seats}))

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
        by: str | None = None,
    ) -> Applied:
        """Apply `move` of `seat` (already authenticated against `stored`), re-judging it
        against the new state whenever another writer got in first. `by` says who made the move
        when the server made it for the seat ("orders", "clock"): it goes into the log entry."""
        fp = fingerprint({"seat": seat, "move": move})
        if idempotency_key is not None:
            idem_key = "move:" + hashlib.sha256(idempotency_key.encode()).hexdigest()
            idem_ttl = self.settings.idempotency_ttl
            prior = self.store.idempotency_record(game_id, idem_key)
            if prior is not None:
                return self._replay_move(game_id, prior, fp)
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
            body = moved_body(version, orjson.dumps(events), view)
            # A retry needs only to know which version the move made: the answer is made again
            # from the log (and the view at that version), so the record stays small.
            idem = IdemRecord(idem_key, fp + SEP + str(version).encode(), idem_ttl)
            result = self.store.commit(
                game_id,
                expected_version=stored.version,
                entries=[log_entry(stored.version, seat, move, events, by)],
                state=orjson.dumps(state),
                view=view,
                ttl=self._ttl(state),
                idem=idem,
            )
            if result.outcome is Outcome.APPLIED:
                metrics.MOVES_APPLIED.labels(map=state["map"], type=move["type"]).inc()
                return Applied(version, body)
            if result.outcome is Outcome.REPLAYED:
                return self._replay_move(game_id, result.replay, fp)
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

    def _replay_move(self, game_id: str, prior: bytes, fp: bytes) -> Applied:
        """The first answer to a move, for its retry with the same Idempotency-Key."""
        prior_fp, version_text = prior.split(SEP, 1)
        if prior_fp != fp:
            raise ApiError(422, "IDEMPOTENCY_KEY_REUSED", "this key was used with another move")
        version = int(version_text)
        entry = (self.store.history(game_id, version - 1, version) or [None])[0]
        if entry is None:
            raise not_found(game_id)
        events = orjson.loads(entry)["events"]
        return Applied(version, moved_body(version, orjson.dumps(events), self.view_at(game_id, version)))

    def validate(self, state: dict, seat: int, move: dict) -> dict:
        return game.validate(state, seat, move)

    def _ttl(self, state: dict) -> int:
        return self.settings.finished_ttl if game.is_finished(state) else self.settings.game_ttl


def moved_body(version: int, events: bytes, view: bytes) -> bytes:
    """The answer to a change of a game: {version, events, game}."""
    return b'{"version":%d,"events":%b,"game":%b}' % (version, events, view)


def now_rfc3339() -> str:
    return datetime.fromtimestamp(time.time(), UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def log_entry(index: int, seat: int, move: dict, events: list, by: str | None = None) -> bytes:
    """The log entry of version index + 1: who moved, what, what it did, and when."""
    entry: dict = {"index": index, "seat": seat, "move": move, "events": events,
                   "version": index + 1, "at": now_rfc3339()}
    if by is not None:
        entry["by"] = by
    return orjson.dumps(entry)


@dataclass(frozen=True)
class CreateKey:
    """A create's Idempotency-Key: the secret its tokens are derived from, the digest its record
    is kept under, and the shard the game goes in (the record's shard)."""

    secret: str
    digest: str
    shard: int

    @classmethod
    def of(cls, key: str) -> CreateKey:
        if len(key) < MIN_CREATE_KEY_LENGTH:
            raise ApiError(400, "BAD_IDEMPOTENCY_KEY",
                           f"an Idempotency-Key on a create stands for the seats' tokens: use a "
                           f"secret of at least {MIN_CREATE_KEY_LENGTH} characters (e.g. a UUID)")
        digest = hashlib.sha256(b"aos-create:" + key.encode()).hexdigest()
        return cls(key, digest, int(digest[:8], 16) % SHARDS)


def _random_id(shard: int | None) -> str:
    """72 random bits; in the given shard when there is one (32 tries on average)."""
    while True:
        game_id = secrets.token_urlsafe(12)
        if shard is None or shard_of(game_id) == shard:
            return game_id
