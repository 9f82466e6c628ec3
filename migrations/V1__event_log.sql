-- The event log: one append-only table of events, one head row per stream, and the append
-- function that writes both in a single round trip. See eventlog/src/lib.rs for the reasoning.

-- Every event of every stream. `position` is the global order of insertion; `tx` is the id of
-- the writing transaction, so that readers can follow the log in commit-safe (tx, position)
-- order (a position can commit after a later one; a tx below the snapshot's xmin cannot).
CREATE TABLE events (
    position       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tx             xid8        NOT NULL DEFAULT pg_current_xact_id(),
    stream_id      text        NOT NULL,
    version        bigint      NOT NULL CHECK (version >= 1),
    event_id       uuid        NOT NULL UNIQUE,
    event_type     text        NOT NULL,
    schema_version smallint    NOT NULL CHECK (schema_version >= 1),
    data           jsonb       NOT NULL,
    actor          uuid        NULL,
    recorded_at    timestamptz NOT NULL,
    prev_hash      bytea       NOT NULL CHECK (octet_length(prev_hash) = 32),
    hash           bytea       NOT NULL CHECK (octet_length(hash) = 32),
    UNIQUE (stream_id, version)
);

-- Serves the projections' poll: WHERE tx < horizon AND (tx, position) > checkpoint ORDER BY tx, position.
CREATE INDEX events_tx_position ON events (tx, position);

-- One row per stream: its current version and the hash of its last event. Appends
-- compare-and-set this row (no max(version) scans), and audits compare it with the chain's tail.
CREATE TABLE streams (
    stream_id text   PRIMARY KEY,
    version   bigint NOT NULL CHECK (version >= 1),
    last_hash bytea  NOT NULL CHECK (octet_length(last_hash) = 32)
);

-- Events are never updated or deleted (SPEC §3). This guard stops accidents; the hash chain
-- catches anyone who disables it.
CREATE FUNCTION eventlog_forbid_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the event log is append-only: % on events is not allowed', TG_OP
        USING ERRCODE = 'ZC002';
END
$$;

CREATE TRIGGER events_append_only
    BEFORE UPDATE OR DELETE OR TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION eventlog_forbid_change();

-- Appends one command: events to one or more streams, each at its expected version, atomically.
--
-- Arguments are parallel arrays. Per stream append, in the caller's order: p_streams,
-- p_expected (0 = the stream must not exist yet), p_counts (number of events, at least 1).
-- Per event, flattened in the same order: the columns to store, and p_content, the event's
-- canonical bytes as computed by the client (eventlog/src/canonical.rs); the hash chain is
-- computed here as hash = sha256(prev_hash || content), prev_hash of version 1 = 32 zero bytes.
--
-- Returns one row per event (columns r_*, named so as not to clash with the tables' columns).
-- Outcomes:
--  * one of the event ids is already stored: the command was applied before; returns the rows
--    that its transaction wrote (applied = false) and writes nothing;
--  * a stream is not at its expected version: raises SQLSTATE ZC001 with a JSON detail
--    {"stream","expected","actual"}; the whole statement is rolled back. (The client then checks
--    whether a racing twin of the same command won, and answers "already applied" if so.)
--  * otherwise inserts the events and returns them (applied = true; event_type, data, actor and
--    recorded_at are returned as NULL: the caller has them).
--
-- Streams are locked in stream_id order, so two multi-stream appends cannot deadlock.
CREATE FUNCTION eventlog_append(
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
    r_applied        boolean,
    r_position       bigint,
    r_tx             bigint,
    r_stream_id      text,
    r_version        bigint,
    r_event_id       uuid,
    r_event_type     text,
    r_schema_version smallint,
    r_data           jsonb,
    r_actor          uuid,
    r_recorded_at    timestamptz,
    r_prev_hash      bytea,
    r_hash           bytea
)
LANGUAGE plpgsql AS $$
DECLARE
    v_n        integer := cardinality(p_streams);
    v_total    integer := cardinality(p_event_ids);
    v_start    integer[];
    v_stream   text[];
    v_version  bigint[];
    v_prev     bytea[];
    v_hash     bytea[];
    v_done_tx  xid8;
    v_current  bigint;
    v_last     bytea;
    v_rows     integer;
    i          integer;
    j          integer;
    k          integer := 1;
BEGIN
    IF v_n IS NULL OR v_n = 0 OR v_total IS NULL OR v_total = 0 THEN
        RAISE EXCEPTION 'eventlog_append: nothing to append' USING ERRCODE = '22023';
    END IF;
    IF cardinality(p_expected) <> v_n OR cardinality(p_counts) <> v_n
       OR cardinality(p_types) <> v_total OR cardinality(p_schema_versions) <> v_total
       OR cardinality(p_data) <> v_total OR cardinality(p_actors) <> v_total
       OR cardinality(p_recorded_at) <> v_total OR cardinality(p_content) <> v_total THEN
        RAISE EXCEPTION 'eventlog_append: argument arrays differ in length' USING ERRCODE = '22023';
    END IF;

    -- Idempotency: a command whose events exist was applied; answer with what it wrote.
    SELECT e.tx INTO v_done_tx FROM events e WHERE e.event_id = ANY (p_event_ids) LIMIT 1;
    IF FOUND THEN
        RETURN QUERY
            SELECT false, e.position, e.tx::text::bigint, e.stream_id, e.version, e.event_id,
                   e.event_type, e.schema_version, e.data, e.actor, e.recorded_at,
                   e.prev_hash, e.hash
            FROM events e
            WHERE e.tx = v_done_tx
            ORDER BY e.tx, e.position;
        RETURN;
    END IF;

    -- Where each stream's events start in the flattened arrays.
    v_start := array_fill(0, ARRAY[v_n]);
    FOR i IN 1 .. v_n LOOP
        IF p_counts[i] IS NULL OR p_counts[i] < 1 OR p_expected[i] IS NULL OR p_expected[i] < 0 THEN
            RAISE EXCEPTION 'eventlog_append: bad count or expected version for stream %', p_streams[i]
                USING ERRCODE = '22023';
        END IF;
        v_start[i] := k;
        k := k + p_counts[i];
    END LOOP;
    IF k - 1 <> v_total THEN
        RAISE EXCEPTION 'eventlog_append: counts do not add up to the number of events'
            USING ERRCODE = '22023';
    END IF;
    v_stream := array_fill(NULL::text, ARRAY[v_total]);
    v_version := array_fill(NULL::bigint, ARRAY[v_total]);
    v_prev := array_fill(NULL::bytea, ARRAY[v_total]);
    v_hash := array_fill(NULL::bytea, ARRAY[v_total]);

    -- Compare-and-set every stream head, in stream_id order.
    FOR i IN SELECT u.o FROM unnest(p_streams) WITH ORDINALITY AS u(s, o) ORDER BY u.s LOOP
        IF p_expected[i] = 0 THEN
            v_last := '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea;
        ELSE
            SELECT s.version, s.last_hash INTO v_current, v_last
            FROM streams s WHERE s.stream_id = p_streams[i]
            FOR UPDATE;
            IF NOT FOUND OR v_current <> p_expected[i] THEN
                RAISE EXCEPTION 'version conflict on stream %: expected %, actual %',
                        p_streams[i], p_expected[i], coalesce(v_current, 0)
                    USING ERRCODE = 'ZC001',
                          DETAIL = json_build_object('stream', p_streams[i],
                                                     'expected', p_expected[i],
                                                     'actual', coalesce(v_current, 0))::text;
            END IF;
        END IF;

        FOR j IN 0 .. p_counts[i] - 1 LOOP
            k := v_start[i] + j;
            v_stream[k] := p_streams[i];
            v_version[k] := p_expected[i] + 1 + j;
            v_prev[k] := v_last;
            v_last := sha256(v_last || p_content[k]);
            v_hash[k] := v_last;
        END LOOP;

        IF p_expected[i] = 0 THEN
            INSERT INTO streams AS s (stream_id, version, last_hash)
            VALUES (p_streams[i], p_counts[i], v_last)
            ON CONFLICT (stream_id) DO NOTHING;
        ELSE
            UPDATE streams s SET version = p_expected[i] + p_counts[i], last_hash = v_last
            WHERE s.stream_id = p_streams[i] AND s.version = p_expected[i];
        END IF;
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        IF v_rows <> 1 THEN
            SELECT s.version INTO v_current FROM streams s WHERE s.stream_id = p_streams[i];
            RAISE EXCEPTION 'version conflict on stream %: expected %, actual %',
                    p_streams[i], p_expected[i], coalesce(v_current, 0)
                USING ERRCODE = 'ZC001',
                      DETAIL = json_build_object('stream', p_streams[i],
                                                 'expected', p_expected[i],
                                                 'actual', coalesce(v_current, 0))::text;
        END IF;
    END LOOP;

    RETURN QUERY
        INSERT INTO events AS e (stream_id, version, event_id, event_type, schema_version, data,
                                 actor, recorded_at, prev_hash, hash)
        SELECT u.stream_id, u.version, u.event_id, u.event_type, u.schema_version, u.data,
               u.actor, u.recorded_at, u.prev_hash, u.hash
        FROM unnest(v_stream, v_version, p_event_ids, p_types, p_schema_versions, p_data,
                    p_actors, p_recorded_at, v_prev, v_hash)
             WITH ORDINALITY AS u(stream_id, version, event_id, event_type, schema_version, data,
                                  actor, recorded_at, prev_hash, hash, ord)
        ORDER BY u.ord
        RETURNING true, e.position, e.tx::text::bigint, e.stream_id, e.version, e.event_id,
                  NULL::text, NULL::smallint, NULL::jsonb, NULL::uuid, NULL::timestamptz,
                  e.prev_hash, e.hash;
END
$$;
