//! `ApiState`: what every handler shares, the application (`service::state::AppState`, which it
//! dereferences to) and what only the edge needs: the token keys and the rate limits.

use std::net::IpAddr;
use std::ops::Deref;
use std::sync::Arc;

use actix_web::{HttpRequest, web};
use domain::ids::PlayerId;
use service::state::AppState;

use crate::auth::Keys;
use crate::error::ApiError;
use crate::ratelimit::RateLimiter;

/// Shared by every request; cheap to clone.
#[derive(Clone)]
pub struct ApiState {
    pub app: AppState,
    pub keys: Keys,
    /// State-changing calls per player.
    pub limiter: Arc<RateLimiter<PlayerId>>,
    /// Sign-ups per client address.
    pub signups: Arc<RateLimiter<IpAddr>>,
    /// Other calls without a token, per client address.
    pub anonymous: Arc<RateLimiter<IpAddr>>,
    /// The reverse proxies whose `X-Forwarded-For` names the client ([`crate::ratelimit::client_key`]).
    pub trusted_proxies: Arc<[crate::config::Cidr]>,
    /// The players' token generations, for revocation ([`crate::tokens`]).
    pub generations: Arc<crate::tokens::Generations>,
}

impl Deref for ApiState {
    type Target = AppState;

    fn deref(&self) -> &AppState {
        &self.app
    }
}

impl ApiState {
    /// The state of the application serving `req` (for extractors, which get only the request).
    pub fn of(req: &HttpRequest) -> Result<&web::Data<ApiState>, ApiError> {
        req.app_data::<web::Data<ApiState>>()
            .ok_or_else(|| ApiError::from(anyhow::anyhow!("application state missing")))
    }
}
