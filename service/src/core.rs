//! `Core`: what every service shares — the requests' pool, the event log, the clock, the
//! chance, the metrics, the standbys reads may go to, and the signal that the instance is stopping. The
//! services' own contexts build on it ([`crate::live::LivePath`], [`crate::analysis::Analyses`],
//! [`crate::ranked::Ranked`]); `state::AppState` composes them all.

use std::sync::Arc;

use deadpool_postgres::Pool;
use eventlog::EventLog;
use tokio::sync::watch;

use crate::chance::Chance;
use crate::clock::Clock;
use crate::error::Error;
use crate::metrics::Metrics;
use crate::replicas::Replicas;

/// Shared by every service; cheap to clone.
#[derive(Clone)]
pub struct Core {
    pub pool: Pool,
    pub log: EventLog,
    pub clock: Arc<dyn Clock>,
    /// Where coins and the CPU's seeds are drawn.
    pub chance: Arc<dyn Chance>,
    pub metrics: Arc<Metrics>,
    /// The standbys reads may go to (`DATABASE_READ_URL`), if any.
    pub replicas: Option<Arc<Replicas>>,
    /// Turns `true` when the instance is shutting down: streams end with a retry hint and
    /// background loops stop after the pass under way.
    pub stopping: watch::Receiver<bool>,
}

impl Core {
    pub fn now(&self) -> time::OffsetDateTime {
        self.clock.now()
    }

    /// How many of the build's migrations the database lacks (readiness: 0).
    pub async fn migrations_pending(&self) -> Result<usize, database::Error> {
        database::migrations_pending(&self.pool).await
    }

    /// Runs `read` on a replica whose checkpoint of `projection` has reached the primary's
    /// (see [`Replicas::read`]), else on the primary's log.
    pub async fn read<T>(
        &self,
        projection: projections::Projection,
        read: impl AsyncFn(&EventLog) -> Result<T, Error>,
    ) -> Result<T, Error> {
        match &self.replicas {
            Some(replicas) => replicas.read(&self.log, projection, read).await,
            None => read(&self.log).await,
        }
    }
}
