"""What each request does with the engine and the store. No HTTP here beyond GameError: the routes
parse the request, this module decides, the routes shape the response."""

from __future__ import annotations

import functools
import hashlib
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, NamedTuple, TypeVar

import orjson

from service.engine import game, words
from service.engine.contract_types import GameView, MapDetail, TakebackView, Verdict
from service.engine.errors import IllegalMove, SetupError
from service.engine.layout import Event, GivenMove, State
from service.observability import metrics
from service.store import Ahead, CreateRecord, GameExists, GameStore, IdemRecord, Outcome, Stored
from service.store.keys import SHARDS, shard_of

from . import admin, bots, clocks, legal, orders, restore, timeline, tokens, whatif
from .conditions import etag_matches
from .errors import GameError, deleted, not_found
from .settings import Settings
from .tenancy import Tenancy

T = TypeVar("T")

SEP = b"\n"
# What stands for the fingerprint in the record of a commit under a key of the request's own
# (Games.change): a fingerprint tells the requests that share a key apart, and no other request
# has that key.
OWN_REQUEST = b"own"
# An Idempotency-Key on a create stands for the seats' tokens (a retry shows them again), so it
# must be a secret: long enough that it cannot be guessed. A UUID is 36 characters.
MIN_CREATE_KEY_LENGTH = 16


@dataclass(frozen=True)
class Created:
    game_id: str
    body: bytes
    created_ms: int = 0
    # The first answer made again for a retry with the same Idempotency-Key: no new game, so
    # nothing to list or count.
    replayed: bool = False


# Applied and Change are made for every move: named tuples, immutable as frozen dataclasses are,
# made in a third of the time (a frozen dataclass sets each field through object.__setattr__).
class Applied(NamedTuple):
    version: int
    body: bytes


class Change(NamedTuple):
    """What one request writes in one commit: log entries (one per version; none for a change
    of meta only), the state after them with its view (view None: the state stays), the new meta
    (None: it stays), the answer, and what a retry with the same Idempotency-Key needs to make
    the answer again (stored after the request's fingerprint)."""

    entries: list[bytes]
    state: State
    view: bytes | None
    meta: bytes | None
    body: bytes
    record: bytes
    # The metadata after the change, decoded (the new meta, else the meta read), when the plan
    # has it at hand: the commit's clock reads it without decoding the bytes again.
    meta_after: dict | None = None
    # The types of the moves of the game among `entries`, when the plan knows them: the moves'
    # metrics count them without decoding the entries again.
    move_types: tuple[str, ...] | None = None


# Makes the change of a request from the game as loaded and the commit's time (unix ms: the log
# entries' `at`, from which the clock's deadline counts); raises GameError when it is refused.
Plan = Callable[[Stored, int], Change]
# Makes a retry's answer again from what the first commit stored after the fingerprint.
Replay = Callable[[str, bytes], Applied]


@cache
def playable_maps() -> frozenset[str]:
    return frozenset(m["id"] for m in game.maps() if m.get("playable", True))


@cache
def maps_json() -> bytes:
    return orjson.dumps(game.maps())


@cache
def map_info(map_id: str) -> MapDetail:
    return game.map_info(map_id)


@cache
def map_json(map_id: str) -> bytes:
    return orjson.dumps(map_info(map_id))


def fingerprint(obj: object) -> bytes:
    return hashlib.sha256(orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)).hexdigest().encode()


def full_view(state: State, game_id: str, version: int, *, takeback: TakebackView | None = None,
              clock: dict | None = None, since_ms: int = 0) -> GameView:
    """The engine's view plus what only the API knows: the id, the version, the takeback
    proposed (timeline.pending_takeback: it lives in the log, not in the engine state), and the
    clock with the deadline of the decision (`since_ms`: the commit time of the version). For
    orjson to write: its board is JSON already (game.view_to_write)."""
    deadline = clocks.deadline_text(clocks.deadline_ms(clock, state, since_ms))
    return {"game_id": game_id, "version": version, **game.view_to_write(state), "takeback": takeback,
            "clock": clocks.public(clock), "deadline": deadline}


def render_at(state: State, game_id: str, version: int, meta: bytes,
              entries: Sequence[dict]) -> tuple[bytes, float | None]:
    """The stored view of a past version and its clock's deadline (unix seconds, or None), made
    again from the state then, the game's metadata and the log's first `version` entries: the
    pending takeback and the deadline come from the log."""
    decoded = orjson.loads(meta)
    clock = clocks.of_meta(decoded)
    since = clocks.since_ms(clock, entries[version - 1] if version > 0 else None)
    view = full_view(state, game_id, version, takeback=timeline.pending_takeback(entries[:version]),
                     clock=clock, since_ms=since)
    return orjson.dumps(view), bots.due_seconds(decoded, state, since)


def view_bytes(state: State, game_id: str, version: int, meta: bytes, at_ms: int,
               takeback: TakebackView | None = None) -> bytes:
    """The stored view of a version committed at `at_ms`, for a game with this metadata."""
    return clocked_view_bytes(state, game_id, version, clocks.of_meta(orjson.loads(meta)), at_ms, takeback)


def clocked_view_bytes(state: State, game_id: str, version: int, clock: dict | None, at_ms: int,
                       takeback: TakebackView | None = None) -> bytes:
    """view_bytes for a game whose clock (clocks.of_meta) is at hand."""
    return orjson.dumps(full_view(state, game_id, version, takeback=takeback, clock=clock, since_ms=at_ms))


def illegal(exc: IllegalMove, **extra: Any) -> GameError:
    return GameError(exc.code, exc.detail, **{**exc.extra, **extra})


class Games:
    def __init__(self, store: GameStore, settings: Settings) -> None:
        self.store = store
        self.settings = settings
        # With an archive, a game that left the store is put back from it (restore.py).
        self.archive = restore.archive_of(settings)
        self.restore = restore.restorer(store, settings, render_at, self.archive)
        # Tenants' quotas and usage (tenancy.py), when the service is hosted for them.
        self.tenancy: Tenancy | None = None
        # Runs work that follows a commit but need not delay its answer (list_ahead): the API
        # runs it after the response is sent, and says whether it will (outside a request it does
        # not). None: such work is not done.
        self.defer: Callable[[Callable[[], None]], bool] | None = None
        self.listed_here = legal.ListedHere()

    # -- reading ------------------------------------------------------------------------------

    def found(self, game_id: str, read: Callable[[], T | None]) -> T:
        """`read()` of a game from the store; a game not there (expired, evicted, flushed) is
        put back from the archive, if there is one, and read again before the answer is 404."""
        value = read()
        if value is None:
            if self.store.deleted(game_id):  # never put back from the archive
                raise deleted(game_id)
            if self.restore(game_id):
                value = read()
        if value is None:
            raise not_found(game_id)
        return value

    def missing(self, game_id: str) -> GameError:
        """The refusal for a game the store has not: deleted (410), or never there (404)."""
        return deleted(game_id) if self.store.deleted(game_id) else not_found(game_id)

    def delete(self, game_id: str) -> bool:
        """Deletes the game everywhere (the store, the archive), leaving its id answering 410
        for `deleted_ttl`; its watchers' streams end. Whether there was a game."""
        existed = self.store.purge(game_id, self.settings.deleted_ttl)
        if self.archive is not None:
            existed = bool(self.archive.purge({game_id})) or existed
        return existed

    def is_retry(self, raw: object, idempotency_key: str | None) -> bool:
        """Whether a create would be answered with a game an earlier request made (same key,
        same body, the game still there): such a retry is no new game for a quota to refuse."""
        if idempotency_key is None:
            return False
        key = CreateKey.of(idempotency_key)
        prior = self.store.create_record(key.shard, key.digest)
        if prior is None:
            return False
        try:
            return self._replay_create(prior, fingerprint(raw), key) is not None
        except GameError:
            return False  # the create says why (IDEMPOTENCY_KEY_REUSED...)

    def undo_create(self, created: Created, idempotency_key: str | None) -> None:
        """Takes back a game this request made (a bulk create refused further on): deleted, and
        its Idempotency-Key forgotten, so that a retry makes it again rather than being
        answered with a deleted game. A replayed answer names a game an earlier request made:
        that one stays."""
        if created.replayed:
            return
        self.delete(created.game_id)
        if idempotency_key is not None:
            key = CreateKey.of(idempotency_key)
            self.store.drop_create_record(key.shard, key.digest)

    def load(self, game_id: str, *, with_view: bool = False) -> Stored:
        return self.found(game_id, lambda: self.store.load(game_id, with_view=with_view))

    def view(self, game_id: str) -> tuple[int, bytes]:
        return self.found(game_id, lambda: self.store.load_view(game_id))

    def version(self, game_id: str) -> int:
        return self.found(game_id, lambda: self.store.version(game_id))

    def legal_moves(self, game_id: str, seat: int) -> tuple[int, bytes]:
        # A client asks for a turn's legal moves once, as the version comes. The deciding
        # seat's are worked out ahead, after the commit that made the version, when that seat's
        # listings are read lately (list_ahead); any other seat's are worked out here, and kept
        # when the seat's listings were read lately (a second screen, a spectator, a client
        # polling). So only a seat read lately has a value kept, and only its reader looks for
        # one (in this process, else in the store): a first reader's read is the game's alone.
        # The read is marked once the answer is sent (mark_read): a write the answer does not
        # need, which cost a cold listing's read some 20 µs in a server (benchmarks/http).
        name, ttl = legal.name(seat), self.settings.legal_moves_ttl
        stored, read_lately = self.found(game_id, lambda: self.store.peek_kept(game_id, name))
        # Marked only by a read that is answered: a seat the game has not is refused unmarked.
        mark = functools.partial(self.after_answer,
                                 functools.partial(self.store.mark_read, game_id, name, ttl))
        kept = None
        if read_lately:
            kept = (self.listed_here.get(game_id, name, stored.version)
                    or self.store.kept(game_id, name, stored.version))
        if kept == legal.PENDING:
            stored, kept, read_lately = self._listed_ahead(game_id, name, ttl)
        answer = legal.kept_answer(kept, stored.state)
        if answer is not None:
            mark()
            return stored.version, answer
        state = orjson.loads(stored.state)
        if seat >= len(state["players"]):
            raise GameError("NO_SUCH_SEAT", f"this game has no seat {seat}")
        mark()
        answer = legal.body(state, seat, stored.version)
        if read_lately:
            value = legal.kept_value(stored.state, answer)
            self.store.keep(game_id, name, stored.version, value, ttl)
            self.listed_here.put(game_id, name, stored.version, value)
        return stored.version, answer

    def after_answer(self, task: Callable[[], None]) -> None:
        """Runs `task` once the answer is sent (`defer`), or now when nothing runs after it (no
        `defer`, or no request being answered)."""
        if self.defer is None or not self.defer(task):
            task()

    def ahead_of(self, state: State) -> Ahead | None:
        """What a commit of `state` keeps ahead for list_ahead: the listing of the seat that
        decides next, marked pending if it is read lately (CommitResult.ahead_read), so that a
        reader that comes meanwhile waits for list_ahead's listing instead of working it out
        too. None when nothing runs after the answer (no `defer`) or nobody decides."""
        seat = game.active_seat(state) if self.defer is not None else None
        return None if seat is None else pending_ahead(seat)

    def list_ahead(self, game_id: str, version: int, stored_state: bytes, state: State) -> None:
        """Works out the legal moves of the seat that decides at `version` (committed with the
        stored state `stored_state`, which is `state`) and keeps them for its first reader. Runs
        off the request path (`defer`), after the commit's answer is sent, and only when the
        commit found the seat's listings read lately and marked this one pending (`ahead_of`):
        most games' are not read, and the work would be wasted. No round trip comes before the
        work: a client asks for the listing as soon as its move is answered, and on its kept-alive
        connection its request waits for this to finish. Kept here first, so that a reader in
        this process finds the listing before the store has it."""
        seat = game.active_seat(state)
        if seat is None:
            return
        answer = legal.body(state, seat, version)
        value = legal.kept_value(stored_state, answer)
        self.listed_here.put(game_id, legal.name(seat), version, value)
        self.store.keep(game_id, legal.name(seat), version, value, self.settings.legal_moves_ttl,
                        wake=True)

    def _listed_ahead(self, game_id: str, name: str, ttl: int) -> tuple[Stored, bytes | None, bool]:
        """Waits (GameStore.await_kept) and reads again until the listing being worked out
        ahead is there, the game moves on, or `legal_moves_wait_ms` pass (then the caller
        lists for itself)."""
        deadline = time.monotonic() + self.settings.legal_moves_wait_ms / 1000
        while True:
            self.store.await_kept(game_id, name, max(0.0, deadline - time.monotonic()))
            stored, kept, read_lately = self.found(game_id, lambda: self.store.load_kept(game_id, name, ttl))
            if kept != legal.PENDING:
                return stored, kept, read_lately
            if time.monotonic() >= deadline:
                return stored, None, read_lately

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
        record["options"] = clocks.with_clock(record["options"], clocks.of_meta(orjson.loads(stored.meta)))
        record["moves"] = [{"seat": e["seat"], "move": e["move"]} for e in timeline.in_effect(entries)]
        return stored.version, record

    def view_at(self, game_id: str, version: int) -> bytes:
        """The game view as it was at `version` (made again from the log when the game has
        moved on since)."""
        stored = self.load(game_id, with_view=True)
        if stored.version == version:
            assert stored.view is not None  # loaded with its view
            return stored.view
        entries = timeline.entries_of(self.store.history(game_id, 0, version) or [])
        state = timeline.state_at(orjson.loads(stored.state), entries, version)
        return render_at(state, game_id, version, stored.meta, entries)[0]

    def entries(self, game_id: str, stored: Stored) -> list[dict]:
        """The log entries that made `stored` (the log only grows: its first `version` entries
        are always the same)."""
        return timeline.entries_of(self.store.history(game_id, 0, stored.version) or [])

    # -- creating -----------------------------------------------------------------------------

    def create(self, body: dict, raw: object, idempotency_key: str | None,
               owner: dict | None = None, clock_start_ms: int | None = None) -> Created:
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
        options, clock = clocks.split_options(body.get("record", body).get("options"))
        created_ms = clocks.now_ms()
        state, log = self._new_state(body, options, created_ms)
        salt = secrets.token_hex(8)
        version = len(log)
        # A clock may start later than the game is made (a tournament's bulk create).
        clock_ms = created_ms if clock_start_ms is None else max(created_ms, clock_start_ms)
        meta_clock = clocks.in_meta(clock, clock_ms)
        computer = bots.in_meta(bots.of_players(body.get("players", [])))
        deadline = bots.due_seconds({**meta_clock, **computer}, state, clock_ms)
        # A tenant's game keeps when it was made: its listing's order, in Redis and the archive.
        made = {"created_ms": created_ms} if owner and "tenant" in owner else {}
        for _ in range(3):
            game_id = _random_id(None if key is None else key.shard)
            seats, hashes = self._seats(game_id, state, key, salt, bots.of_meta(computer))
            admin_token, admin_hash = admin.admin_token(game_id, None if key is None else key.secret, salt)
            view = full_view(state, game_id, version, clock=clock, since_ms=clock_ms)
            record = None
            if key is not None:
                value = SEP.join([fp, salt.encode(), game_id.encode(), str(version).encode()])
                record = CreateRecord(key.digest, value, self._create_retry_ttl())
            try:
                prior = self.store.create(
                    game_id,
                    state=orjson.dumps(state),
                    meta=orjson.dumps({"tokens": hashes, "admin": admin_hash, **meta_clock, **computer,
                                       **(owner or {}), **made}),
                    view=orjson.dumps(view),
                    ttl=self._ttl(state),
                    log=log,
                    record=record,
                    deadline=deadline,
                )
            except GameExists:
                continue  # 72 random bits taken: pick again
            if prior is not None:  # a retry of this create got in first
                assert key is not None  # only a create with a key leaves a record
                replayed = self._replay_create(prior, fp, key)
                if replayed is None:
                    raise GameError("STORE_UNAVAILABLE", "the create's record names no game; retry")
                return replayed
            metrics.GAMES_CREATED.labels(map=state["map"]).inc()
            return Created(game_id, orjson.dumps({**view, "seats": seats, "admin_token": admin_token}),
                           created_ms)
        raise GameError("STORE_UNAVAILABLE", "could not find a free game id")

    def _create_retry_ttl(self) -> int:
        # A record never outlives its game, so a retry never points at a game that is gone.
        return min(self.settings.create_retry_ttl, self.settings.game_ttl, self.settings.finished_ttl)

    def _new_state(self, body: dict, options: dict, at_ms: int) -> tuple[State, list[bytes]]:
        """The game's state and log from a create's body; `options` are its map options (the
        service's own, the clock, taken out)."""
        if "record" in body:
            return self._replay(body["record"], options, at_ms)
        if body["map"] not in playable_maps():
            raise GameError("MAP_NOT_PLAYABLE", f"games on {body['map']} are not yet playable")
        seed_given = "seed" in body
        seed = body["seed"] if seed_given else secrets.token_hex(16)
        names = [p["name"] for p in body["players"]]
        try:
            state = game.new_game(body["map"], names, seed, options, seed_given=seed_given)
        except SetupError as exc:
            raise GameError(exc.code, exc.detail) from None
        return state, []

    def _replay(self, record: dict, options: dict, at_ms: int) -> tuple[State, list[bytes]]:
        if record["map"] not in playable_maps():
            raise GameError("MAP_NOT_PLAYABLE", f"games on {record['map']} are not playable")
        if record["rules_version"] != game.RULES_VERSION:
            raise GameError("RULES_VERSION_MISMATCH",
                f"the record was played under {record['rules_version']!r}; "
                f"this service plays {game.RULES_VERSION!r}",
            )
        names = [p["name"] for p in record["players"]]
        try:
            state = game.new_game(record["map"], names, record["seed"], options)
        except SetupError as exc:
            raise GameError(exc.code, exc.detail) from None
        if game.view(state)["seed_commitment"] != record["seed_commitment"]:
            raise GameError("SEED_COMMITMENT_MISMATCH", "the seed does not match its commitment")
        log = []
        for index, entry in enumerate(record["moves"]):
            try:
                state, events = timeline.apply_entry(state, entry["seat"], entry["move"],
                                                     in_place=True)
            except IllegalMove as exc:
                raise illegal(exc, index=index) from None
            log.append(log_entry(index, entry["seat"], entry["move"], events, at_ms=at_ms, state=state))
        return state, log

    def _seats(
        self, game_id: str, state: State, key: CreateKey | None, salt: str, computer: dict[int, int]
    ) -> tuple[list[dict], list[str]]:
        """The seats as the create answers them, and the digests of their tokens. A computer
        seat has no token: its digest is empty, which no token's matches."""
        seats, hashes = [], []
        for player in game.view(state)["players"]:
            seat = player["seat"]
            if seat in computer:
                seats.append({"seat": seat, "name": player["name"], "token": None,
                              "bot": {"level": computer[seat]}})
                hashes.append("")
                continue
            secret = tokens.derived_secret(key.secret, salt, seat) if key is not None else tokens.new_secret()
            token = tokens.make_token(game_id, seat, secret)
            seats.append({"seat": seat, "name": player["name"], "token": token})
            hashes.append(tokens.digest(token))
        return seats, hashes

    def _replay_create(self, prior: bytes, fp: bytes, key: CreateKey) -> Created | None:
        """The first answer to a create, for its retry; None when its game is gone."""
        prior_fp, salt, raw_id, version = prior.split(SEP, 3)
        if prior_fp != fp:
            raise GameError("IDEMPOTENCY_KEY_REUSED", "this key was used with another body")
        game_id = raw_id.decode()
        try:
            view = orjson.loads(self.view_at(game_id, int(version)))
        except GameError as exc:
            if exc.code in ("GAME_NOT_FOUND", "GAME_DELETED"):  # expired, or deleted by its owner
                return None
            raise
        found = self.store.meta(game_id)
        computer = bots.of_meta(orjson.loads(found[1])) if found is not None else {}
        seats = [{"seat": p["seat"], "name": p["name"], "token": None, "bot": {"level": computer[p["seat"]]}}
                 if p["seat"] in computer else
                 {"seat": p["seat"], "name": p["name"],
                  "token": tokens.make_token(game_id, p["seat"],
                                             tokens.derived_secret(key.secret, salt.decode(), p["seat"]))}
                 for p in view["players"]]
        admin_token = admin.admin_token(game_id, key.secret, salt.decode())[0]
        return Created(game_id, orjson.dumps({**view, "seats": seats, "admin_token": admin_token}),
                       replayed=True)

    # -- moving -------------------------------------------------------------------------------

    def authenticate(self, stored: Stored, token: str, seat: int) -> int:
        return tokens.verify(token, seat, orjson.loads(stored.meta)["tokens"])

    def apply(
        self,
        game_id: str,
        seat: int,
        move: GivenMove,
        *,
        if_match: str | None,
        idempotency_key: str | None,
        stored: Stored,
        by: str | None = None,
        token: str | None = None,
    ) -> Applied:
        """Apply `move` of `seat` (already authenticated against `stored`; a move of the
        contract, or timeline.RESIGN), re-judging it against the new state whenever another
        writer got in first. `by` says who made the move when the server made it for the seat
        ("orders", "clock"): it goes into the log entry. The seats' programmed orders that the
        move calls on go in the same commit, and so does the seat's claim when the seat's
        `token` is given (its first use marks the seat claimed: admin.claim_in). A claim
        written apart, before the commit, changed the metadata the commit compares with, so
        every seat's first move conflicted with itself and was judged twice."""

        def plan(stored: Stored, at_ms: int) -> Change:
            try:
                # The state was just decoded, and is dropped if the move is refused.
                state, events = timeline.apply_entry(orjson.loads(stored.state), seat, move,
                                                     in_place=True)
            except IllegalMove as exc:
                metrics.ILLEGAL_MOVES.labels(code=exc.code).inc()
                raise illegal(exc) from None
            entries = [log_entry(stored.version, seat, move, events, by, at_ms=at_ms, state=state)]
            # The metadata read is decoded once: the orders, the claim, the view's clock and the
            # commit's all read it.
            read = orjson.loads(stored.meta)
            state, after = self._carry_out(state, read, entries, stored.version, at_ms)
            if token is not None:
                after = admin.claim_of(read if after is None else after, seat, token) or after
            version = stored.version + len(entries)
            meta_after = read if after is None else after
            view = clocked_view_bytes(state, game_id, version, clocks.of_meta(meta_after), at_ms)
            # The orders' moves, if any, are counted from their entries.
            types = (move["type"],) if len(entries) == 1 and timeline.is_move({"move": move}) else None
            return Change(entries, state, view, None if after is None else orjson.dumps(after),
                          moved_body(version, orjson.dumps(events), view, entries[1:]),
                          replay_record(stored.version + 1, version), meta_after, types)

        return self.change(game_id, {"seat": seat, "move": move}, plan, self.replay_moved,
                           if_match=if_match, idempotency_key=idempotency_key, stored=stored)

    def carry_out_orders(self, state: State, meta: bytes, entries: list[bytes], version: int,
                         at_ms: int, first_seat: int | None = None) -> tuple[State, bytes | None]:
        """The step of the move path that carries out programmed orders: the moves the orders
        of the seats to decide make, one seat after the other, appended to `entries` (the
        commit's entries so far, made on a game at `version`) marked "by": "orders". Returns
        the state after them and the new meta (None: unchanged)."""
        state, after = self._carry_out(state, orjson.loads(meta), entries, version, at_ms, first_seat)
        return state, None if after is None else orjson.dumps(after)

    def _carry_out(self, state: State, meta: dict, entries: list[bytes], version: int,
                   at_ms: int, first_seat: int | None = None) -> tuple[State, dict | None]:
        """carry_out_orders on the decoded metadata: the new metadata decoded (None: unchanged)."""
        book = orders.book_of(meta)
        if not book:
            return state, None
        state, fired, book, changed = orders.carry_out(state, book, first_seat=first_seat)
        index = version + len(entries)
        for n, made in enumerate(fired):
            entries.append(log_entry(index + n, made.seat, made.move, made.events, "orders",
                                     at_ms=at_ms, state=state))
        return state, (orders.with_book(meta, book) if changed else None)

    def change(
        self,
        game_id: str,
        request: dict,
        plan: Plan,
        replay: Replay,
        *,
        if_match: str | None,
        idempotency_key: str | None,
        stored: Stored,
    ) -> Applied:
        """One request that changes a game, in one compare-and-set: `plan` makes the change from
        the game as loaded and is run again on the new game whenever another writer got in
        first. `request` (who asks for what) is fingerprinted for the Idempotency-Key: a repeat
        is answered by `replay` from what the first commit stored, and applies nothing.
        Every commit names the meta it read as well as the version, since a change of meta
        alone (a seat's orders) keeps the version."""
        if idempotency_key is not None:
            fp = fingerprint(request)
            idem_key = "move:" + hashlib.sha256(idempotency_key.encode()).hexdigest()
            idem_ttl = self.settings.idempotency_ttl
            prior = self.store.idempotency_record(game_id, idem_key)
            if prior is not None:
                return self._replayed(game_id, prior, fp, replay)
        else:
            # The store retries a commit whose reply was lost; a key of this request's own lets
            # that retry find its first write instead of judging the move again and applying it
            # twice. It only has to outlive the retries. Only this request can meet that key, so
            # its record needs no fingerprint to tell requests apart.
            fp = OWN_REQUEST
            idem_key = "move:request:" + secrets.token_hex(16)
            idem_ttl = self.settings.request_replay_ttl
        hosted = self.tenancy is not None and b'"tenant"' in stored.meta
        if hosted:
            assert self.tenancy is not None
            self.tenancy.write(orjson.loads(stored.meta))
        for _ in range(self.settings.max_commit_attempts):
            if if_match is not None and not etag_matches(if_match, stored.version):
                raise GameError("VERSION_MISMATCH",
                    f"the game is at version {stored.version}",
                    version=stored.version,
                )
            # One commit time for the log entries, the clock set and the view's deadline.
            at_ms = clocks.now_ms()
            change = plan(stored, at_ms)
            state = None if change.view is None else orjson.dumps(change.state)
            meta_after = change.meta_after
            if meta_after is None:
                meta_after = orjson.loads(change.meta or stored.meta)
            deadline = bots.due_seconds(meta_after, change.state, at_ms)
            # A retry needs only to know which versions the change made: the answer is made
            # again from the log (and the view at that version), so the record stays small.
            idem = IdemRecord(idem_key, fp + SEP + change.record, idem_ttl)
            result = self.store.commit(
                game_id,
                expected_version=stored.version,
                expected_meta=stored.meta,
                entries=change.entries,
                state=state,
                view=change.view,
                meta=change.meta,
                ttl=self._ttl(change.state),
                deadline=deadline,
                idem=idem,
                ahead=None if state is None else self.ahead_of(change.state),
            )
            if result.outcome is Outcome.APPLIED:
                if hosted:
                    assert self.tenancy is not None
                    self.tenancy.applied(orjson.loads(stored.meta), len(change.entries))
                types = change.move_types
                if types is None:
                    types = tuple(timeline.move_type(entry) for entry in timeline.entries_of(change.entries)
                                  if timeline.is_move(entry))
                for kind in types:
                    metrics.move_applied(change.state["map"], kind).inc()
                version = stored.version + len(change.entries)
                if state is not None and result.ahead_read and self.defer is not None:
                    self.defer(functools.partial(self.list_ahead, game_id, version, state,
                                                 change.state))
                return Applied(version, change.body)
            if result.outcome is Outcome.REPLAYED:
                assert result.replay is not None  # a replayed outcome carries the first answer
                return self._replayed(game_id, result.replay, fp, replay)
            if result.outcome is Outcome.MISSING:
                raise self.missing(game_id)
            # Another writer got in first: judge the request again against the game as it is now.
            metrics.STORE_RETRIES.labels(op="commit", reason="version_conflict").inc()
            stored = self.load(game_id)
        raise GameError("CONTENTION",
            "too many concurrent moves on this game; retry",
        )

    def _replayed(self, game_id: str, prior: bytes, fp: bytes, replay: Replay) -> Applied:
        prior_fp, record = prior.split(SEP, 1)
        if prior_fp != fp:
            raise GameError("IDEMPOTENCY_KEY_REUSED", "this key was used with another request")
        return replay(game_id, record)

    def replay_moved(self, game_id: str, record: bytes) -> Applied:
        """The first answer to a change of versions (a move, an undo, a takeback step), for its
        retry with the same Idempotency-Key: {version, events, game, followed_by?}."""
        own, final = parse_replay_record(record)
        entries = self.store.history(game_id, own - 1, final) or []
        if len(entries) != final - own + 1:
            raise not_found(game_id)
        events = orjson.loads(entries[0])["events"]
        return Applied(final, moved_body(final, orjson.dumps(events), self.view_at(game_id, final),
                                         entries[1:]))

    def validate(self, state: State, seat: int, move: GivenMove) -> Verdict:
        verdict = game.validate(state, seat, move)
        words.Teller.of(state).events(verdict.get("effects", []) if verdict["legal"] else [])
        return verdict

    def simulate(self, game_id: str, question: whatif.Question) -> tuple[int, bytes]:
        """What-if (whatif.py): the question's moves played on a copy of the game at its
        current version or `from_version`; nothing is written. Returns the game's current
        version and the answer."""
        whatif.check_count(len(question.moves), self.settings)
        stored = self.load(game_id, with_view=True)
        start = whatif.start_version(question.from_version, stored.version)
        entries: list[dict] = []
        if start == stored.version:
            state = orjson.loads(stored.state)
        else:
            entries = timeline.entries_of(self.store.history(game_id, 0, start) or [])
            state = timeline.state_at(orjson.loads(stored.state), entries, start)
        answer = whatif.play(state, question, self.settings)
        if answer.played:
            view = view_bytes(answer.state, game_id, start + answer.played, stored.meta, clocks.now_ms())
        elif start == stored.version:
            assert stored.view is not None  # loaded with its view
            view = stored.view
        else:
            view = render_at(state, game_id, start, stored.meta, entries)[0]
        return stored.version, whatif.answer_bytes(answer, start, view)

    def ttl_of(self, stored: Stored) -> int:
        """How long the game is kept after a change that leaves its state as stored."""
        return self._ttl(orjson.loads(stored.state))

    def _ttl(self, state: State) -> int:
        return self.settings.finished_ttl if game.is_finished(state) else self.settings.game_ttl


@cache
def pending_ahead(seat: int) -> Ahead:
    """The mark a commit keeps ahead for `seat`'s listing (Games.ahead_of): made once a seat,
    as it never changes (Ahead is frozen)."""
    return Ahead(legal.name(seat), legal.PENDING, legal.PENDING_TTL)


def moved_body(version: int, events: bytes, view: bytes, followed_by: Sequence[bytes] = ()) -> bytes:
    """The answer to a change of a game: {version, events, game}, and `followed_by`, the log
    entries of the moves programmed orders made right after it in the same commit, if any.
    `version` and `game` are the game's after all of them."""
    if not followed_by:
        return b'{"version":%d,"events":%b,"game":%b}' % (version, events, view)
    return b'{"version":%d,"events":%b,"game":%b,"followed_by":[%b]}' % (
        version, events, view, b",".join(followed_by))


def replay_record(own: int, final: int) -> bytes:
    """What a retry needs to answer a change again: the version the request's own entry made and
    the version after the whole commit."""
    return b"%d%b%d" % (own, SEP, final)


def parse_replay_record(record: bytes) -> tuple[int, int]:
    # Records written before orders existed hold one version: the request's own and the last.
    own, _, final = record.partition(SEP)
    return int(own), int(final or own)


def log_entry(index: int, seat: int, move: GivenMove, events: list[Event], by: str | None = None,
              at_ms: int | None = None, *, state: State) -> bytes:
    """The log entry of version index + 1: who moved, what, what it did, and when (`at_ms`: the
    commit time, which the clock's deadline counts from; now by default), in words: the entry's
    `text` and each event's (given to `events` in place, so the answer that shows them has them
    too). `state`: the game's state, any version (its players' names and map are the words')."""
    at = clocks.rfc3339(clocks.now_ms() if at_ms is None else at_ms)
    text = words.Teller.of(state).tell(seat, move, events)
    entry: dict = {"index": index, "seat": seat, "move": move, "events": events,
                   "version": index + 1, "at": at, "text": text}
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
            raise GameError("BAD_IDEMPOTENCY_KEY",
                           f"an Idempotency-Key on a create stands for the seats' tokens: use a "
                           f"secret of at least {MIN_CREATE_KEY_LENGTH} characters (e.g. a UUID)")
        digest = hashlib.sha256(b"aos-create:" + key.encode()).hexdigest()
        return cls(key, digest, int(digest[:8], 16) % SHARDS)


def _random_id(shard: int | None) -> str:
    """72 random bits; in the given shard when there is one (32 tries on average). Never with a
    leading `-`, which command lines (the bot's `--game ID`, curl, shells) would read as an option."""
    while True:
        game_id = secrets.token_urlsafe(12)
        if game_id.startswith("-"):
            continue
        if shard is None or shard_of(game_id) == shard:
            return game_id
