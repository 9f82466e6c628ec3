//! Why a request was refused, in words: each typed reason (the application's, in
//! `service::reasons`, and the edge's own `Unauthenticated`) rendered in the client's language
//! from the texts, never a sentence built in code.

use domain::games::BoardError;
use domain::matches::{DaysPerMove, TurnSeconds};
use service::reasons::{Active, Clash, Illegal, Invalid, JsonIssue, Missing, Refused, TextIssue};

use crate::lang::Lang;
use crate::texts;

/// A detail: its template's key and the values of its placeholders.
pub type Detail = (&'static str, Vec<(&'static str, String)>);

/// A reason told in a language.
pub trait Describe {
    fn describe(&self, lang: Lang) -> String;
}

/// A reason whose detail template takes no value: its key.
pub trait Keyed {
    fn key(self) -> &'static str;
}

/// A reason whose detail template takes values: its key and their values.
pub trait Templated {
    fn template(self) -> Detail;
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
    /// The player's tokens were ended after this one was issued.
    Revoked,
}

fn arg(name: &'static str, value: impl ToString) -> (&'static str, String) {
    (name, value.to_string())
}

impl Describe for Invalid {
    fn describe(&self, lang: Lang) -> String {
        let (key, args) = invalid_detail(self, lang);
        texts::detail(lang, key, &args)
    }
}

fn invalid_detail(reason: &Invalid, lang: Lang) -> Detail {
    match reason {
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
        Invalid::Text { field, issue } => {
            let field = arg("field", field);
            let code_point = |c: &char| arg("char", format!("U+{:04X}", u32::from(*c)));
            match issue {
                TextIssue::Control(c) => ("invalid.text.control", vec![field, code_point(c)]),
                TextIssue::Bidi(c) => ("invalid.text.bidi", vec![field, code_point(c)]),
                TextIssue::Invisible(c) => ("invalid.text.invisible", vec![field, code_point(c)]),
                TextIssue::StackedMarks { max } => {
                    ("invalid.text.stacked_marks", vec![field, arg("max", max)])
                }
            }
        }
        Invalid::ReservedName => ("invalid.reserved_name", vec![]),
        Invalid::Instant(got) => ("invalid.instant", vec![arg("got", got)]),
        Invalid::WeakSignUpKey {
            min_length,
            min_bits,
        } => (
            "invalid.weak_sign_up_key",
            vec![arg("min_length", min_length), arg("min_bits", min_bits)],
        ),
        Invalid::CpuLevel { min, max } => {
            ("invalid.cpu_level", vec![arg("min", min), arg("max", max)])
        }
        Invalid::IdempotencyKey { max } => ("invalid.idempotency_key", vec![arg("max", max)]),
        Invalid::Limit { min, max } => ("invalid.limit", vec![arg("min", min), arg("max", max)]),
        Invalid::UnknownGame(raw) => ("invalid.unknown_game", vec![arg("raw", raw)]),
        Invalid::RatingBand { got, bands } => (
            "invalid.rating_band",
            vec![arg("got", got), arg("bands", bands)],
        ),
        Invalid::Month(got) => ("invalid.month", vec![arg("got", got)]),
        Invalid::UnknownProjection { raw, known } => (
            "invalid.unknown_projection",
            vec![arg("raw", raw), arg("known", known)],
        ),
        Invalid::PlyPastEnd(ply) => ("invalid.ply_past_end", vec![arg("ply", ply)]),
        Invalid::LastEventId => ("invalid.last_event_id", vec![]),
        Invalid::Budget { max, got } => ("invalid.budget", vec![arg("max", max), arg("got", got)]),
        Invalid::NothingToAnalyse => ("invalid.nothing_to_analyse", vec![]),
        Invalid::Board(e) => board(e),
        Invalid::PositionShape => ("invalid.position_shape", vec![]),
        Invalid::OwnTokens => ("invalid.own_tokens", vec![]),
        Invalid::OwnAccount => ("invalid.own_account", vec![]),
        Invalid::BanReason => ("invalid.ban_reason", vec![]),
        Invalid::ReasonLength { max } => ("invalid.reason_length", vec![arg("max", max)]),
        Invalid::NameToFind => (
            "invalid.name_to_find",
            vec![arg("max", service::checks::PLAYER_NAME_MAX)],
        ),
        Invalid::Offset => ("invalid.offset", vec![]),
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
        Invalid::TurnSeconds(got) => (
            "invalid.turn_seconds",
            vec![
                arg("values", alternatives(lang, &TurnSeconds::ALLOWED)),
                arg("got", got),
            ],
        ),
        Invalid::DaysPerMove(got) => (
            "invalid.days_per_move",
            vec![
                arg("values", alternatives(lang, &DaysPerMove::ALLOWED)),
                arg("got", got),
            ],
        ),
        Invalid::TwoClocks => ("invalid.two_clocks", vec![]),
        Invalid::SettingNotForGame(game) => {
            ("invalid.setting_not_for_game", vec![arg("game", game)])
        }
        Invalid::SamePlayerTwice => ("invalid.same_player_twice", vec![]),
        Invalid::RankedNeedsHumans => ("invalid.ranked_needs_humans", vec![]),
    }
}

/// `values` as a choice in `lang`: `30 or 60`, `1, 2 or 3` (a single value alone).
pub fn alternatives(lang: Lang, values: &[impl ToString]) -> String {
    let values: Vec<String> = values.iter().map(ToString::to_string).collect();
    match values.split_last() {
        Some((last, rest)) if !rest.is_empty() => {
            format!("{} {} {last}", rest.join(", "), texts::word(lang, "or"))
        }
        _ => values.concat(),
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

impl Describe for JsonIssue {
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
            JsonIssue::Other(message) => ("json.other", vec![arg("message", words(message))]),
        };
        texts::detail(lang, key, &args)
    }
}

/// serde's description of a value or an expectation (`a string`, `integer \`4\``, `one of
/// \`a\`, \`b\``, `\`a\` or \`b\``), or a parser's message (`invalid digit found in string`),
/// with its words in `lang`: each stretch between quoted values is looked up whole, then word
/// by word; what is quoted stays as written.
fn serde_words(lang: Lang, text: &str) -> String {
    if lang == Lang::En {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while !rest.is_empty() {
        let cut = rest.find(['`', '"']).unwrap_or(rest.len());
        let (words, tail) = rest.split_at(cut);
        out.push_str(&translate(lang, words));
        // The quoted value, quotes included, as written.
        let Some(quote) = tail.chars().next() else {
            break;
        };
        let end = tail[1..].find(quote).map_or(tail.len(), |i| i + 2);
        out.push_str(&tail[..end]);
        rest = &tail[end..];
    }
    out
}

/// One unquoted stretch of serde's words in `lang`, keeping its surrounding spaces and commas.
fn translate(lang: Lang, stretch: &str) -> String {
    let trimmed = stretch.trim_matches([' ', ',']);
    if trimmed.is_empty() {
        return stretch.to_owned();
    }
    let start = stretch.len() - stretch.trim_start_matches([' ', ',']).len();
    let (before, after) = (&stretch[..start], &stretch[start + trimmed.len()..]);
    let whole = texts::word(lang, trimmed);
    let translated = if whole != trimmed {
        whole
    } else {
        trimmed
            .split(' ')
            .map(|w| texts::word(lang, w))
            .collect::<Vec<_>>()
            .join(" ")
    };
    format!("{before}{translated}{after}")
}

impl Describe for Illegal {
    fn describe(&self, lang: Lang) -> String {
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
            Unauthenticated::Revoked => "unauthorized.revoked",
        }
    }
}

impl Keyed for Refused {
    fn key(self) -> &'static str {
        match self {
            Refused::AdminsOnly => "forbidden.admins_only",
            Refused::NotYourSeat => "forbidden.not_your_seat",
            Refused::NoSeat => "forbidden.no_seat",
            Refused::ExternalRefresh => "forbidden.external_refresh",
            Refused::NotRoomMember => "forbidden.not_room_member",
            Refused::InviteOnly => "forbidden.invite_only",
            Refused::Banned => "forbidden.banned",
            Refused::Confirmation => "forbidden.confirmation",
            Refused::NotChallengeable => "forbidden.not_challengeable",
            Refused::Bot => "forbidden.bot",
        }
    }
}

impl Templated for Clash {
    fn template(self) -> Detail {
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
            Clash::NotCheckpointed => ("conflict.not_checkpointed", vec![]),
            Clash::Correspondence => ("conflict.correspondence", vec![]),
            Clash::OtherClock => ("conflict.other_clock", vec![]),
        }
    }
}

impl Keyed for Missing {
    fn key(self) -> &'static str {
        match self {
            Missing::Match => "not_found.match",
            Missing::Player => "not_found.player",
            Missing::Room => "not_found.room",
            Missing::Ticket => "not_found.ticket",
            Missing::Job => "not_found.job",
            Missing::Projection => "not_found.projection",
            Missing::Asset => "not_found.asset",
            Missing::Checkpoint => "not_found.checkpoint",
            Missing::Tournament => "not_found.tournament",
            Missing::Challenge => "not_found.challenge",
        }
    }
}

impl Keyed for Active {
    fn key(self) -> &'static str {
        match self {
            Active::RoomPlaying => "match_active.room_playing",
            Active::Settings => "match_active.settings",
            Active::Analysis => "match_active.analysis",
            Active::Proof => "match_active.proof",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(
            serde_words(Lang::Pt, "`four_in_a_row` or `reversi`"),
            "`four_in_a_row` ou `reversi`"
        );
        assert_eq!(
            serde_words(Lang::Pt, "invalid digit found in string"),
            "dígito inválido no texto"
        );
    }
}
