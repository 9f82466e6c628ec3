-- The human players of each real-time match in play (`service::live`), whatever started it (a
-- solo game, a room, a wave, a tournament, a challenge): what a player's stream reads when it
-- opens, to tell the end of a match that began before it. Written with the match's work row
-- when the row is created (`live::commit::write_work`), and gone with that row, which the live
-- path deletes in the transaction that ends the match: a seat never outlives its match, and the
-- round of a move writes nothing here.
CREATE TABLE live_seats (
    player_id uuid NOT NULL,
    match_id  uuid NOT NULL REFERENCES match_work (match_id) ON DELETE CASCADE,
    PRIMARY KEY (player_id, match_id)
);
CREATE INDEX live_seats_match ON live_seats (match_id);

-- The real-time matches in play when this runs, from their `match_created` events.
INSERT INTO live_seats (player_id, match_id)
SELECT DISTINCT (seat->>'player_id')::uuid, w.match_id
  FROM match_work w
  JOIN events e ON e.stream_id = 'match-' || w.match_id::text AND e.version = 1
 CROSS JOIN LATERAL jsonb_array_elements(e.data->'seats') AS seat
 WHERE e.event_type = 'match_created'
   AND seat->>'kind' = 'human';
