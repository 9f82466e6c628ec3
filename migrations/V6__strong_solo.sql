-- The human of each active solo match against CPU level 4 or 5, on its work row: the count of a
-- player's rows is checked against DISCS_STRONG_SOLO_PER_PLAYER when such a match is created.
-- Rows written before this migration get it with their match's next command (or the repair).
ALTER TABLE match_work ADD COLUMN strong_player uuid NULL;
CREATE INDEX match_work_strong_player ON match_work (strong_player) WHERE strong_player IS NOT NULL;
