//! `AppState`: what every command, worker and handler shares (pool, log, clock, settings, the
//! live path's committer, cache and log reader, the searches and the jobs).

use std::sync::Arc;

use deadpool_postgres::Pool;
use eventlog::EventLog;
use tokio::sync::{Notify, watch};

use crate::analysis::queue::Jobs;
use crate::analysis::searches::Searches;
use crate::clock::Clock;
use crate::config::PlayConfig;
use crate::live::cache::MatchCache;
use crate::live::commit::Committer;
use crate::live::fanout::Live;
use crate::metrics::Metrics;
use crate::ranked::WaveSchedule;
use crate::replicas::Replicas;

/// Shared by every command and worker; cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub pool: Pool,
    pub log: EventLog,
    pub clock: Arc<dyn Clock>,
    pub play: PlayConfig,
    /// How long stored `Idempotency-Key` answers are kept.
    pub answers_kept: time::Duration,
    /// How long a room that never started a match is kept.
    pub rooms_kept: time::Duration,
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
    /// When the wave loop runs.
    pub wave_schedule: WaveSchedule,
    /// The connections the waves read and write on, apart from the requests' pool.
    pub wave_pool: Pool,
    /// This instance's side of the background analysis jobs.
    pub jobs: Arc<Jobs>,
    pub metrics: Arc<Metrics>,
    /// The standbys reads may go to (`DATABASE_READ_URL`), if any.
    pub replicas: Option<Arc<Replicas>>,
    /// The cap on concurrent CPU searches (moves and analyses).
    pub searches: Arc<Searches>,
    /// The checkpoint signer and the ledger of closed accounts (kept outside the database).
    pub history: Arc<crate::history::History>,
    /// Turns `true` when the instance is shutting down: streams end with a retry hint and
    /// background loops stop after the pass under way.
    pub stopping: watch::Receiver<bool>,
}

impl AppState {
    pub fn now(&self) -> time::OffsetDateTime {
        self.clock.now()
    }

    /// Runs `read` on a replica whose checkpoint of `projection` has reached the primary's
    /// (see [`Replicas::read`]), else on the primary's log.
    pub async fn read<T>(
        &self,
        projection: projections::Projection,
        read: impl AsyncFn(&EventLog) -> Result<T, crate::error::Error>,
    ) -> Result<T, crate::error::Error> {
        match &self.replicas {
            Some(replicas) => replicas.read(&self.log, projection, read).await,
            None => read(&self.log).await,
        }
    }

    /// Tells this instance's reader of the log that the log has grown (projections follow).
    pub fn wake_projections(&self) {
        self.live.wake();
    }
}
