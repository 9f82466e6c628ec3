-- The match service's own tables: players, the server's secret, idempotent answers, rooms, and
-- the pending background work of active matches. Events stay in `events`; these rows are
-- either not events by nature (names, secrets, cached answers) or derived and rebuildable
-- (match_work).

CREATE TABLE players (
    player_id  uuid        PRIMARY KEY,
    name       text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 32),
    created_at timestamptz NOT NULL
);

-- Secrets the server generates once and every instance shares (the HS256 token key).
CREATE TABLE server_secrets (
    name       text        PRIMARY KEY,
    secret     bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- The first answer to a state-changing request with an Idempotency-Key, per player.
CREATE TABLE idempotency_keys (
    player_id    uuid        NOT NULL,
    key          text        NOT NULL,
    request_hash bytea       NOT NULL,
    status       integer     NOT NULL,
    body         jsonb       NOT NULL,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (player_id, key)
);
CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);

-- Rooms: a host, at most one guest, settings for the next match, the current match.
CREATE TABLE rooms (
    room_id         uuid        PRIMARY KEY,
    code            text        NOT NULL UNIQUE,
    game            text        NOT NULL,
    settings        jsonb       NOT NULL,
    host            uuid        NOT NULL REFERENCES players (player_id),
    guest           uuid        NULL REFERENCES players (player_id),
    match_id        uuid        NULL,
    last_first_seat smallint    NULL,
    created_at      timestamptz NOT NULL
);

-- One row per active match: when its own state next needs the server (a CPU move, a turn
-- deadline, an away player's grace period), whose presence to watch and when each seat was
-- last seen. Workers claim due rows with a lease; finished matches leave the table.
CREATE TABLE match_work (
    match_id    uuid        PRIMARY KEY,
    state_due   timestamptz NULL,
    watch1      boolean     NOT NULL,
    watch2      boolean     NOT NULL,
    seen1       timestamptz NOT NULL,
    seen2       timestamptz NOT NULL,
    lease_until timestamptz NULL
);
