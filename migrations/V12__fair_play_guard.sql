-- The fair-play guard (`service::analysis::fair`, issue 29): each active match's work row also
-- holds, for a ranked match beyond its game's public opening, the canonical key of its current
-- position and that position's depth (discs placed), written with the row by every writer of
-- the live path under the same version guard as its timers. A question about a position reads
-- the rows of its depth and the one before to refuse the live positions and the positions one
-- move after them. The rows are few (one per active match) and the lookup is a scan of them:
-- no index, so that a move's update of its row stays a HOT update.
--
-- A ranked match under way at the upgrade publishes its key from its next move on.
ALTER TABLE match_work
    ADD COLUMN live_key   text     NULL,
    ADD COLUMN live_depth smallint NULL;

-- The live path's writers take the two columns (after p_strong, p_work_strong).
DROP FUNCTION live_commit_round(text[], bigint[], bigint[], bytea[], bytea[], text[], bigint[],
    uuid[], text[], smallint[], jsonb[], uuid[], timestamptz[], bytea[], bytea[], uuid[],
    timestamptz[], boolean[], boolean[], timestamptz[], timestamptz[], bigint[], uuid[], text[],
    uuid[], text[], uuid[], text[], bytea[], integer[], jsonb[], timestamptz[], text[]);
DROP FUNCTION live_write_work(uuid[], timestamptz[], boolean[], boolean[], timestamptz[],
    timestamptz[], bigint[], uuid[], uuid[], text[], text[], text[]);

-- As in V10, with each upserted row's live key and depth (null when it guards nothing).
CREATE FUNCTION live_write_work(
    p_ids          uuid[],
    p_due          timestamptz[],
    p_watch1       boolean[],
    p_watch2       boolean[],
    p_seen1        timestamptz[],
    p_seen2        timestamptz[],
    p_versions     bigint[],
    p_strong       uuid[],
    p_live_keys    text[],
    p_live_depths  smallint[],
    p_gone         uuid[],
    p_streams      text[] DEFAULT NULL,
    p_gone_streams text[] DEFAULT NULL,
    p_moved        text[] DEFAULT NULL
) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF cardinality(p_ids) > 0 THEN
        INSERT INTO match_work AS w
            (match_id, state_due, watch1, watch2, seen1, seen2, version, strong_player,
             live_key, live_depth)
        SELECT u.match_id, u.state_due, u.watch1, u.watch2, u.seen1, u.seen2, u.version,
               u.strong_player, u.live_key, u.live_depth
          FROM unnest(p_ids, p_due, p_watch1, p_watch2, p_seen1, p_seen2, p_versions, p_strong,
                      p_live_keys, p_live_depths, p_streams)
               AS u(match_id, state_due, watch1, watch2, seen1, seen2, version, strong_player,
                    live_key, live_depth, stream)
         WHERE p_moved IS NULL OR u.stream = ANY(p_moved)
        ON CONFLICT (match_id) DO UPDATE SET
            state_due = CASE WHEN w.version <= EXCLUDED.version
                             THEN EXCLUDED.state_due ELSE w.state_due END,
            watch1 = CASE WHEN w.version <= EXCLUDED.version
                          THEN EXCLUDED.watch1 ELSE w.watch1 END,
            watch2 = CASE WHEN w.version <= EXCLUDED.version
                          THEN EXCLUDED.watch2 ELSE w.watch2 END,
            seen1 = greatest(w.seen1, EXCLUDED.seen1),
            seen2 = greatest(w.seen2, EXCLUDED.seen2),
            live_key = CASE WHEN w.version <= EXCLUDED.version
                            THEN EXCLUDED.live_key ELSE w.live_key END,
            live_depth = CASE WHEN w.version <= EXCLUDED.version
                              THEN EXCLUDED.live_depth ELSE w.live_depth END,
            version = greatest(w.version, EXCLUDED.version),
            strong_player = EXCLUDED.strong_player;
    END IF;
    IF cardinality(p_gone) > 0 THEN
        DELETE FROM match_work w
         USING unnest(p_gone, p_gone_streams) AS u(match_id, stream)
         WHERE w.match_id = u.match_id AND (p_moved IS NULL OR u.stream = ANY(p_moved));
    END IF;
END
$$;

-- As in V10, passing the work rows' live keys and depths on.
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
    p_bodies          jsonb[],
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
