-- The live path: many commands' appends in one statement (group commit), and the version of
-- the match each `match_work` row was computed from, so that a stale writer (a repair, a worker
-- that read an older state) never overwrites a fresher row.

-- Appends a batch of independent commands in one statement, inside the caller's transaction.
--
-- Arguments are those of `eventlog_append` plus p_commands: for each stream append, the
-- 1-based index of the command it belongs to (non-decreasing; a command's appends are
-- contiguous). Each command runs as `eventlog_append` does, in a subtransaction of its own, so
-- that one command's conflict undoes only that command:
--  * 'appended': one row per event written, as `eventlog_append` returns them;
--  * 'applied': the command's events were already stored (a retry); one row, no event;
--  * 'conflict': a stream was not at its expected version; one row, r_detail holds the JSON
--    detail {"stream","expected","actual"};
--  * 'retry': a twin of the command (same event ids) committed on another connection while
--    this one ran; one row. Running the command again answers 'applied'.
-- Callers order commands by stream id, so that two batches lock streams in one order.
CREATE FUNCTION eventlog_append_batch(
    p_commands        integer[],
    p_streams         text[],
    p_expected        bigint[],
    p_counts          integer[],
    p_event_ids       uuid[],
    p_types           text[],
    p_schema_versions smallint[],
    p_data            jsonb[],
    p_actors          uuid[],
    p_recorded_at     timestamptz[],
    p_content         bytea[]
) RETURNS TABLE (
    r_command   integer,
    r_status    text,
    r_detail    text,
    r_event_id  uuid,
    r_position  bigint,
    r_tx        bigint,
    r_version   bigint,
    r_prev_hash bytea,
    r_hash      bytea
)
LANGUAGE plpgsql AS $$
DECLARE
    v_n        integer := cardinality(p_streams);
    v_s        integer := 1;   -- first stream append of the current command
    v_e        integer := 1;   -- first event of the current command
    v_s_end    integer;
    v_e_end    integer;
    v_cmd      integer;
    v_detail   text;
    v_status   text;
    v_ids      uuid[];
    v_pos      bigint[];
    v_txs      bigint[];
    v_vers     bigint[];
    v_prevs    bytea[];
    v_hashes   bytea[];
    i          integer;
BEGIN
    IF v_n IS NULL OR v_n = 0 OR cardinality(p_commands) <> v_n
       OR cardinality(p_expected) <> v_n OR cardinality(p_counts) <> v_n THEN
        RAISE EXCEPTION 'eventlog_append_batch: argument arrays differ in length'
            USING ERRCODE = '22023';
    END IF;
    WHILE v_s <= v_n LOOP
        v_cmd := p_commands[v_s];
        v_s_end := v_s;
        v_e_end := v_e + p_counts[v_s] - 1;
        WHILE v_s_end < v_n AND p_commands[v_s_end + 1] = v_cmd LOOP
            v_s_end := v_s_end + 1;
            v_e_end := v_e_end + p_counts[v_s_end];
        END LOOP;
        v_detail := NULL;
        BEGIN
            SELECT array_agg(a.eid ORDER BY a.ord), array_agg(a.pos ORDER BY a.ord),
                   array_agg(a.txid ORDER BY a.ord), array_agg(a.ver ORDER BY a.ord),
                   array_agg(a.prevh ORDER BY a.ord), array_agg(a.h ORDER BY a.ord)
              INTO v_ids, v_pos, v_txs, v_vers, v_prevs, v_hashes
              FROM eventlog_append(p_streams[v_s:v_s_end], p_expected[v_s:v_s_end],
                                   p_counts[v_s:v_s_end], p_event_ids[v_e:v_e_end],
                                   p_types[v_e:v_e_end], p_schema_versions[v_e:v_e_end],
                                   p_data[v_e:v_e_end], p_actors[v_e:v_e_end],
                                   p_recorded_at[v_e:v_e_end], p_content[v_e:v_e_end])
                   WITH ORDINALITY AS a(eid, pos, txid, ver, prevh, h, ord);
            v_status := CASE WHEN v_ids IS NULL THEN 'applied' ELSE 'appended' END;
        EXCEPTION
            WHEN SQLSTATE 'ZC001' THEN
                GET STACKED DIAGNOSTICS v_detail = PG_EXCEPTION_DETAIL;
                v_status := 'conflict';
            WHEN unique_violation THEN
                v_status := 'retry';
        END;
        r_command := v_cmd;
        r_status := v_status;
        r_detail := v_detail;
        IF v_status = 'appended' THEN
            FOR i IN 1 .. cardinality(v_ids) LOOP
                r_event_id := v_ids[i]; r_position := v_pos[i]; r_tx := v_txs[i];
                r_version := v_vers[i]; r_prev_hash := v_prevs[i]; r_hash := v_hashes[i];
                RETURN NEXT;
            END LOOP;
        ELSE
            r_event_id := NULL; r_position := NULL; r_tx := NULL; r_version := NULL;
            r_prev_hash := NULL; r_hash := NULL;
            RETURN NEXT;
        END IF;
        v_s := v_s_end + 1;
        v_e := v_e_end + 1;
    END LOOP;
END
$$;

-- The match version a work row was computed from; older writes leave newer rows alone.
ALTER TABLE match_work ADD COLUMN version bigint NOT NULL DEFAULT 0;
