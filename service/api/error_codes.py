"""Every `code` the API answers with, outside the rule codes of illegal moves (those are the
engine's: service/engine/errors.py): its HTTP status, when it is sent and the fields it carries
beside `type`, `title`, `status`, `code` and `detail`. docs/error-codes.md is made from this table
and the engine's by tools/error_codes_doc.py; a test holds both to the codes the source raises."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ApiCode:
    status: int
    meaning: str
    fields: dict[str, str] = field(default_factory=dict)  # extra problem fields: what each holds
    headers: tuple[str, ...] = ()  # response headers the client should read


MAX_MOVES = "the most moves a record may have (`RECORD_TOO_LONG`) or a simulation play (`SIMULATE_MOVES_CAP`)"
ERRORS_BY_FIELD = {"errors": "the messages by field, as the body's own nesting (list items by index)"}

API_CODES: dict[str, ApiCode] = {
    # -- the request is malformed ---------------------------------------------------------------
    "MALFORMED_JSON": ApiCode(400, "the body is not JSON"),
    "VALIDATION_ERROR": ApiCode(
        400, "the body does not match the contract (a missing or unknown field, a wrong type)",
        {**ERRORS_BY_FIELD, "index": "on a record import: the index of the move that does not match"}),
    "UNKNOWN_MOVE_TYPE": ApiCode(400, "the move's `type` names no move of the contract", ERRORS_BY_FIELD),
    "BAD_IDEMPOTENCY_KEY": ApiCode(
        400, "`Idempotency-Key` is not 1-255 visible ASCII characters, or on a create shorter than 16"),
    "BAD_HEADER": ApiCode(400, "`If-Match` or `If-None-Match` is longer than 1024 characters"),
    "BAD_ETAG": ApiCode(
        400, "`If-Match` or `If-None-Match` is neither `*` nor a list of quoted entity tags: "
        'send `If-Match: "3"` (with the quotes) for version 3, not `If-Match: 3`'),
    "BAD_QUERY": ApiCode(400, "a query parameter the operation does not take, or a value it does not allow"),
    "BAD_SEAT": ApiCode(400, "the `seat` parameter is missing or not an integer from 0 to 5"),
    "NO_SUCH_SEAT": ApiCode(400, "the game has fewer seats than the one named"),
    "VERSION_AHEAD": ApiCode(
        400, "an events stream asked to start after a version the game has not reached",
        {"version": "the game's current version"}),
    "SEAT_REQUIRED": ApiCode(400, "`moves/validate` needs a seat token or a `seat` field in the move"),
    "BAD_REQUEST": ApiCode(400, "the HTTP request itself is malformed"),
    "BAD_CHUNKED_BODY": ApiCode(
        400, "a `Transfer-Encoding: chunked` body whose chunks are malformed or that broke off"),
    "BODY_INCOMPLETE": ApiCode(
        400, "the body ended before its `Content-Length` (the client stopped sending); nothing was done"),
    # The server's own answers to a request it cannot read (service/serving.py, under gunicorn).
    "BAD_REQUEST_LINE": ApiCode(400, "the request line is not `METHOD target HTTP/1.x`"),
    "BAD_METHOD": ApiCode(400, "the request's method is not a valid HTTP method token"),
    "BAD_HTTP_VERSION": ApiCode(400, "the request names an HTTP version other than 1.0 or 1.1"),
    "BAD_PROXY_LINE": ApiCode(400, "a PROXY protocol line that is malformed (where the operator enabled it)"),
    "BAD_SCHEME_HEADERS": ApiCode(400, "the forwarded-scheme headers contradict each other"),
    "BAD_DATE": ApiCode(
        400, "`from` or `to` of the usage is not a date (YYYY-MM-DD), or they span over a year"),
    "BAD_CURSOR": ApiCode(400, "the listing's `cursor` is not one a listing gave"),
    "BAD_START_AT": ApiCode(400, "a bulk create's `start_at` is not an RFC 3339 time with its offset"),
    "BULK_TOO_LARGE": ApiCode(400, "a bulk create names no game, or more than it may (100)",
                              {"max_games": "the most games one bulk create makes"}),
    "PRIVATE_NEEDS_TENANCY": ApiCode(
        400, "a private game was asked of a service not run with AOS_TENANCY=required"),
    "BAD_FROM_VERSION": ApiCode(
        400, "a simulation's `from_version` is not a version of the game (0 to its current one)",
        {"version": "the game's current version"}),
    "RECORD_TOO_LONG": ApiCode(
        400, "an imported record has more moves than the service replays (`AOS_MAX_RECORD_MOVES`)",
        {"max_moves": MAX_MOVES}),
    # -- who is asking --------------------------------------------------------------------------
    "TOKEN_MISSING": ApiCode(401, "no `Authorization: Bearer <token>` header", headers=("WWW-Authenticate",)),
    "TOKEN_INVALID": ApiCode(
        401, "the token is not a Bearer token of this game's (wrong, reissued, or of the wrong kind)",
        headers=("WWW-Authenticate",)),
    "API_KEY_REQUIRED": ApiCode(
        401, "this needs a tenant's API key in `X-API-Key` (creating with AOS_TENANCY=required, "
        "listing, usage, deleting a tenant's game)", {"scope": "the scope the key must have"}),
    "API_KEY_INVALID": ApiCode(401, "`X-API-Key` holds no key of this service's: wrong, unknown or revoked"),
    "API_KEY_SCOPE": ApiCode(403, "the API key lacks the scope this needs", {"scope": "the scope it lacks"}),
    "TOKEN_OTHER_GAME": ApiCode(403, "the token belongs to another game"),
    "PROXY_FORBIDDEN": ApiCode(403, "a PROXY protocol line from an address not allowed to send one"),
    "TLS_ERROR": ApiCode(403, "the TLS handshake failed (where the server itself terminates TLS)"),
    "SEAT_MISMATCH": ApiCode(403, "the move's `seat` is not the seat of the token"),
    "ADMIN_TOKEN_REQUIRED": ApiCode(
        403, "a seat token was sent where the game-admin token is needed (reissuing, seat status)"),
    # -- what is asked for ----------------------------------------------------------------------
    "GAME_NOT_FOUND": ApiCode(404, "no game has that id (never created, or expired), or it is another "
                              "tenant's private game"),
    "GAME_DELETED": ApiCode(410, "the game was deleted at its owner's request (`AOS_DELETED_TTL`, then 404)"),
    "MAP_NOT_FOUND": ApiCode(404, "no map has that id"),
    "NOT_FOUND": ApiCode(404, "no resource at that path"),
    "WEBHOOK_NOT_FOUND": ApiCode(404, "the seat has no webhook of that id in this game (or it was deleted)"),
    "HINT_NOT_FOUND": ApiCode(
        404, "no hint of that id: never asked for at that version, or lapsed (`AOS_HINT_TTL`)"),
    "HINTS_DISABLED": ApiCode(403, "the host has turned hints off (`AOS_HINTS=off`)"),
    "METHOD_NOT_ALLOWED": ApiCode(405, "the path takes other methods", headers=("Allow",)),
    "VERSION_MISMATCH": ApiCode(
        412, "`If-Match` names a version the game is no longer at: nothing was applied",
        {"version": "the game's current version"}, headers=("ETag",)),
    "BODY_TIMEOUT": ApiCode(
        408, "the request body did not arrive whole within `AOS_BODY_TIMEOUT_SECONDS` (10 s); the "
        "connection is closed and nothing was done", headers=("Retry-After",)),
    "BODY_TOO_LARGE": ApiCode(413, "the body is larger than the service accepts (1 MiB by default)"),
    "URI_TOO_LONG": ApiCode(414, "the request line is longer than the server reads (4094 bytes)"),
    "EXPECTATION_FAILED": ApiCode(417, "an `Expect` header other than `100-continue`"),
    "HEADERS_TOO_LARGE": ApiCode(431, "more request headers, or a longer one, than the server reads"),
    "SIMULATE_MOVES_CAP": ApiCode(
        413, "a simulation names more moves than one request plays (`AOS_SIMULATE_MAX_MOVES`, 50); "
        "nothing was played", {"max_moves": MAX_MOVES}),
    "SIMULATE_CPU_CAP": ApiCode(
        413, "a simulation's moves took more CPU time than one request may (`AOS_SIMULATE_CPU_MS`, "
        "250 ms): ask for fewer", {"cpu_ms": "the CPU time a simulation may take, in milliseconds"}),
    "UNSUPPORTED_MEDIA_TYPE": ApiCode(
        415, "a body not labelled `Content-Type: application/json`", headers=("Accept",)),
    # -- well formed, but not allowed -----------------------------------------------------------
    "SEAT_IS_COMPUTER": ApiCode(
        422, "the seat is played by the computer (created with `bot`): it has no token to reissue"),
    "MAP_NOT_PLAYABLE": ApiCode(422, "games cannot be created on that map in this build"),
    "UNKNOWN_MAP": ApiCode(422, "the engine knows no such map"),
    "PLAYER_COUNT": ApiCode(422, "the map does not take that many players"),
    "BAD_OPTION": ApiCode(422, "an option the map does not have, or of the wrong type or value"),
    "RULES_VERSION_MISMATCH": ApiCode(422, "the record was played under other rules than this service's"),
    "SEED_COMMITMENT_MISMATCH": ApiCode(422, "the record's seed does not match its seed commitment"),
    "WEBHOOK_URL_REFUSED": ApiCode(
        422, "the webhook URL is not http(s), carries credentials, or resolves to a loopback, private, "
        "link-local or otherwise non-public address (unless the operator allows private receivers)"),
    "TOO_MANY_WEBHOOKS": ApiCode(422, "the seat has as many webhooks for this game as it may (5)"),
    "IDEMPOTENCY_KEY_REUSED": ApiCode(
        422, "the `Idempotency-Key` was used before with another body (or created a game already)"),
    # -- try again ------------------------------------------------------------------------------
    "CONTENTION": ApiCode(
        429, "too many moves raced on this game at once; nothing was applied, retry",
        headers=("Retry-After",)),
    "QUOTA_EXCEEDED": ApiCode(
        429, "the tenant's quota is spent (games a day, writes a second, open streams, webhooks); "
        "nothing was done",
        {"quota": "the quota's name", "limit": "its size", "retry_after": "seconds until it renews"},
        headers=("Retry-After", "RateLimit-Policy", "RateLimit")),
    "RATE_LIMITED": ApiCode(
        429, "the client's allowance for this kind of request is spent; nothing was looked at",
        {"policy": "the spent limit's name and window, e.g. `writes-1s`"},
        headers=("Retry-After", "RateLimit-Policy", "RateLimit")),
    "TOO_MANY_REQUESTS": ApiCode(
        429, "this client address has as many requests in flight in this process as it may "
        "(`AOS_MAX_REQUESTS_PER_ADDRESS`, 128); nothing was looked at, and the connection is closed",
        headers=("Retry-After",)),
    "TOO_MANY_WAITS": ApiCode(
        429, "this client address (`AOS_MAX_WAITS_PER_ADDRESS`, 32) or this game "
        "(`AOS_MAX_WAITS_PER_GAME`, 512) has as many event streams and long-polls open in this "
        "process as it may; nothing was looked at, and the connection is closed",
        headers=("Retry-After",)),
    "TOO_MANY_AUTH_FAILURES": ApiCode(
        429, "requests from this client address had a token or API key refused (401) "
        "`AOS_MAX_AUTH_FAILURES_PER_MINUTE` times (60) this minute: its requests with a token or "
        "key are refused for the rest of it; nothing was looked at", headers=("Retry-After",)),
    "INTERNAL": ApiCode(500, "a bug: it has been logged with the request's `X-Request-Id`"),
    "TRANSFER_CODING_UNSUPPORTED": ApiCode(501, "a `Transfer-Encoding` other than `chunked`"),
    "AT_CAPACITY": ApiCode(
        503, "the instance holds as many connections (or event streams) as it may; nothing was "
        "looked at: retry, here or on another instance", headers=("Retry-After",)),
    "STORE_UNAVAILABLE": ApiCode(
        503, "the game store is unreachable (or no free game id was found); nothing was changed",
        headers=("Retry-After",)),
    "HTTP_ERROR": ApiCode(400, "any other HTTP error, with its own status"),
}

# The status a rule code of the engine is answered with, and where.
RULE_STATUS = 422


def status_of(code: str) -> int:
    """The status a code is answered with: its row's, or a rule code's (the engine's refusals,
    and the core's refusals of an undo or a takeback, are all 422)."""
    row = API_CODES.get(code)
    return RULE_STATUS if row is None else row.status
# The extra fields rule codes carry, by name: what each holds.
RULE_FIELDS: dict[str, str] = {
    "index": "on a record import (`POST /v1/games` with `record`): the index of the move that fails; "
    "on a simulation (`POST /v1/games/{id}/simulate`): the index of the step that fails",
    "active_seat": "the seat whose decision it is",
    "need": "what the move needs: the cash a build or bid costs, the cubes a production places",
    "have": "what the player has: cash, or (`SHARE_LIMIT`) the shares issued so far",
    "limit": "the most the rule allows",
    "minimum": "the lowest amount the rule allows now",
    "links": "the number of links the route uses",
    "locomotive": "the player's locomotive level",
    "link": "the id of the link at fault",
    "tile": "the id of the track tile at fault",
    "action": "the action id at fault",
    "available": "the action ids that may be taken now",
    "hex": "the hex at fault, `{q, r}`",
    "edge": "the edge at fault: 0-5, or `{a, b}` for the edge between two hexes",
    "city": "the city hex at fault (for `NO_CUBE`, where the delivery starts), `{q, r}`",
    "color": "the cube colour at fault",
    "amount": "the amount at fault",
}
