-- A correspondence game's guard is read from each instance's held copy (`live::guards::Held`, V30),
-- by its number and whole, never by depth: the depth is in the guard's key. The column and its
-- index (V27, V28) were kept up to date on every rated correspondence move for no reader.
DROP INDEX correspondence_games_guards;
ALTER TABLE correspondence_games DROP COLUMN live_depth;
