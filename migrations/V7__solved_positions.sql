-- The shared cache of solved positions (issue 14): every exact analysis result, stored once under
-- the canonical form of its position (the smallest of its images under the game's symmetries,
-- `AnyPosition::canonical`), with its best moves in that orientation. Any instance answers a
-- position, or any of its images, from here at once. The CPU levels never read it.
CREATE TABLE solved_positions (
    key        text        PRIMARY KEY,
    game       text        NOT NULL,
    score      integer     NOT NULL,
    best_moves text[]      NOT NULL,
    solved_at  timestamptz NOT NULL
);
