//! `AppState`: what every handler and worker shares (pool, log, keys, clock, settings, the
//! live path's committer, cache and log reader).

use std::net::IpAddr;
use std::sync::Arc;

use deadpool_postgres::Pool;
use domain::ids::PlayerId;
use eventlog::EventLog;
use tokio::sync::{Notify, watch};

use crate::auth::Keys;
use crate::cache::MatchCache;
use crate::clock::Clock;
use crate::commit::Committer;
use crate::config::PlayConfig;
use crate::error::ApiError;
use crate::live::Live;
use crate::metrics::Metrics;
use crate::ratelimit::RateLimiter;
use crate::searches::Searches;

/// Shared by every request and worker; cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub pool: Pool,
    pub log: EventLog,
    pub keys: Keys,
    pub clock: Arc<dyn Clock>,
    pub play: PlayConfig,
    /// State-changing calls per player.
    pub limiter: Arc<RateLimiter<PlayerId>>,
    /// How long stored `Idempotency-Key` answers are kept.
    pub answers_kept: time::Duration,
    /// How long a room that never started a match is kept.
    pub rooms_kept: time::Duration,
    /// Sign-ups per client address.
    pub signups: Arc<RateLimiter<IpAddr>>,
    /// Other calls without a token, per client address.
    pub anonymous: Arc<RateLimiter<IpAddr>>,
    /// The projections of this database (followed through the live tail).
    pub projections: projections::Runner,
    /// Recent match states.
    pub cache: Arc<MatchCache>,
    /// Commits commands in batches.
    pub committer: Committer,
    /// The reader of the log and the fan-out to open streams.
    pub live: Arc<Live>,
    /// Wakes this instance's wave loop when a ticket opens here (the size trigger).
    pub waves: Arc<Notify>,
    /// This instance's side of the background analysis jobs.
    pub jobs: Arc<crate::jobs::Jobs>,
    pub metrics: Arc<Metrics>,
    /// The cap on concurrent CPU searches (moves and analyses).
    pub searches: Arc<Searches>,
    /// Turns `true` when the instance is shutting down: streams end with a retry hint and
    /// background loops stop after the pass under way.
    pub stopping: watch::Receiver<bool>,
}

impl AppState {
    /// The state of the application serving `req` (for extractors, which get only the request).
    pub fn of(req: &actix_web::HttpRequest) -> Result<&actix_web::web::Data<AppState>, ApiError> {
        req.app_data::<actix_web::web::Data<AppState>>()
            .ok_or_else(|| ApiError::Unexpected(anyhow::anyhow!("application state missing")))
    }

    pub fn now(&self) -> time::OffsetDateTime {
        self.clock.now()
    }

    /// Tells this instance's reader of the log that the log has grown (projections follow).
    pub fn wake_projections(&self) {
        self.live.wake();
    }
}
