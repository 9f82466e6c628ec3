-- One live ranked match per player, and the bans the write side reads (`service`, issue 50).

-- One row per player seated in a live ranked match, whatever made it (a queue wave, a rated
-- tournament's pairing): written in the transaction that creates the match with its work row,
-- and gone with that row, which the live path deletes in the transaction that ends the match
-- (so a seat never outlives its match and needs no code of its own on the live path). The
-- primary key is "at most one live ranked match per player", held by the database: a second
-- seat fails the transaction that would create the second match. What "seated" means for the
-- fair-play boundary, the queue and the organiser. (`queue_slots.match_id` stays the match the
-- queue last gave the player, nothing more.)
CREATE TABLE ranked_seats (
    player_id uuid PRIMARY KEY,
    match_id  uuid NOT NULL REFERENCES match_work (match_id) ON DELETE CASCADE
);
CREATE INDEX ranked_seats_match ON ranked_seats (match_id);

-- The players an admin's last decision banned (`service::standing`), written in the decision's
-- transaction: what the waves and the organiser read to leave them out. The log's `player-<id>`
-- streams stay the truth; this is their index for the write side.
CREATE TABLE player_bans (
    player_id uuid        PRIMARY KEY,
    banned_at timestamptz NOT NULL
);

-- The ranked matches live when this runs, from their `match_created` events (once, at the
-- upgrade); a player the old code seated twice keeps the older match.
INSERT INTO ranked_seats (player_id, match_id)
SELECT (seat->>'player_id')::uuid, w.match_id
  FROM match_work w
  JOIN events e ON e.stream_id = 'match-' || w.match_id::text AND e.version = 1
 CROSS JOIN LATERAL jsonb_array_elements(e.data->'seats') AS seat
 WHERE e.event_type = 'match_created'
   AND (e.data->>'ranked')::boolean
   AND seat->>'kind' = 'human'
 ORDER BY e.position
ON CONFLICT (player_id) DO NOTHING;

-- The players banned when this runs: those whose last decision is a ban.
INSERT INTO player_bans (player_id, banned_at)
SELECT last.player_id, last.recorded_at
  FROM (SELECT DISTINCT ON (e.stream_id)
               substr(e.stream_id, 8)::uuid AS player_id, e.event_type, e.recorded_at
          FROM events e
         WHERE e.stream_id LIKE 'player-%'
           AND e.event_type IN ('player_cleared', 'player_banned')
         ORDER BY e.stream_id, e.version DESC) last
 WHERE last.event_type = 'player_banned';
