//! The request extractors that read the application state: [`Auth`] (the caller's bearer
//! token, checked with the state's keys; a read takes the player's rate bucket) and [`ByAddress`] (the anonymous caller's bucket).
//! They live here, above `state`, so that `auth` and `ratelimit` need nothing of it.

use std::future::{Ready, ready};
use std::sync::Arc;

use futures_util::future::LocalBoxFuture;

use actix_web::dev::Payload;
use actix_web::http::Method;
use actix_web::{FromRequest, HttpRequest, web};

use crate::auth::Auth;
use crate::error::ApiError;
use crate::ratelimit::ByAddress;
use crate::reasons::Unauthenticated;
use crate::state::ApiState;

impl FromRequest for Auth {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Auth, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let checked = authenticate(req);
        let generations = ApiState::of(req).map(|s| Arc::clone(&s.generations));
        Box::pin(async move {
            let auth = checked?;
            // Not revoked: issued at the player's current token generation (ours), and the
            // account not closed (an external issuer's token too).
            let issued = (!auth.external).then_some(auth.generation);
            if generations?.current(auth.player).await?.ended(issued) {
                return Err(ApiError::Unauthorized(Unauthenticated::Revoked));
            }
            Ok(auth)
        })
    }
}

/// The caller's token, checked (all but its generation, which [`Auth`]'s extraction reads);
/// a read (`GET`, `HEAD`) also takes a token of the player's rate bucket here (a seated read
/// writes presence), as every state-changing call does in its handler.
fn authenticate(req: &HttpRequest) -> Result<Auth, ApiError> {
    let state = ApiState::of(req)?;
    let token = bearer(req)
        .or_else(|| query_token(req))
        .ok_or_else(|| ApiError::Unauthorized(Unauthenticated::BearerRequired))?;
    let auth = state.keys.check(&token)?;
    if matches!(*req.method(), Method::GET | Method::HEAD) {
        state.limiter.check(&auth.player)?;
    }
    Ok(auth)
}

fn bearer(req: &HttpRequest) -> Option<String> {
    let value = req.headers().get(actix_web::http::header::AUTHORIZATION)?;
    let value = value.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim().to_owned())
}

/// `?access_token=` — only for the event stream (browsers' EventSource cannot send headers).
fn query_token(req: &HttpRequest) -> Option<String> {
    if !req.path().ends_with("/stream") {
        return None;
    }
    web::Query::<std::collections::HashMap<String, String>>::from_query(req.query_string())
        .ok()?
        .get("access_token")
        .cloned()
}

impl FromRequest for ByAddress {
    type Error = ApiError;
    type Future = Ready<Result<ByAddress, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(by_address(req))
    }
}

fn by_address(req: &HttpRequest) -> Result<ByAddress, ApiError> {
    let state = ApiState::of(req)?;
    if let Some(client) = crate::ratelimit::client_key(req, &state.trusted_proxies) {
        state.anonymous.check(&client)?;
    }
    Ok(ByAddress)
}

/// The caller's token checked like [`Auth`]'s but for its generation: for the one call that
/// must answer a retry of itself after ending the caller's tokens (`POST /v1/tokens/revoke`,
/// which checks the generation itself once the stored answers are looked up).
pub struct AnyGeneration(pub Auth);

impl FromRequest for AnyGeneration {
    type Error = ApiError;
    type Future = Ready<Result<AnyGeneration, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(authenticate(req).map(AnyGeneration))
    }
}
