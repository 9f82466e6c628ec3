-- The opening explorer (a projection of the log, like the others: `discs rebuild explorer`).
-- Every finished match adds, for each position of its first plies where a move was chosen,
-- that move's result for the side that played it, in its rating band (the average of both
-- players' ratings, 200-point bands from under 1200 to 2200 and over) and month. A position is
-- keyed by its canonical form under the game's symmetries (`domain::explorer::position_id`:
-- a v5 UUID of `AnyPosition::canonical`'s key, the game named in it), its moves stored in the
-- canonical orientation.
INSERT INTO projection_checkpoints (name, tx, position, events, updated_at)
VALUES ('explorer', 0, 0, 0, now());

CREATE TABLE explorer_moves (
    position   uuid             NOT NULL,
    ranked     boolean          NOT NULL,
    band       smallint         NOT NULL,  -- index into domain::explorer::BANDS
    month      date             NOT NULL,  -- the first day of the month the match ended in
    mv         text             NOT NULL,  -- in the canonical image's orientation
    games      integer          NOT NULL,
    wins       integer          NOT NULL,  -- for the side that played the move
    draws      integer          NOT NULL,
    losses     integer          NOT NULL,
    rating_sum double precision NOT NULL,  -- the mover's rating, over the games a human moved
    rated      integer          NOT NULL,
    PRIMARY KEY (position, ranked, band, month, mv)
);

-- The games through each position: per (position, ranked, band, month) the eight that ended
-- last and the eight highest rated (the average of both players' ratings) are kept, so that any
-- choice of bands and months finds its own last and top games among them.
CREATE TABLE explorer_games (
    position       uuid             NOT NULL,
    ranked         boolean          NOT NULL,
    band           smallint         NOT NULL,
    month          date             NOT NULL,
    match_id       uuid             NOT NULL,
    rating         double precision NOT NULL,
    ended_position bigint           NOT NULL,
    PRIMARY KEY (position, ranked, band, month, match_id)
);

-- The explorer's own Glicko-2 ledger (the columns of `ratings`): each match's ratings are the
-- players' ratings before it, folded from the log by this projection alone, so that it never
-- waits on another projection and a rebuild gives the same numbers.
CREATE TABLE explorer_ratings (
    player_id     uuid             NOT NULL,
    game          text             NOT NULL,
    rating        double precision NOT NULL,
    deviation     double precision NOT NULL,
    volatility    double precision NOT NULL,
    games         integer          NOT NULL,
    last_ended_at timestamptz      NOT NULL,
    CONSTRAINT explorer_ratings_pkey PRIMARY KEY (player_id, game)
);
