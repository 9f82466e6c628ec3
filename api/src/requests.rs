//! The request being served: its id (its `X-Request-Id`, or a fresh one: in the log lines
//! written while it is served, in its response's `X-Request-Id` and in its problem documents)
//! and the language it asked for (its errors are rendered in it).

use actix_web::http::header::{HeaderMap, HeaderName, HeaderValue};

/// The request id header, read from the client and always answered.
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The longest request id taken from a client.
const MAX_ID: usize = 128;

use crate::lang::Lang;

/// What is known of the request being served.
struct Current {
    id: HeaderValue,
    lang: Lang,
}

tokio::task_local! {
    static CURRENT: Current;
}

/// The client's request id when it is 1 to [`MAX_ID`] visible ASCII characters, otherwise a
/// fresh one.
pub fn id_of(headers: &HeaderMap) -> HeaderValue {
    headers
        .get(&REQUEST_ID)
        .filter(|v| {
            let bytes = v.as_bytes();
            !bytes.is_empty() && bytes.len() <= MAX_ID && bytes.iter().all(u8::is_ascii_graphic)
        })
        .cloned()
        .unwrap_or_else(|| {
            let fresh = uuid::Uuid::new_v4().simple().to_string();
            HeaderValue::from_str(&fresh).expect("hex digits are a valid header value")
        })
}

/// Runs `serve` as the request `id` in `lang`: [`current`] and [`lang`] answer them inside.
pub async fn scope<F: Future>(id: HeaderValue, lang: Lang, serve: F) -> F::Output {
    CURRENT.scope(Current { id, lang }, serve).await
}

/// The language of the request being served (English outside of one).
pub fn lang() -> Lang {
    CURRENT.try_with(|c| c.lang).unwrap_or(Lang::En)
}

/// The id of the request being served, if any.
pub fn current() -> Option<String> {
    CURRENT
        .try_with(|c| c.id.to_str().ok().map(str::to_owned))
        .ok()
        .flatten()
}
