-- The named opening of each finished match in the history (`domain::openings`): its name and
-- the named line, as the history projection computes them from the match's moves. Rows written
-- before this migration have none until `discs rebuild history` writes the table again.
ALTER TABLE match_history
    ADD COLUMN opening_name text NULL,
    ADD COLUMN opening_line text NULL;
