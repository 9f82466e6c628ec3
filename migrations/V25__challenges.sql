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

-- Correspondence games as rows (`service::live::correspondence`), written before a game is
-- created and after each command on it: their players (what a player's inbox and stream read)
-- and their deadlines, read by time through an index. Such a game has no `match_work` row, so
-- any number of open ones adds nothing to the workers' scan of real-time play.
CREATE TABLE correspondence_seats (
    player_id uuid        NOT NULL,
    match_id  uuid        NOT NULL,
    seated_at timestamptz NOT NULL,
    PRIMARY KEY (player_id, match_id)
);
CREATE INDEX correspondence_seats_match ON correspondence_seats (match_id);

CREATE TABLE correspondence_games (
    match_id uuid        PRIMARY KEY,
    due      timestamptz NOT NULL
);
CREATE INDEX correspondence_games_due ON correspondence_games (due);
