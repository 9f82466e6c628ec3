//! Reading client input at the edge: bodies with a size limit, JSON with the right error
//! (400 when it is not JSON, 422 when its fields are wrong), ids in paths.

use actix_web::web;
use futures_util::StreamExt;
use serde::de::DeserializeOwned;

use domain::ids::IdError;

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
