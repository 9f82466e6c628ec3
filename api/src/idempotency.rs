//! `Idempotency-Key`: a retried state-changing request gets the stored first answer — the same
//! status, content type and body bytes, also when it was an error — and writes nothing; the same key with
//! another request is `idempotency_key_reused`. Keys are scoped to the player (a sign-up's to
//! the player it creates: see `routes::players::create`). No stored answer holds a bearer token:
//! an answer that carries one stores what the token is made from and mints it again on a retry
//! ([`command_renewed`]; a sign-up does the same).

use std::future::Future;

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, ResponseError};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use service::answers::{self, Body, Key, KeyRecord, Stored};
use service::reasons::Invalid;

use crate::auth::Auth;
use crate::error::ApiError;
use crate::lang::Lang;
use crate::state::ApiState;

/// What a state-changing handler produces: a status and a JSON body.
pub type Reply = Result<(StatusCode, Body), ApiError>;

/// What a handler that can commit its answer with its command produces: the answer, and
/// whether it is already stored (committed in the command's own transaction).
pub type KeyedReply = Result<(StatusCode, Body, bool), ApiError>;

/// Makes a stored successful answer whole again for a retry: its stored body in, the body to
/// send out (see [`command_renewed`]).
pub type Renew<'a> = &'a dyn Fn(&str) -> Result<String, ApiError>;

const MAX_KEY: usize = 200;

/// Reads the body of a state-changing request, then runs `handler` on it at most once per
/// (player, key) as [`once`] does.
pub async fn command<F, Fut>(
    app: &ApiState,
    auth: &Auth,
    req: &HttpRequest,
    payload: actix_web::web::Payload,
    handler: F,
) -> HttpResponse
where
    F: FnOnce(Uuid, actix_web::web::Bytes) -> Fut,
    Fut: Future<Output = Reply>,
{
    command_keyed(app, auth, req, payload, |key, body| async move {
        unstored(handler(key.command_id, body).await)
    })
    .await
}

/// A handler's answer, to be stored by [`run`] (the handler did not commit it).
fn unstored(reply: Reply) -> KeyedReply {
    reply.map(|(status, value)| (status, value, false))
}

/// [`command`] for handlers that commit their answer with their command: they receive the
/// key's record and say whether they stored it.
pub async fn command_keyed<F, Fut>(
    app: &ApiState,
    auth: &Auth,
    req: &HttpRequest,
    payload: actix_web::web::Payload,
    handler: F,
) -> HttpResponse
where
    F: FnOnce(Key, actix_web::web::Bytes) -> Fut,
    Fut: Future<Output = KeyedReply>,
{
    keyed(app, auth, req, payload, handler, None).await
}

/// [`command_keyed`] for an answer holding a secret that is never stored (a bearer token): the
/// handler stores, with its command, the answer without the secret but with what makes it, and
/// a retry of a success gets `renew` of that stored body. Failures are stored and replayed as
/// they were answered.
pub async fn command_renewed<F, Fut>(
    app: &ApiState,
    auth: &Auth,
    req: &HttpRequest,
    payload: actix_web::web::Payload,
    handler: F,
    renew: Renew<'_>,
) -> HttpResponse
where
    F: FnOnce(Key, actix_web::web::Bytes) -> Fut,
    Fut: Future<Output = KeyedReply>,
{
    keyed(app, auth, req, payload, handler, Some(renew)).await
}

async fn keyed<F, Fut>(
    app: &ApiState,
    auth: &Auth,
    req: &HttpRequest,
    payload: actix_web::web::Payload,
    handler: F,
    renew: Option<Renew<'_>>,
) -> HttpResponse
where
    F: FnOnce(Key, actix_web::web::Bytes) -> Fut,
    Fut: Future<Output = KeyedReply>,
{
    let body = match crate::input::body(payload).await {
        Ok(b) => b,
        Err(e) => return respond_error(&e),
    };
    let for_handler = body.clone();
    once_keyed(
        app,
        auth,
        req,
        &body,
        |key| handler(key, for_handler),
        renew,
    )
    .await
}

/// Runs `handler` at most once per (player, key): it receives the command id to give the
/// event log (derived from the key, so that even racing twins write once).
pub async fn once<F, Fut>(
    app: &ApiState,
    auth: &Auth,
    req: &HttpRequest,
    body: &[u8],
    handler: F,
) -> HttpResponse
where
    F: FnOnce(Uuid) -> Fut,
    Fut: Future<Output = Reply>,
{
    once_keyed(
        app,
        auth,
        req,
        body,
        |key: Key| async move { unstored(handler(key.command_id).await) },
        None,
    )
    .await
}

/// [`once`] for handlers that receive the whole [`Key`] and may store their answer.
async fn once_keyed<F, Fut>(
    app: &ApiState,
    auth: &Auth,
    req: &HttpRequest,
    body: &[u8],
    handler: F,
    renew: Option<Renew<'_>>,
) -> HttpResponse
where
    F: FnOnce(Key) -> Fut,
    Fut: Future<Output = KeyedReply>,
{
    let lang = crate::requests::lang();
    match run(app, auth, req, body, handler, renew, lang).await {
        Ok(res) => res,
        Err(e) => respond_error(&e),
    }
}

async fn run<F, Fut>(
    app: &ApiState,
    auth: &Auth,
    req: &HttpRequest,
    body: &[u8],
    handler: F,
    renew: Option<Renew<'_>>,
    lang: Lang,
) -> Result<HttpResponse, ApiError>
where
    F: FnOnce(Key) -> Fut,
    Fut: Future<Output = KeyedReply>,
{
    app.limiter.check(&auth.player)?;
    let Some(key) = key_of(req)? else {
        let key = Key {
            command_id: Uuid::new_v4(),
            record: None,
        };
        return Ok(reply(handler(key).await));
    };
    let request_hash = request_hash(req, body);
    let player = auth.player.as_uuid();

    if let Some(stored) = answers::stored(app, player, &key).await? {
        return replay(stored, &request_hash, renew);
    }
    let command_id = Uuid::new_v5(&player, key.as_bytes());
    let record = KeyRecord {
        player,
        key: key.clone(),
        request_hash: request_hash.clone(),
    };
    let outcome = handler(Key {
        command_id,
        record: Some(record),
    })
    .await;
    let (status, body) = match &outcome {
        // Committed with the command: that transaction is the answer's only write.
        Ok((_, _, true)) => return Ok(reply(outcome)),
        Ok((status, body, false)) => (*status, body.to_text()?),
        // Failures a retry may get past are not answers worth repeating.
        Err(ApiError::Core(e)) if e.is_transient() => return Ok(reply(outcome)),
        // The bytes `respond_error` sends.
        Err(e) => (
            e.status_code(),
            serde_json::to_string(&e.problem(lang)).map_err(crate::error::unexpected)?,
        ),
    };
    let record = KeyRecord {
        player,
        key: key.clone(),
        request_hash: request_hash.clone(),
    };
    if !answers::store(app, &record, status.as_u16(), &body, app.now()).await? {
        // A twin request got there first: its answer is the answer.
        if let Some(stored) = answers::stored(app, player, &key).await? {
            return replay(stored, &request_hash, renew);
        }
    }
    Ok(reply(outcome))
}

/// The request's `Idempotency-Key`, if it has one; 422 when it is empty, too long or not
/// visible ASCII.
pub fn key_of(req: &HttpRequest) -> Result<Option<String>, ApiError> {
    let Some(v) = req.headers().get("idempotency-key") else {
        return Ok(None);
    };
    v.to_str()
        .ok()
        .filter(|k| !k.is_empty() && k.len() <= MAX_KEY && k.bytes().all(|b| b.is_ascii_graphic()))
        .map(|k| Some(k.to_owned()))
        .ok_or_else(|| Invalid::IdempotencyKey { max: MAX_KEY }.into())
}

/// What tells a retry from another request under the same key: method, path and body.
pub fn request_hash(req: &HttpRequest, body: &[u8]) -> Vec<u8> {
    let mut hasher = Sha256::new();
    hasher.update(req.method().as_str());
    hasher.update(b" ");
    hasher.update(req.path());
    hasher.update(b"\n");
    hasher.update(body);
    hasher.finalize().to_vec()
}

fn replay(
    mut stored: Stored,
    request_hash: &[u8],
    renew: Option<Renew<'_>>,
) -> Result<HttpResponse, ApiError> {
    if stored.request_hash != request_hash {
        return Err(service::Error::IdempotencyKeyReused.into());
    }
    let status = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::OK);
    if let Some(renew) = renew
        && status.is_success()
    {
        stored.body = renew(&stored.body)?;
    }
    let content_type = if status.is_success() {
        "application/json"
    } else {
        "application/problem+json"
    };
    Ok(HttpResponse::build(status)
        .insert_header((header::CONTENT_TYPE, HeaderValue::from_static(content_type)))
        .insert_header(("idempotent-replayed", "true"))
        .body(stored.body))
}

fn reply(outcome: KeyedReply) -> HttpResponse {
    match outcome {
        Ok((status, body, _)) => HttpResponse::build(status)
            .content_type("application/json")
            .body(body.into_bytes()),
        Err(e) => respond_error(&e),
    }
}

fn respond_error(e: &ApiError) -> HttpResponse {
    actix_web::ResponseError::error_response(e)
}
