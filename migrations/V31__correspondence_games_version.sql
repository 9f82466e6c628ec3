-- The match version a correspondence game's due row was written from (`live::correspondence`):
-- the row is written just after each command's commit, so two commands close together may write
-- it out of order; an older version never overwrites a newer one's deadline or guard, as
-- `match_work.version` does for real-time play. 0 for rows written before.
ALTER TABLE correspondence_games ADD COLUMN version bigint NOT NULL DEFAULT 0;
