//! `Jobs`: this instance's side of the analysis jobs (its owner id, the cap, the wake-up), held
//! by `AppState` and kept apart from the runner in `jobs`, which reads `AppState`.

use std::time::Duration;

use tokio::sync::Notify;
use uuid::Uuid;

/// This instance's side of the jobs.
pub struct Jobs {
    /// This instance, as the owner of the jobs it claims.
    pub instance: Uuid,
    /// How long one job may search, its attempts together.
    pub cap: Duration,
    /// Wakes this instance's runner when a job is queued here.
    pub wake: Notify,
}

impl Jobs {
    pub fn new(cap: Duration) -> Jobs {
        Jobs {
            instance: Uuid::new_v4(),
            cap,
            wake: Notify::new(),
        }
    }
}
