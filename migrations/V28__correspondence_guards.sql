-- The boundary reads the guards of open rated correspondence games on every position question
-- (`service::live::guards`); casual games publish none. Only the rows with a guard are indexed,
-- so any number of open casual games costs that read nothing.
CREATE INDEX correspondence_games_guards ON correspondence_games (live_depth)
    WHERE live_key IS NOT NULL;
