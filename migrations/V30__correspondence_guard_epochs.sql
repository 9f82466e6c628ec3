-- The guards of open rated correspondence games, kept by each instance (`service::live::guards`)
-- instead of read on every position question: each change to them is numbered, and an instance
-- reads only what changed since the number it holds.
--
-- `guard_epochs` holds the last number given. A guard written (`live::correspondence`) or
-- dropped takes the next one in its own statement, which locks the row until it commits: the
-- numbers commit in their order, so a reader that sees number n committed sees every number
-- below it, and never skips a late commit.
CREATE TABLE guard_epochs (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    n        bigint  NOT NULL
);
INSERT INTO guard_epochs (n) VALUES (0);

-- The number of a correspondence game's guard (0: written before numbering, read whole once).
ALTER TABLE correspondence_games ADD COLUMN guard_epoch bigint NOT NULL DEFAULT 0;
CREATE INDEX correspondence_games_epoch ON correspondence_games (guard_epoch)
    WHERE live_key IS NOT NULL;

-- The guards dropped with their game's due row (the game ended, or never existed), by number:
-- what tells an instance to let a guard go. Purged after an hour; an instance that has not
-- looked for half an hour reads the guards whole.
CREATE TABLE guard_drops (
    epoch      bigint      PRIMARY KEY,
    match_id   uuid        NOT NULL,
    dropped_at timestamptz NOT NULL
);
