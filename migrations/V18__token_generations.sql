-- Token revocation (`service::players`, the HTTP edge's `api::tokens`): each player's token
-- generation. A token carries the generation it was issued at and is refused once its player's
-- is higher; a player with no row is at generation 0 (every token issued before this migration
-- carries none, which reads as 0). Ending a player's tokens raises the generation and tells every
-- instance on the channel `discs_tokens` (the player's id), so that their caches drop it.
CREATE TABLE token_generations (
    player_id  uuid        PRIMARY KEY REFERENCES players (player_id),
    generation integer     NOT NULL CHECK (generation > 0),
    changed_at timestamptz NOT NULL
);
