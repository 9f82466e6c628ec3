//! The projection runner: reads each projection's events after its checkpoint, applies them and
//! moves the checkpoint in one transaction; catches up, then follows the log.
//!
//! * **Exactly once.** A batch is read after the stored checkpoint, then applied in a
//!   transaction that first locks the checkpoint row and checks it still is where the batch
//!   started; the checkpoint moves in that same transaction. A crash before commit leaves both
//!   untouched; a second runner that raced gets a different checkpoint and drops its batch.
//! * **One active runner per projection across instances** (`run_forever`): a session advisory
//!   lock per projection, held on a connection of its own; the others wait their turn.
//! * **Following live**: a poll every interval is the truth; an in-process wake-up (the API calls
//!   [`Runner::wake`] after it appends) makes it prompt on the instance that wrote.

use std::sync::Arc;
use std::time::Duration;

use eventlog::{Checkpoint, EventLog, RecordedEvent};
use tokio::sync::Notify;

use crate::{Error, Projection, tables};

/// Where a batch stands when a [`Hook`] is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The batch is written to the projection's tables; the transaction has not committed.
    Applied,
}

/// Called at each [`Stage`] of a batch with the projection; returning `false` stops the batch
/// there, uncommitted, as a crash would (tests).
pub type Hook = Arc<dyn Fn(Stage, Projection) -> bool + Send + Sync>;

/// What one step did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Applied this many events.
    Applied(usize),
    /// Nothing new below the commit horizon.
    CaughtUp,
    /// Another runner moved the checkpoint first; try again.
    Raced,
}

/// Runs the projections of one database.
#[derive(Clone)]
pub struct Runner {
    log: EventLog,
    batch: i64,
    hook: Option<Hook>,
    wake: Arc<Notify>,
}

impl Runner {
    pub fn new(log: EventLog) -> Runner {
        Runner {
            log,
            batch: 2000,
            hook: None,
            wake: Arc::new(Notify::new()),
        }
    }

    /// Events per batch.
    pub fn with_batch(mut self, batch: i64) -> Runner {
        self.batch = batch.max(1);
        self
    }

    /// A hook called inside each batch (tests that stop a batch before its commit).
    pub fn with_hook(mut self, hook: Hook) -> Runner {
        self.hook = Some(hook);
        self
    }

    pub fn log(&self) -> &EventLog {
        &self.log
    }

    /// Tells the followers there is something new (this instance appended).
    pub fn wake(&self) {
        self.wake.notify_waiters();
    }

    /// The stored checkpoint of a projection and the events it has applied.
    pub async fn checkpoint(&self, p: Projection) -> Result<(Checkpoint, i64), Error> {
        let client = self.log.pool().get().await?;
        let row = client
            .query_one(
                "SELECT tx, position, events FROM projection_checkpoints WHERE name = $1",
                &[&p.name()],
            )
            .await?;
        Ok((
            Checkpoint {
                tx: row.get(0),
                position: row.get(1),
            },
            row.get(2),
        ))
    }

    /// Reads and applies one batch.
    pub async fn step(&self, p: Projection) -> Result<Step, Error> {
        let (from, _) = self.checkpoint(p).await?;
        let events = self
            .log
            .read_types_after(from, p.event_types(), self.batch)
            .await?;
        let Some(last) = events.last().map(RecordedEvent::checkpoint) else {
            return Ok(Step::CaughtUp);
        };
        let mut client = self.log.pool().get().await?;
        let tx = client.transaction().await?;
        let row = tx
            .query_one(
                "SELECT tx, position FROM projection_checkpoints WHERE name = $1 FOR UPDATE",
                &[&p.name()],
            )
            .await?;
        let locked = Checkpoint {
            tx: row.get(0),
            position: row.get(1),
        };
        if locked != from {
            return Ok(Step::Raced);
        }
        tables::apply(&tx, p, &events).await?;
        if let Some(hook) = &self.hook
            && !hook(Stage::Applied, p)
        {
            // Dropping the transaction rolls it back: nothing of the batch remains.
            return Err(Error::Hooked(Stage::Applied));
        }
        let n = i64::try_from(events.len()).unwrap_or(i64::MAX);
        tx.execute(
            "UPDATE projection_checkpoints SET tx = $2, position = $3, events = events + $4, \
             updated_at = now() WHERE name = $1",
            &[&p.name(), &last.tx, &last.position, &n],
        )
        .await?;
        tx.commit().await?;
        Ok(Step::Applied(events.len()))
    }

    /// Applies batches until the projection has caught up with the committed log; returns the
    /// events applied.
    pub async fn catch_up(&self, p: Projection) -> Result<u64, Error> {
        let mut total = 0u64;
        loop {
            match self.step(p).await? {
                Step::Applied(n) => total += n as u64,
                Step::Raced => tokio::task::yield_now().await,
                Step::CaughtUp => return Ok(total),
            }
        }
    }

    /// Applies at least every event of the projection's types committed before this call
    /// (read-your-writes for admins, the CLI and tests). [`Runner::catch_up`] stops at the
    /// commit horizon, which any transaction still running anywhere in the cluster holds back;
    /// this waits for the horizon to pass the last such event, polling every few milliseconds.
    pub async fn sync(&self, p: Projection) -> Result<u64, Error> {
        let target = self.last_committed(p).await?;
        let mut total = self.catch_up(p).await?;
        let Some(target) = target else {
            return Ok(total);
        };
        let mut pause = Duration::from_millis(1);
        while self.checkpoint(p).await?.0 < target {
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(50));
            total += self.catch_up(p).await?;
        }
        Ok(total)
    }

    /// The last event of the projection's types that this moment's snapshot sees committed.
    pub async fn last_committed(&self, p: Projection) -> Result<Option<Checkpoint>, Error> {
        let client = self.log.pool().get().await?;
        Ok(client
            .query_opt(
                "SELECT e.tx::text::bigint, e.position FROM events e \
                 WHERE e.event_type = ANY($1) ORDER BY e.tx DESC, e.position DESC LIMIT 1",
                &[&p.event_types()],
            )
            .await?
            .map(|r| Checkpoint {
                tx: r.get(0),
                position: r.get(1),
            }))
    }

    /// [`Runner::sync`] for every projection.
    pub async fn sync_all(&self) -> Result<u64, Error> {
        let mut total = 0;
        for p in Projection::ALL {
            total += self.sync(p).await?;
        }
        Ok(total)
    }

    /// The background loop of `discs serve`: for each projection, becomes its one active runner
    /// when no other instance is (advisory lock), then follows the log.
    pub async fn run_forever(self, interval: Duration) {
        for p in Projection::ALL {
            let runner = self.clone();
            tokio::spawn(async move { runner.lead(p, interval).await });
        }
    }

    async fn lead(&self, p: Projection, interval: Duration) {
        loop {
            match self.lead_once(p, interval).await {
                Ok(()) => {}
                Err(e) => tracing::warn!(projection = %p, error = %e, "projection runner failed"),
            }
            tokio::time::sleep(interval.max(Duration::from_millis(100)) * 4).await;
        }
    }

    /// Holds the projection's lock while the connection lives and keeps it current.
    async fn lead_once(&self, p: Projection, interval: Duration) -> Result<(), Error> {
        let lock = self.log.pool().get().await?;
        let held: bool = lock
            .query_one("SELECT pg_try_advisory_lock($1)", &[&p.lock_key()])
            .await?
            .get(0);
        if !held {
            return Ok(());
        }
        let result: Result<(), Error> = async {
            loop {
                let wake = self.wake.notified();
                self.catch_up(p).await?;
                // The lock's connection must still be alive: we are still the leader.
                lock.simple_query("").await?;
                let _ = tokio::time::timeout(interval, wake).await;
            }
        }
        .await;
        let _ = lock
            .query("SELECT pg_advisory_unlock($1)", &[&p.lock_key()])
            .await;
        result
    }
}
