-- Move quality from the exact solvers (issue 29): every finished ranked match is assessed once,
-- ply by ply, in the background (`service::fairplay::quality`), never on the move path.

-- The history projection's outbox (`projections`): each finished ranked match it records is
-- queued here in the same transaction, once (a rebuild of the history queues them again; the
-- worker skips a match already assessed by the current solver version). Any instance claims a
-- row with a lease; the row goes when its match's assessment commits.
CREATE TABLE move_quality_pending (
    match_id    uuid        PRIMARY KEY,
    queued_at   timestamptz NOT NULL,
    attempts    integer     NOT NULL DEFAULT 0,
    lease_until timestamptz NULL
);
CREATE INDEX move_quality_pending_order ON move_quality_pending (queued_at);

-- The assessment of each ply (`service`): the values of the position before and after the move
-- for the side that moved (exact where the solver finished within its budget), the best moves,
-- the quality (`best`, `inaccuracy`, `error`; null when not exact), whether the position was
-- critical, whether the move was optimal, and how long its player took. A projection of the
-- log and of the cache of solved positions: computed once, again only by a newer solver.
CREATE TABLE move_quality (
    match_id     uuid        NOT NULL,
    ply          integer     NOT NULL,
    game         text        NOT NULL,
    player_id    uuid        NULL,      -- the seat's human; null for a CPU seat
    by_human     boolean     NOT NULL,  -- false: the CPU moved (a CPU seat, a stand-in, a timeout)
    mv           text        NOT NULL,
    score_before integer     NOT NULL,
    score_after  integer     NOT NULL,
    best_moves   text[]      NOT NULL,
    legal_moves  integer     NOT NULL,  -- how many moves the mover had (a guess's odds)
    exact        boolean     NOT NULL,
    quality      text        NULL CHECK (quality IN ('best', 'inaccuracy', 'error')),
    critical     boolean     NOT NULL,
    optimal      boolean     NOT NULL,
    think_ms     bigint      NOT NULL,
    ended_at     timestamptz NOT NULL,
    PRIMARY KEY (match_id, ply)
);
-- A player's critical moves, newest matches first (the fair-play flags).
CREATE INDEX move_quality_critical ON move_quality (player_id, game, ended_at DESC)
    WHERE critical AND by_human;

-- One row per assessed match: when, by which solver version, how many plies were exact.
CREATE TABLE match_quality (
    match_id    uuid        PRIMARY KEY,
    game        text        NOT NULL,
    plies       integer     NOT NULL,
    exact_plies integer     NOT NULL,
    solver      smallint    NOT NULL,
    assessed_at timestamptz NOT NULL
);
