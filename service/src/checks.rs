//! The checks of client input that the edge and the CLI share: ids, game ids, listing limits,
//! every text a client sends (one checker of characters, [`text`], under the names, titles and
//! reasons), reserved names, instants ([`Timestamp`], the one type every date-time input is read
//! as), player lists, CPU levels, each refused with its typed reason.

use std::borrow::Cow;

use icu_properties::props::{BidiControl, DefaultIgnorableCodePoint, GeneralCategory, WhiteSpace};
use icu_properties::{CodePointMapData, CodePointSetData};
use serde::{Deserialize, Deserializer};
use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

use domain::cpu;
use domain::games::GameId;
use domain::ids::{IdError, PlayerId};

use crate::error::Error;
use crate::reasons::{Invalid, TextIssue, instant_message};

/// Parses an id from the path.
pub fn id<T: std::str::FromStr<Err = IdError>>(raw: &str) -> Result<T, Error> {
    raw.parse()
        .map_err(|e: IdError| Error::InvalidRequest(e.into()))
}

/// A game from its wire id in a path.
pub fn game(raw: &str) -> Result<GameId, Error> {
    raw.parse()
        .map_err(|_| Invalid::UnknownGame(raw.to_owned()).into())
}

/// The `limit` of a listing: 50 when absent, at most 500.
pub fn limit(asked: Option<i64>) -> Result<i64, Error> {
    const LIMITS: std::ops::RangeInclusive<i64> = 1..=500;
    let limit = asked.unwrap_or(50);
    if LIMITS.contains(&limit) {
        Ok(limit)
    } else {
        Err(Invalid::Limit {
            min: *LIMITS.start() as u32,
            max: *LIMITS.end() as u32,
        }
        .into())
    }
}

/// What [`valid_name`] accepts, as a regular expression for the OpenAPI document (less the
/// length after trimming, the bound on stacked marks, the reserved names, and the characters
/// it refuses beyond the Basic Multilingual Plane: tag characters, the supplementary variation
/// selectors and format characters). A test derives it from the same tables.
pub const NAME_PATTERN: &str = "^[^\\u0000-\\u001f\\u007f-\\u00a0\\u00ad\\u034f\\u0600-\\u0605\\u061c\\u06dd\\u070f\\u0890-\\u0891\\u08e2\\u115f-\\u1160\\u1680\\u17b4-\\u17b5\\u180b-\\u180f\\u2000-\\u200f\\u2028-\\u202f\\u205f-\\u206f\\u2800\\u3000\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff0-\\ufffb]*\
     [^\\s\\u0000-\\u001f\\u007f-\\u00a0\\u00ad\\u034f\\u0600-\\u0605\\u061c\\u06dd\\u070f\\u0890-\\u0891\\u08e2\\u115f-\\u1160\\u1680\\u17b4-\\u17b5\\u180b-\\u180f\\u2000-\\u200f\\u2028-\\u202f\\u205f-\\u206f\\u2800\\u3000\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff0-\\ufffb]\
     [^\\u0000-\\u001f\\u007f-\\u00a0\\u00ad\\u034f\\u0600-\\u0605\\u061c\\u06dd\\u070f\\u0890-\\u0891\\u08e2\\u115f-\\u1160\\u1680\\u17b4-\\u17b5\\u180b-\\u180f\\u2000-\\u200f\\u2028-\\u202f\\u205f-\\u206f\\u2800\\u3000\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff0-\\ufffb]*$";

/// What [`text`] accepts, as [`NAME_PATTERN`] shows it (with its limits), for a text that may
/// be blank (a reason).
pub const TEXT_PATTERN: &str = "^[^\\u0000-\\u001f\\u007f-\\u00a0\\u00ad\\u034f\\u0600-\\u0605\\u061c\\u06dd\\u070f\\u0890-\\u0891\\u08e2\\u115f-\\u1160\\u1680\\u17b4-\\u17b5\\u180b-\\u180f\\u2000-\\u200f\\u2028-\\u202f\\u205f-\\u206f\\u2800\\u3000\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff0-\\ufffb]*$";

/// The least length of a sign-up's `Idempotency-Key`.
pub const SIGN_UP_KEY_MIN_LENGTH: usize = 16;
/// The least entropy of a sign-up's `Idempotency-Key`, in bits, as its characters' own
/// distribution measures it (length times the Shannon entropy per character): a random UUID
/// has about 130, `aaaa…` none. It cannot tell a guessable sequence (`abcdef…`) from a random
/// one; the API documents the key as a secret.
pub const SIGN_UP_KEY_MIN_BITS: u32 = 64;

/// A sign-up's `Idempotency-Key`: long and varied enough to be a secret, since a retry with it
/// gets the token of the player it created.
pub fn sign_up_key(key: &str) -> Result<(), Error> {
    let chars: Vec<char> = key.chars().collect();
    let mut counts: std::collections::HashMap<char, usize> = std::collections::HashMap::new();
    for &c in &chars {
        *counts.entry(c).or_default() += 1;
    }
    let n = chars.len() as f64;
    let bits: f64 = counts
        .values()
        .map(|&k| {
            let p = k as f64 / n;
            -(k as f64) * p.log2()
        })
        .sum();
    if chars.len() < SIGN_UP_KEY_MIN_LENGTH || bits < f64::from(SIGN_UP_KEY_MIN_BITS) {
        return Err(Invalid::WeakSignUpKey {
            min_length: SIGN_UP_KEY_MIN_LENGTH,
            min_bits: SIGN_UP_KEY_MIN_BITS,
        }
        .into());
    }
    Ok(())
}

/// A character that renders as nothing, by Unicode's own tables: a default-ignorable code point
/// (zero-width spaces and joiners, the word joiner, the byte order mark, the soft hyphen,
/// variation selectors, tag characters, the Hangul and Khmer fillers…), any other format
/// character (general category Cf: it shapes the text around it rather than showing itself,
/// such as the interlinear annotation marks), a white space other than the plain space (which
/// `trim` takes from the ends, and inside a text shows as the space it is), or the one blank
/// symbol no property marks, the braille pattern blank.
fn renders_as_nothing(c: char) -> bool {
    const BRAILLE_PATTERN_BLANK: char = '\u{2800}';
    CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
        || CodePointMapData::<GeneralCategory>::new().get(c) == GeneralCategory::Format
        || (c != ' ' && CodePointSetData::new::<WhiteSpace>().contains(c))
        || c == BRAILLE_PATTERN_BLANK
}

/// A character that changes the direction of the text around it (Unicode's Bidi_Control:
/// the marks, embeddings, overrides and isolates).
fn changes_direction(c: char) -> bool {
    CodePointSetData::new::<BidiControl>().contains(c)
}

/// A combining mark drawn over or around the character before it (general categories Mn and
/// Me; a spacing mark, Mc, takes room of its own and does not stack).
fn stacks(c: char) -> bool {
    matches!(
        CodePointMapData::<GeneralCategory>::new().get(c),
        GeneralCategory::NonspacingMark | GeneralCategory::EnclosingMark
    )
}

/// The most combining marks [`text`] lets one character carry: Vietnamese stacks two on a
/// vowel, pointed Hebrew three; more only piles marks over the lines around it.
pub const MAX_STACKED_MARKS: usize = 3;

/// The one check of the characters of every text a client sends (each string of a JSON body,
/// and under [`valid_name`], [`valid_title`] and [`reason`]): no control character (C0 with
/// NUL, DEL, C1), none that changes the direction of the text around it, none that renders as
/// nothing, and at most [`MAX_STACKED_MARKS`] combining marks in a row. `field` names the text
/// in the refusal.
pub fn text(field: &str, raw: &str) -> Result<(), Error> {
    match text_issue(raw) {
        None => Ok(()),
        Some(issue) => Err(Invalid::Text {
            field: field.to_owned(),
            issue,
        }
        .into()),
    }
}

/// What [`text`] refuses in `raw`: its first refused character, or too many stacked marks.
fn text_issue(raw: &str) -> Option<TextIssue> {
    let mut marks = 0;
    for c in raw.chars() {
        if c.is_control() {
            return Some(TextIssue::Control(c));
        }
        if changes_direction(c) {
            return Some(TextIssue::Bidi(c));
        }
        if renders_as_nothing(c) {
            return Some(TextIssue::Invisible(c));
        }
        marks = if stacks(c) { marks + 1 } else { 0 };
        if marks > MAX_STACKED_MARKS {
            return Some(TextIssue::StackedMarks {
                max: MAX_STACKED_MARKS,
            });
        }
    }
    None
}

/// The longest player's name, in characters (once trimmed). Defined here, where the name is
/// checked; the HTTP edge reads it for its OpenAPI schema, its texts and the catalogue's
/// `limits` (`GET /v1/games`), from which the web client bounds its forms.
pub const PLAYER_NAME_MAX: usize = 32;

/// A player's name: 1 to [`PLAYER_NAME_MAX`] characters once trimmed, its characters through
/// [`text`], and not a reserved name (see [`reserved`]).
pub fn valid_name(raw: &str) -> Result<String, Error> {
    let name = valid_title(raw, PLAYER_NAME_MAX)?;
    if reserved(&name) {
        return Err(Invalid::ReservedName.into());
    }
    Ok(name)
}

/// A name shown to others (a player's, up to [`PLAYER_NAME_MAX`] characters; a tournament's, up
/// to [`domain::tournaments::NAME_MAX`]): its characters through [`text`], trimmed, 1 to `max`
/// characters.
pub fn valid_title(raw: &str, max: usize) -> Result<String, Error> {
    text("name", raw)?;
    let name = raw.trim();
    let count = name.chars().count();
    if count == 0 || count > max {
        return Err(Invalid::NameLength { min: 1, max }.into());
    }
    Ok(name.to_owned())
}

/// The most characters of a reason (an admin's decision, a removal from a tournament).
pub const REASON_MAX: usize = domain::standing::MAX_REASON;

/// A reason an admin writes (a decision on a player, a removal from a tournament): its
/// characters through [`text`], trimmed, at most [`REASON_MAX`] characters; empty where the
/// caller allows it.
pub fn reason(raw: &str) -> Result<String, Error> {
    text("reason", raw)?;
    let reason = raw.trim();
    if reason.chars().count() > REASON_MAX {
        return Err(Invalid::ReasonLength { max: REASON_MAX }.into());
    }
    Ok(reason.to_owned())
}

/// Whether others could take `name` (trimmed) for the CPU's seat, a closed account's label or a
/// declared bot's tagged name: `CPU`, `closed-` and 8 hexadecimal digits (what
/// `players::closed_label` writes), or `BOT` and a space before anything (what
/// `domain::standing::BOT_TAG` shows), in any case, read through full-width forms, the Cyrillic, Greek
/// and Armenian letters drawn as C, P, U, B, O and T, the dashes drawn as a hyphen, and without
/// combining marks.
pub fn reserved(name: &str) -> bool {
    let folded: String = name
        .chars()
        .filter(|&c| !stacks(c))
        .map(plain_form)
        .flat_map(char::to_lowercase)
        .collect();
    folded == "cpu"
        || folded
            .strip_prefix(&domain::standing::BOT_TAG.to_lowercase())
            .and_then(|rest| rest.chars().next())
            .is_some_and(char::is_whitespace)
        || folded
            .strip_prefix("closed-")
            .is_some_and(|hex| hex.len() == 8 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The ASCII character a look-alike stands for (itself otherwise): a full-width form, a letter
/// of another script drawn as C, P, U, B, O or T, a dash drawn as a hyphen.
fn plain_form(c: char) -> char {
    match c {
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(u32::from(c) - 0xFEE0).unwrap_or(c),
        'С' | 'с' | 'Ϲ' | 'ϲ' | 'Ⅽ' | 'ⅽ' => 'c',
        'Р' | 'р' | 'Ρ' | 'ρ' => 'p',
        'Ս' | 'ս' => 'u',
        'В' | 'Β' => 'b',
        'О' | 'о' | 'Ο' | 'ο' | 'Օ' | 'օ' => 'o',
        'Т' | 'Τ' => 't',
        '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{FE58}' | '\u{FE63}' => '-',
        _ => c,
    }
}

/// An instant a client sends (a query parameter, a body field): RFC 3339, held in UTC, its UTC
/// year 1 to 9999. Every date-time input is read as one, so none reaches PostgreSQL (whose
/// encoder cannot take an instant past year 9999 in UTC) or arithmetic out of range; any other
/// value is refused while it is read (`invalid_request`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(OffsetDateTime);

impl Timestamp {
    /// The years a timestamp may have, in UTC.
    pub const YEARS: std::ops::RangeInclusive<i32> = 1..=9999;

    /// Reads `raw`, or refuses it as [`Invalid::Instant`].
    pub fn parse(raw: &str) -> Result<Timestamp, Invalid> {
        OffsetDateTime::parse(raw, &Rfc3339)
            .ok()
            .and_then(|t| t.checked_to_offset(UtcOffset::UTC))
            .filter(|t| Timestamp::YEARS.contains(&t.year()))
            .map(Timestamp)
            .ok_or_else(|| Invalid::Instant(shown(raw)))
    }

    /// The instant, in UTC.
    pub fn get(self) -> OffsetDateTime {
        self.0
    }
}

/// A client's text as a refusal shows it: at most 64 characters, any character [`text`]
/// refuses written as its code point.
pub fn shown(raw: &str) -> String {
    let mut out = String::new();
    for (i, c) in raw.chars().enumerate() {
        if i == 64 {
            out.push('…');
            break;
        }
        if text_issue(c.encode_utf8(&mut [0; 4])).is_some() {
            out.push_str(&format!("U+{:04X}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

impl std::str::FromStr for Timestamp {
    type Err = Error;

    fn from_str(raw: &str) -> Result<Timestamp, Error> {
        Timestamp::parse(raw).map_err(Error::from)
    }
}

/// Read from a string; a refusal's message is [`instant_message`]'s, which the reasons read
/// back as [`Invalid::Instant`].
impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Timestamp, D::Error> {
        let raw = Cow::<str>::deserialize(d)?;
        Timestamp::parse(&raw).map_err(|e| match e {
            Invalid::Instant(shown) => serde::de::Error::custom(instant_message(&shown)),
            other => serde::de::Error::custom(format!("{other:?}")),
        })
    }
}

impl schemars::JsonSchema for Timestamp {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "Timestamp".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "format": "date-time"})
    }
}

/// Parses `id,id,...` (empty parts ignored).
pub fn player_list(raw: Option<&str>) -> Result<Vec<PlayerId>, Error> {
    raw.unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(id)
        .collect()
}

/// The CPU levels a seat can play at (1 to 5).
pub fn cpu_level(level: u8) -> Result<(), Error> {
    if cpu::LEVELS.contains(&level) {
        Ok(())
    } else {
        Err(Invalid::CpuLevel {
            min: *cpu::LEVELS.start(),
            max: *cpu::LEVELS.end(),
        }
        .into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Basic Multilingual Plane's characters that [`valid_name`] refuses anywhere in a name,
    /// as the ranges of a regular expression's class.
    fn refused_in_the_bmp() -> String {
        let refused = |c: char| c.is_control() || changes_direction(c) || renders_as_nothing(c);
        let mut class = String::new();
        let mut run: Option<(u32, u32)> = None;
        let close = |run: Option<(u32, u32)>, class: &mut String| match run {
            Some((a, b)) if a == b => class.push_str(&format!("\\u{a:04x}")),
            Some((a, b)) => class.push_str(&format!("\\u{a:04x}-\\u{b:04x}")),
            None => {}
        };
        for code in 0..=0xFFFF_u32 {
            match char::from_u32(code).filter(|&c| refused(c)) {
                Some(_) => match run {
                    Some((a, b)) if b + 1 == code => run = Some((a, code)),
                    _ => {
                        close(run, &mut class);
                        run = Some((code, code));
                    }
                },
                None => {
                    close(run, &mut class);
                    run = None;
                }
            }
        }
        close(run, &mut class);
        class
    }

    /// The OpenAPI document's patterns refuse, in the Basic Multilingual Plane, exactly what
    /// the server refuses (beyond it, the server refuses tag characters, the supplementary
    /// variation selectors and format characters with a 422 the patterns do not foresee).
    #[test]
    fn the_documented_patterns_follow_unicodes_tables() {
        let class = refused_in_the_bmp();
        let expected = format!("^[^{class}]*[^\\s{class}][^{class}]*$");
        assert_eq!(NAME_PATTERN, expected);
        assert_eq!(TEXT_PATTERN, format!("^[^{class}]*$"));
    }

    fn issue(raw: &str) -> Option<TextIssue> {
        match text("reason", raw) {
            Ok(()) => None,
            Err(Error::InvalidRequest(Invalid::Text { field, issue })) => {
                assert_eq!(field, "reason");
                Some(issue)
            }
            Err(e) => panic!("{raw:?}: {e:?}"),
        }
    }

    #[test]
    fn names_that_render_as_nothing_or_turn_the_text_are_refused() {
        for name in ["Ada", "Ada Lovelace", "  Ada ", "Zoë", "李小龍", "🦀 crab"] {
            assert!(valid_name(name).is_ok(), "{name:?}");
        }
        for name in [
            "\u{2800}",
            "A\u{2800}da",
            "Ada\u{E0041}",
            "\u{E0001}\u{E0041}",
            "Ada\u{FE0F}",
            "Ada\u{E0100}",
            "A\u{200B}da",
            "Ada\u{3164}",
            "A\u{00A0}da",
            "A\u{3000}da",
            "Ada\u{180E}",
            "\u{3000}",
        ] {
            let c = name.chars().find(|c| !c.is_ascii()).expect("one");
            assert!(
                matches!(
                    valid_name(name),
                    Err(Error::InvalidRequest(Invalid::Text { issue: TextIssue::Invisible(found), .. }))
                        if found == c
                ),
                "{name:?}"
            );
        }
        for name in ["\u{202E}adA", "Ada\u{2067}", "A\u{061C}da"] {
            assert!(
                matches!(
                    valid_name(name),
                    Err(Error::InvalidRequest(Invalid::Text {
                        issue: TextIssue::Bidi(_),
                        ..
                    }))
                ),
                "{name:?}"
            );
        }
    }

    /// Every class the one checker refuses, by the issue it names, in any text.
    #[test]
    fn one_checker_refuses_controls_direction_changes_invisibles_and_piled_marks() {
        for c in [
            '\0', '\u{7}', '\t', '\n', '\r', '\u{1B}', '\u{7F}', '\u{80}', '\u{85}', '\u{9F}',
        ] {
            assert_eq!(
                issue(&format!("a{c}b")),
                Some(TextIssue::Control(c)),
                "{c:?}"
            );
        }
        for c in [
            '\u{200E}', '\u{200F}', '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}',
            '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}', '\u{061C}',
        ] {
            assert_eq!(issue(&format!("a{c}b")), Some(TextIssue::Bidi(c)), "{c:?}");
        }
        for c in [
            '\u{200B}',
            '\u{200C}',
            '\u{200D}',
            '\u{2060}',
            '\u{FEFF}',
            '\u{00AD}',
            '\u{034F}',
            '\u{180E}',
            '\u{2028}',
            '\u{2029}',
            '\u{3164}',
            '\u{FFA0}',
            '\u{E0001}',
            '\u{FFF9}',
            '\u{FFFB}',
            '\u{0600}',
            '\u{110BD}',
        ] {
            assert_eq!(
                issue(&format!("a{c}b")),
                Some(TextIssue::Invisible(c)),
                "{c:?}"
            );
        }
        // Vietnamese (decomposed: two marks on a vowel), pointed Hebrew (three), a combining
        // enclosing circle: kept. A fourth stacked mark is refused, whether nonspacing or
        // enclosing; marks that are not in a row are counted apart.
        for kept in [
            "Nguye\u{302}\u{303}n",
            "ệ",
            "\u{5E9}\u{5BC}\u{5C1}\u{5B8}",
            "A\u{20DD}",
            "a\u{301}\u{301}\u{301}b\u{301}\u{301}\u{301}",
            "",
            "  ",
        ] {
            assert_eq!(issue(kept), None, "{kept:?}");
        }
        for piled in [
            "a\u{301}\u{302}\u{303}\u{304}",
            "a\u{301}\u{301}\u{301}\u{20DD}",
            "Z\u{36B}\u{36B}\u{36B}\u{36B}\u{36B}",
        ] {
            assert_eq!(
                issue(piled),
                Some(TextIssue::StackedMarks {
                    max: MAX_STACKED_MARKS
                }),
                "{piled:?}"
            );
        }
        assert!(matches!(
            reason(&"é".repeat(REASON_MAX)),
            Ok(r) if r.chars().count() == REASON_MAX
        ));
        assert!(matches!(
            reason(&"x".repeat(REASON_MAX + 1)),
            Err(Error::InvalidRequest(Invalid::ReasonLength {
                max: REASON_MAX
            }))
        ));
        assert!(matches!(
            reason("  cheating \u{1F3AF} "),
            Ok(r) if r == "cheating \u{1F3AF}"
        ));
    }

    #[test]
    fn the_cpus_name_and_the_closed_label_are_reserved() {
        let closed = crate::players::closed_label(PlayerId::from_uuid(uuid::Uuid::now_v7()));
        for name in [
            "CPU",
            "cpu",
            " Cpu ",
            "ＣＰＵ",
            "ｃｐｕ",
            "СРU",
            "C\u{301}PU",
            closed.as_str(),
            "closed-0123abcd",
            "CLOSED-0123ABCD",
            "closed\u{2010}0123abcd",
            "ｃｌｏｓｅｄ－０１２３ａｂｃｄ",
            "BOT Deep Blue",
            "bot x",
            "ＢＯＴ x",
            "ВОТ x",
        ] {
            assert!(
                matches!(
                    valid_name(name),
                    Err(Error::InvalidRequest(Invalid::ReservedName))
                ),
                "{name:?}"
            );
        }
        for name in [
            "CPU fan",
            "the CPU",
            "CPUs",
            "closed-0123abc",
            "closed-0123abcde",
            "closed-0123abcg",
            "closed 0123abcd",
            "closed",
            "BOT",
            "Bottle",
            "robot x",
        ] {
            assert!(valid_name(name).is_ok(), "{name:?}");
        }
    }

    #[test]
    fn a_timestamp_is_rfc_3339_of_the_years_one_to_9999_in_utc() {
        for (raw, utc) in [
            ("2026-05-01T12:00:00Z", "2026-05-01T12:00:00Z"),
            ("2026-05-01T12:00:00+02:00", "2026-05-01T10:00:00Z"),
            ("0001-01-01T00:00:00Z", "0001-01-01T00:00:00Z"),
            ("0001-01-01T23:58:00+23:58", "0001-01-01T00:00:00Z"),
            (
                "9999-12-31T23:59:59.999999999Z",
                "9999-12-31T23:59:59.999999999Z",
            ),
            ("9999-12-31T00:00:00-23:59", "9999-12-31T23:59:00Z"),
        ] {
            let t = Timestamp::parse(raw).unwrap_or_else(|e| panic!("{raw}: {e:?}"));
            assert_eq!(t.get().offset(), UtcOffset::UTC);
            assert_eq!(t.get().format(&Rfc3339).expect("formats"), utc, "{raw}");
        }
        for raw in [
            "9999-12-31T23:59:59-23:59",
            "9999-12-31T23:59:59-00:01",
            "0000-01-01T00:00:00+23:59",
            "0000-12-31T23:59:59Z",
            "0001-01-01T00:00:00+00:01",
            "-0001-01-01T00:00:00Z",
            "+10000-01-01T00:00:00Z",
            "10000-01-01T00:00:00Z",
            "275760-09-13T00:00:00Z",
            "2026-02-30T00:00:00Z",
            "2026-05-01",
            "2026-05-01T12:00:00",
            "yesterday",
            "",
        ] {
            assert_eq!(
                Timestamp::parse(raw),
                Err(Invalid::Instant(raw.to_owned())),
                "{raw}"
            );
        }
        assert_eq!(
            Timestamp::parse("2026\u{0}\u{202E}"),
            Err(Invalid::Instant("2026U+0000U+202E".to_owned()))
        );
        // Read by serde, a refusal is the same reason.
        let message = serde_json::from_str::<Timestamp>("\"9999-12-31T23:59:59-23:59\"")
            .expect_err("refused")
            .to_string();
        let message = message.split(" at line").next().unwrap_or_default();
        assert_eq!(
            crate::reasons::JsonIssue::parse(message),
            crate::reasons::JsonIssue::Domain(Box::new(Invalid::Instant(
                "9999-12-31T23:59:59-23:59".into()
            ))),
            "{message}"
        );
    }

    #[test]
    fn a_sign_up_key_must_look_like_a_secret() {
        for _ in 0..100 {
            sign_up_key(&uuid::Uuid::new_v4().to_string()).expect("a random UUID");
            sign_up_key(&uuid::Uuid::new_v4().simple().to_string()).expect("its 32 hex digits");
        }
        for weak in [
            "k1",
            "3f6b1c7e-signup",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "abababababababab",
        ] {
            assert!(sign_up_key(weak).is_err(), "{weak}");
        }
    }
}
