//! Why a command on a tournament is refused.

use super::limits::{ARENA_MINUTES, NAME_MAX, PLAYERS_MIN, SCHEDULED_DAYS_MAX, SWISS_ROUNDS};

/// Why a command on a tournament is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TournamentError {
    #[error("the tournament does not exist")]
    Missing,
    #[error("the tournament already exists")]
    Exists,
    #[error("the name must have 1 to {NAME_MAX} characters")]
    Name,
    #[error("the start must be in the future, within {SCHEDULED_DAYS_MAX} days")]
    StartsAt,
    #[error("an arena runs {} to {} minutes", ARENA_MINUTES.start(), ARENA_MINUTES.end())]
    Minutes,
    #[error("a Swiss tournament has {} to {} rounds", SWISS_ROUNDS.start(), SWISS_ROUNDS.end())]
    Rounds,
    #[error("a tournament takes {PLAYERS_MIN} to {0} players")]
    MaxPlayers(u32),
    #[error("this setting does not belong to this format")]
    Setting,
    #[error("the tournament is over")]
    Over,
    #[error("joining is not open")]
    JoiningClosed,
    #[error("the tournament is full")]
    Full,
    #[error("already joined")]
    AlreadyJoined,
    #[error("not in the tournament")]
    NotJoined,
    #[error("already withdrawn")]
    AlreadyWithdrawn,
    #[error("removed from the tournament")]
    Removed,
    #[error("already paused")]
    AlreadyPaused,
    #[error("not paused")]
    NotPaused,
    #[error("not running")]
    NotRunning,
    #[error("already running")]
    AlreadyRunning,
    #[error("too early")]
    TooEarly,
    #[error("fewer than two players")]
    TooFewPlayers,
    #[error("the round under way has games without a result")]
    RoundUnderWay,
    #[error("every round is played")]
    NoRoundLeft,
    #[error("this format pairs otherwise")]
    WrongFormat,
    #[error("a pairing is not valid: {0}")]
    BadPairing(&'static str),
    #[error("no such pairing")]
    NoSuchPairing,
    #[error("the result is already recorded")]
    AlreadyRecorded,
    #[error("the winner did not play that game")]
    NotAPlayer,
    #[error("a reason is required")]
    Reason,
    #[error("a rating must be a finite number")]
    Rating,
    #[error("a Swiss pairing may not repeat a game")]
    Rematch,
}
