-- A round on known heads is one statement sent as it is (issue 53): the log's `WITH` clauses
-- (`eventlog::append_on_heads_with!`) and the live path's (`service::live::commit::ROUNDS`).
-- The PL/pgSQL functions that wrapped them cost the round about 40 % of its execution
-- (BENCHMARKS.md, "Where a move's round spends PostgreSQL's time") and are no longer called.
DROP FUNCTION live_commit_round(text[], bigint[], bigint[], bytea[], bytea[], text[], bigint[],
    uuid[], text[], smallint[], jsonb[], uuid[], timestamptz[], bytea[], bytea[], uuid[],
    timestamptz[], boolean[], boolean[], timestamptz[], timestamptz[], bigint[], uuid[], text[],
    smallint[], text[], uuid[], text[], uuid[], text[], bytea[], integer[], text[],
    timestamptz[], text[]);
DROP FUNCTION eventlog_append_on_heads(text[], bigint[], bigint[], bytea[], bytea[], text[],
    bigint[], uuid[], text[], smallint[], jsonb[], uuid[], timestamptz[], bytea[], bytea[]);
