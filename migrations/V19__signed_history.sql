-- History nobody can quietly rewrite (issue 45).
--
-- The Merkle tree over the whole log (`eventlog::tree`): its size and the (tx, position) of its
-- last leaf, and its tiles (level L holds up to 256 consecutive nodes of height 8 L; level 0 the
-- leaf hashes). A cache of the events' hashes, grown in log order; what makes it trustworthy is
-- the signed roots kept outside the database.
CREATE TABLE log_tree (
    one      boolean PRIMARY KEY DEFAULT true CHECK (one),
    size     bigint  NOT NULL CHECK (size >= 0),
    tx       bigint  NOT NULL,
    position bigint  NOT NULL
);
INSERT INTO log_tree (size, tx, position) VALUES (0, 0, 0);

CREATE TABLE log_tree_tiles (
    level integer NOT NULL CHECK (level >= 0),
    idx   bigint  NOT NULL CHECK (idx >= 0),
    nodes bytea   NOT NULL CHECK (octet_length(nodes) % 32 = 0 AND octet_length(nodes) BETWEEN 32 AND 8192),
    PRIMARY KEY (level, idx)
);

-- The signed checkpoints (`service::history`): each one's tree size and root, where its last leaf
-- is in the log, and the signed note as published in the operator's directory and at
-- GET /v1/checkpoints. The signing key is never here: it lives in a file or a variable.
CREATE TABLE log_checkpoints (
    seq       bigint      PRIMARY KEY CHECK (seq >= 1),
    size      bigint      NOT NULL CHECK (size >= 0),
    root      bytea       NOT NULL CHECK (octet_length(root) = 32),
    tx        bigint      NOT NULL,
    position  bigint      NOT NULL,
    signed_at timestamptz NOT NULL,
    note      text        NOT NULL
);

-- Closed accounts (`service::players`): the name is overwritten by an anonymous label when the
-- account closes, and the time it closed kept.
ALTER TABLE players ADD COLUMN closed_at timestamptz NULL;
