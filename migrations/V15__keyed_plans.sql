-- The log's write functions look rows up by key (an event id, a stream, a match): their plans
-- must be index lookups whatever the statistics say. PL/pgSQL plans each statement once per
-- connection (generic plans: `plan_cache_mode = force_generic_plan`, see database::settings) and
-- keeps the plan until the table is analyzed again. Planned while `events` was nearly empty
-- (a new database, the first minute of a benchmark), the idempotency check
-- `event_id = ANY (...) LIMIT 1` became a sequential scan, and stayed one while the table grew
-- to tens of thousands of rows: ticket opens in a burst spent most of the database's time
-- scanning `events`. Turning sequential scans off inside these functions makes their plans the
-- same on an empty table and on a large one.
--
-- A later `CREATE OR REPLACE FUNCTION` of one of them resets this: say it again there.
DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN
        SELECT p.oid::regprocedure
          FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname = current_schema()
           AND p.proname IN ('eventlog_append', 'eventlog_append_batch',
                             'eventlog_append_batch_each', 'eventlog_append_on_heads',
                             'live_commit_round', 'live_write_work', 'live_store_answers')
    LOOP
        EXECUTE format('ALTER FUNCTION %s SET enable_seqscan = off', f);
    END LOOP;
END
$$;
