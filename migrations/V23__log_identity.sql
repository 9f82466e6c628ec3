-- The log's identity (issue 51): one UUID per log, written in every checkpoint it signs
-- (`service::history`) and naming its default checkpoint folder, so that two databases served on
-- one machine never mistake each other's checkpoints. Made at the first start of a server on the
-- database (`eventlog::EventLog::identity`), not here: a database cloned from a migrated template
-- is another log. Kept in the database, so that a restore brings it back: a restored log is the
-- same log, and its signer still refuses to sign over a checkpoint it no longer extends.
CREATE TABLE log_identity (
    one        boolean     PRIMARY KEY DEFAULT true CHECK (one),
    log_id     uuid        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Made once: never changed nor removed, like the events.
CREATE FUNCTION log_identity_forbid_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the log''s identity is made once: % on log_identity is not allowed', TG_OP
        USING ERRCODE = 'ZC002';
END
$$;

CREATE TRIGGER log_identity_kept
    BEFORE UPDATE OR DELETE OR TRUNCATE ON log_identity
    FOR EACH STATEMENT EXECUTE FUNCTION log_identity_forbid_change();

-- No stored answer holds a bearer token (issue 51): `POST /v1/tokens/revoke` now stores the
-- generation it reached and mints the token again on a retry. The answers it stored before keep
-- their generation and lose their token. (`body::text::jsonb` reads the column whether it holds
-- jsonb or text; what is assigned back is cast to the column's type.)
UPDATE idempotency_keys
   SET body = body::text::jsonb - 'token'
 WHERE jsonb_typeof(body::text::jsonb) = 'object'
   AND body::text::jsonb ? 'token';
