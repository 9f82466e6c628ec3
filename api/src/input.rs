//! Reading client input at the edge: bodies with a size limit, JSON with the right error
//! (400 when it is not JSON, 422 when its fields are wrong), ids in paths.

use actix_web::web;
use futures_util::StreamExt;
use serde::de::DeserializeOwned;

use domain::cpu;
use domain::ids::{IdError, PlayerId};

use crate::error::ApiError;

/// The largest body any call accepts.
pub const MAX_BODY: usize = 16 * 1024;

/// Reads a request body, refusing more than [`MAX_BODY`] bytes.
pub async fn body(mut payload: web::Payload) -> Result<web::Bytes, ApiError> {
    let mut buf = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| match e {
            actix_web::error::PayloadError::Overflow => ApiError::PayloadTooLarge(MAX_BODY),
            e => ApiError::MalformedJson(e.to_string()),
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
                ApiError::MalformedJson(e.to_string())
            }
            Category::Data => ApiError::InvalidRequest(e.to_string()),
        }
    })
}

/// Parses an id from the path.
pub fn id<T: std::str::FromStr<Err = IdError>>(raw: &str) -> Result<T, ApiError> {
    raw.parse()
        .map_err(|e: IdError| ApiError::InvalidRequest(e.to_string()))
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
        return Err(ApiError::InvalidRequest(
            "name must have 1 to 32 characters".into(),
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(ApiError::InvalidRequest(
            "name must not contain control characters".into(),
        ));
    }
    if name.chars().any(|c| {
        matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
    }) {
        return Err(ApiError::InvalidRequest(
            "name must not contain bidirectional control characters".into(),
        ));
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
        Err(ApiError::InvalidRequest(format!(
            "cpu_level must be one of {}..={} on this server",
            cpu::LEVELS.start(),
            cpu::LEVELS.end()
        )))
    }
}
