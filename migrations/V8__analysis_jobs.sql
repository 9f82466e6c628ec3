-- Deep analysis as background jobs (issue 14): a position searched until its score is exact or
-- its time cap is spent. Any instance claims a waiting job through a lease (`owner`,
-- `lease_until`) that it renews while it runs; a job whose lease ran out (its instance died) is
-- claimed again by another one, which goes on from the time already spent (`elapsed_ms`).
CREATE TABLE analysis_jobs (
    job_id      uuid        PRIMARY KEY,
    player_id   uuid        NOT NULL,
    game        text        NOT NULL,
    -- The position (its rows as in the match view, and the side to move) and its canonical key.
    board       text[]      NOT NULL,
    side        text        NOT NULL CHECK (side IN ('first', 'second')),
    key         text        NOT NULL,
    status      text        NOT NULL DEFAULT 'queued'
                            CHECK (status IN ('queued', 'running', 'done', 'failed')),
    cap_ms      bigint      NOT NULL CHECK (cap_ms > 0),
    -- The answer, in the asker's orientation, once done.
    score       integer,
    best_moves  text[],
    exact       boolean,
    error       text,
    nodes       bigint      NOT NULL DEFAULT 0,
    elapsed_ms  bigint      NOT NULL DEFAULT 0,
    attempts    integer     NOT NULL DEFAULT 0,
    owner       uuid,
    lease_until timestamptz,
    created_at  timestamptz NOT NULL,
    finished_at timestamptz,
    CHECK ((status = 'done') = (score IS NOT NULL))
);

-- The claim's scan: the open jobs, oldest first.
CREATE INDEX analysis_jobs_open ON analysis_jobs (created_at) WHERE status IN ('queued', 'running');
-- A match analysis queues a position only if no open job has it yet.
CREATE INDEX analysis_jobs_open_key ON analysis_jobs (key) WHERE status IN ('queued', 'running');
