-- The batch append, set-based: no subtransaction and no `eventlog_append` call per command.
--
-- V4's `eventlog_append_batch` ran each command in a subtransaction of its own, through the
-- PL/pgSQL `eventlog_append`: about 0.4 ms of database time per command, most of it the call,
-- the subtransaction and the per-command statements. This version locks and reads the heads of
-- all the batch's streams in one statement, checks every command in memory (in order, each one
-- seeing the heads as the earlier ones left them), and writes the whole batch in three
-- statements: the heads that moved, the streams that are new, the events. Same arguments, same
-- rows, same statuses as V4's (see there).
--
-- What can still fail after the checks is a unique violation: a new stream (expected version 0)
-- created meanwhile by another transaction, a twin of a command that creates one. Existing
-- streams cannot race: their rows are locked before the idempotency check reads the log, so a
-- twin that committed first is seen as applied. On a unique violation the batch's writes are
-- undone (one subtransaction per batch) and the batch runs again command by command, as V4 did.

ALTER FUNCTION eventlog_append_batch(integer[], text[], bigint[], integer[], uuid[], text[],
                                     smallint[], jsonb[], uuid[], timestamptz[], bytea[])
    RENAME TO eventlog_append_batch_each;

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
    v_genesis CONSTANT bytea := '\x0000000000000000000000000000000000000000000000000000000000000000';
    v_n       integer := cardinality(p_streams);
    v_total   integer := cardinality(p_event_ids);
    -- The heads of the batch's streams as the commands checked so far leave them; h_state is
    -- 'k' (kept), 'u' (moved) or 'n' (created by this batch).
    h_ids     text[];
    h_ver     bigint[];
    h_hash    bytea[];
    h_state   text[];
    -- Event ids already in the log or written by an earlier command of this batch.
    v_done    uuid[];
    -- The events to write, in order: their command, stream, version, argument index, hashes.
    o_cmd     integer[] := '{}';
    o_stream  text[] := '{}';
    o_ver     bigint[] := '{}';
    o_k       integer[] := '{}';
    o_prev    bytea[] := '{}';
    o_hash    bytea[] := '{}';
    -- What the database gave the written events.
    a_pos     bigint[];
    a_tx      bigint[];
    -- The commands not appended.
    s_cmd     integer[] := '{}';
    s_status  text[] := '{}';
    s_detail  text[] := '{}';
    v_s       integer := 1;
    v_e       integer := 1;
    v_s_end   integer;
    v_e_end   integer;
    v_cmd     integer;
    v_status  text;
    v_detail  text;
    v_current bigint;
    v_last    bytea;
    i         integer;
    j         integer;
    k         integer;
    x         integer;
BEGIN
    IF v_n IS NULL OR v_n = 0 OR cardinality(p_commands) <> v_n
       OR cardinality(p_expected) <> v_n OR cardinality(p_counts) <> v_n
       OR v_total IS NULL OR cardinality(p_types) <> v_total
       OR cardinality(p_schema_versions) <> v_total OR cardinality(p_data) <> v_total
       OR cardinality(p_actors) <> v_total OR cardinality(p_recorded_at) <> v_total
       OR cardinality(p_content) <> v_total THEN
        RAISE EXCEPTION 'eventlog_append_batch: argument arrays differ in length'
            USING ERRCODE = '22023';
    END IF;
    k := 0;
    FOR i IN 1 .. v_n LOOP
        IF p_counts[i] IS NULL OR p_counts[i] < 1 OR p_expected[i] IS NULL OR p_expected[i] < 0
           OR p_commands[i] IS NULL OR (i > 1 AND p_commands[i] < p_commands[i - 1]) THEN
            RAISE EXCEPTION 'eventlog_append_batch: bad count, expected version or command for stream %',
                    p_streams[i]
                USING ERRCODE = '22023';
        END IF;
        k := k + p_counts[i];
    END LOOP;
    IF k <> v_total THEN
        RAISE EXCEPTION 'eventlog_append_batch: counts do not add up to the number of events'
            USING ERRCODE = '22023';
    END IF;

    -- The heads, locked in stream_id order (the order every multi-stream writer locks in).
    SELECT coalesce(array_agg(s.stream_id), '{}'), coalesce(array_agg(s.version), '{}'),
           coalesce(array_agg(s.last_hash), '{}')
      INTO h_ids, h_ver, h_hash
      FROM (SELECT t.stream_id, t.version, t.last_hash FROM streams t
             WHERE t.stream_id = ANY (p_streams)
             ORDER BY t.stream_id COLLATE "C"
               FOR UPDATE) AS s;
    h_state := array_fill('k'::text, ARRAY[cardinality(h_ids)]);
    -- Read after the locks: a twin that committed on a locked stream is seen here.
    SELECT coalesce(array_agg(e.event_id), '{}') INTO v_done
      FROM events e WHERE e.event_id = ANY (p_event_ids);

    WHILE v_s <= v_n LOOP
        v_cmd := p_commands[v_s];
        v_s_end := v_s;
        v_e_end := v_e + p_counts[v_s] - 1;
        WHILE v_s_end < v_n AND p_commands[v_s_end + 1] = v_cmd LOOP
            v_s_end := v_s_end + 1;
            v_e_end := v_e_end + p_counts[v_s_end];
        END LOOP;
        v_status := NULL;
        v_detail := NULL;
        IF v_done && p_event_ids[v_e:v_e_end] THEN
            v_status := 'applied';
        ELSE
            FOR i IN v_s .. v_s_end LOOP
                j := array_position(h_ids, p_streams[i]);
                v_current := CASE WHEN j IS NULL THEN 0 ELSE h_ver[j] END;
                IF v_current <> p_expected[i] THEN
                    v_status := 'conflict';
                    v_detail := json_build_object('stream', p_streams[i],
                                                  'expected', p_expected[i],
                                                  'actual', v_current)::text;
                    EXIT;
                END IF;
            END LOOP;
        END IF;
        IF v_status IS NULL THEN
            k := v_e;
            FOR i IN v_s .. v_s_end LOOP
                j := array_position(h_ids, p_streams[i]);
                IF j IS NULL THEN
                    h_ids := h_ids || p_streams[i];
                    j := cardinality(h_ids);
                    h_state[j] := 'n';
                    v_last := v_genesis;
                ELSE
                    IF h_state[j] = 'k' THEN
                        h_state[j] := 'u';
                    END IF;
                    v_last := h_hash[j];
                END IF;
                FOR x IN 1 .. p_counts[i] LOOP
                    o_cmd := o_cmd || v_cmd;
                    o_stream := o_stream || p_streams[i];
                    o_ver := o_ver || (p_expected[i] + x);
                    o_k := o_k || k;
                    o_prev := o_prev || v_last;
                    v_last := sha256(v_last || p_content[k]);
                    o_hash := o_hash || v_last;
                    k := k + 1;
                END LOOP;
                h_ver[j] := p_expected[i] + p_counts[i];
                h_hash[j] := v_last;
            END LOOP;
            v_done := v_done || p_event_ids[v_e:v_e_end];
        ELSE
            s_cmd := s_cmd || v_cmd;
            s_status := s_status || v_status;
            s_detail := s_detail || v_detail;
        END IF;
        v_s := v_s_end + 1;
        v_e := v_e_end + 1;
    END LOOP;

    IF cardinality(o_cmd) > 0 THEN
        BEGIN
            UPDATE streams s SET version = u.v, last_hash = u.h
              FROM unnest(h_ids, h_ver, h_hash, h_state) AS u(id, v, h, st)
             WHERE u.st = 'u' AND s.stream_id = u.id;
            INSERT INTO streams (stream_id, version, last_hash)
            SELECT u.id, u.v, u.h
              FROM unnest(h_ids, h_ver, h_hash, h_state) AS u(id, v, h, st)
             WHERE u.st = 'n';
            -- Positions are given in insertion order, which is the arrays' order.
            WITH written AS (
                INSERT INTO events AS e (stream_id, version, event_id, event_type, schema_version,
                                         data, actor, recorded_at, prev_hash, hash)
                SELECT u.stream, u.ver, p_event_ids[u.k], p_types[u.k], p_schema_versions[u.k],
                       p_data[u.k], p_actors[u.k], p_recorded_at[u.k], u.prev, u.hash
                  FROM unnest(o_stream, o_ver, o_k, o_prev, o_hash)
                       WITH ORDINALITY AS u(stream, ver, k, prev, hash, ord)
                 ORDER BY u.ord
                RETURNING e.position, e.tx::text::bigint AS tx
            )
            SELECT array_agg(w.position ORDER BY w.position), array_agg(w.tx ORDER BY w.position)
              INTO a_pos, a_tx
              FROM written w;
        EXCEPTION WHEN unique_violation THEN
            RETURN QUERY
                SELECT * FROM eventlog_append_batch_each(p_commands, p_streams, p_expected,
                    p_counts, p_event_ids, p_types, p_schema_versions, p_data, p_actors,
                    p_recorded_at, p_content);
            RETURN;
        END;
    END IF;

    RETURN QUERY
        SELECT u.c, u.st, u.d, NULL::uuid, NULL::bigint, NULL::bigint, NULL::bigint,
               NULL::bytea, NULL::bytea
          FROM unnest(s_cmd, s_status, s_detail) AS u(c, st, d);
    RETURN QUERY
        SELECT u.c, 'appended'::text, NULL::text, p_event_ids[u.k], u.pos, u.tx, u.ver, u.prev,
               u.hash
          FROM unnest(o_cmd, o_k, a_pos, a_tx, o_ver, o_prev, o_hash)
               AS u(c, k, pos, tx, ver, prev, hash);
END
$$;
