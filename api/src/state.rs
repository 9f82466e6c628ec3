//! `AppState`: what every handler and worker shares (pool, log, keys, clock, settings).

use std::sync::Arc;

use deadpool_postgres::Pool;
use eventlog::EventLog;
use tokio::sync::{Notify, Semaphore, broadcast};

use domain::ids::MatchId;

use crate::auth::Keys;
use crate::clock::Clock;
use crate::config::PlayConfig;
use crate::metrics::Metrics;
use crate::ratelimit::RateLimiter;

/// Shared by every request and worker; cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub pool: Pool,
    pub log: EventLog,
    pub keys: Keys,
    pub clock: Arc<dyn Clock>,
    pub play: PlayConfig,
    pub limiter: Arc<RateLimiter>,
    /// Wakes this instance's event streams when a match of theirs changes here. Other
    /// instances' appends reach them by polling.
    pub changes: broadcast::Sender<MatchId>,
    /// The projections of this database; woken after this instance appends.
    pub projections: projections::Runner,
    /// Wakes this instance's wave loop when a ticket opens here (the size trigger).
    pub waves: Arc<Notify>,
    pub metrics: Arc<Metrics>,
    /// Analysis searches this instance may run at once (more are refused with a 429), so that
    /// long analyses cannot crowd out the CPU players' moves.
    pub analyses: Arc<Semaphore>,
}

impl AppState {
    pub fn now(&self) -> time::OffsetDateTime {
        self.clock.now()
    }

    /// Tells this instance's projection runner that the log has grown.
    pub fn wake_projections(&self) {
        self.projections.wake();
    }

    pub fn notify(&self, id: MatchId) {
        // No receiver is fine: nobody is watching.
        let _ = self.changes.send(id);
        self.projections.wake();
    }
}
