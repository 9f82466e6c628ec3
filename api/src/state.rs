//! `AppState`: what every handler and worker shares (pool, log, keys, clock, settings).

use std::sync::Arc;

use deadpool_postgres::Pool;
use eventlog::EventLog;
use tokio::sync::broadcast;

use domain::ids::MatchId;

use crate::auth::Keys;
use crate::clock::Clock;
use crate::config::PlayConfig;
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
}

impl AppState {
    pub fn now(&self) -> time::OffsetDateTime {
        self.clock.now()
    }

    pub fn notify(&self, id: MatchId) {
        // No receiver is fine: nobody is watching.
        let _ = self.changes.send(id);
    }
}
