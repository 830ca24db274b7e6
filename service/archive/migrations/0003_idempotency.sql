-- The Idempotency-Key records of archived changes: a client that retries a move with its key
-- after Redis lost the game (a flush, a restore from an old backup) gets its first answer, from
-- the game put back from the archive, rather than judging the move again. One row per game and
-- key (the key is the API's digest of the client's, never the client's own); `version` is the
-- game's version after the change, so a record beyond a gap set aside is not put back.
CREATE TABLE game_idempotency (
    game_id     text NOT NULL,
    key         text NOT NULL,
    value       bytea NOT NULL,
    version     integer NOT NULL,
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (game_id, key)
);
CREATE INDEX game_idempotency_expires ON game_idempotency (expires_at);
