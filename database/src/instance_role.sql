-- The rights of the role the instances connect as (`discs migrate --instance-role`, which
-- docker-compose.yml and deploy/local-cluster.sh run as the database's owner after the
-- migrations; `{role}` is the role's quoted name). Every table the instances keep is read and
-- written, but the event log is only read and appended to: nothing granted here lets them
-- change or remove an event, nor the log's identity. Idempotent: run again after every
-- migration, it covers the new tables.
GRANT USAGE ON SCHEMA public TO {role};
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role};
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {role};
-- The log: read and appended to (the `streams` heads move with each append), never changed.
REVOKE UPDATE, DELETE, TRUNCATE ON events FROM {role};
-- Made once by `discs migrate` (`eventlog::EventLog::identity`), then only read.
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON log_identity FROM {role};
-- The schema's history is the owner's.
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON refinery_schema_history FROM {role};
-- With a synchronous standby, every read of the log waits until the standby holds what it read:
-- the instances read the standbys' positions in pg_stat_replication.
GRANT pg_read_all_stats TO {role};
-- The tables the owner creates later (a projection rebuilt by `discs rebuild`, swapped in
-- beside the live one) come with the same rights.
ALTER DEFAULT PRIVILEGES GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {role};
ALTER DEFAULT PRIVILEGES GRANT USAGE, SELECT ON SEQUENCES TO {role};
