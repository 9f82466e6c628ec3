//! Why a request was refused, as data: the typed reasons inside `ApiError`'s variants, each
//! rendered in the client's language from the texts, never a sentence built in code.

use domain::games::{BoardError, GameId, MoveError, ParseError};
use domain::ids::{IdError, Seat};
use domain::matches::SettingsError;

use crate::lang::Lang;
use crate::texts;

/// A detail: its template's key and the values of its placeholders.
type Detail = (&'static str, Vec<(&'static str, String)>);

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
    NameControl,
    NameBidi,
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
    Side {
        first: char,
        second: char,
        game: GameId,
    },
    TurnSeconds(u32),
    SettingNotForGame(GameId),
    SamePlayerTwice,
    RankedNeedsHumans,
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

/// Why the caller is not authenticated (`unauthorized`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unauthenticated {
    BearerRequired,
    Malformed,
    Expired,
    Audience,
    Issuer,
    Signature,
    Invalid,
    Algorithm,
    Subject,
    UnknownPlayer,
}

/// Why an authenticated caller may not do this (`forbidden`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    AdminsOnly,
    NotYourSeat,
    NoSeat,
    ExternalRefresh,
    NotRoomMember,
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
}

fn arg(name: &'static str, value: impl ToString) -> (&'static str, String) {
    (name, value.to_string())
}

impl Invalid {
    fn detail(&self, lang: Lang) -> Detail {
        match self {
            Invalid::Body {
                issue,
                line,
                column,
            } => (
                "invalid.body",
                vec![
                    arg("issue", issue.describe(lang)),
                    arg("line", line),
                    arg("column", column),
                ],
            ),
            Invalid::Query(issue) => ("invalid.query", vec![arg("issue", issue.describe(lang))]),
            Invalid::Id(raw) => ("invalid.id", vec![arg("raw", raw)]),
            Invalid::Seat(raw) => ("invalid.seat", vec![arg("raw", raw)]),
            Invalid::RoomId(raw) => ("invalid.room_id", vec![arg("raw", raw)]),
            Invalid::NameLength { min, max } => (
                "invalid.name_length",
                vec![arg("min", min), arg("max", max)],
            ),
            Invalid::NameControl => ("invalid.name_control", vec![]),
            Invalid::NameBidi => ("invalid.name_bidi", vec![]),
            Invalid::CpuLevel { min, max } => {
                ("invalid.cpu_level", vec![arg("min", min), arg("max", max)])
            }
            Invalid::IdempotencyKey { max } => ("invalid.idempotency_key", vec![arg("max", max)]),
            Invalid::Limit { min, max } => {
                ("invalid.limit", vec![arg("min", min), arg("max", max)])
            }
            Invalid::UnknownGame(raw) => ("invalid.unknown_game", vec![arg("raw", raw)]),
            Invalid::UnknownProjection { raw, known } => (
                "invalid.unknown_projection",
                vec![arg("raw", raw), arg("known", known)],
            ),
            Invalid::PlyPastEnd(ply) => ("invalid.ply_past_end", vec![arg("ply", ply)]),
            Invalid::LastEventId => ("invalid.last_event_id", vec![]),
            Invalid::Budget { max, got } => {
                ("invalid.budget", vec![arg("max", max), arg("got", got)])
            }
            Invalid::NothingToAnalyse => ("invalid.nothing_to_analyse", vec![]),
            Invalid::Board(e) => board(e),
            Invalid::PositionShape => ("invalid.position_shape", vec![]),
            Invalid::Side {
                first,
                second,
                game,
            } => (
                "invalid.side",
                vec![
                    arg("first", first),
                    arg("second", second),
                    arg("game", game),
                ],
            ),
            Invalid::TurnSeconds(got) => ("invalid.turn_seconds", vec![arg("got", got)]),
            Invalid::SettingNotForGame(game) => {
                ("invalid.setting_not_for_game", vec![arg("game", game)])
            }
            Invalid::SamePlayerTwice => ("invalid.same_player_twice", vec![]),
            Invalid::RankedNeedsHumans => ("invalid.ranked_needs_humans", vec![]),
        }
    }

    pub fn describe(&self, lang: Lang) -> String {
        let (key, args) = self.detail(lang);
        texts::detail(lang, key, &args)
    }
}

fn board(e: &BoardError) -> Detail {
    match *e {
        BoardError::Rows { expected, got } => (
            "invalid.board.rows",
            vec![arg("expected", expected), arg("got", got)],
        ),
        BoardError::RowLength { row, got, expected } => (
            "invalid.board.row_length",
            vec![arg("row", row), arg("got", got), arg("expected", expected)],
        ),
        BoardError::Cell { found, allowed } => (
            "invalid.board.cell",
            vec![
                arg("found", found),
                arg("empty", allowed[0]),
                arg("first", allowed[1]),
                arg("second", allowed[2]),
            ],
        ),
        BoardError::Floating => ("invalid.board.floating", vec![]),
        BoardError::DiscCounts {
            red,
            yellow,
            to_move,
        } => (
            "invalid.board.disc_counts",
            vec![
                arg("red", red),
                arg("yellow", yellow),
                arg("to_move", to_move),
            ],
        ),
        BoardError::AlreadyFour => ("invalid.board.already_four", vec![]),
        BoardError::EmptyCentre => ("invalid.board.empty_centre", vec![]),
    }
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

    fn describe(&self, lang: Lang) -> String {
        let words = |text: &str| serde_words(lang, text);
        let (key, args) = match self {
            JsonIssue::MissingField(field) => ("json.missing_field", vec![arg("field", field)]),
            JsonIssue::DuplicateField(field) => ("json.duplicate_field", vec![arg("field", field)]),
            JsonIssue::UnknownField { field, expected } => (
                "json.unknown_field",
                vec![arg("field", field), arg("expected", words(expected))],
            ),
            JsonIssue::UnknownVariant { found, expected } => (
                "json.unknown_variant",
                vec![arg("found", found), arg("expected", words(expected))],
            ),
            JsonIssue::InvalidType { found, expected } => (
                "json.invalid_type",
                vec![arg("found", words(found)), arg("expected", words(expected))],
            ),
            JsonIssue::InvalidValue { found, expected } => (
                "json.invalid_value",
                vec![arg("found", words(found)), arg("expected", words(expected))],
            ),
            JsonIssue::InvalidLength { found, expected } => (
                "json.invalid_length",
                vec![arg("found", found), arg("expected", words(expected))],
            ),
            JsonIssue::Domain(invalid) => return invalid.describe(lang),
            JsonIssue::Other(message) => ("json.other", vec![arg("message", message)]),
        };
        texts::detail(lang, key, &args)
    }
}

/// A custom message of serde that is the text of a domain refusal, recognised by comparing it
/// with the domain's own text (so the two cannot drift apart).
fn domain_refusal(message: &str) -> Option<Invalid> {
    if let Some(raw) = message
        .strip_prefix('`')
        .and_then(|rest| rest.split_once('`'))
        .map(|(raw, _)| raw.to_owned())
        && IdError::NotSeat(raw.clone()).to_string() == message
    {
        return Some(Invalid::Seat(raw));
    }
    let number = message.rsplit(' ').next()?.parse::<u32>().ok()?;
    (SettingsError::TurnSeconds(number).to_string() == message)
        .then_some(Invalid::TurnSeconds(number))
}

/// serde's description of a value or an expectation (`a string`, `integer \`4\``, `one of
/// \`a\`, \`b\``) with its words in `lang`: the leading words before any quoted value are
/// looked up whole, then word by word.
fn serde_words(lang: Lang, text: &str) -> String {
    if lang == Lang::En {
        return text.to_owned();
    }
    let cut = text.find(['`', '"']).unwrap_or(text.len());
    let (words, quoted) = text.split_at(cut);
    let trimmed = words.trim_end();
    let translated = {
        let whole = texts::word(lang, trimmed);
        if whole != trimmed {
            whole
        } else {
            trimmed
                .split(' ')
                .map(|w| texts::word(lang, w))
                .collect::<Vec<_>>()
                .join(" ")
        }
    };
    format!("{translated}{}{quoted}", &words[trimmed.len()..])
}

impl Illegal {
    pub fn describe(&self, lang: Lang) -> String {
        let (key, args) = match self {
            Illegal::NotAMove(raw) => ("illegal.not_a_move", vec![arg("raw", raw)]),
            Illegal::NotLegal(raw) => ("illegal.not_legal", vec![arg("raw", raw)]),
            Illegal::GameOver => ("illegal.game_over", vec![]),
            Illegal::AtPly { ply, why } => (
                "illegal.at_ply",
                vec![arg("ply", ply), arg("why", why.describe(lang))],
            ),
        };
        texts::detail(lang, key, &args)
    }
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

impl Unauthenticated {
    pub fn key(self) -> &'static str {
        match self {
            Unauthenticated::BearerRequired => "unauthorized.bearer_required",
            Unauthenticated::Malformed => "unauthorized.malformed",
            Unauthenticated::Expired => "unauthorized.expired",
            Unauthenticated::Audience => "unauthorized.audience",
            Unauthenticated::Issuer => "unauthorized.issuer",
            Unauthenticated::Signature => "unauthorized.signature",
            Unauthenticated::Invalid => "unauthorized.invalid",
            Unauthenticated::Algorithm => "unauthorized.algorithm",
            Unauthenticated::Subject => "unauthorized.subject",
            Unauthenticated::UnknownPlayer => "unauthorized.unknown_player",
        }
    }
}

impl Refused {
    pub fn key(self) -> &'static str {
        match self {
            Refused::AdminsOnly => "forbidden.admins_only",
            Refused::NotYourSeat => "forbidden.not_your_seat",
            Refused::NoSeat => "forbidden.no_seat",
            Refused::ExternalRefresh => "forbidden.external_refresh",
            Refused::NotRoomMember => "forbidden.not_room_member",
        }
    }
}

impl Clash {
    pub fn detail(self) -> Detail {
        match self {
            Clash::AlreadyCreated => ("conflict.already_created", vec![]),
            Clash::AlreadyAway => ("conflict.already_away", vec![]),
            Clash::NotAway => ("conflict.not_away", vec![]),
            Clash::NotCpuControlled(seat) => {
                ("conflict.not_cpu_controlled", vec![arg("seat", seat)])
            }
            Clash::AlreadyReplaced(seat) => ("conflict.already_replaced", vec![arg("seat", seat)]),
            Clash::NoTurnLimit => ("conflict.no_turn_limit", vec![]),
            Clash::TooEarly => ("conflict.too_early", vec![]),
        }
    }
}

impl Missing {
    pub fn key(self) -> &'static str {
        match self {
            Missing::Match => "not_found.match",
            Missing::Player => "not_found.player",
            Missing::Room => "not_found.room",
            Missing::Ticket => "not_found.ticket",
            Missing::Job => "not_found.job",
            Missing::Projection => "not_found.projection",
            Missing::Asset => "not_found.asset",
        }
    }
}

impl Active {
    pub fn key(self) -> &'static str {
        match self {
            Active::RoomPlaying => "match_active.room_playing",
            Active::Settings => "match_active.settings",
            Active::Analysis => "match_active.analysis",
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
            ("something else", JsonIssue::Other("something else".into())),
        ];
        for (message, issue) in cases {
            assert_eq!(JsonIssue::parse(message), issue, "{message}");
        }
    }

    #[test]
    fn serde_words_are_translated_around_quoted_values() {
        assert_eq!(serde_words(Lang::Pt, "integer `4`"), "inteiro `4`");
        assert_eq!(serde_words(Lang::Pt, "a string"), "um texto");
        assert_eq!(serde_words(Lang::Pt, "one of `a`, `b`"), "um de `a`, `b`");
        assert_eq!(
            serde_words(Lang::Pt, "struct MoveBody"),
            "um objeto MoveBody"
        );
        assert_eq!(serde_words(Lang::En, "integer `4`"), "integer `4`");
    }
}
