-- A keyed retry answers the bytes of the first answer (issue 51): a stored answer's body is
-- kept as the text the edge sent, not as `jsonb` (which re-orders keys and spacing). The
-- closing of an account edits the stored answers naming it structurally, in Rust
-- (`service::answers::erase_player`), never by text replacement in SQL.
--
-- Answers stored before the upgrade keep their content (in `jsonb`'s text form) until they
-- expire with their key.
ALTER TABLE idempotency_keys ALTER COLUMN body TYPE text USING body::text;

-- The live path's writers take the answers' bodies as text.
DROP FUNCTION live_commit_round(text[], bigint[], bigint[], bytea[], bytea[], text[], bigint[],
    uuid[], text[], smallint[], jsonb[], uuid[], timestamptz[], bytea[], bytea[], uuid[],
    timestamptz[], boolean[], boolean[], timestamptz[], timestamptz[], bigint[], uuid[], text[],
    smallint[], text[], uuid[], text[], uuid[], text[], bytea[], integer[], jsonb[],
    timestamptz[], text[]);
DROP FUNCTION live_store_answers(uuid[], text[], bytea[], integer[], jsonb[], timestamptz[],
    text[], text[]);

-- As in V10, with the bodies as text.
CREATE FUNCTION live_store_answers(
    p_players        uuid[],
    p_keys           text[],
    p_request_hashes bytea[],
    p_statuses       integer[],
    p_bodies         text[],
    p_created_at     timestamptz[],
    p_streams        text[] DEFAULT NULL,
    p_moved          text[] DEFAULT NULL
) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF cardinality(p_players) > 0 THEN
        INSERT INTO idempotency_keys (player_id, key, request_hash, status, body, created_at)
        SELECT a.player_id, a.key, a.request_hash, a.status, a.body, a.created_at
          FROM unnest(p_players, p_keys, p_request_hashes, p_statuses, p_bodies, p_created_at,
                      p_streams)
               AS a(player_id, key, request_hash, status, body, created_at, stream)
         WHERE p_moved IS NULL OR a.stream = ANY(p_moved)
        ON CONFLICT DO NOTHING;
    END IF;
END
$$;

-- As in V12, with the bodies as text.
CREATE FUNCTION live_commit_round(
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
    p_hashes          bytea[],
    -- live_write_work's rows, each with its command's stream
    p_work_ids        uuid[],
    p_work_due        timestamptz[],
    p_work_watch1     boolean[],
    p_work_watch2     boolean[],
    p_work_seen1      timestamptz[],
    p_work_seen2      timestamptz[],
    p_work_versions   bigint[],
    p_work_strong     uuid[],
    p_work_live_keys  text[],
    p_work_depths     smallint[],
    p_work_streams    text[],
    p_gone            uuid[],
    p_gone_streams    text[],
    -- live_store_answers' rows, each with its command's stream
    p_players         uuid[],
    p_keys            text[],
    p_request_hashes  bytea[],
    p_statuses        integer[],
    p_bodies          text[],
    p_created_at      timestamptz[],
    p_answer_streams  text[]
) RETURNS TABLE (
    r_stream   text,
    r_event_id uuid,
    r_position bigint,
    r_tx       bigint
)
LANGUAGE plpgsql AS $$
DECLARE
    v_moved text[] := '{}';
    v_last  text;
BEGIN
    -- A command's events are contiguous, so each moved stream starts a run of rows.
    FOR r_stream, r_event_id, r_position, r_tx IN
        SELECT * FROM eventlog_append_on_heads(
            p_streams, p_expected, p_versions, p_heads, p_lasts, p_event_streams,
            p_event_versions, p_event_ids, p_types, p_schema_versions, p_data, p_actors,
            p_recorded_at, p_prev_hashes, p_hashes)
    LOOP
        IF r_stream IS DISTINCT FROM v_last THEN
            v_moved := v_moved || r_stream;
            v_last := r_stream;
        END IF;
        RETURN NEXT;
    END LOOP;
    IF cardinality(v_moved) > 0 THEN
        IF cardinality(p_work_ids) > 0 OR cardinality(p_gone) > 0 THEN
            PERFORM live_write_work(p_work_ids, p_work_due, p_work_watch1, p_work_watch2,
                                    p_work_seen1, p_work_seen2, p_work_versions, p_work_strong,
                                    p_work_live_keys, p_work_depths, p_gone, p_work_streams,
                                    p_gone_streams, v_moved);
        END IF;
        IF cardinality(p_players) > 0 THEN
            PERFORM live_store_answers(p_players, p_keys, p_request_hashes, p_statuses,
                                       p_bodies, p_created_at, p_answer_streams, v_moved);
        END IF;
    END IF;
END
$$;

-- As V15 says: a re-created function forgets its settings.
ALTER FUNCTION live_store_answers(uuid[], text[], bytea[], integer[], text[], timestamptz[],
    text[], text[]) SET enable_seqscan = off;
ALTER FUNCTION live_commit_round(text[], bigint[], bigint[], bytea[], bytea[], text[], bigint[],
    uuid[], text[], smallint[], jsonb[], uuid[], timestamptz[], bytea[], bytea[], uuid[],
    timestamptz[], boolean[], boolean[], timestamptz[], timestamptz[], bigint[], uuid[], text[],
    smallint[], text[], uuid[], text[], uuid[], text[], bytea[], integer[], text[],
    timestamptz[], text[]) SET enable_seqscan = off;
