-- Ranked play: the queue's write-side slots, and the read models of the projections (ratings,
-- history, leaderboards, queue) with their checkpoints. Every table below except queue_slots is
-- a projection of the event log: it can be dropped and rebuilt from position 0 (`discs rebuild`).

-- One row per player with an open ticket or a ranked match from the queue: the write side's
-- guard for "one open ticket per player, none while in a ranked match" (SPEC §5). Written in the
-- same transaction as the ticket's events, so it is never out of step with the log.
CREATE TABLE queue_slots (
    player_id uuid PRIMARY KEY,
    ticket_id uuid NULL,
    match_id  uuid NULL
);

-- Where each projection stands in the log, updated in the same transaction as its tables.
CREATE TABLE projection_checkpoints (
    name       text        PRIMARY KEY,
    tx         bigint      NOT NULL,
    position   bigint      NOT NULL,
    events     bigint      NOT NULL,
    updated_at timestamptz NOT NULL
);
INSERT INTO projection_checkpoints (name, tx, position, events, updated_at)
VALUES ('ratings', 0, 0, 0, now()), ('history', 0, 0, 0, now()),
       ('leaderboards', 0, 0, 0, now()), ('queue', 0, 0, 0, now());

-- ratings: each player's current Glicko-2 values per game ...
CREATE TABLE ratings (
    player_id     uuid             NOT NULL,
    game          text             NOT NULL,
    rating        double precision NOT NULL,
    deviation     double precision NOT NULL,
    volatility    double precision NOT NULL,
    games         integer          NOT NULL,
    last_ended_at timestamptz      NOT NULL,
    PRIMARY KEY (player_id, game)
);

-- ... and every rating step, with what an audit needs to check it by hand.
CREATE TABLE rating_points (
    player_id         uuid             NOT NULL,
    game              text             NOT NULL,
    games             integer          NOT NULL,  -- ranked games played after this one
    match_id          uuid             NOT NULL,
    at                timestamptz      NOT NULL,  -- the match_ended event's timestamp
    opponent          uuid             NOT NULL,
    score             double precision NOT NULL,  -- 1 win, 0.5 draw, 0 loss
    before_rating     double precision NOT NULL,
    before_deviation  double precision NOT NULL,
    before_volatility double precision NOT NULL,
    idle_days         integer          NOT NULL,
    pre_deviation     double precision NOT NULL,  -- after the idle days: what the match used
    rating            double precision NOT NULL,
    deviation         double precision NOT NULL,
    volatility        double precision NOT NULL,
    created_position  bigint           NOT NULL,  -- match_created
    ended_position    bigint           NOT NULL,  -- match_ended
    PRIMARY KEY (player_id, game, games)
);
CREATE UNIQUE INDEX rating_points_match ON rating_points (match_id, player_id);

-- history: every finished match of every human player, newest first by ended_at.
CREATE TABLE match_history (
    player_id      uuid        NOT NULL,
    match_id       uuid        NOT NULL,
    game           text        NOT NULL,
    ranked         boolean     NOT NULL,
    seat           smallint    NOT NULL,
    started        boolean     NOT NULL,  -- this player moved first
    opponent       uuid        NULL,      -- null: the CPU
    result         text        NOT NULL,  -- win | loss | draw
    reason         text        NOT NULL,
    ended_at       timestamptz NOT NULL,
    ended_position bigint      NOT NULL,
    PRIMARY KEY (player_id, match_id)
);
CREATE INDEX match_history_recent ON match_history (player_id, ended_at DESC, match_id);
CREATE INDEX match_history_ranked ON match_history (player_id, game, ended_at DESC) WHERE ranked;

-- leaderboards: every rated player per game; the board shows the non-provisional ones.
CREATE TABLE leaderboard (
    game          text             NOT NULL,
    player_id     uuid             NOT NULL,
    rating        double precision NOT NULL,
    deviation     double precision NOT NULL,
    volatility    double precision NOT NULL,
    games         integer          NOT NULL,
    last_ended_at timestamptz      NOT NULL,
    PRIMARY KEY (game, player_id)
);
CREATE INDEX leaderboard_board ON leaderboard (game, rating DESC, player_id) WHERE deviation <= 110;

-- queue: the waiting tickets of each pool ...
CREATE TABLE queue_tickets (
    ticket_id    uuid             PRIMARY KEY,
    player_id    uuid             NOT NULL,
    game         text             NOT NULL,
    turn_seconds integer          NOT NULL,  -- 0: no turn limit
    rating       double precision NOT NULL,
    deviation    double precision NOT NULL,
    opened_at    timestamptz      NOT NULL
);
CREATE INDEX queue_tickets_pool ON queue_tickets (game, turn_seconds, opened_at);

-- ... and the quality of every pairing made, for the pool statistics.
CREATE TABLE queue_pairs (
    ticket_id    uuid             PRIMARY KEY,
    game         text             NOT NULL,
    turn_seconds integer          NOT NULL,
    waited_ms    bigint           NOT NULL,
    rating_gap   double precision NOT NULL,
    repeat       boolean          NOT NULL,
    matched_at   timestamptz      NOT NULL
);
CREATE INDEX queue_pairs_pool ON queue_pairs (game, turn_seconds, matched_at);

-- Rebuilds asked for through the admin API or the CLI, and how far they got.
CREATE TABLE projection_rebuilds (
    rebuild_id  uuid        PRIMARY KEY,
    name        text        NOT NULL,
    status      text        NOT NULL,  -- running | done | failed
    events      bigint      NOT NULL,
    started_at  timestamptz NOT NULL,
    finished_at timestamptz NULL,
    error       text        NULL
);
