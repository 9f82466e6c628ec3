-- The open tickets on the write side (`service::ranked`): each player's slot also holds what a
-- wave needs of the ticket it holds (its pool, the rating it recorded, when it opened), set in
-- the transaction that opens the ticket. A wave decides on these rows, which change in the
-- transactions that open, match and cancel tickets, rather than on the queue projection, which
-- follows the log a moment later: under a burst that moment is seconds, and every ticket would
-- wait for it. The queue projection stays what the statistics read.
ALTER TABLE queue_slots
    ADD COLUMN game         text             NULL,
    ADD COLUMN turn_seconds integer          NULL,  -- 0: no turn limit
    ADD COLUMN rating       double precision NULL,
    ADD COLUMN deviation    double precision NULL,
    ADD COLUMN opened_at    timestamptz      NULL;

-- The tickets open when this runs, from their `ticket_opened` events (once, at the upgrade).
UPDATE queue_slots s
   SET game = e.data->>'game',
       turn_seconds = coalesce((e.data->>'turn_seconds')::integer, 0),
       rating = (e.data->>'rating')::double precision,
       deviation = (e.data->>'deviation')::double precision,
       opened_at = e.recorded_at
  FROM events e
 WHERE s.ticket_id IS NOT NULL
   AND e.stream_id = 'ticket-' || s.ticket_id::text
   AND e.event_type = 'ticket_opened';

CREATE INDEX queue_slots_open ON queue_slots (game, turn_seconds, opened_at)
    WHERE ticket_id IS NOT NULL;
