//! Why a call was refused, as data: the typed reasons inside `Error`'s variants. The HTTP edge
//! renders each in the client's language from the texts; no sentence is built here.

use domain::games::{BoardError, GameId, MoveError, ParseError};
use domain::ids::{IdError, Seat};
use domain::matches::SettingsError;

/// Why well-formed input is refused (`invalid_request`).
#[derive(Debug, Clone, PartialEq)]
pub enum Invalid {
    /// A JSON body whose fields have the wrong names, types or values.
    Body {
        issue: JsonIssue,
        line: usize,
        column: usize,
    },
    /// A query string with the wrong fields or values.
    Query(JsonIssue),
    Id(String),
    Seat(String),
    RoomId(String),
    NameLength {
        min: usize,
        max: usize,
    },
    /// Text whose characters [`crate::checks::text`] refuses: the field and why.
    Text {
        field: String,
        issue: TextIssue,
    },
    /// A name others could take for the CPU's seat (`CPU`) or a closed account's label
    /// (`closed-` and 8 hexadecimal digits).
    ReservedName,
    /// An instant that is not RFC 3339 or lies outside the years 1 to 9999 in UTC (what
    /// [`crate::checks::Timestamp`] reads), as the client wrote it (refused characters shown as
    /// code points).
    Instant(String),
    /// A sign-up's `Idempotency-Key` too short or too regular to be a secret (it proves a
    /// retry, and a retry gets the player's token).
    WeakSignUpKey {
        min_length: usize,
        min_bits: u32,
    },
    /// A CPU level this server does not offer.
    CpuLevel {
        min: u8,
        max: u8,
    },
    IdempotencyKey {
        max: usize,
    },
    Limit {
        min: u32,
        max: u32,
    },
    UnknownGame(String),
    /// An explorer rating band that is not one of the bands' lower bounds.
    RatingBand {
        got: String,
        bands: String,
    },
    /// A month that is not `YYYY-MM`.
    Month(String),
    UnknownProjection {
        raw: String,
        known: String,
    },
    PlyPastEnd(u32),
    LastEventId,
    Budget {
        max: u64,
        got: u64,
    },
    /// A finished position given for analysis.
    NothingToAnalyse,
    Board(BoardError),
    /// An analysis body with neither `moves` nor `board` and `side`.
    PositionShape,
    /// An admin ending their own tokens through the admin call (`POST /v1/tokens/revoke` is
    /// the one that answers a fresh token).
    OwnTokens,
    /// An admin closing their own account (they close it as a player does).
    OwnAccount,
    /// A ban without a reason.
    BanReason,
    /// A decision's reason too long.
    ReasonLength {
        max: usize,
    },
    /// A player search with no name to look for.
    NameToFind,
    /// A negative offset in a page's query.
    Offset,
    Side {
        first: char,
        second: char,
        game: GameId,
    },
    TurnSeconds(u32),
    DaysPerMove(u32),
    TwoClocks,
    SettingNotForGame(GameId),
    SamePlayerTwice,
    RankedNeedsHumans,
}

/// What a text holds that [`crate::checks::text`] refuses: the first such character, or the
/// bound on stacked marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextIssue {
    /// A control character: C0 (NUL included), DEL or C1.
    Control(char),
    /// A character that changes the direction of the text around it (marks, embeddings,
    /// overrides, isolates).
    Bidi(char),
    /// A character that shows as nothing (zero-width spaces and joiners, the word joiner, the
    /// byte order mark, the soft hyphen, other format characters, fillers, spaces other than
    /// U+0020).
    Invisible(char),
    /// More combining marks on one character than the bound.
    StackedMarks { max: usize },
}

/// The end of serde's message for an instant refused while read (see [`instant_message`]).
const INSTANT_TAIL: &str = "` is not an RFC 3339 instant of the years 0001 to 9999 (UTC)";

/// serde's message for an instant refused while read (`shown`: as [`Invalid::Instant`] holds
/// it), which [`JsonIssue::parse`] reads back as that reason.
pub fn instant_message(shown: &str) -> String {
    format!("`{shown}{INSTANT_TAIL}")
}

/// What is wrong in a JSON body or a query string, from serde's message.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonIssue {
    MissingField(String),
    UnknownField {
        field: String,
        expected: String,
    },
    DuplicateField(String),
    InvalidType {
        found: String,
        expected: String,
    },
    InvalidValue {
        found: String,
        expected: String,
    },
    InvalidLength {
        found: String,
        expected: String,
    },
    UnknownVariant {
        found: String,
        expected: String,
    },
    /// A value the domain refuses while it is read (a seat, a turn limit).
    Domain(Box<Invalid>),
    /// Any other message, shown as written.
    Other(String),
}

/// Why a move cannot be played (`illegal_move`).
#[derive(Debug, Clone, PartialEq)]
pub enum Illegal {
    NotAMove(String),
    NotLegal(String),
    GameOver,
    /// A move of a game record (analysis): the ply it is and why.
    AtPly {
        ply: usize,
        why: Box<Illegal>,
    },
}

/// Why an authenticated caller may not do this (`forbidden`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    AdminsOnly,
    NotYourSeat,
    NoSeat,
    ExternalRefresh,
    NotRoomMember,
    /// A private tournament is joined with its invite code.
    InviteOnly,
    /// An admin banned the player from ranked play, tournaments, solo matches and rooms.
    Banned,
    /// An account's closing confirmed with a confirmation that is not this account's, or expired.
    Confirmation,
    /// A player who cannot be challenged by the caller: banned, closed, or not accepting
    /// challenges from them.
    NotChallengeable,
    /// A declared bot: the ranked queue and the tournaments are human play.
    Bot,
}

/// Why a command conflicts with the match as it is (`conflict`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clash {
    AlreadyCreated,
    AlreadyAway,
    NotAway,
    NotCpuControlled(Seat),
    AlreadyReplaced(Seat),
    NoTurnLimit,
    TooEarly,
    /// A match's proof asked before a signed checkpoint covers it.
    NotCheckpointed,
    /// Leaving, a stand-in or a CPU seat asked of a correspondence game.
    Correspondence,
    /// A timeout asked of a match with another clock.
    OtherClock,
}

/// What was not found (`not_found`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    Match,
    Player,
    Room,
    Ticket,
    Projection,
    Asset,
    Job,
    Checkpoint,
    Tournament,
    Challenge,
}

/// What is in progress (`match_active`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Active {
    /// A room asked to start a match while one is being played.
    RoomPlaying,
    /// A room's settings changed during a match.
    Settings,
    /// The analysis of a match still being played.
    Analysis,
    /// The proof of a match still being played.
    Proof,
}

impl From<IdError> for Invalid {
    fn from(e: IdError) -> Invalid {
        match e {
            IdError::NotUuid(raw) => Invalid::Id(raw),
            IdError::NotSeat(raw) => Invalid::Seat(raw),
        }
    }
}

impl From<SettingsError> for Invalid {
    fn from(e: SettingsError) -> Invalid {
        match e {
            SettingsError::TurnSeconds(n) => Invalid::TurnSeconds(n),
            SettingsError::DaysPerMove(n) => Invalid::DaysPerMove(n),
            SettingsError::TwoClocks => Invalid::TwoClocks,
            SettingsError::NotForGame(game) => Invalid::SettingNotForGame(game),
        }
    }
}

impl JsonIssue {
    /// The issue serde's `message` (without serde_json's position) stands for.
    pub fn parse(message: &str) -> JsonIssue {
        let quoted = |rest: &str| -> Option<(String, String)> {
            let rest = rest.strip_prefix('`')?;
            let (name, tail) = rest.split_once('`')?;
            Some((name.to_owned(), tail.to_owned()))
        };
        let pair = |rest: &str| -> Option<(String, String)> {
            let (found, expected) = rest.rsplit_once(", expected ")?;
            Some((found.to_owned(), expected.to_owned()))
        };
        if let Some(rest) = message.strip_prefix("missing field ")
            && let Some((field, tail)) = quoted(rest)
            && tail.is_empty()
        {
            return JsonIssue::MissingField(field);
        }
        if let Some(rest) = message.strip_prefix("duplicate field ")
            && let Some((field, tail)) = quoted(rest)
            && tail.is_empty()
        {
            return JsonIssue::DuplicateField(field);
        }
        // `unknown field `x`, expected …` (or `…, there are no fields`), the same for variants.
        type Unknown = fn(String, String) -> JsonIssue;
        let unknowns: [(&str, Unknown); 2] = [
            ("unknown field ", |field, expected| {
                JsonIssue::UnknownField { field, expected }
            }),
            ("unknown variant ", |found, expected| {
                JsonIssue::UnknownVariant { found, expected }
            }),
        ];
        for (prefix, make) in unknowns {
            if let Some((name, tail)) = message.strip_prefix(prefix).and_then(quoted) {
                let expected = tail.strip_prefix(", expected ").unwrap_or("nothing");
                return make(name, expected.to_owned());
            }
        }
        type Make = fn(String, String) -> JsonIssue;
        let forms: [(&str, Make); 3] = [
            ("invalid type: ", |found, expected| JsonIssue::InvalidType {
                found,
                expected,
            }),
            ("invalid value: ", |found, expected| {
                JsonIssue::InvalidValue { found, expected }
            }),
            ("invalid length ", |found, expected| {
                JsonIssue::InvalidLength { found, expected }
            }),
        ];
        for (prefix, make) in forms {
            if let Some((found, expected)) = message.strip_prefix(prefix).and_then(pair) {
                return make(found, expected);
            }
        }
        if let Some(domain) = domain_refusal(message) {
            return JsonIssue::Domain(Box::new(domain));
        }
        JsonIssue::Other(message.to_owned())
    }
}

/// A custom message of serde that is the text of a domain refusal, recognised by comparing it
/// with the domain's own text (so the two cannot drift apart).
fn domain_refusal(message: &str) -> Option<Invalid> {
    if let Some(shown) = message
        .strip_prefix('`')
        .and_then(|rest| rest.strip_suffix(INSTANT_TAIL))
    {
        return Some(Invalid::Instant(shown.to_owned()));
    }
    if let Some(raw) = message
        .strip_prefix('`')
        .and_then(|rest| rest.split_once('`'))
        .map(|(raw, _)| raw.to_owned())
        && IdError::NotSeat(raw.clone()).to_string() == message
    {
        return Some(Invalid::Seat(raw));
    }
    let number = message.rsplit(' ').next()?.parse::<u32>().ok()?;
    if SettingsError::DaysPerMove(number).to_string() == message {
        return Some(Invalid::DaysPerMove(number));
    }
    (SettingsError::TurnSeconds(number).to_string() == message)
        .then_some(Invalid::TurnSeconds(number))
}

impl From<MoveError> for Illegal {
    fn from(e: MoveError) -> Illegal {
        match e {
            MoveError::Parse(ParseError::BadMove(raw)) => Illegal::NotAMove(raw),
            MoveError::Illegal(raw) => Illegal::NotLegal(raw),
            // Not raised for a move; shown as the domain words it.
            MoveError::Parse(other) => Illegal::NotAMove(other.to_string()),
            MoveError::GameOver => Illegal::GameOver,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_messages_become_issues() {
        let cases = [
            (
                "missing field `move`",
                JsonIssue::MissingField("move".into()),
            ),
            (
                "duplicate field `move`",
                JsonIssue::DuplicateField("move".into()),
            ),
            (
                "unknown field `mov`, expected `move` or `version`",
                JsonIssue::UnknownField {
                    field: "mov".into(),
                    expected: "`move` or `version`".into(),
                },
            ),
            (
                "unknown field `x`, there are no fields",
                JsonIssue::UnknownField {
                    field: "x".into(),
                    expected: "nothing".into(),
                },
            ),
            (
                "unknown variant `seat3`, expected one of `seat1`, `seat2`, `random`",
                JsonIssue::UnknownVariant {
                    found: "seat3".into(),
                    expected: "one of `seat1`, `seat2`, `random`".into(),
                },
            ),
            (
                "invalid type: integer `4`, expected a string",
                JsonIssue::InvalidType {
                    found: "integer `4`".into(),
                    expected: "a string".into(),
                },
            ),
            (
                "invalid value: integer `300`, expected u8",
                JsonIssue::InvalidValue {
                    found: "integer `300`".into(),
                    expected: "u8".into(),
                },
            ),
            (
                "invalid length 3, expected a tuple of size 2",
                JsonIssue::InvalidLength {
                    found: "3".into(),
                    expected: "a tuple of size 2".into(),
                },
            ),
            (
                &SettingsError::TurnSeconds(45).to_string(),
                JsonIssue::Domain(Box::new(Invalid::TurnSeconds(45))),
            ),
            (
                &IdError::NotSeat("3".into()).to_string(),
                JsonIssue::Domain(Box::new(Invalid::Seat("3".into()))),
            ),
            (
                &instant_message("9999-12-31T23:59:59-23:59"),
                JsonIssue::Domain(Box::new(Invalid::Instant(
                    "9999-12-31T23:59:59-23:59".into(),
                ))),
            ),
            ("something else", JsonIssue::Other("something else".into())),
        ];
        for (message, issue) in cases {
            assert_eq!(JsonIssue::parse(message), issue, "{message}");
        }
    }
}
