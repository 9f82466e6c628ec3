-- Rated correspondence play: a correspondence pool per game and a rating ladder of its own.
--
-- A pool is a game at a clock: a turn limit (`turn_seconds`, 0 for none) for real-time play, or
-- days per move for correspondence (`days_per_move`; 0 for real-time play, then `turn_seconds`
-- is the clock). On the write side (`queue_slots`, `service::ranked`) and in the queue
-- projection's tables alike.
ALTER TABLE queue_slots  ADD COLUMN days_per_move integer NOT NULL DEFAULT 0;
ALTER TABLE queue_tickets ADD COLUMN days_per_move integer NOT NULL DEFAULT 0;
ALTER TABLE queue_pairs  ADD COLUMN days_per_move integer NOT NULL DEFAULT 0;

DROP INDEX queue_slots_open;
CREATE INDEX queue_slots_open ON queue_slots (game, turn_seconds, days_per_move, opened_at)
    WHERE ticket_id IS NOT NULL;

-- The rating tables (`ratings`, `rating_points`, `leaderboard`, `explorer_ratings`) keep a
-- ladder's name in their `game` column (`domain::ratings::Ladder`): a real-time ladder is named
-- as its game, so every row written before this stays where it was; a correspondence ladder is
-- the game's name and `_correspondence`.
COMMENT ON COLUMN ratings.game IS 'the ladder: the game, or the game and _correspondence';
COMMENT ON COLUMN rating_points.game IS 'the ladder: the game, or the game and _correspondence';
COMMENT ON COLUMN leaderboard.game IS 'the ladder: the game, or the game and _correspondence';

-- A rated correspondence game's fair-play guard (`service::live::correspondence`), as a live
-- ranked match publishes its own in `match_work`: the boundary reads both.
ALTER TABLE correspondence_games
    ADD COLUMN live_key   text     NULL,
    ADD COLUMN live_depth smallint NULL;

-- The match history tells a correspondence game from a real-time one (the pages mark it, and the
-- pairing rules read each pace's own past); the rows before this from their `match_created`.
ALTER TABLE match_history ADD COLUMN correspondence boolean NOT NULL DEFAULT false;
UPDATE match_history h SET correspondence = true
  FROM events e
 WHERE e.stream_id = 'match-' || h.match_id::text AND e.version = 1
   AND e.event_type = 'match_created'
   AND (e.data->'settings'->>'days_per_move') IS NOT NULL;
