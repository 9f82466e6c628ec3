//! The bytes an event's hash covers, the hash chain, and the deterministic event ids.
//!
//! # Canonical bytes of an event (version 1)
//!
//! All integers are big-endian; `str(x)` is a `u32` byte length followed by the UTF-8 bytes.
//!
//! ```text
//! "discs.event.v1"                       14 bytes, fixed: names this encoding
//! str(stream_id)
//! version                                i64
//! event_id                               16 bytes
//! str(event_type)
//! schema_version                         i16
//! str(canonical JSON of data)
//! actor                                  0x00, or 0x01 followed by 16 bytes
//! recorded_at                            i64, microseconds since the Unix epoch (UTC)
//! ```
//!
//! Every field is fixed-width or length-prefixed, so two different events never share their
//! bytes. `hash = sha256(prev_hash || canonical bytes)`, with `prev_hash` of version 1 being 32
//! zero bytes and `prev_hash` of version n+1 the hash of version n. `position` and `tx` are not
//! covered: they are assigned by the database, and a physical restore may renumber `tx`.
//!
//! # Canonical JSON
//!
//! No whitespace; object keys sorted by their UTF-8 bytes, recursively; strings in double
//! quotes with only `"` `\` and the control characters U+0000..U+001F escaped (as `\"`, `\\`,
//! `\u00xx` with lower-case hex); everything else written as raw UTF-8; `true`, `false`,
//! `null`. A **number** is written as its exact decimal value in the form
//! `[-]<digits>e<exponent>`, where `digits` has no leading or trailing zeros (zero is `0`):
//! `100` → `1e2`, `1.5` → `15e-1`, `-0.25` → `-25e-2`. This is deliberate: PostgreSQL's
//! `jsonb` keeps a number's value but not its spelling (`1e16` comes back as
//! `10000000000000000`, `-0.0` as `0.0`), and a hash that depended on the spelling would break
//! on the first read-back. The value survives the round trip exactly for every number serde_json
//! can hold (integers of `i64`/`u64`, and finite `f64`, whose shortest form is parsed back to
//! the same `f64`). Payloads are still best kept to integers, strings and booleans.
//!
//! Event ids: `UUIDv5(namespace = command id, name = stream_id || 0x00 || index as u32)`, where
//! `index` counts the command's events within that stream from 0. A retried command therefore
//! produces the same ids, and the unique `event_id` column recognises it.

use serde_json::Value;
use sha2::{Digest, Sha256};
use time::OffsetDateTime;
use uuid::Uuid;

/// A SHA-256 digest: an event's hash, or the hash of its predecessor.
pub type Hash = [u8; 32];

/// The `prev_hash` of every stream's first event.
pub const GENESIS: Hash = [0; 32];

/// The tag that opens the canonical bytes; a new encoding would get a new tag.
const TAG: &[u8] = b"discs.event.v1";

/// The fields of an event that its hash covers, borrowed from wherever they live (a
/// [`crate::NewEvent`] about to be appended, or a row read back for an audit).
#[derive(Debug, Clone, Copy)]
#[allow(missing_docs)] // the fields are the columns of the same names
pub struct EventContent<'a> {
    pub stream: &'a str,
    pub version: i64,
    pub event_id: Uuid,
    pub event_type: &'a str,
    pub schema_version: i16,
    pub data: &'a Value,
    pub actor: Option<Uuid>,
    pub recorded_at: OffsetDateTime,
}

/// Appends the canonical bytes of `event` to `out` (see the module docs for the layout).
/// `recorded_at` is truncated to whole microseconds, the precision PostgreSQL stores.
pub fn event_bytes(event: &EventContent<'_>, out: &mut Vec<u8>) {
    out.extend_from_slice(TAG);
    put_str(out, event.stream.as_bytes());
    out.extend_from_slice(&event.version.to_be_bytes());
    out.extend_from_slice(event.event_id.as_bytes());
    put_str(out, event.event_type.as_bytes());
    out.extend_from_slice(&event.schema_version.to_be_bytes());
    let len_at = out.len();
    out.extend_from_slice(&[0; 4]);
    json(event.data, out);
    let json_len = out.len() - len_at - 4;
    out[len_at..len_at + 4].copy_from_slice(&len_u32(json_len).to_be_bytes());
    match event.actor {
        None => out.push(0),
        Some(actor) => {
            out.push(1);
            out.extend_from_slice(actor.as_bytes());
        }
    }
    out.extend_from_slice(&unix_micros(event.recorded_at).to_be_bytes());
}

/// The link of the chain: `sha256(prev || canonical bytes)`.
pub fn chain_hash(prev: &Hash, canonical: &[u8]) -> Hash {
    let mut hasher = Sha256::new();
    hasher.update(prev);
    hasher.update(canonical);
    hasher.finalize().into()
}

/// The id of the `index`-th event (counting from 0) that command `command_id` appends to
/// `stream`. Deterministic, so that a retried command is recognised by its ids.
pub fn event_id(command_id: Uuid, stream: &str, index: u32) -> Uuid {
    let mut name = Vec::with_capacity(stream.len() + 5);
    name.extend_from_slice(stream.as_bytes());
    name.push(0);
    name.extend_from_slice(&index.to_be_bytes());
    Uuid::new_v5(&command_id, &name)
}

/// `t` in UTC, cut to whole microseconds: what a `timestamptz` column gives back.
pub fn truncate_to_micros(t: OffsetDateTime) -> OffsetDateTime {
    let utc = t.to_offset(time::UtcOffset::UTC);
    let nanos = utc.nanosecond();
    // Cannot fail: the value stays within the same second.
    utc.replace_nanosecond(nanos - nanos % 1000).unwrap_or(utc)
}

/// Microseconds since the Unix epoch, after truncating to whole microseconds.
pub fn unix_micros(t: OffsetDateTime) -> i64 {
    let nanos = truncate_to_micros(t).unix_timestamp_nanos();
    // OffsetDateTime spans ±9999 years: always within i64 microseconds.
    i64::try_from(nanos / 1000).unwrap_or(if nanos < 0 { i64::MIN } else { i64::MAX })
}

/// The canonical JSON of `value` (see the module docs).
pub fn canonical_json(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    json(value, &mut out);
    out
}

fn json(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => number(&n.to_string(), out),
        Value::String(s) => string(s, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                json(item, out);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            // Sort here: serde_json's map order depends on a cargo feature (preserve_order)
            // that any crate in the build can switch on.
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push(b'{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                string(key, out);
                out.push(b':');
                json(item, out);
            }
            out.push(b'}');
        }
    }
}

fn string(s: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    for &b in s.as_bytes() {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x00..=0x1f => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 0xf)]);
            }
            _ => out.push(b),
        }
    }
    out.push(b'"');
}

/// Writes the exact decimal value of a JSON number literal as `[-]<digits>e<exp>`.
fn number(literal: &str, out: &mut Vec<u8>) {
    let (negative, rest) = match literal.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, literal),
    };
    let (mantissa, exp_text) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, ""),
    };
    let (int_part, frac_part) = match mantissa.find('.') {
        Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
        None => (mantissa, ""),
    };
    let exp_text = exp_text.strip_prefix('+').unwrap_or(exp_text);
    // serde_json's literals always parse; if one ever did not, hash its text verbatim (still
    // deterministic, just not spelling-independent).
    let Ok(mut exponent) = (if exp_text.is_empty() {
        Ok(0)
    } else {
        exp_text.parse::<i64>()
    }) else {
        out.extend_from_slice(literal.as_bytes());
        return;
    };
    exponent -= i64::try_from(frac_part.len()).unwrap_or(i64::MAX);
    let digits: Vec<u8> = int_part.bytes().chain(frac_part.bytes()).collect();
    let first = digits.iter().position(|&d| d != b'0');
    let Some(first) = first else {
        out.push(b'0');
        return;
    };
    let last = digits.iter().rposition(|&d| d != b'0').unwrap_or(first);
    exponent += i64::try_from(digits.len() - 1 - last).unwrap_or(0);
    if negative {
        out.push(b'-');
    }
    out.extend_from_slice(&digits[first..=last]);
    out.push(b'e');
    out.extend_from_slice(exponent.to_string().as_bytes());
}

fn put_str(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&len_u32(bytes.len()).to_be_bytes());
    out.extend_from_slice(bytes);
}

fn len_u32(len: usize) -> u32 {
    // Stream ids, type names and payloads are far below 4 GiB (PostgreSQL caps a value at 1 GiB).
    u32::try_from(len).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn canon(v: &Value) -> String {
        String::from_utf8(canonical_json(v)).expect("canonical JSON is UTF-8")
    }

    #[test]
    fn keys_are_sorted_recursively_and_whitespace_is_dropped() {
        let v = json!({"b": 1, "a": {"d": [true, null], "c": "x"}, "A": false});
        assert_eq!(
            canon(&v),
            r#"{"A":false,"a":{"c":"x","d":[true,null]},"b":1e0}"#
        );
    }

    #[test]
    fn numbers_are_written_as_their_exact_value() {
        let cases: &[(&str, &str)] = &[
            ("0", "0"),
            ("-0.0", "0"),
            ("100", "1e2"),
            ("100.0", "1e2"),
            ("1e2", "1e2"),
            ("1.5", "15e-1"),
            ("-0.25", "-25e-2"),
            ("42", "42e0"),
            ("1e16", "1e16"),
            ("10000000000000000", "1e16"),
            ("0.0000001", "1e-7"),
            ("1.0E+2", "1e2"),
            ("18446744073709551615", "18446744073709551615e0"),
            ("-9223372036854775808", "-9223372036854775808e0"),
        ];
        for (literal, expected) in cases {
            let mut out = Vec::new();
            number(literal, &mut out);
            assert_eq!(
                String::from_utf8_lossy(&out),
                *expected,
                "literal {literal}"
            );
        }
    }

    #[test]
    fn strings_escape_only_quotes_backslashes_and_control_characters() {
        let v = json!("a\"b\\c\n\u{1}é\u{2028}/");
        assert_eq!(canon(&v), "\"a\\\"b\\\\c\\u000a\\u0001é\u{2028}/\"");
    }

    #[test]
    fn a_field_boundary_cannot_be_moved() {
        let data = json!({});
        let at = OffsetDateTime::UNIX_EPOCH;
        let id = Uuid::nil();
        let bytes = |stream, event_type| {
            let mut out = Vec::new();
            event_bytes(
                &EventContent {
                    stream,
                    version: 1,
                    event_id: id,
                    event_type,
                    schema_version: 1,
                    data: &data,
                    actor: None,
                    recorded_at: at,
                },
                &mut out,
            );
            out
        };
        assert_ne!(bytes("ab", "c"), bytes("a", "bc"));
    }

    #[test]
    fn event_ids_depend_on_command_stream_and_index() {
        let c = Uuid::from_u128(7);
        assert_eq!(event_id(c, "match-1", 0), event_id(c, "match-1", 0));
        assert_ne!(event_id(c, "match-1", 0), event_id(c, "match-1", 1));
        assert_ne!(event_id(c, "match-1", 0), event_id(c, "match-2", 0));
        assert_ne!(
            event_id(c, "match-1", 0),
            event_id(Uuid::from_u128(8), "match-1", 0)
        );
        assert_eq!(event_id(c, "x", 0).get_version_num(), 5);
    }

    #[test]
    fn timestamps_are_cut_to_microseconds() {
        let t = OffsetDateTime::from_unix_timestamp_nanos(-1_500).expect("in range");
        assert_eq!(unix_micros(t), -2);
        let t = OffsetDateTime::from_unix_timestamp_nanos(1_999).expect("in range");
        assert_eq!(unix_micros(t), 1);
    }
}
