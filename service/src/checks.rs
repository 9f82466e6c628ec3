//! The checks of client input that the edge and the CLI share: ids, game ids, listing limits,
//! player names and lists, CPU levels, each refused with its typed reason.

use icu_properties::CodePointSetData;
use icu_properties::props::{BidiControl, DefaultIgnorableCodePoint, WhiteSpace};

use domain::cpu;
use domain::games::GameId;
use domain::ids::{IdError, PlayerId};

use crate::error::Error;
use crate::reasons::Invalid;

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
/// length after trimming, and the characters it refuses beyond the Basic Multilingual Plane:
/// tag characters and the supplementary variation selectors). A test derives it from the
/// same tables.
pub const NAME_PATTERN: &str = "^[^\\u0000-\\u001f\\u007f-\\u00a0\\u00ad\\u034f\\u061c\\u115f-\\u1160\\u1680\\u17b4-\\u17b5\\u180b-\\u180f\\u2000-\\u200f\\u2028-\\u202f\\u205f-\\u206f\\u2800\\u3000\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff0-\\ufff8]*\
     [^\\s\\u0000-\\u001f\\u007f-\\u00a0\\u00ad\\u034f\\u061c\\u115f-\\u1160\\u1680\\u17b4-\\u17b5\\u180b-\\u180f\\u2000-\\u200f\\u2028-\\u202f\\u205f-\\u206f\\u2800\\u3000\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff0-\\ufff8]\
     [^\\u0000-\\u001f\\u007f-\\u00a0\\u00ad\\u034f\\u061c\\u115f-\\u1160\\u1680\\u17b4-\\u17b5\\u180b-\\u180f\\u2000-\\u200f\\u2028-\\u202f\\u205f-\\u206f\\u2800\\u3000\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff0-\\ufff8]*$";

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
/// (zero-width spaces and joiners, the soft hyphen, variation selectors, tag characters, the
/// Hangul and Khmer fillers…), a white space other than the plain space (which `trim` takes
/// from the ends, and inside a name shows as the space it is), or the one blank symbol no
/// property marks, the braille pattern blank.
fn renders_as_nothing(c: char) -> bool {
    const BRAILLE_PATTERN_BLANK: char = '\u{2800}';
    CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
        || (c != ' ' && CodePointSetData::new::<WhiteSpace>().contains(c))
        || c == BRAILLE_PATTERN_BLANK
}

/// A character that changes the direction of the text around it (Unicode's Bidi_Control:
/// the marks, embeddings, overrides and isolates).
fn changes_direction(c: char) -> bool {
    CodePointSetData::new::<BidiControl>().contains(c)
}

/// A player's name: 1 to 32 characters, no control characters, none that changes the direction
/// of the text around it, none that renders as nothing, no surrounding spaces, and something
/// left once the spaces are set aside.
pub fn valid_name(raw: &str) -> Result<String, Error> {
    valid_title(raw, 32)
}

/// A name shown to others (a player's, up to 32 characters; a tournament's, up to 60): trimmed,
/// with no control, direction-changing or invisible character.
pub fn valid_title(raw: &str, max: usize) -> Result<String, Error> {
    let name = raw.trim();
    let count = name.chars().count();
    if count == 0 || count > max {
        return Err(Invalid::NameLength { min: 1, max }.into());
    }
    if name.chars().any(char::is_control) {
        return Err(Invalid::NameControl.into());
    }
    if name.chars().any(changes_direction) {
        return Err(Invalid::NameBidi.into());
    }
    if name.chars().any(renders_as_nothing) {
        return Err(Invalid::NameInvisible.into());
    }
    Ok(name.to_owned())
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

    /// The OpenAPI document's pattern refuses, in the Basic Multilingual Plane, exactly what
    /// the server refuses (beyond it, the server refuses tag characters and the supplementary
    /// variation selectors with a 422 the pattern does not foresee).
    #[test]
    fn the_documented_name_pattern_follows_unicodes_tables() {
        let class = refused_in_the_bmp();
        let expected = format!("^[^{class}]*[^\\s{class}][^{class}]*$");
        assert_eq!(NAME_PATTERN, expected);
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
        ] {
            assert!(
                matches!(
                    valid_name(name),
                    Err(Error::InvalidRequest(Invalid::NameInvisible))
                ),
                "{name:?}"
            );
        }
        assert!(valid_name("\u{3000}").is_err());
        for name in ["\u{202E}adA", "Ada\u{2067}", "A\u{061C}da"] {
            assert!(
                matches!(
                    valid_name(name),
                    Err(Error::InvalidRequest(Invalid::NameBidi))
                ),
                "{name:?}"
            );
        }
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
