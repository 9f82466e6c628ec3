//! `Error`: what the application refuses or fails at, as data (a variant per kind, a typed reason
//! where the kind has several). The HTTP edge maps each variant once to a status, a code, the
//! texts and headers; nothing here knows HTTP.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use domain::analysis::AnalysisError;
use domain::games::ParseError;
use domain::matches::DomainError;

use crate::reasons::{Active, Clash, Illegal, Invalid, Missing, Refused};

/// A refusal or a failure of the application.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Well-formed input with wrong fields or values, or a bad id.
    #[error("invalid request: {0:?}")]
    InvalidRequest(Invalid),
    #[error("illegal move: {0:?}")]
    IllegalMove(Illegal),
    #[error("not your turn")]
    NotYourTurn,
    #[error("version conflict: expected {expected}, the match is at {actual}")]
    VersionConflict { expected: u64, actual: u64 },
    #[error("the match is finished")]
    MatchFinished,
    #[error("forbidden: {0:?}")]
    Forbidden(Refused),
    #[error("not found: {0:?}")]
    NotFound(Missing),
    #[error("already queued")]
    AlreadyQueued,
    #[error("already in a match")]
    InMatch,
    /// A ranked ticket asked by a player in a tournament that has started.
    #[error("playing a tournament")]
    InTournament,
    /// A tournament command its state refuses (or its input does not allow).
    #[error("tournament: {0}")]
    Tournament(domain::tournaments::TournamentError),
    /// Analysis asked by a player seated in an active ranked match (fair play: the server never
    /// helps a player during a ranked game).
    #[error("seated in an active ranked match")]
    InRankedMatch,
    /// Analysis of a position that is being played in an active ranked match beyond the public
    /// opening, or one move after it (the same code, `in_ranked_match`).
    #[error("the position is being played in a live ranked match")]
    LivePosition,
    /// A challenge command its state refuses.
    #[error("challenge: {0}")]
    Challenge(domain::challenges::ChallengeError),
    /// The player already has this many open challenges out.
    #[error("{0} open challenges already")]
    ChallengeLimit(u32),
    #[error("the room is full")]
    RoomFull,
    #[error("the ticket is closed")]
    TicketClosed,
    #[error("the idempotency key was used for another request")]
    IdempotencyKeyReused,
    #[error("conflict: {0:?}")]
    Conflict(Clash),
    /// A room already playing a match, settings changed during a match, the analysis of a
    /// match still being played.
    #[error("a match is active: {0:?}")]
    MatchActive(Active),
    /// Too many at once: the caller may retry after this many seconds.
    #[error("limited: retry in {0} s")]
    RateLimited(u64),
    /// The player already has this many active solo matches against CPU levels 4–5.
    #[error("{0} strong solo matches already")]
    StrongSoloLimit(u32),
    /// The player already has this many analysis jobs queued or running.
    #[error("{0} open analysis jobs already")]
    JobsLimit(u32),
    /// The database is out of reach: the call may be retried. The cause is logged, not shown.
    #[error("unavailable: {0}")]
    Unavailable(String),
    #[error(transparent)]
    Unexpected(anyhow::Error),
}

impl From<Invalid> for Error {
    fn from(reason: Invalid) -> Error {
        Error::InvalidRequest(reason)
    }
}

impl From<Illegal> for Error {
    fn from(reason: Illegal) -> Error {
        Error::IllegalMove(reason)
    }
}

/// How often an outage is logged at most: one line per interval, with the count of the
/// failures it stands for.
const OUTAGE_LOG_INTERVAL: Duration = Duration::from_secs(10);

impl From<anyhow::Error> for Error {
    /// An unexpected error, or [`Error::Unavailable`] when its cause is the database being out
    /// of reach.
    fn from(e: anyhow::Error) -> Self {
        if e.chain().any(is_outage) {
            Error::Unavailable(format!("{e:#}"))
        } else {
            Error::Unexpected(e)
        }
    }
}

impl Error {
    /// Whether a retry may succeed where this failed (nothing about the request is wrong), so
    /// its answer is not worth storing under an `Idempotency-Key`.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Error::Unexpected(_)
                | Error::Unavailable(_)
                | Error::RateLimited(_)
                | Error::StrongSoloLimit(_)
                | Error::JobsLimit(_)
                | Error::ChallengeLimit(_)
        )
    }
}

/// Whether an error (one link of a chain) is the database being out of reach.
fn is_outage(e: &(dyn std::error::Error + 'static)) -> bool {
    if let Some(e) = e.downcast_ref::<eventlog::AppendError>() {
        return e.is_outage();
    }
    if let Some(e) = e.downcast_ref::<eventlog::Error>() {
        return e.is_outage();
    }
    if let Some(e) = e.downcast_ref::<database::Error>() {
        return e.is_outage();
    }
    if let Some(e) = e.downcast_ref::<tokio_postgres::Error>() {
        return database::db_outage(e);
    }
    if let Some(e) = e.downcast_ref::<deadpool_postgres::PoolError>() {
        return database::pool_outage(e);
    }
    // A connection that broke, under an error type that forwards to its cause.
    e.downcast_ref::<std::io::Error>().is_some_and(|e| {
        use std::io::ErrorKind::*;
        matches!(
            e.kind(),
            ConnectionRefused
                | ConnectionReset
                | ConnectionAborted
                | NotConnected
                | BrokenPipe
                | UnexpectedEof
                | TimedOut
        )
    })
}

/// Logs an error nobody can act on: an unexpected one each time (its cause chain on one
/// line), an outage at most once per [`OUTAGE_LOG_INTERVAL`].
pub fn log(error: &Error) {
    match error {
        Error::Unexpected(e) => tracing::error!(error = %format!("{e:#}"), "unexpected error"),
        Error::Unavailable(cause) => log_outage(cause),
        _ => {}
    }
}

/// One log line per [`OUTAGE_LOG_INTERVAL`] while the database is out of reach.
pub fn log_outage(cause: &str) {
    static LAST: Mutex<Option<(Instant, u64)>> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
    let now = Instant::now();
    match &mut *last {
        Some((at, muted)) if now.duration_since(*at) < OUTAGE_LOG_INTERVAL => *muted += 1,
        _ => {
            let muted = last.map_or(0, |(_, m)| m);
            tracing::warn!(
                cause,
                failures_since_last_line = muted,
                "the database is out of reach"
            );
            *last = Some((now, 0));
        }
    }
}

impl From<domain::challenges::ChallengeError> for Error {
    fn from(e: domain::challenges::ChallengeError) -> Error {
        Error::Challenge(e)
    }
}

impl From<domain::tickets::TicketError> for Error {
    fn from(e: domain::tickets::TicketError) -> Error {
        match e {
            domain::tickets::TicketError::Closed => Error::TicketClosed,
            domain::tickets::TicketError::Missing => Error::NotFound(Missing::Ticket),
            domain::tickets::TicketError::Opened => Error::AlreadyQueued,
        }
    }
}

impl From<domain::standing::StandingError> for Error {
    fn from(e: domain::standing::StandingError) -> Error {
        match e {
            domain::standing::StandingError::ReasonRequired => {
                Error::InvalidRequest(Invalid::BanReason)
            }
            domain::standing::StandingError::ReasonTooLong => {
                Error::InvalidRequest(Invalid::ReasonLength {
                    max: domain::standing::MAX_REASON,
                })
            }
        }
    }
}

impl From<domain::tournaments::TournamentError> for Error {
    fn from(e: domain::tournaments::TournamentError) -> Error {
        Error::Tournament(e)
    }
}

/// A refusal of the domain, as the application words it.
impl From<DomainError> for Error {
    fn from(e: DomainError) -> Error {
        match e {
            DomainError::MatchFinished => Error::MatchFinished,
            DomainError::NotYourTurn(_) => Error::NotYourTurn,
            DomainError::IllegalMove(e) => Error::IllegalMove(e.into()),
            DomainError::NotCreated => Error::NotFound(Missing::Match),
            DomainError::NotAHumanSeat(_) => Error::Forbidden(Refused::NotYourSeat),
            DomainError::AlreadyAway(_) => Error::Conflict(Clash::AlreadyAway),
            DomainError::NotAway(_) => Error::Conflict(Clash::NotAway),
            DomainError::BadCpuLevel(_) => Error::InvalidRequest(Invalid::CpuLevel {
                min: *domain::cpu::LEVELS.start(),
                max: *domain::cpu::LEVELS.end(),
            }),
            DomainError::SamePlayerTwice => Error::InvalidRequest(Invalid::SamePlayerTwice),
            DomainError::RankedNeedsHumans => Error::InvalidRequest(Invalid::RankedNeedsHumans),
            DomainError::SettingNotForGame(game) => {
                Error::InvalidRequest(Invalid::SettingNotForGame(game))
            }
            DomainError::AlreadyCreated => Error::Conflict(Clash::AlreadyCreated),
            DomainError::NotCpuControlled(seat) => Error::Conflict(Clash::NotCpuControlled(seat)),
            DomainError::AlreadyReplaced(seat) => Error::Conflict(Clash::AlreadyReplaced(seat)),
            DomainError::NoTurnLimit => Error::Conflict(Clash::NoTurnLimit),
            DomainError::TooEarly => Error::Conflict(Clash::TooEarly),
            DomainError::TwoClocks => Error::InvalidRequest(Invalid::TwoClocks),
            DomainError::Correspondence => Error::Conflict(Clash::Correspondence),
            DomainError::OtherClock => Error::Conflict(Clash::OtherClock),
        }
    }
}

/// A notation that does not parse: a move is an illegal move, a board or a game id is invalid.
impl From<ParseError> for Error {
    fn from(e: ParseError) -> Error {
        match e {
            ParseError::BadMove(raw) => Error::IllegalMove(Illegal::NotAMove(raw)),
            ParseError::BadBoard(e) => Error::InvalidRequest(Invalid::Board(e)),
            ParseError::UnknownGame(raw) => Error::InvalidRequest(Invalid::UnknownGame(raw)),
        }
    }
}

/// A position that cannot be analysed.
impl From<AnalysisError> for Error {
    fn from(e: AnalysisError) -> Error {
        match e {
            AnalysisError::Finished => Error::InvalidRequest(Invalid::NothingToAnalyse),
            AnalysisError::Parse(e) => e.into(),
            AnalysisError::Move { ply, error } => Error::IllegalMove(Illegal::AtPly {
                ply,
                why: Box::new(error.into()),
            }),
        }
    }
}

/// An error nobody can act on; its cause chain is logged, not shown.
pub fn unexpected<E: std::error::Error + Send + Sync + 'static>(e: E) -> Error {
    Error::from(anyhow::Error::new(e))
}

#[cfg(test)]
mod tests {
    use domain::ids::Seat;

    use super::*;

    #[test]
    fn domain_refusals_keep_their_kind() {
        let illegal: Error = DomainError::IllegalMove(domain::games::MoveError::GameOver).into();
        assert!(matches!(illegal, Error::IllegalMove(Illegal::GameOver)));
        let level: Error = DomainError::BadCpuLevel(9).into();
        assert!(matches!(
            level,
            Error::InvalidRequest(Invalid::CpuLevel { min: 1, max: 5 })
        ));
        let seat: Error = DomainError::NotAHumanSeat(Seat::try_from(1u8).expect("seat")).into();
        assert!(matches!(seat, Error::Forbidden(Refused::NotYourSeat)));
        let early: Error = DomainError::TooEarly.into();
        assert!(matches!(early, Error::Conflict(Clash::TooEarly)));
    }

    #[test]
    fn a_database_out_of_reach_is_unavailable_and_anything_else_unexpected() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert!(matches!(unexpected(refused), Error::Unavailable(_)));
        let other = std::io::Error::other("boom");
        assert!(matches!(unexpected(other), Error::Unexpected(_)));
    }
}
