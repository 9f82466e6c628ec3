//! Reading client input at the edge: bodies with a size limit, JSON with the right error
//! (400 when it is not JSON, 422 when its fields are wrong, or when any string in it holds a
//! character `service::checks::text` refuses), query strings (422 likewise).

use actix_web::error::QueryPayloadError;
use actix_web::web;
use futures_util::StreamExt;
use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer, Unexpected};

use service::reasons::{Invalid, JsonIssue};

use crate::error::ApiError;

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

/// Parses a JSON body, which is always an object (serde's derived structs would also read an
/// array of their fields in order); an empty body reads as `{}` so that all-optional bodies may
/// be omitted. Every string in it, whatever field it fills (free text, an id, a code, a value
/// of a list), first goes through the one checker of text, `service::checks::text`, named by
/// its place in the body (`settings.first`, `board[2]`): no control, direction-changing or
/// invisible character, no pile of combining marks ever reaches a handler.
pub fn json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let bytes: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        bytes
    };
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(bytes) {
        if !value.is_object() {
            let e: serde_json::Error =
                serde::de::Error::invalid_type(unexpected_of(&value), &"a JSON object");
            return Err(ApiError::from(Invalid::Body {
                issue: JsonIssue::parse(&e.to_string()),
                line: 1,
                column: 1,
            }));
        }
        texts_of(&value, &mut String::new())?;
    }
    serde_json::from_slice(bytes).map_err(|e| {
        use serde_json::error::Category;
        match e.classify() {
            Category::Syntax | Category::Eof | Category::Io => {
                ApiError::MalformedJson(Some((e.line(), e.column())))
            }
            Category::Data => ApiError::from(Invalid::Body {
                issue: JsonIssue::parse(&serde_message(&e)),
                line: e.line(),
                column: e.column(),
            }),
        }
    })
}

/// Checks every string of `value` (at `path` in the body) with `service::checks::text`.
fn texts_of(value: &serde_json::Value, path: &mut String) -> Result<(), ApiError> {
    let len = path.len();
    match value {
        serde_json::Value::String(s) => service::checks::text(path, s)?,
        serde_json::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push_str(&format!("[{i}]"));
                texts_of(item, path)?;
                path.truncate(len);
            }
        }
        serde_json::Value::Object(fields) => {
            for (key, item) in fields {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&service::checks::shown(key));
                texts_of(item, path)?;
                path.truncate(len);
            }
        }
        serde_json::Value::Null | serde_json::Value::Bool(_) | serde_json::Value::Number(_) => {}
    }
    Ok(())
}

/// serde's message inside a serde_json error, without the position serde_json appends.
fn serde_message(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let position = format!(" at line {} column {}", e.line(), e.column());
    full.strip_suffix(&position).unwrap_or(&full).to_owned()
}

/// Checks every name and value of a query string with `service::checks::text`, as [`json`]
/// does a body's strings (a value is named by its parameter). A query string that does not
/// even read as pairs is left to the call's own reading.
pub fn query_texts(query: &str) -> Result<(), ApiError> {
    if query.is_empty() {
        return Ok(());
    }
    let Ok(pairs) = web::Query::<Vec<(String, String)>>::from_query(query) else {
        return Ok(());
    };
    for (name, value) in pairs.into_inner() {
        let shown = service::checks::shown(&name);
        service::checks::text(&shown, &name)?;
        service::checks::text(&shown, &value)?;
    }
    Ok(())
}

/// A query string that does not fit its call (`invalid_request`).
pub fn query_error(e: actix_web::Error) -> ApiError {
    let message = match e.as_error::<QueryPayloadError>() {
        Some(QueryPayloadError::Deserialize(e)) => e.to_string(),
        _ => e.to_string(),
    };
    ApiError::from(Invalid::Query(JsonIssue::parse(&message)))
}

/// How a JSON value of the wrong type is named in an error.
fn unexpected_of(value: &serde_json::Value) -> Unexpected<'_> {
    match value {
        serde_json::Value::Null => Unexpected::Unit,
        serde_json::Value::Bool(b) => Unexpected::Bool(*b),
        serde_json::Value::Number(_) => Unexpected::Other("number"),
        serde_json::Value::String(s) => Unexpected::Str(s),
        serde_json::Value::Array(_) => Unexpected::Seq,
        serde_json::Value::Object(_) => Unexpected::Map,
    }
}

/// Reads a nested struct of a body only from a JSON object (`#[serde(deserialize_with =
/// "input::object")]`): serde's derived structs would also read an array of their fields in
/// order, so that `{"settings": []}` would pass for the defaults.
pub fn object<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let map = serde_json::Map::<String, serde_json::Value>::deserialize(d)?;
    T::deserialize(serde_json::Value::Object(map)).map_err(serde::de::Error::custom)
}
