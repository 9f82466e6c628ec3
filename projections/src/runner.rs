//! The projection runner: reads each projection's events after its checkpoint, applies them and
//! moves the checkpoint in one transaction; catches up, then follows the log.
//!
//! * **Exactly once.** A batch is read after the stored checkpoint, then applied in a
//!   transaction that first locks the checkpoint row and checks it still is where the batch
//!   started; the checkpoint moves in that same transaction. A crash before commit leaves both
//!   untouched; a second runner that raced gets a different checkpoint and drops its batch.
//! * **One active runner per projection across instances** (`run_forever`): a session advisory
//!   lock per projection, held on a connection of its own; the others wait their turn.
//! * **Never rescanning**: a checkpoint moves past every event read, matching or not, so no read
//!   ever goes over old events again.
//! * **Following live without reads of its own**: the instance's one reader of the log hands
//!   every batch it reads to the leaders ([`Batch`]); a leader applies the events of its types
//!   from memory, and moves its stored checkpoint over batches with none at most once per
//!   [`FLUSH`], so a stream of moves costs the projections no read and (almost) no commit. A
//!   leader that missed a batch, or finds its checkpoint moved by someone else, catches up by
//!   reading the log itself.

use std::sync::Arc;
use std::time::{Duration, Instant};

use eventlog::{Checkpoint, EventLog, RecordedEvent};
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

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

/// How long [`Runner::sync_to`] waits for the commit horizon before giving up.
pub const SYNC_PATIENCE: Duration = Duration::from_secs(60);

/// How often, at most, a leader writes a checkpoint that only steps over events it does not
/// handle.
pub const FLUSH: Duration = Duration::from_secs(1);

/// Events read by the instance's reader of the log: every committed event after `from`, up to
/// and including `to`, in commit-safe order.
#[derive(Debug, Clone)]
pub struct Batch {
    pub from: Checkpoint,
    pub to: Checkpoint,
    pub events: Vec<RecordedEvent>,
}

/// Runs the projections of one database.
#[derive(Clone)]
pub struct Runner {
    log: EventLog,
    batch: i64,
    hook: Option<Hook>,
    explorer_plies: crate::explorer::Plies,
    /// The tournaments this runner folded, at the version of its last batch.
    folds: std::sync::Arc<crate::tournaments::Folds>,
}

impl Runner {
    pub fn new(log: EventLog) -> Runner {
        Runner {
            log,
            batch: 2000,
            hook: None,
            explorer_plies: crate::explorer::Plies::default(),
            folds: Default::default(),
        }
    }

    /// The tournaments this runner folded (see [`crate::tournaments`]).
    pub fn folds(&self) -> &crate::tournaments::Folds {
        &self.folds
    }

    /// How many plies of each game the explorer counts (the defaults otherwise).
    pub fn with_explorer_plies(mut self, plies: crate::explorer::Plies) -> Runner {
        self.explorer_plies = plies;
        self
    }

    /// How many plies of each game the explorer counts.
    pub fn explorer_plies(&self) -> &crate::explorer::Plies {
        &self.explorer_plies
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

    /// Reads one batch of the log after the checkpoint, applies the events of the projection's
    /// types, and moves the checkpoint past every event read.
    pub async fn step(&self, p: Projection) -> Result<Step, Error> {
        let (from, _) = self.checkpoint(p).await?;
        let events = self.log.read_all_after(from, self.batch).await?;
        let Some(last) = events.last().map(RecordedEvent::checkpoint) else {
            return Ok(Step::CaughtUp);
        };
        let mine: Vec<RecordedEvent> = events.into_iter().filter(|e| handles(p, e)).collect();
        if self.apply_from(p, from, &mine, last).await? {
            Ok(Step::Applied(mine.len()))
        } else {
            Ok(Step::Raced)
        }
    }

    /// In one transaction: locks the checkpoint row, checks it is still `from`, applies
    /// `events` (the projection's events between `from` and `to`), and moves it to `to`.
    /// `false` (and nothing written) when the checkpoint had moved.
    async fn apply_from(
        &self,
        p: Projection,
        from: Checkpoint,
        events: &[RecordedEvent],
        to: Checkpoint,
    ) -> Result<bool, Error> {
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
            return Ok(false);
        }
        if !events.is_empty() {
            tables::apply(&tx, p, events, &self.explorer_plies, &self.folds).await?;
        }
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
            &[&p.name(), &to.tx, &to.position, &n],
        )
        .await?;
        tx.commit().await?;
        Ok(true)
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
        match self.last_committed(p).await? {
            Some(target) => self.sync_to(p, target).await,
            None => self.catch_up(p).await,
        }
    }

    /// Applies batches until the projection's checkpoint has reached `target` (an event known
    /// to be committed), waiting for the commit horizon to pass it.
    pub async fn sync_to(&self, p: Projection, target: Checkpoint) -> Result<u64, Error> {
        let mut total = self.catch_up(p).await?;
        let mut pause = Duration::from_millis(1);
        let mut waited = Duration::ZERO;
        while self.checkpoint(p).await?.0 < target {
            // A transaction that stays open this long is stuck, or the projection cannot get
            // past the target: say so rather than wait forever.
            if waited >= SYNC_PATIENCE {
                return Err(Error::Stalled {
                    projection: p,
                    target,
                });
            }
            tokio::time::sleep(pause).await;
            waited += pause;
            pause = (pause * 2).min(Duration::from_millis(50));
            total += self.catch_up(p).await?;
        }
        Ok(total)
    }

    /// The last event of the projection's types that this moment's snapshot sees committed.
    pub async fn last_committed(&self, p: Projection) -> Result<Option<Checkpoint>, Error> {
        let client = self.log.pool().get().await?;
        Ok(eventlog::last_of_types(&client, p.event_types()).await?)
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
    /// when no other instance is (advisory lock), then follows the batches the instance's
    /// reader of the log hands out.
    pub async fn run_forever(self, interval: Duration, batches: broadcast::Sender<Arc<Batch>>) {
        for p in Projection::ALL {
            let runner = self.clone();
            let batches = batches.clone();
            tokio::spawn(async move { runner.lead(p, interval, batches).await });
        }
    }

    async fn lead(
        &self,
        p: Projection,
        interval: Duration,
        batches: broadcast::Sender<Arc<Batch>>,
    ) {
        loop {
            match self.lead_once(p, interval, &batches).await {
                Ok(()) => {}
                Err(e) => tracing::warn!(projection = %p, error = %e, "projection runner failed"),
            }
            tokio::time::sleep(interval.max(Duration::from_millis(100)) * 4).await;
        }
    }

    /// Holds the projection's lock while the connection lives and keeps it current.
    async fn lead_once(
        &self,
        p: Projection,
        interval: Duration,
        batches: &broadcast::Sender<Arc<Batch>>,
    ) -> Result<(), Error> {
        let lock = self.log.pool().get().await?;
        let held: bool = lock
            .query_one("SELECT pg_try_advisory_lock($1)", &[&p.lock_key()])
            .await?
            .get(0);
        if !held {
            return Ok(());
        }
        let result = self.follow(p, interval, batches.subscribe(), &lock).await;
        let _ = lock
            .query("SELECT pg_advisory_unlock($1)", &[&p.lock_key()])
            .await;
        result
    }

    /// Applies the batches as they come (see [`Follower`]).
    async fn follow(
        &self,
        p: Projection,
        interval: Duration,
        mut batches: broadcast::Receiver<Arc<Batch>>,
        lock: &deadpool_postgres::Object,
    ) -> Result<(), Error> {
        let mut follower = Follower::start(self, p).await?;
        loop {
            match tokio::time::timeout(interval, batches.recv()).await {
                Ok(Ok(batch)) => follower.take(self, &batch).await?,
                Ok(Err(RecvError::Lagged(_))) => follower.catch_up(self).await?,
                Ok(Err(RecvError::Closed)) => return Ok(()),
                Err(_idle) => {
                    // The lock's connection must still be alive: we are still the leader.
                    lock.simple_query("").await?;
                }
            }
            if follower.flushed.elapsed() >= FLUSH {
                follower.flush(self).await?;
            }
        }
    }

    /// Catches up by reading the log; the stored checkpoint after it.
    async fn caught_up(&self, p: Projection) -> Result<Checkpoint, Error> {
        self.catch_up(p).await?;
        Ok(self.checkpoint(p).await?.0)
    }
}

/// A leader following the log reader's batches. `stored` is the checkpoint as this leader last
/// wrote it; every event after it up to `covered` was seen here and is not of the projection's
/// types, so a batch that starts at or before `covered` is applied from memory. Anything else
/// (a gap, a checkpoint moved by someone else) is caught up by reading the log.
#[derive(Debug)]
pub struct Follower {
    p: Projection,
    stored: Checkpoint,
    covered: Checkpoint,
    flushed: Instant,
}

impl Follower {
    /// Catches the projection up by reading, then follows from there.
    pub async fn start(runner: &Runner, p: Projection) -> Result<Follower, Error> {
        let stored = runner.caught_up(p).await?;
        Ok(Follower {
            p,
            stored,
            covered: stored,
            flushed: Instant::now(),
        })
    }

    /// Where the stored checkpoint stands, and how far this follower has seen.
    pub fn position(&self) -> (Checkpoint, Checkpoint) {
        (self.stored, self.covered)
    }

    /// Takes a batch: applies its events of the projection's types (one transaction that moves
    /// the checkpoint to the batch's end), or only notes that it was seen.
    pub async fn take(&mut self, runner: &Runner, batch: &Batch) -> Result<(), Error> {
        if batch.to <= self.covered {
            return Ok(());
        }
        if batch.from > self.covered {
            // A gap (this leader missed the batch before): read it.
            return self.catch_up(runner).await;
        }
        let mine: Vec<RecordedEvent> = batch
            .events
            .iter()
            .filter(|e| e.checkpoint() > self.covered && handles(self.p, e))
            .cloned()
            .collect();
        if mine.is_empty() {
            self.covered = batch.to;
        } else if runner
            .apply_from(self.p, self.stored, &mine, batch.to)
            .await?
        {
            (self.stored, self.covered, self.flushed) = (batch.to, batch.to, Instant::now());
        } else {
            self.catch_up(runner).await?;
        }
        Ok(())
    }

    /// Writes the checkpoint over the events seen since the last write, if any.
    pub async fn flush(&mut self, runner: &Runner) -> Result<(), Error> {
        self.flushed = Instant::now();
        if self.covered == self.stored {
            return Ok(());
        }
        if runner
            .apply_from(self.p, self.stored, &[], self.covered)
            .await?
        {
            self.stored = self.covered;
            Ok(())
        } else {
            self.catch_up(runner).await
        }
    }

    async fn catch_up(&mut self, runner: &Runner) -> Result<(), Error> {
        self.stored = runner.caught_up(self.p).await?;
        self.covered = self.stored;
        Ok(())
    }
}

/// Whether a projection reads this event.
fn handles(p: Projection, e: &RecordedEvent) -> bool {
    p.event_types().contains(&e.event_type.as_str())
}
