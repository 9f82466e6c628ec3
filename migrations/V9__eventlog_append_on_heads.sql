-- The event log's append on known heads (`eventlog::heads`), as a function of the log's own.
--
-- The caller knows each stream's version and the hash of its last event, so the chain is
-- computed by the caller (in Rust) and this function only compare-and-sets each `streams` row
-- on both (version and last hash) and inserts the events of the streams that moved, in one
-- set-based statement: no subtransaction, no per-command statement. A stream whose head moved
-- meanwhile (or whose hash does not match) is left as it is, and none of its events are
-- written; the caller tells a retry from a conflict afterwards.
--
-- Arguments: per command (one stream each, each stream once, callers sort them by stream so
-- that two batches lock rows in one order) its stream, expected version, version after the
-- command, known head hash and new last hash; then per event, in order (a command's events are
-- contiguous), its stream, version, id, type, schema version, data, actor, time, previous hash
-- and hash. Rows: one per event written, in the arguments' order, with the stream, the event's
-- id, the position and the transaction id the database gave it.
--
-- Other crates' functions call this one to write their own rows in the same statement (and so
-- the same transaction) as the events: `live_commit_round` (V10) does.
CREATE FUNCTION eventlog_append_on_heads(
    p_streams         text[],
    p_expected        bigint[],
    p_versions        bigint[],
    p_heads           bytea[],
    p_lasts           bytea[],
    p_event_streams   text[],
    p_event_versions  bigint[],
    p_event_ids       uuid[],
    p_types           text[],
    p_schema_versions smallint[],
    p_data            jsonb[],
    p_actors          uuid[],
    p_recorded_at     timestamptz[],
    p_prev_hashes     bytea[],
    p_hashes          bytea[]
) RETURNS TABLE (
    r_stream   text,
    r_event_id uuid,
    r_position bigint,
    r_tx       bigint
)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY
    WITH c AS (
        SELECT * FROM unnest(p_streams, p_expected, p_versions, p_heads, p_lasts)
            AS c(stream, expected, version, head, last)
    ), moved AS (
        UPDATE streams s SET version = c.version, last_hash = c.last
          FROM c
         WHERE s.stream_id = c.stream AND s.version = c.expected AND s.last_hash = c.head
        RETURNING s.stream_id
    )
    INSERT INTO events AS e (stream_id, version, event_id, event_type, schema_version, data,
                             actor, recorded_at, prev_hash, hash)
    SELECT u.stream, u.version, u.event_id, u.event_type, u.schema_version, u.data, u.actor,
           u.recorded_at, u.prev_hash, u.hash
      FROM unnest(p_event_streams, p_event_versions, p_event_ids, p_types, p_schema_versions,
                  p_data, p_actors, p_recorded_at, p_prev_hashes, p_hashes)
           WITH ORDINALITY AS u(stream, version, event_id, event_type, schema_version, data,
                                actor, recorded_at, prev_hash, hash, ord)
     WHERE u.stream IN (SELECT m.stream_id FROM moved m)
     ORDER BY u.ord
    RETURNING e.stream_id, e.event_id, e.position, e.tx::text::bigint;
END
$$;
