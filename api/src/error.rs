//! `ApiError`: every error a client can see, mapped in one place to a status, a stable `code` and
//! an `application/problem+json` body in English or Portuguese.

use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;

use domain::analysis::AnalysisError;
use domain::games::ParseError;
use domain::matches::DomainError;

use crate::lang::Lang;
use crate::reasons::{Active, Clash, Illegal, Invalid, Missing, Refused, Unauthenticated};
use crate::texts;

/// An error answered to a client: a variant per kind, with a typed reason where the kind has
/// several, rendered in the client's language from the texts. Unexpected errors log their
/// cause and show nothing internal.
#[derive(Debug)]
pub enum ApiError {
    /// The body is not JSON at all: where it stops parsing, or `None` when it could not be
    /// read.
    MalformedJson(Option<(usize, usize)>),
    /// Well-formed input with wrong fields or values, or a bad id in the path.
    InvalidRequest(Invalid),
    IllegalMove(Illegal),
    NotYourTurn,
    VersionConflict {
        expected: u64,
        actual: u64,
    },
    MatchFinished,
    Unauthorized(Unauthenticated),
    Forbidden(Refused),
    NotFound(Missing),
    AlreadyQueued,
    InMatch,
    RoomFull,
    TicketClosed,
    IdempotencyKeyReused,
    Conflict(Clash),
    /// A room already playing a match, settings changed during a match, the analysis of a
    /// match still being played.
    MatchActive(Active),
    PayloadTooLarge(usize),
    RateLimited(u64),
    /// The player already has this many active solo matches against CPU levels 4–5.
    StrongSoloLimit(u32),
    NoRoute,
    /// The path exists, with other methods (answered in `Allow`).
    MethodNotAllowed(Vec<&'static str>),
    /// The database is out of reach: the request may be retried (a command with its
    /// `Idempotency-Key`, whose outcome may be unknown). The cause is logged, not shown.
    Unavailable(String),
    Unexpected(anyhow::Error),
}

/// In English, as the detail of its problem document.
impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.detail(Lang::En))
    }
}

impl std::error::Error for ApiError {}

impl From<Invalid> for ApiError {
    fn from(reason: Invalid) -> ApiError {
        ApiError::InvalidRequest(reason)
    }
}

impl From<Illegal> for ApiError {
    fn from(reason: Illegal) -> ApiError {
        ApiError::IllegalMove(reason)
    }
}

/// Seconds a client is asked to wait after `unavailable` (`Retry-After`).
pub const RETRY_UNAVAILABLE: u64 = 2;

/// Seconds a client is asked to wait when it has too many strong solo matches (one of them
/// must end first: a guess at how long a move of theirs takes).
pub const RETRY_STRONG_SOLO: u64 = 60;

/// How often an outage is logged at most: one line per interval, with the count of the
/// failures it stands for.
const OUTAGE_LOG_INTERVAL: Duration = Duration::from_secs(10);

impl From<anyhow::Error> for ApiError {
    /// An unexpected error, or [`ApiError::Unavailable`] when its cause is the database being
    /// out of reach.
    fn from(e: anyhow::Error) -> Self {
        if e.chain().any(is_outage) {
            ApiError::Unavailable(format!("{e:#}"))
        } else {
            ApiError::Unexpected(e)
        }
    }
}

/// Whether an error (one link of a chain) is the database being out of reach.
fn is_outage(e: &(dyn std::error::Error + 'static)) -> bool {
    if let Some(e) = e.downcast_ref::<crate::commit::CommitError>() {
        return e.is_outage();
    }
    if let Some(e) = e.downcast_ref::<eventlog::AppendError>() {
        return e.is_outage();
    }
    if let Some(e) = e.downcast_ref::<eventlog::Error>() {
        return e.is_outage();
    }
    if let Some(e) = e.downcast_ref::<tokio_postgres::Error>() {
        return eventlog::db_outage(e);
    }
    if let Some(e) = e.downcast_ref::<deadpool_postgres::PoolError>() {
        return eventlog::pool_outage(e);
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

/// Logs an error the client cannot do anything about: an unexpected one each time (its cause
/// chain on one line), an outage at most once per [`OUTAGE_LOG_INTERVAL`].
pub fn log(error: &ApiError) {
    match error {
        ApiError::Unexpected(e) => tracing::error!(error = %format!("{e:#}"), "unexpected error"),
        ApiError::Unavailable(cause) => log_outage(cause),
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

impl ApiError {
    /// The stable snake_case code clients match on.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::MalformedJson(_) | ApiError::InvalidRequest(_) => "invalid_request",
            ApiError::IllegalMove(_) => "illegal_move",
            ApiError::NotYourTurn => "not_your_turn",
            ApiError::VersionConflict { .. } => "version_conflict",
            ApiError::MatchFinished => "match_finished",
            ApiError::Unauthorized(_) => "unauthorized",
            ApiError::Forbidden(_) => "forbidden",
            ApiError::NotFound(_) | ApiError::NoRoute => "not_found",
            ApiError::MethodNotAllowed(_) => "method_not_allowed",
            ApiError::AlreadyQueued => "already_queued",
            ApiError::InMatch => "in_match",
            ApiError::RoomFull => "room_full",
            ApiError::TicketClosed => "ticket_closed",
            ApiError::IdempotencyKeyReused => "idempotency_key_reused",
            ApiError::Conflict(_) => "conflict",
            ApiError::MatchActive(_) => "match_active",
            ApiError::PayloadTooLarge(_) => "payload_too_large",
            ApiError::RateLimited(_) | ApiError::StrongSoloLimit(_) => "rate_limited",
            ApiError::Unavailable(_) => "unavailable",
            ApiError::Unexpected(_) => "internal",
        }
    }

    fn status(&self) -> StatusCode {
        match self {
            ApiError::MalformedJson(_) => StatusCode::BAD_REQUEST,
            ApiError::InvalidRequest(_) | ApiError::IllegalMove(_) => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) | ApiError::NoRoute => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::NotYourTurn
            | ApiError::VersionConflict { .. }
            | ApiError::MatchFinished
            | ApiError::AlreadyQueued
            | ApiError::InMatch
            | ApiError::RoomFull
            | ApiError::TicketClosed
            | ApiError::IdempotencyKeyReused
            | ApiError::Conflict(_)
            | ApiError::MatchActive(_) => StatusCode::CONFLICT,
            ApiError::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::RateLimited(_) | ApiError::StrongSoloLimit(_) => {
                StatusCode::TOO_MANY_REQUESTS
            }
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Unexpected(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The human explanation of this occurrence, in `lang`.
    fn detail(&self, lang: Lang) -> String {
        let n = |name: &'static str, value: &dyn ToString| (name, value.to_string());
        let (key, args): (&str, Vec<(&str, String)>) = match self {
            ApiError::MalformedJson(Some((line, column))) => {
                ("malformed_json", vec![n("line", line), n("column", column)])
            }
            ApiError::MalformedJson(None) => ("malformed_json.unreadable", vec![]),
            ApiError::InvalidRequest(reason) => return reason.describe(lang),
            ApiError::IllegalMove(reason) => return reason.describe(lang),
            ApiError::NotYourTurn => ("not_your_turn", vec![]),
            ApiError::VersionConflict { expected, actual } => (
                "version_conflict",
                vec![n("expected", expected), n("actual", actual)],
            ),
            ApiError::MatchFinished => ("match_finished", vec![]),
            ApiError::Unauthorized(reason) => (reason.key(), vec![]),
            ApiError::Forbidden(reason) => (reason.key(), vec![]),
            ApiError::NotFound(what) => (what.key(), vec![]),
            ApiError::NoRoute => ("no_route", vec![]),
            ApiError::MethodNotAllowed(methods) => (
                "method_not_allowed",
                vec![n("methods", &methods.join(", "))],
            ),
            ApiError::AlreadyQueued => ("already_queued", vec![]),
            ApiError::InMatch => ("in_match", vec![]),
            ApiError::RoomFull => ("room_full", vec![]),
            ApiError::TicketClosed => ("ticket_closed", vec![]),
            ApiError::IdempotencyKeyReused => ("idempotency_key_reused", vec![]),
            ApiError::Conflict(reason) => reason.detail(),
            ApiError::MatchActive(what) => (what.key(), vec![]),
            ApiError::PayloadTooLarge(max) => ("payload_too_large", vec![n("max", max)]),
            ApiError::RateLimited(seconds) => ("rate_limited", vec![n("seconds", seconds)]),
            ApiError::StrongSoloLimit(count) => ("strong_solo_limit", vec![n("count", count)]),
            ApiError::Unavailable(_) => ("unavailable", vec![n("seconds", &RETRY_UNAVAILABLE)]),
            ApiError::Unexpected(_) => ("internal", vec![]),
        };
        texts::detail(lang, key, &args)
    }

    /// The problem document in a language.
    pub fn problem(&self, lang: Lang) -> Problem {
        Problem {
            r#type: format!("https://discs.dev/problems/{}", self.code()),
            title: texts::title(lang, self.code()),
            status: self.status().as_u16(),
            detail: self.detail(lang),
            code: self.code(),
            request_id: crate::requests::current(),
        }
    }
}

/// An RFC 9457 problem document with our stable `code`.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct Problem {
    pub r#type: String,
    pub title: String,
    pub status: u16,
    pub detail: String,
    /// Stable: clients branch on it (SPEC §6).
    pub code: &'static str,
    /// The request's id (`X-Request-Id`), to quote when reporting it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status()
    }

    /// The one place an error becomes a response: logged if unexpected, rendered in the
    /// language of the request being served ([`crate::requests::lang`]).
    fn error_response(&self) -> HttpResponse {
        log(self);
        render(self, crate::requests::lang())
    }
}

/// The response of an error in a language.
fn render(error: &ApiError, lang: Lang) -> HttpResponse {
    let mut res = HttpResponse::build(error.status());
    res.insert_header((
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/problem+json"),
    ));
    res.insert_header((header::CONTENT_LANGUAGE, lang.tag()));
    match error {
        ApiError::RateLimited(secs) => {
            res.insert_header((header::RETRY_AFTER, secs.to_string()));
        }
        ApiError::Unavailable(_) => {
            res.insert_header((header::RETRY_AFTER, RETRY_UNAVAILABLE.to_string()));
        }
        ApiError::StrongSoloLimit(_) => {
            res.insert_header((header::RETRY_AFTER, RETRY_STRONG_SOLO.to_string()));
        }
        ApiError::MethodNotAllowed(methods) => {
            res.insert_header((header::ALLOW, methods.join(", ")));
        }
        _ => {}
    }
    let body = serde_json::to_vec(&error.problem(lang)).unwrap_or_default();
    res.body(body)
}

/// A refusal of the domain, as the client sees it.
impl From<DomainError> for ApiError {
    fn from(e: DomainError) -> ApiError {
        match e {
            DomainError::MatchFinished => ApiError::MatchFinished,
            DomainError::NotYourTurn(_) => ApiError::NotYourTurn,
            DomainError::IllegalMove(e) => ApiError::IllegalMove(e.into()),
            DomainError::NotCreated => ApiError::NotFound(Missing::Match),
            DomainError::NotAHumanSeat(_) => ApiError::Forbidden(Refused::NotYourSeat),
            DomainError::AlreadyAway(_) => ApiError::Conflict(Clash::AlreadyAway),
            DomainError::NotAway(_) => ApiError::Conflict(Clash::NotAway),
            DomainError::BadCpuLevel(_) => ApiError::InvalidRequest(Invalid::CpuLevel {
                min: *domain::cpu::LEVELS.start(),
                max: *domain::cpu::LEVELS.end(),
            }),
            DomainError::SamePlayerTwice => ApiError::InvalidRequest(Invalid::SamePlayerTwice),
            DomainError::RankedNeedsHumans => ApiError::InvalidRequest(Invalid::RankedNeedsHumans),
            DomainError::SettingNotForGame(game) => {
                ApiError::InvalidRequest(Invalid::SettingNotForGame(game))
            }
            DomainError::AlreadyCreated => ApiError::Conflict(Clash::AlreadyCreated),
            DomainError::NotCpuControlled(seat) => {
                ApiError::Conflict(Clash::NotCpuControlled(seat))
            }
            DomainError::AlreadyReplaced(seat) => ApiError::Conflict(Clash::AlreadyReplaced(seat)),
            DomainError::NoTurnLimit => ApiError::Conflict(Clash::NoTurnLimit),
            DomainError::TooEarly => ApiError::Conflict(Clash::TooEarly),
        }
    }
}

/// A notation that does not parse: a move is an illegal move, a board or a game id is invalid.
impl From<ParseError> for ApiError {
    fn from(e: ParseError) -> ApiError {
        match e {
            ParseError::BadMove(raw) => ApiError::IllegalMove(Illegal::NotAMove(raw)),
            ParseError::BadBoard(e) => ApiError::InvalidRequest(Invalid::Board(e)),
            ParseError::UnknownGame(raw) => ApiError::InvalidRequest(Invalid::UnknownGame(raw)),
        }
    }
}

/// A position that cannot be analysed.
impl From<AnalysisError> for ApiError {
    fn from(e: AnalysisError) -> ApiError {
        match e {
            AnalysisError::Finished => ApiError::InvalidRequest(Invalid::NothingToAnalyse),
            AnalysisError::Parse(e) => e.into(),
            AnalysisError::Move { ply, error } => ApiError::IllegalMove(Illegal::AtPly {
                ply,
                why: Box::new(error.into()),
            }),
        }
    }
}

/// An error the client cannot act on; its cause chain is logged, not shown.
pub fn unexpected<E: std::error::Error + Send + Sync + 'static>(e: E) -> ApiError {
    ApiError::from(anyhow::Error::new(e))
}

#[cfg(test)]
mod tests {
    use domain::games::{BoardError, GameId};
    use domain::ids::Seat;

    use super::*;
    use crate::reasons::JsonIssue;

    /// One error of every variant and every reason.
    fn every_error() -> Vec<ApiError> {
        let invalid = [
            Invalid::Body {
                issue: JsonIssue::MissingField("move".into()),
                line: 1,
                column: 2,
            },
            Invalid::Query(JsonIssue::Other("oops".into())),
            Invalid::Id("x".into()),
            Invalid::Seat("3".into()),
            Invalid::RoomId("x".into()),
            Invalid::NameLength { min: 1, max: 32 },
            Invalid::NameControl,
            Invalid::NameBidi,
            Invalid::CpuLevel { min: 1, max: 5 },
            Invalid::IdempotencyKey { max: 255 },
            Invalid::Limit { min: 1, max: 500 },
            Invalid::UnknownGame("chess".into()),
            Invalid::UnknownProjection {
                raw: "x".into(),
                known: "ratings".into(),
            },
            Invalid::PlyPastEnd(9),
            Invalid::LastEventId,
            Invalid::Budget { max: 30000, got: 0 },
            Invalid::NothingToAnalyse,
            Invalid::Board(BoardError::Rows {
                expected: 6,
                got: 5,
            }),
            Invalid::Board(BoardError::RowLength {
                row: 2,
                got: 6,
                expected: 7,
            }),
            Invalid::Board(BoardError::Cell {
                found: 'x',
                allowed: ['.', 'R', 'Y'],
            }),
            Invalid::Board(BoardError::Floating),
            Invalid::Board(BoardError::DiscCounts {
                red: 2,
                yellow: 0,
                to_move: 'Y',
            }),
            Invalid::Board(BoardError::AlreadyFour),
            Invalid::Board(BoardError::EmptyCentre),
            Invalid::PositionShape,
            Invalid::Side {
                first: 'R',
                second: 'Y',
                game: GameId::FourInARow,
            },
            Invalid::TurnSeconds(45),
            Invalid::SettingNotForGame(GameId::FourInARow),
            Invalid::SamePlayerTwice,
            Invalid::RankedNeedsHumans,
        ];
        let issues = [
            JsonIssue::DuplicateField("move".into()),
            JsonIssue::UnknownField {
                field: "mov".into(),
                expected: "one of `move`".into(),
            },
            JsonIssue::UnknownVariant {
                found: "x".into(),
                expected: "one of `seat1`, `seat2`".into(),
            },
            JsonIssue::InvalidType {
                found: "integer `4`".into(),
                expected: "a string".into(),
            },
            JsonIssue::InvalidValue {
                found: "integer `300`".into(),
                expected: "u8".into(),
            },
            JsonIssue::InvalidLength {
                found: "3".into(),
                expected: "a sequence".into(),
            },
        ];
        let illegal = [
            Illegal::NotAMove("9".into()),
            Illegal::NotLegal("4".into()),
            Illegal::GameOver,
            Illegal::AtPly {
                ply: 3,
                why: Box::new(Illegal::NotLegal("4".into())),
            },
        ];
        let seat = Seat::try_from(1u8).expect("seat 1");
        let mut all: Vec<ApiError> = invalid.into_iter().map(ApiError::from).collect();
        all.extend(
            issues
                .into_iter()
                .map(|issue| ApiError::from(Invalid::Query(issue))),
        );
        all.extend(illegal.into_iter().map(ApiError::from));
        all.extend(
            [
                Unauthenticated::BearerRequired,
                Unauthenticated::Malformed,
                Unauthenticated::Expired,
                Unauthenticated::Audience,
                Unauthenticated::Issuer,
                Unauthenticated::Signature,
                Unauthenticated::Invalid,
                Unauthenticated::Algorithm,
                Unauthenticated::Subject,
                Unauthenticated::UnknownPlayer,
            ]
            .map(ApiError::Unauthorized),
        );
        all.extend(
            [
                Refused::AdminsOnly,
                Refused::NotYourSeat,
                Refused::NoSeat,
                Refused::ExternalRefresh,
                Refused::NotRoomMember,
            ]
            .map(ApiError::Forbidden),
        );
        all.extend(
            [
                Clash::AlreadyCreated,
                Clash::AlreadyAway,
                Clash::NotAway,
                Clash::NotCpuControlled(seat),
                Clash::AlreadyReplaced(seat),
                Clash::NoTurnLimit,
                Clash::TooEarly,
            ]
            .map(ApiError::Conflict),
        );
        all.extend(
            [
                Missing::Match,
                Missing::Player,
                Missing::Room,
                Missing::Ticket,
                Missing::Projection,
                Missing::Asset,
                Missing::Job,
            ]
            .map(ApiError::NotFound),
        );
        all.extend(
            [Active::RoomPlaying, Active::Settings, Active::Analysis].map(ApiError::MatchActive),
        );
        all.extend([
            ApiError::MalformedJson(Some((1, 5))),
            ApiError::MalformedJson(None),
            ApiError::NotYourTurn,
            ApiError::VersionConflict {
                expected: 3,
                actual: 4,
            },
            ApiError::MatchFinished,
            ApiError::AlreadyQueued,
            ApiError::InMatch,
            ApiError::RoomFull,
            ApiError::TicketClosed,
            ApiError::IdempotencyKeyReused,
            ApiError::PayloadTooLarge(16384),
            ApiError::RateLimited(3),
            ApiError::StrongSoloLimit(2),
            ApiError::NoRoute,
            ApiError::MethodNotAllowed(vec!["GET", "POST"]),
            ApiError::Unavailable("down".into()),
            ApiError::Unexpected(anyhow::anyhow!("boom")),
        ]);
        all
    }

    #[test]
    fn every_error_reads_in_both_languages_from_the_texts() {
        for error in every_error() {
            let (en, pt) = (error.problem(Lang::En), error.problem(Lang::Pt));
            for problem in [&en, &pt] {
                assert!(
                    !problem.detail.contains('{') && !problem.detail.contains('}'),
                    "{error:?}: a placeholder is left in {:?}",
                    problem.detail
                );
                assert!(!problem.title.is_empty() && !problem.detail.is_empty());
            }
            assert_ne!(
                en.title, pt.title,
                "{error:?}: the same title in both languages"
            );
            assert_ne!(
                en.detail, pt.detail,
                "{error:?}: the same detail in both languages"
            );
            assert_eq!(
                error.to_string(),
                en.detail,
                "Display is the English detail"
            );
        }
        let used = crate::texts::tests::USED.with(|u| u.borrow().clone());
        assert_eq!(
            used,
            crate::texts::tests::all_details(),
            "every template, and only those"
        );
    }

    #[test]
    fn details_name_what_was_wrong() {
        let cases = [
            (
                ApiError::from(Invalid::Limit { min: 1, max: 500 }),
                "limit must be 1 to 500",
                "limit deve estar entre 1 e 500",
            ),
            (
                ApiError::from(Illegal::AtPly {
                    ply: 3,
                    why: Box::new(Illegal::NotLegal("4".into())),
                }),
                "move 3: `4` is not a legal move here",
                "Jogada 3: `4` não é uma jogada legal aqui",
            ),
            (
                ApiError::from(Invalid::Query(JsonIssue::InvalidType {
                    found: "string \"x\"".into(),
                    expected: "u32".into(),
                })),
                "the query string does not fit: invalid type: string \"x\", expected u32",
                "A query string não serve: Tipo inválido: texto \"x\"; esperava um inteiro não negativo",
            ),
            (
                ApiError::Conflict(Clash::NotCpuControlled(Seat::try_from(2u8).expect("seat"))),
                "seat 2 is not played by the CPU",
                "O assento 2 não é jogado pela CPU",
            ),
        ];
        for (error, en, pt) in cases {
            assert_eq!(error.problem(Lang::En).detail, en);
            assert_eq!(error.problem(Lang::Pt).detail, pt);
        }
    }

    #[test]
    fn domain_refusals_keep_their_code() {
        let illegal: ApiError = DomainError::IllegalMove(domain::games::MoveError::GameOver).into();
        assert_eq!(illegal.code(), "illegal_move");
        let level: ApiError = DomainError::BadCpuLevel(9).into();
        assert_eq!(level.code(), "invalid_request");
        let seat: ApiError = DomainError::NotAHumanSeat(Seat::try_from(1u8).expect("seat")).into();
        assert_eq!(seat.code(), "forbidden");
        let early: ApiError = DomainError::TooEarly.into();
        assert_eq!(early.code(), "conflict");
    }
}
