-- The closed accounts, indexed on their own: a replica serves a read only when it holds every
-- closing the primary holds (`service::replicas` compares their counts), and a count over
-- this partial index reads the closed accounts alone, not every player.
CREATE INDEX players_closed ON players (closed_at) WHERE closed_at IS NOT NULL;
