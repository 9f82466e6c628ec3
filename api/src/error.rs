//! `ApiError`: every error a client can see (the application's `service::Error` and the edge's
//! own: bodies, tokens, routes, rate limits), mapped in one place to a status, a stable `code`,
//! headers and an `application/problem+json` body in English or Portuguese.

use std::fmt;

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;

use domain::challenges::ChallengeError;
use domain::tournaments::TournamentError;
use service::Error;
use service::reasons::{Illegal, Invalid};

use crate::lang::Lang;
use crate::reasons::{Describe, Keyed, Templated, Unauthenticated};
use crate::texts;

/// An error answered to a client: a variant per kind, with a typed reason where the kind has
/// several, rendered in the client's language from the texts. Unexpected errors log their
/// cause and show nothing internal.
#[derive(Debug)]
pub enum ApiError {
    /// What the application refused or failed at.
    Core(Error),
    /// The body is not JSON at all: where it stops parsing, or `None` when it could not be
    /// read.
    MalformedJson(Option<(usize, usize)>),
    Unauthorized(Unauthenticated),
    PayloadTooLarge(usize),
    NoRoute,
    /// The path exists, with other methods (answered in `Allow`).
    MethodNotAllowed(Vec<&'static str>),
}

impl From<Error> for ApiError {
    fn from(e: Error) -> ApiError {
        ApiError::Core(e)
    }
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
        ApiError::Core(Error::InvalidRequest(reason))
    }
}

impl From<Illegal> for ApiError {
    fn from(reason: Illegal) -> ApiError {
        ApiError::Core(Error::IllegalMove(reason))
    }
}

impl From<anyhow::Error> for ApiError {
    /// An unexpected error, or `unavailable` when its cause is the database out of reach.
    fn from(e: anyhow::Error) -> ApiError {
        ApiError::Core(Error::from(e))
    }
}

/// Seconds a client is asked to wait after `unavailable` (`Retry-After`).
pub const RETRY_UNAVAILABLE: u64 = 2;

/// Seconds a client is asked to wait when it has too many strong solo matches or analysis jobs
/// (one of them must end first: a guess at how long that takes).
pub const RETRY_STRONG_SOLO: u64 = 60;

impl ApiError {
    /// The stable snake_case code clients match on.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::Core(e) => code(e),
            ApiError::MalformedJson(_) => "invalid_request",
            ApiError::Unauthorized(_) => "unauthorized",
            ApiError::NoRoute => "not_found",
            ApiError::MethodNotAllowed(_) => "method_not_allowed",
            ApiError::PayloadTooLarge(_) => "payload_too_large",
        }
    }

    fn status(&self) -> StatusCode {
        match self {
            ApiError::Core(e) => status(e),
            ApiError::MalformedJson(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::NoRoute => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
        }
    }

    /// The human explanation of this occurrence, in `lang`.
    fn detail(&self, lang: Lang) -> String {
        let n = |name: &'static str, value: &dyn ToString| (name, value.to_string());
        let (key, args): (&str, Vec<(&str, String)>) = match self {
            ApiError::Core(e) => return detail(e, lang),
            ApiError::MalformedJson(Some((line, column))) => {
                ("malformed_json", vec![n("line", line), n("column", column)])
            }
            ApiError::MalformedJson(None) => ("malformed_json.unreadable", vec![]),
            ApiError::Unauthorized(reason) => (reason.key(), vec![]),
            ApiError::NoRoute => ("no_route", vec![]),
            ApiError::MethodNotAllowed(methods) => (
                "method_not_allowed",
                vec![n("methods", &methods.join(", "))],
            ),
            ApiError::PayloadTooLarge(max) => ("payload_too_large", vec![n("max", max)]),
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
    /// Stable: clients branch on it.
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
        if let ApiError::Core(e) = self {
            service::error::log(e);
        }
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
        ApiError::Core(Error::RateLimited(secs)) => {
            res.insert_header((header::RETRY_AFTER, secs.to_string()));
        }
        ApiError::Core(Error::Unavailable(_)) => {
            res.insert_header((header::RETRY_AFTER, RETRY_UNAVAILABLE.to_string()));
        }
        ApiError::Core(
            Error::StrongSoloLimit(_) | Error::JobsLimit(_) | Error::ChallengeLimit(_),
        ) => {
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

/// Anything the application turns into its own error (the domain's refusals, parse and
/// analysis errors) is an error the client sees.
macro_rules! from_the_application {
    ($($t:ty),*) => {$(
        impl From<$t> for ApiError {
            fn from(e: $t) -> ApiError {
                ApiError::Core(Error::from(e))
            }
        }
    )*};
}
from_the_application!(
    domain::matches::DomainError,
    domain::games::ParseError,
    domain::analysis::AnalysisError
);

/// An error the client cannot act on; its cause chain is logged, not shown.
pub fn unexpected<E: std::error::Error + Send + Sync + 'static>(e: E) -> ApiError {
    ApiError::Core(service::error::unexpected(e))
}

/// The stable code of an application error.
fn code(e: &Error) -> &'static str {
    match e {
        Error::InvalidRequest(_) => "invalid_request",
        Error::IllegalMove(_) => "illegal_move",
        Error::NotYourTurn => "not_your_turn",
        Error::VersionConflict { .. } => "version_conflict",
        Error::MatchFinished => "match_finished",
        Error::Forbidden(_) => "forbidden",
        Error::NotFound(_) => "not_found",
        Error::AlreadyQueued => "already_queued",
        Error::InMatch => "in_match",
        Error::InTournament => "in_tournament",
        Error::Tournament(e) => tournament_code(e),
        Error::Challenge(e) => challenge_code(e),
        Error::InRankedMatch | Error::LivePosition => "in_ranked_match",
        Error::RoomFull => "room_full",
        Error::TicketClosed => "ticket_closed",
        Error::IdempotencyKeyReused => "idempotency_key_reused",
        Error::Conflict(_) => "conflict",
        Error::MatchActive(_) => "match_active",
        Error::RateLimited(_)
        | Error::StrongSoloLimit(_)
        | Error::JobsLimit(_)
        | Error::ChallengeLimit(_) => "rate_limited",
        Error::Unavailable(_) => "unavailable",
        Error::Unexpected(_) => "internal",
    }
}

/// The status of an application error.
fn status(e: &Error) -> StatusCode {
    match e {
        Error::InvalidRequest(_) | Error::IllegalMove(_) => StatusCode::UNPROCESSABLE_ENTITY,
        Error::Tournament(e) => match tournament_code(e) {
            "invalid_request" => StatusCode::UNPROCESSABLE_ENTITY,
            "not_found" => StatusCode::NOT_FOUND,
            _ => StatusCode::CONFLICT,
        },
        Error::Challenge(e) => match challenge_code(e) {
            "invalid_request" => StatusCode::UNPROCESSABLE_ENTITY,
            "not_found" => StatusCode::NOT_FOUND,
            "forbidden" => StatusCode::FORBIDDEN,
            _ => StatusCode::CONFLICT,
        },
        Error::Forbidden(_) => StatusCode::FORBIDDEN,
        Error::NotFound(_) => StatusCode::NOT_FOUND,
        Error::NotYourTurn
        | Error::VersionConflict { .. }
        | Error::MatchFinished
        | Error::AlreadyQueued
        | Error::InMatch
        | Error::InTournament
        | Error::InRankedMatch
        | Error::LivePosition
        | Error::RoomFull
        | Error::TicketClosed
        | Error::IdempotencyKeyReused
        | Error::Conflict(_)
        | Error::MatchActive(_) => StatusCode::CONFLICT,
        Error::RateLimited(_)
        | Error::StrongSoloLimit(_)
        | Error::JobsLimit(_)
        | Error::ChallengeLimit(_) => StatusCode::TOO_MANY_REQUESTS,
        Error::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        Error::Unexpected(_) => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// The detail of an application error, in `lang`.
fn detail(e: &Error, lang: Lang) -> String {
    let n = |name: &'static str, value: &dyn ToString| (name, value.to_string());
    let (key, args): (&str, Vec<(&str, String)>) = match e {
        Error::InvalidRequest(reason) => return reason.describe(lang),
        Error::IllegalMove(reason) => return reason.describe(lang),
        Error::NotYourTurn => ("not_your_turn", vec![]),
        Error::VersionConflict { expected, actual } => (
            "version_conflict",
            vec![n("expected", expected), n("actual", actual)],
        ),
        Error::MatchFinished => ("match_finished", vec![]),
        Error::Forbidden(reason) => (reason.key(), vec![]),
        Error::NotFound(what) => (what.key(), vec![]),
        Error::AlreadyQueued => ("already_queued", vec![]),
        Error::InMatch => ("in_match", vec![]),
        Error::InTournament => ("in_tournament", vec![]),
        Error::Tournament(e) => tournament_detail(e),
        Error::Challenge(e) => (challenge_key(e), vec![]),
        Error::InRankedMatch => ("in_ranked_match", vec![]),
        Error::LivePosition => ("in_ranked_match.position", vec![]),
        Error::RoomFull => ("room_full", vec![]),
        Error::TicketClosed => ("ticket_closed", vec![]),
        Error::IdempotencyKeyReused => ("idempotency_key_reused", vec![]),
        Error::Conflict(reason) => reason.template(),
        Error::MatchActive(what) => (what.key(), vec![]),
        Error::RateLimited(seconds) => ("rate_limited", vec![n("seconds", seconds)]),
        Error::StrongSoloLimit(count) => ("strong_solo_limit", vec![n("count", count)]),
        Error::JobsLimit(count) => ("jobs_limit", vec![n("count", count)]),
        Error::ChallengeLimit(count) => ("challenge_limit", vec![n("count", count)]),
        Error::Unavailable(_) => ("unavailable", vec![n("seconds", &RETRY_UNAVAILABLE)]),
        Error::Unexpected(_) => ("internal", vec![]),
    };
    texts::detail(lang, key, &args)
}

/// The stable code of a challenge's refusal: a challenge of yourself is `invalid_request`, one
/// nobody may see `not_found`, the other side's part `forbidden`, a challenge no longer open
/// `challenge_closed`, and the workers' own steps `conflict`.
fn challenge_code(e: &ChallengeError) -> &'static str {
    use ChallengeError::*;
    match e {
        Yourself | TwoClocks => "invalid_request",
        Missing => "not_found",
        NotChallenged | NotChallenger => "forbidden",
        Closed(_) | Lapsed => "challenge_closed",
        Exists | TooEarly | Expiry => "conflict",
    }
}

/// The text of a challenge's refusal.
fn challenge_key(e: &ChallengeError) -> &'static str {
    use ChallengeError::*;
    match e {
        Yourself => "challenge.yourself",
        TwoClocks => "invalid.two_clocks",
        Missing => "not_found.challenge",
        NotChallenged => "challenge.not_challenged",
        NotChallenger => "challenge.not_challenger",
        Closed(_) => "challenge.closed",
        Lapsed => "challenge.lapsed",
        Exists | TooEarly | Expiry => "challenge.step",
    }
}

/// The stable code of a tournament's refusal: the bad inputs are `invalid_request`, a missing
/// tournament `not_found`, what a player can run into a code of its own, and the organiser's
/// own steps `conflict`.
fn tournament_code(e: &TournamentError) -> &'static str {
    use TournamentError::*;
    match e {
        Name | StartsAt | Minutes | Rounds | MaxPlayers(_) | Setting | Reason | Rating => {
            "invalid_request"
        }
        Missing => "not_found",
        Over => "tournament_over",
        JoiningClosed => "joining_closed",
        Full => "tournament_full",
        AlreadyJoined => "already_joined",
        NotJoined => "not_joined",
        AlreadyWithdrawn => "already_withdrawn",
        Removed => "removed",
        AlreadyPaused => "already_paused",
        NotPaused => "not_paused",
        Exists | NotRunning | AlreadyRunning | TooEarly | TooFewPlayers | RoundUnderWay
        | NoRoundLeft | WrongFormat | BadPairing(_) | NoSuchPairing | AlreadyRecorded
        | NotAPlayer | Rematch => "conflict",
    }
}

/// The text of a tournament's refusal; the bounds it states are the domain's
/// (`domain::tournaments::limits`).
fn tournament_detail(e: &TournamentError) -> (&'static str, Vec<(&'static str, String)>) {
    use TournamentError::*;
    use domain::tournaments::limits::{
        ARENA_MINUTES, NAME_MAX, PLAYERS_MIN, SCHEDULED_DAYS_MAX, SWISS_ROUNDS,
    };
    let n = |name: &'static str, value: &dyn ToString| (name, value.to_string());
    let key = match e {
        Missing => "not_found.tournament",
        Exists => "tournament.exists",
        Name => return ("tournament.name", vec![n("max", &NAME_MAX)]),
        StartsAt => {
            return ("tournament.starts_at", vec![n("days", &SCHEDULED_DAYS_MAX)]);
        }
        Minutes => {
            return (
                "tournament.minutes",
                vec![
                    n("min", ARENA_MINUTES.start()),
                    n("max", ARENA_MINUTES.end()),
                ],
            );
        }
        Rounds => {
            return (
                "tournament.rounds",
                vec![n("min", SWISS_ROUNDS.start()), n("max", SWISS_ROUNDS.end())],
            );
        }
        MaxPlayers(most) => {
            return (
                "tournament.max_players",
                vec![n("min", &PLAYERS_MIN), n("max", most)],
            );
        }
        Setting => "tournament.setting",
        Over => "tournament.over",
        JoiningClosed => "tournament.joining_closed",
        Full => "tournament.full",
        AlreadyJoined => "tournament.already_joined",
        NotJoined => "tournament.not_joined",
        AlreadyWithdrawn => "tournament.already_withdrawn",
        Removed => "tournament.removed",
        AlreadyPaused => "tournament.already_paused",
        NotPaused => "tournament.not_paused",
        Reason => "tournament.reason",
        Rating => "tournament.rating",
        NotRunning | AlreadyRunning | TooEarly | TooFewPlayers | RoundUnderWay | NoRoundLeft
        | WrongFormat | BadPairing(_) | NoSuchPairing | AlreadyRecorded | NotAPlayer | Rematch => {
            "tournament.step"
        }
    };
    (key, vec![])
}

#[cfg(test)]
mod tests {
    use domain::games::{BoardError, GameId};
    use domain::ids::Seat;
    use domain::matches::DomainError;

    use super::*;
    use service::reasons::{Active, Clash, JsonIssue, Missing, Refused, TextIssue};

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
            Invalid::Text {
                field: "name".into(),
                issue: TextIssue::Control('\0'),
            },
            Invalid::Text {
                field: "reason".into(),
                issue: TextIssue::Bidi('\u{202E}'),
            },
            Invalid::Text {
                field: "board[2]".into(),
                issue: TextIssue::Invisible('\u{200B}'),
            },
            Invalid::Text {
                field: "name".into(),
                issue: TextIssue::StackedMarks { max: 3 },
            },
            Invalid::ReservedName,
            Invalid::Instant("9999-12-31T23:59:59-23:59".into()),
            Invalid::WeakSignUpKey {
                min_length: 16,
                min_bits: 64,
            },
            Invalid::CpuLevel { min: 1, max: 5 },
            Invalid::IdempotencyKey { max: 255 },
            Invalid::Limit { min: 1, max: 500 },
            Invalid::UnknownGame("chess".into()),
            Invalid::RatingBand {
                got: "1300".into(),
                bands: "0, 1200".into(),
            },
            Invalid::Month("2026-13".into()),
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
            Invalid::OwnTokens,
            Invalid::OwnAccount,
            Invalid::BanReason,
            Invalid::ReasonLength { max: 500 },
            Invalid::NameToFind,
            Invalid::Offset,
            Invalid::Side {
                first: 'R',
                second: 'Y',
                game: GameId::FourInARow,
            },
            Invalid::TurnSeconds(45),
            Invalid::DaysPerMove(4),
            Invalid::TwoClocks,
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
                Unauthenticated::Revoked,
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
                Refused::InviteOnly,
                Refused::Banned,
                Refused::Confirmation,
                Refused::NotChallengeable,
                Refused::Bot,
            ]
            .map(|r| ApiError::Core(Error::Forbidden(r))),
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
                Clash::NotCheckpointed,
                Clash::Correspondence,
                Clash::OtherClock,
            ]
            .map(|r| ApiError::Core(Error::Conflict(r))),
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
                Missing::Checkpoint,
                Missing::Tournament,
            ]
            .map(|r| ApiError::Core(Error::NotFound(r))),
        );
        all.extend(
            [
                Active::RoomPlaying,
                Active::Settings,
                Active::Analysis,
                Active::Proof,
            ]
            .map(|r| ApiError::Core(Error::MatchActive(r))),
        );
        all.extend(
            [
                Error::NotYourTurn,
                Error::VersionConflict {
                    expected: 3,
                    actual: 4,
                },
                Error::MatchFinished,
                Error::AlreadyQueued,
                Error::InMatch,
                Error::InTournament,
                Error::InRankedMatch,
                Error::LivePosition,
                Error::RoomFull,
                Error::TicketClosed,
                Error::IdempotencyKeyReused,
                Error::RateLimited(3),
                Error::StrongSoloLimit(2),
                Error::JobsLimit(3),
                Error::ChallengeLimit(10),
                Error::Unavailable("down".into()),
                Error::Unexpected(anyhow::anyhow!("boom")),
            ]
            .map(ApiError::Core),
        );
        {
            use TournamentError::*;
            all.extend(
                [
                    Missing,
                    Exists,
                    Name,
                    StartsAt,
                    Minutes,
                    Rounds,
                    MaxPlayers(16),
                    Setting,
                    Over,
                    JoiningClosed,
                    Full,
                    AlreadyJoined,
                    NotJoined,
                    AlreadyWithdrawn,
                    Removed,
                    AlreadyPaused,
                    NotPaused,
                    NotRunning,
                    AlreadyRunning,
                    TooEarly,
                    TooFewPlayers,
                    RoundUnderWay,
                    NoRoundLeft,
                    WrongFormat,
                    BadPairing("x"),
                    NoSuchPairing,
                    AlreadyRecorded,
                    NotAPlayer,
                    Reason,
                    Rating,
                    Rematch,
                ]
                .map(|e| ApiError::Core(Error::Tournament(e))),
            );
        }
        {
            use domain::challenges::{ChallengeError::*, Status};
            all.extend(
                [
                    Exists,
                    Missing,
                    Yourself,
                    Closed(Status::Declined),
                    NotChallenged,
                    NotChallenger,
                    Lapsed,
                    TooEarly,
                    Expiry,
                    TwoClocks,
                ]
                .map(|e| ApiError::Core(Error::Challenge(e))),
            );
        }
        all.extend([
            ApiError::MalformedJson(Some((1, 5))),
            ApiError::MalformedJson(None),
            ApiError::PayloadTooLarge(16384),
            ApiError::NoRoute,
            ApiError::MethodNotAllowed(vec!["GET", "POST"]),
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
                "`limit` deve estar entre 1 e 500",
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
                "Os parâmetros do endereço não servem: Tipo inválido: texto \"x\"; esperava um inteiro não negativo",
            ),
            (
                ApiError::Core(Error::Conflict(Clash::NotCpuControlled(
                    Seat::try_from(2u8).expect("seat"),
                ))),
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
