-- Tournaments (issue 44). A tournament is a stream of its own (`tournament-<uuid>`); these are
-- its write side's guards (service) and its read models (projections).

-- The invite code of a private tournament (`service::tournaments`): kept here, never in the
-- stream, which anyone who may read the tournament could replay.
CREATE TABLE tournament_codes (
    tournament_id uuid PRIMARY KEY,
    code          text NOT NULL UNIQUE
);

-- The tournaments that have not ended (`service::tournaments`), written with their creation and
-- removed with their end or cancellation: what every instance's organiser looks at.
CREATE TABLE tournament_schedule (
    tournament_id uuid        PRIMARY KEY,
    starts_at     timestamptz NOT NULL
);

-- A player's place in a tournament that has not ended (`service::tournaments`), written in the
-- transaction that appends the join and removed with the withdrawal, the removal or the end:
-- the ranked queue's guard (no ticket while a tournament of theirs runs) and the presence the
-- arena's organiser reads (a player not seen for a while is paused).
CREATE TABLE tournament_seats (
    player_id     uuid        NOT NULL,
    tournament_id uuid        NOT NULL,
    starts_at     timestamptz NOT NULL,
    seen_at       timestamptz NOT NULL,
    PRIMARY KEY (player_id, tournament_id)
);
CREATE INDEX tournament_seats_of ON tournament_seats (tournament_id, seen_at);

-- The tournaments projection (`projections::tournaments`): one row per tournament, its
-- standings and its pairings, rebuilt from the tournament streams. `state` is `upcoming`
-- (scheduled or open, by the clock at read time), `running`, `finished` or `cancelled`.
CREATE TABLE tournaments (
    tournament_id uuid        PRIMARY KEY,
    game          text        NOT NULL,
    format        text        NOT NULL,
    name          text        NOT NULL,
    state         text        NOT NULL,
    starts_at     timestamptz NOT NULL,
    ends_at       timestamptz NULL,
    rounds        integer     NOT NULL,
    round         integer     NOT NULL,
    rated         boolean     NOT NULL,
    private       boolean     NOT NULL,
    turn_seconds  integer     NOT NULL,  -- 0: no turn limit
    created_by    uuid        NOT NULL,
    players       integer     NOT NULL,
    max_players   integer     NOT NULL,
    version       bigint      NOT NULL
);
CREATE INDEX tournaments_listed ON tournaments (state, starts_at DESC, tournament_id)
    WHERE NOT private;

CREATE TABLE tournament_standings (
    tournament_id    uuid             NOT NULL,
    player_id        uuid             NOT NULL,
    rank             integer          NOT NULL,
    score            integer          NOT NULL,
    games            integer          NOT NULL,
    wins             integer          NOT NULL,
    draws            integer          NOT NULL,
    losses           integer          NOT NULL,
    streak           integer          NOT NULL,
    on_fire          boolean          NOT NULL,
    buchholz         integer          NOT NULL,
    sonneborn_berger integer          NOT NULL,
    performance      double precision NOT NULL,
    status           text             NOT NULL,
    PRIMARY KEY (tournament_id, player_id)
);
CREATE INDEX tournament_standings_ranked ON tournament_standings (tournament_id, rank, player_id);

-- One row per pairing or bye (`version`: the event's in the tournament's stream); `winner` is
-- set with `result` (`win`, `draw`; `bye` for a bye, whose `half_points` it gives).
CREATE TABLE tournament_pairings (
    tournament_id uuid        NOT NULL,
    version       bigint      NOT NULL,
    round         integer     NOT NULL,
    match_id      uuid        NULL,
    first_player  uuid        NOT NULL,
    second_player uuid        NULL,
    result        text        NULL,
    winner        uuid        NULL,
    half_points   integer     NULL,
    paired_at     timestamptz NOT NULL,
    PRIMARY KEY (tournament_id, version)
);
CREATE UNIQUE INDEX tournament_pairings_match ON tournament_pairings (match_id);
CREATE INDEX tournament_pairings_first ON tournament_pairings (tournament_id, first_player);
CREATE INDEX tournament_pairings_second ON tournament_pairings (tournament_id, second_player);

INSERT INTO projection_checkpoints (name, tx, position, events, updated_at)
VALUES ('tournaments', 0, 0, 0, now());
