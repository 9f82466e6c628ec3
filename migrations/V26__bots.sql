-- Declared bots (`service::standing`). A player's stream (`player-<id>`) is the truth: the
-- admin's `player_declared_bot` and `player_declared_human` events. `player_bots` is the write
-- side's index of it, written in the declaration's transaction: what the queue, its waves and
-- the tournaments read to keep bots out of the human pools, and what puts the BOT tag by a name.
CREATE TABLE player_bots (
    player_id   uuid        PRIMARY KEY,
    declared_at timestamptz NOT NULL
);

-- The leaderboards projection's view of the same events: a bot is rated on its own board
-- (`GET /v1/leaderboards/{game}?bots=true`), never on the human one.
CREATE TABLE leaderboard_bots (
    player_id uuid PRIMARY KEY
);
