-- Bounds on what only grew (issue 29): analysis jobs (a per-player cap, joined searches,
-- finished jobs purged after `DISCS_JOB_KEEP_HOURS`), the cache of solved positions (each
-- verdict with the solver version that produced it; other versions' rows are not read and are
-- purged, as are rows older than `DISCS_SOLVED_KEEP_DAYS`) and rooms (a room whose last match
-- ended longer ago than `DISCS_ROOM_IDLE_HOURS` is purged, like a room never used).

-- A job for a position already queued or running joins that job (its leader) instead of
-- searching it twice: it is not claimed while its leader is open, and it gets the leader's
-- answer, in its own orientation, when the leader ends.
ALTER TABLE analysis_jobs ADD COLUMN leader uuid NULL;
CREATE INDEX analysis_jobs_leader ON analysis_jobs (leader) WHERE leader IS NOT NULL;
-- The per-player cap counts a player's open jobs.
CREATE INDEX analysis_jobs_open_player ON analysis_jobs (player_id)
    WHERE status IN ('queued', 'running');
-- The purge of finished jobs.
CREATE INDEX analysis_jobs_finished ON analysis_jobs (finished_at) WHERE finished_at IS NOT NULL;

-- The verdicts stored so far came from solver version 1.
ALTER TABLE solved_positions ADD COLUMN solver smallint NOT NULL DEFAULT 1;
ALTER TABLE solved_positions ALTER COLUMN solver DROP DEFAULT;
-- The purge finds both kinds of rows through this index (ranges on its first column).
CREATE INDEX solved_positions_age ON solved_positions (solver, solved_at);
