//! Reading client input at the edge: bodies with a size limit, JSON with the right error
//! (400 when it is not JSON, 422 when its fields are wrong), ids in paths.

use actix_web::error::QueryPayloadError;
use actix_web::web;
use futures_util::StreamExt;
use serde::de::DeserializeOwned;

use domain::cpu;
use domain::games::GameId;
use domain::ids::{IdError, PlayerId};

use crate::error::ApiError;
use crate::reasons::{Invalid, JsonIssue};

/// The largest body any call accepts.
pub const MAX_BODY: usize = 16 * 1024;

/// Reads a request body, refusing more than [`MAX_BODY`] bytes.
pub async fn body(mut payload: web::Payload) -> Result<web::Bytes, ApiError> {
    let mut buf = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| match e {
            actix_web::error::PayloadError::Overflow => ApiError::PayloadTooLarge(MAX_BODY),
            _ => ApiError::MalformedJson(None),
        })?;
        if buf.len() + chunk.len() > MAX_BODY {
            return Err(ApiError::PayloadTooLarge(MAX_BODY));
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(buf.freeze())
}

/// Parses a JSON body; an empty body reads as `{}` so that all-optional bodies may be omitted.
pub fn json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let bytes: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        bytes
    };
    serde_json::from_slice(bytes).map_err(|e| {
        use serde_json::error::Category;
        match e.classify() {
            Category::Syntax | Category::Eof | Category::Io => {
                ApiError::MalformedJson(Some((e.line(), e.column())))
            }
            Category::Data => ApiError::InvalidRequest(Invalid::Body {
                issue: JsonIssue::parse(&serde_message(&e)),
                line: e.line(),
                column: e.column(),
            }),
        }
    })
}

/// Parses an id from the path.
pub fn id<T: std::str::FromStr<Err = IdError>>(raw: &str) -> Result<T, ApiError> {
    raw.parse()
        .map_err(|e: IdError| ApiError::InvalidRequest(e.into()))
}

/// serde's message inside a serde_json error, without the position serde_json appends.
fn serde_message(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let position = format!(" at line {} column {}", e.line(), e.column());
    full.strip_suffix(&position).unwrap_or(&full).to_owned()
}

/// A query string that does not fit its call (`invalid_request`).
pub fn query_error(e: actix_web::Error) -> ApiError {
    let message = match e.as_error::<QueryPayloadError>() {
        Some(QueryPayloadError::Deserialize(e)) => e.to_string(),
        _ => e.to_string(),
    };
    ApiError::InvalidRequest(Invalid::Query(JsonIssue::parse(&message)))
}

/// A game from its wire id in a path.
pub fn game(raw: &str) -> Result<GameId, ApiError> {
    raw.parse()
        .map_err(|_| Invalid::UnknownGame(raw.to_owned()).into())
}

/// The `limit` of a listing: 50 when absent, at most 500.
pub fn limit(asked: Option<i64>) -> Result<i64, ApiError> {
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
pub const NAME_PATTERN: &str = "^[^\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]*\
     [^\\s\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]\
     [^\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]*$";

/// A player's name: 1 to 32 characters, no control characters, no characters that reorder the
/// text around them (bidirectional overrides, embeddings, isolates and marks), no surrounding
/// spaces.
pub fn valid_name(raw: &str) -> Result<String, ApiError> {
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
    Ok(name.to_owned())
}

/// Parses `id,id,...` (empty parts ignored).
pub fn player_list(raw: Option<&str>) -> Result<Vec<PlayerId>, ApiError> {
    raw.unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(id)
        .collect()
}

/// The CPU levels a seat can play at (1 to 5).
pub fn cpu_level(level: u8) -> Result<(), ApiError> {
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
