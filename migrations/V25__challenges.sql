-- Challenges (`service::challenges`). A challenge's stream (`challenge-<id>`) is its truth; this
-- table is the write side's index of it, written in the transaction of each command on the
-- stream: the open challenges a player sent or received (the inbox), the bounds on what a player
-- may send (open at once, sent in the last minute), and the deadlines the workers read by time.
-- Closed challenges stay a day, for the bounds; the workers purge them after.
CREATE TABLE challenges (
    challenge_id uuid        PRIMARY KEY,
    challenger   uuid        NOT NULL,
    challenged   uuid        NOT NULL,
    game         text        NOT NULL,
    rated        boolean     NOT NULL,
    turn_seconds integer     NOT NULL,  -- 0: no turn limit
    days_per_move integer    NOT NULL,  -- 0: a real-time game
    first        text        NOT NULL,  -- challenger | challenged | random
    status       text        NOT NULL,  -- open | accepted | declined | cancelled | expired
    sent_at      timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    match_id     uuid        NULL
);
CREATE INDEX challenges_sent ON challenges (challenger, sent_at);
CREATE INDEX challenges_received ON challenges (challenged, sent_at) WHERE status = 'open';
CREATE INDEX challenges_due ON challenges (expires_at) WHERE status = 'open';

-- Whom each player accepts challenges from (`everyone`, `played`, `nobody`); no row: everyone.
CREATE TABLE challenge_settings (
    player_id uuid PRIMARY KEY,
    accepting text NOT NULL
);
