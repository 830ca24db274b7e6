-- The archive: every game and every version of it, as the API committed them to Redis.
-- Written only by the archive copier (service/archive/copier.py), from the outbox; read when a
-- game that left Redis is put back. Rows are never updated in place except where a column says
-- so, and never deleted by the service.

-- What a game is, in public: the header of its replay record.
CREATE TABLE games (
    id              text PRIMARY KEY,
    map             text NOT NULL,
    players         jsonb NOT NULL,          -- [{"name": ...}] in seat order
    options         jsonb NOT NULL,
    rules_version   text NOT NULL,
    seed_commitment text NOT NULL,           -- SHA-256 of the seed, public from the start
    seed            text,                    -- set once the game is finished (then public)
    created_at      timestamptz NOT NULL,
    finished_at     timestamptz,             -- the time of the move that finished it
    -- Versions 1..version are all archived: the archive can rebuild the game at this version.
    -- (Changes can arrive out of order when a dead copier's are taken over, so a later version
    -- may be archived before this one moves up to it.)
    version         integer NOT NULL DEFAULT 0
);
CREATE INDEX games_finished_at ON games (finished_at) WHERE finished_at IS NOT NULL;

-- One row per version of a game: its log entry. Append-only; a repeat is a no-op.
-- No foreign key to games: a move may be copied before its game's create (see above).
CREATE TABLE moves (
    game_id     text NOT NULL,
    version     integer NOT NULL CHECK (version > 0),
    seat        smallint,
    type        text NOT NULL,               -- move.type: a move, "undo", "takeback", ...
    move        jsonb NOT NULL,
    events      jsonb NOT NULL,
    at          timestamptz NOT NULL,        -- when the API committed it
    by          text,                        -- "orders" / "clock" when the server moved for a seat
    entry       bytea NOT NULL,              -- the log entry exactly as the API wrote it
    archived_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (game_id, version)
);

-- What must never be served: the API's metadata of a game (seat token hashes, and whatever else
-- the API keeps there) and a recent engine state (it holds the seed and the random generator's
-- state, secret while the game is active). One row per game; the columns move forward only.
CREATE TABLE game_secrets (
    game_id        text PRIMARY KEY,
    meta           bytea,
    meta_version   integer,                  -- the game's version when meta was written...
    meta_change    bigint[],                 -- ...and the outbox change that wrote it (ms, seq)
    state          bytea,                    -- the engine state at state_version
    state_version  integer
);

-- Versions of a game that were archived beyond a gap that can no longer be filled (Redis lost
-- them before they were copied), set aside when the game was rebuilt at the gap: kept for the
-- record, never replayed.
CREATE TABLE moves_set_aside (
    LIKE moves,
    set_aside_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
