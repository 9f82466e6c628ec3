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
) WITH (fillfactor = 70);  -- room on each page for HOT updates: every append rewrites its row

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
-- Outcomes:
--  * one of the event ids is already stored: the command was applied before. Returns no rows
--    and writes nothing (the client then reads what that command's transaction wrote);
--  * a stream is not at its expected version (checked by a read, then enforced by the
--    compare-and-set UPDATE ... WHERE version = expected, or by the INSERT of a new stream's
--    row): raises SQLSTATE ZC001 with a JSON detail {"stream","expected","actual"}; the whole
--    statement is rolled back. (The client then checks whether a racing twin of the same
--    command won, and answers "already applied" if so.)
--  * otherwise inserts the events and returns one row per event: its id, position, tx,
--    version and hashes (columns r_*, named so as not to clash with the tables' columns).
--
-- Streams are locked in stream_id order, so two multi-stream appends cannot deadlock. The
-- single-stream case, nearly every append, takes a shorter path of two statements.
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
    r_event_id  uuid,
    r_position  bigint,
    r_tx        bigint,
    r_version   bigint,
    r_prev_hash bytea,
    r_hash      bytea
)
LANGUAGE plpgsql AS $$
DECLARE
    v_genesis  CONSTANT bytea := '\x0000000000000000000000000000000000000000000000000000000000000000';
    v_n        integer := cardinality(p_streams);
    v_total    integer := cardinality(p_event_ids);
    v_start    integer[];
    v_stream   text[];
    v_version  bigint[];
    v_prev     bytea[];
    v_hash     bytea[];
    v_order    integer[];
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
    FOR i IN 1 .. v_n LOOP
        IF p_counts[i] IS NULL OR p_counts[i] < 1 OR p_expected[i] IS NULL OR p_expected[i] < 0 THEN
            RAISE EXCEPTION 'eventlog_append: bad count or expected version for stream %', p_streams[i]
                USING ERRCODE = '22023';
        END IF;
        k := k + p_counts[i];
    END LOOP;
    IF k - 1 <> v_total THEN
        RAISE EXCEPTION 'eventlog_append: counts do not add up to the number of events'
            USING ERRCODE = '22023';
    END IF;

    IF v_n = 1 THEN
        -- Idempotency and the stream's head, in one statement. The read of the head is plain:
        -- the compare-and-set below is what enforces the version. If it matches, no update
        -- committed since this read (each one bumps version), so this last_hash is the head.
        SELECT (SELECT e.tx FROM events e WHERE e.event_id = ANY (p_event_ids) LIMIT 1),
               s.version, s.last_hash
          INTO v_done_tx, v_current, v_last
          FROM (SELECT) AS one LEFT JOIN streams s ON s.stream_id = p_streams[1];
        IF v_done_tx IS NOT NULL THEN
            RETURN;
        END IF;
        IF coalesce(v_current, 0) <> p_expected[1] THEN
            RAISE EXCEPTION 'version conflict on stream %: expected %, actual %',
                    p_streams[1], p_expected[1], coalesce(v_current, 0)
                USING ERRCODE = 'ZC001',
                      DETAIL = json_build_object('stream', p_streams[1],
                                                 'expected', p_expected[1],
                                                 'actual', coalesce(v_current, 0))::text;
        END IF;
        v_last := coalesce(v_last, v_genesis);
        v_version := array_fill(NULL::bigint, ARRAY[v_total]);
        v_prev := array_fill(NULL::bytea, ARRAY[v_total]);
        v_hash := array_fill(NULL::bytea, ARRAY[v_total]);
        FOR j IN 1 .. v_total LOOP
            v_version[j] := p_expected[1] + j;
            v_prev[j] := v_last;
            v_last := sha256(v_last || p_content[j]);
            v_hash[j] := v_last;
        END LOOP;
        -- Compare-and-set the head and insert the events in one statement; the events are
        -- inserted only if the head moved.
        RETURN QUERY
            WITH moved AS (
                UPDATE streams s SET version = p_expected[1] + v_total, last_hash = v_last
                WHERE p_expected[1] > 0 AND s.stream_id = p_streams[1] AND s.version = p_expected[1]
                RETURNING 1
            ), created AS (
                INSERT INTO streams (stream_id, version, last_hash)
                SELECT p_streams[1], v_total, v_last WHERE p_expected[1] = 0
                ON CONFLICT (stream_id) DO NOTHING
                RETURNING 1
            )
            INSERT INTO events AS e (stream_id, version, event_id, event_type, schema_version,
                                     data, actor, recorded_at, prev_hash, hash)
            SELECT p_streams[1], u.version, u.event_id, u.event_type, u.schema_version, u.data,
                   u.actor, u.recorded_at, u.prev_hash, u.hash
            FROM unnest(v_version, p_event_ids, p_types, p_schema_versions, p_data, p_actors,
                        p_recorded_at, v_prev, v_hash)
                 WITH ORDINALITY AS u(version, event_id, event_type, schema_version, data,
                                      actor, recorded_at, prev_hash, hash, ord)
            WHERE EXISTS (SELECT FROM moved) OR EXISTS (SELECT FROM created)
            ORDER BY u.ord
            RETURNING e.event_id, e.position, e.tx::text::bigint, e.version, e.prev_hash, e.hash;
        IF NOT FOUND THEN
            SELECT s.version INTO v_current FROM streams s WHERE s.stream_id = p_streams[1];
            RAISE EXCEPTION 'version conflict on stream %: expected %, actual %',
                    p_streams[1], p_expected[1], coalesce(v_current, 0)
                USING ERRCODE = 'ZC001',
                      DETAIL = json_build_object('stream', p_streams[1],
                                                 'expected', p_expected[1],
                                                 'actual', coalesce(v_current, 0))::text;
        END IF;
        RETURN;
    END IF;

    -- Several streams. Idempotency first.
    PERFORM FROM events e WHERE e.event_id = ANY (p_event_ids) LIMIT 1;
    IF FOUND THEN
        RETURN;
    END IF;

    -- Where each stream's events start in the flattened arrays.
    v_start := array_fill(0, ARRAY[v_n]);
    k := 1;
    FOR i IN 1 .. v_n LOOP
        v_start[i] := k;
        k := k + p_counts[i];
    END LOOP;
    v_stream := array_fill(NULL::text, ARRAY[v_total]);
    v_version := array_fill(NULL::bigint, ARRAY[v_total]);
    v_prev := array_fill(NULL::bytea, ARRAY[v_total]);
    v_hash := array_fill(NULL::bytea, ARRAY[v_total]);

    -- Compare-and-set every stream head, in stream_id order (a fixed lock order).
    SELECT array_agg(u.o ORDER BY u.s COLLATE "C") INTO v_order
    FROM unnest(p_streams) WITH ORDINALITY AS u(s, o);
    FOREACH i IN ARRAY v_order LOOP
        IF p_expected[i] = 0 THEN
            v_last := v_genesis;
        ELSE
            -- A plain read, as above: the UPDATE below enforces the version.
            SELECT s.version, s.last_hash INTO v_current, v_last
            FROM streams s WHERE s.stream_id = p_streams[i];
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
        RETURNING e.event_id, e.position, e.tx::text::bigint, e.version, e.prev_hash, e.hash;
END
$$;
