//! The checks of client input that the edge and the CLI share: ids, game ids, listing limits,
//! player names and lists, CPU levels, each refused with its typed reason.

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
/// length after trimming).
pub const NAME_PATTERN: &str = "^[^\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069\\u00ad\\u034f\\u115f\\u1160\\u17b4\\u17b5\\u180e\\u200b-\\u200d\\u2060-\\u2064\\u3164\\ufeff\\uffa0]*\
     [^\\s\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069\\u00ad\\u034f\\u115f\\u1160\\u17b4\\u17b5\\u180e\\u200b-\\u200d\\u2060-\\u2064\\u3164\\ufeff\\uffa0]\
     [^\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069\\u00ad\\u034f\\u115f\\u1160\\u17b4\\u17b5\\u180e\\u200b-\\u200d\\u2060-\\u2064\\u3164\\ufeff\\uffa0]*$";

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

/// A character that shows as nothing: the soft hyphen, the grapheme joiner, zero-width spaces,
/// joiners and the word joiner, invisible operators, the byte-order mark, the Hangul and Khmer
/// fillers and the Mongolian vowel separator.
fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{115F}'
            | '\u{1160}'
            | '\u{17B4}'
            | '\u{17B5}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200D}'
            | '\u{2060}'..='\u{2064}'
            | '\u{3164}'
            | '\u{FEFF}'
            | '\u{FFA0}'
    )
}

/// A player's name: 1 to 32 characters, no control characters, no characters that reorder the
/// text around them (bidirectional overrides, embeddings, isolates and marks), none that shows
/// as nothing, no surrounding spaces.
pub fn valid_name(raw: &str) -> Result<String, Error> {
    let name = raw.trim();
    let count = name.chars().count();
    if count == 0 || count > 32 {
        return Err(Invalid::NameLength { min: 1, max: 32 }.into());
    }
    if name.chars().any(char::is_control) {
        return Err(Invalid::NameControl.into());
    }
    if name.chars().any(|c| {
        matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
    }) {
        return Err(Invalid::NameBidi.into());
    }
    if name.chars().any(invisible) {
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
