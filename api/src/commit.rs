//! Group commit: the commands of one instance go to PostgreSQL together, each with its match's
//! work row and its `Idempotency-Key` answer, in one transaction per batch.
//!
//! A command is handed to [`Committer::submit`] and answered once its batch has committed (or
//! failed). Committer tasks take whatever commands are waiting (up to [`MAX_BATCH`]), append them
//! with one `eventlog_append_batch` call (each stream's expected version checked on its own, a
//! conflict failing only its own command), write the work rows and stored answers of the
//! commands that went through, and commit. Under load a batch carries many commands for one
//! commit; alone, a command waits for nobody.

use std::sync::{Arc, RwLock};

use deadpool_postgres::{GenericClient, Pool};
use serde_json::Value;
use time::OffsetDateTime;
use tokio::sync::{Mutex, mpsc, oneshot};
use tokio_postgres::error::SqlState;
use uuid::Uuid;

use eventlog::{AppendError, AppendOutcome, EventLog, StreamAppend};

/// Commands per batch at most: each runs in a subtransaction, and PostgreSQL keeps up to 64
/// subtransaction ids per transaction before snapshots get slower for everyone.
pub const MAX_BATCH: usize = 48;

/// The `match_work` row a command leaves behind.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkRow {
    pub match_id: Uuid,
    /// The match version this row was computed from: an older write never overwrites it.
    pub version: i64,
    /// `None`: the match is finished and its row goes.
    pub pending: Option<Pending>,
}

/// What an active match waits for.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub state_due: Option<OffsetDateTime>,
    pub watch: [bool; 2],
    /// When each seat was last seen (the match's start when never).
    pub seen: [OffsetDateTime; 2],
}

/// A stored answer to a request with an `Idempotency-Key`, committed with its command.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredAnswer {
    pub player: Uuid,
    pub key: String,
    pub request_hash: Vec<u8>,
    pub status: u16,
    pub body: Value,
    pub at: OffsetDateTime,
}

/// One command for the log, with what commits beside it.
pub struct Job {
    pub command_id: Uuid,
    pub appends: Vec<StreamAppend>,
    pub work: Option<WorkRow>,
    pub answer: Option<StoredAnswer>,
}

/// Why a command's batch did not answer it.
#[derive(Debug, thiserror::Error)]
pub enum CommitError {
    #[error(transparent)]
    Append(#[from] AppendError),
    #[error("the batch failed: {0}")]
    Batch(String),
    /// A test hook stopped the batch at this stage.
    #[error("stopped by a hook at {0:?}")]
    Hooked(Stage),
}

/// Where a batch stands when the hook is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Everything is written; the transaction has not committed.
    BeforeCommit,
    /// The transaction has committed; no caller has been answered.
    AfterCommit,
}

/// Called at each [`Stage`] of a batch; `false` fails every command of the batch there, as a
/// crash would (before the commit nothing remains; after it, everything does).
pub type Hook = Arc<dyn Fn(Stage) -> bool + Send + Sync>;

type Reply = oneshot::Sender<Result<AppendOutcome, CommitError>>;

/// The instance's committer: a queue and the tasks that drain it.
#[derive(Clone)]
pub struct Committer {
    queue: mpsc::Sender<(Job, Reply)>,
    hook: Arc<RwLock<Option<Hook>>>,
}

impl Committer {
    /// Starts `tasks` committer tasks on `pool` (each holds at most one connection while it
    /// commits; more tasks overlap one batch's round trips with the next one's flush).
    pub fn start(pool: Pool, tasks: usize) -> Committer {
        let (queue, receiver) = mpsc::channel(4096);
        let receiver = Arc::new(Mutex::new(receiver));
        let hook: Arc<RwLock<Option<Hook>>> = Arc::default();
        for _ in 0..tasks.max(1) {
            let (receiver, pool, hook) = (receiver.clone(), pool.clone(), hook.clone());
            tokio::spawn(async move {
                while let Some(batch) = next_batch(&receiver).await {
                    run(&pool, &hook, batch).await;
                }
            });
        }
        Committer { queue, hook }
    }

    /// Sets (or clears) the hook called inside every batch (tests that crash a batch).
    pub fn set_hook(&self, hook: Option<Hook>) {
        *self.hook.write().unwrap_or_else(|p| p.into_inner()) = hook;
    }

    /// Commits `job` with whatever else is waiting; answers once it is durable.
    pub async fn submit(&self, job: Job) -> Result<AppendOutcome, CommitError> {
        let (reply, answer) = oneshot::channel();
        self.queue
            .send((job, reply))
            .await
            .map_err(|_| CommitError::Batch("the committer has stopped".into()))?;
        answer
            .await
            .map_err(|_| CommitError::Batch("the committer dropped the command".into()))?
    }
}

/// Waits for one command, then takes every other one already waiting, up to [`MAX_BATCH`].
async fn next_batch(receiver: &Mutex<mpsc::Receiver<(Job, Reply)>>) -> Option<Vec<(Job, Reply)>> {
    let mut receiver = receiver.lock().await;
    let first = receiver.recv().await?;
    let mut batch = vec![first];
    while batch.len() < MAX_BATCH {
        match receiver.try_recv() {
            Ok(next) => batch.push(next),
            Err(_) => break,
        }
    }
    Some(batch)
}

/// Commits a batch and answers its callers. Two copies of one command never share a batch
/// (the second waits for the next one), and commands go in stream order, so that two
/// batches lock their streams in one order. A batch that fails as a whole (a deadlock with a
/// writer outside the committer, say) is retried one command at a time.
async fn run(pool: &Pool, hook: &RwLock<Option<Hook>>, mut batch: Vec<(Job, Reply)>) {
    batch.sort_by(|a, b| first_stream(&a.0).cmp(first_stream(&b.0)));
    let mut later = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut now = Vec::with_capacity(batch.len());
    for item in batch {
        if seen.insert(item.0.command_id) {
            now.push(item);
        } else {
            later.push(item);
        }
    }
    let hook = hook.read().unwrap_or_else(|p| p.into_inner()).clone();
    for group in [now, later] {
        if group.is_empty() {
            continue;
        }
        let jobs: Vec<&Job> = group.iter().map(|(j, _)| j).collect();
        match commit(pool, hook.as_ref(), &jobs).await {
            Ok(answers) => {
                for ((_, reply), answer) in group.into_iter().zip(answers) {
                    let _ = reply.send(answer.map_err(CommitError::from));
                }
            }
            Err(e) if group.len() > 1 && retry_alone(&e) => {
                for (job, reply) in group {
                    let answer = match commit(pool, hook.as_ref(), &[&job]).await {
                        Ok(mut answers) => answers.pop().map_or_else(
                            || Err(CommitError::Batch("no answer".into())),
                            |a| a.map_err(CommitError::from),
                        ),
                        Err(e) => Err(e),
                    };
                    let _ = reply.send(answer);
                }
            }
            Err(e) => {
                let text = e.to_string();
                for (_, reply) in group {
                    let _ = reply.send(Err(match &e {
                        CommitError::Hooked(stage) => CommitError::Hooked(*stage),
                        _ => CommitError::Batch(text.clone()),
                    }));
                }
            }
        }
    }
}

fn first_stream(job: &Job) -> &str {
    job.appends.first().map_or("", |a| a.stream.as_str())
}

/// Whether a failed batch may succeed command by command (a deadlock or a serialization
/// failure with some other writer), rather than failing for every command alike.
fn retry_alone(e: &CommitError) -> bool {
    let CommitError::Append(AppendError::Store(eventlog::Error::Db(db))) = e else {
        return false;
    };
    matches!(
        db.code(),
        Some(&SqlState::T_R_DEADLOCK_DETECTED | &SqlState::T_R_SERIALIZATION_FAILURE)
    )
}

const UPSERT_WORK: &str = "INSERT INTO match_work AS w \
        (match_id, state_due, watch1, watch2, seen1, seen2, version) \
    SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::bool[], $4::bool[], \
        $5::timestamptz[], $6::timestamptz[], $7::bigint[]) \
    ON CONFLICT (match_id) DO UPDATE SET \
        state_due = CASE WHEN w.version <= EXCLUDED.version THEN EXCLUDED.state_due ELSE w.state_due END, \
        watch1 = CASE WHEN w.version <= EXCLUDED.version THEN EXCLUDED.watch1 ELSE w.watch1 END, \
        watch2 = CASE WHEN w.version <= EXCLUDED.version THEN EXCLUDED.watch2 ELSE w.watch2 END, \
        seen1 = greatest(w.seen1, EXCLUDED.seen1), \
        seen2 = greatest(w.seen2, EXCLUDED.seen2), \
        version = greatest(w.version, EXCLUDED.version)";

const DELETE_WORK: &str = "DELETE FROM match_work WHERE match_id = ANY($1)";

const STORE_ANSWERS: &str = "INSERT INTO idempotency_keys \
        (player_id, key, request_hash, status, body, created_at) \
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::bytea[], $4::int[], $5::jsonb[], \
        $6::timestamptz[]) \
    ON CONFLICT DO NOTHING";

/// One transaction: the appends, then the work rows and answers of the commands that went
/// through. `Err` when the batch as a whole failed (nothing of it committed, or a hook).
async fn commit(
    pool: &Pool,
    hook: Option<&Hook>,
    jobs: &[&Job],
) -> Result<Vec<Result<AppendOutcome, AppendError>>, CommitError> {
    let mut client = pool.get().await.map_err(AppendError::from)?;
    let tx = client.transaction().await.map_err(AppendError::from)?;
    let commands: Vec<(Uuid, &[StreamAppend])> = jobs
        .iter()
        .map(|j| (j.command_id, j.appends.as_slice()))
        .collect();
    let answers = EventLog::append_batch_on(&tx, &commands).await?;
    let through = || {
        jobs.iter()
            .zip(&answers)
            .filter(|(_, a)| matches!(a, Ok(AppendOutcome::Appended(_))))
            .map(|(j, _)| *j)
    };
    let work: Vec<&WorkRow> = through().filter_map(|j| j.work.as_ref()).collect();
    let mut stored = AnswerColumns::default();
    for a in through().filter_map(|j| j.answer.as_ref()) {
        stored.push(a);
    }
    let (worked, answered) = tokio::join!(write_work(&tx, &work), async {
        if stored.players.is_empty() {
            return Ok(0);
        }
        let statement = tx.prepare_cached(STORE_ANSWERS).await?;
        tx.execute(
            &statement,
            &[
                &stored.players,
                &stored.keys,
                &stored.hashes,
                &stored.statuses,
                &stored.bodies,
                &stored.at,
            ],
        )
        .await
    });
    worked.map_err(AppendError::from)?;
    answered.map_err(AppendError::from)?;
    if let Some(hook) = hook
        && !hook(Stage::BeforeCommit)
    {
        // Dropping the transaction rolls it back: nothing of the batch remains.
        return Err(CommitError::Hooked(Stage::BeforeCommit));
    }
    tx.commit().await.map_err(AppendError::from)?;
    if let Some(hook) = hook
        && !hook(Stage::AfterCommit)
    {
        return Err(CommitError::Hooked(Stage::AfterCommit));
    }
    Ok(answers)
}

/// Writes work rows in the caller's transaction: upserts for active matches (an older version
/// never overwrites a newer row's timers), deletes for finished ones.
pub async fn write_work(
    client: &impl GenericClient,
    rows: &[&WorkRow],
) -> Result<(), tokio_postgres::Error> {
    let mut upsert = WorkColumns::default();
    let mut delete: Vec<Uuid> = Vec::new();
    for w in rows {
        match &w.pending {
            Some(p) => upsert.push(w, p),
            None => delete.push(w.match_id),
        }
    }
    let (upserted, deleted) = tokio::join!(
        async {
            if upsert.ids.is_empty() {
                return Ok(0);
            }
            let statement = client.prepare_cached(UPSERT_WORK).await?;
            client
                .execute(
                    &statement,
                    &[
                        &upsert.ids,
                        &upsert.due,
                        &upsert.watch1,
                        &upsert.watch2,
                        &upsert.seen1,
                        &upsert.seen2,
                        &upsert.versions,
                    ],
                )
                .await
        },
        async {
            if delete.is_empty() {
                return Ok(0);
            }
            let statement = client.prepare_cached(DELETE_WORK).await?;
            client.execute(&statement, &[&delete]).await
        },
    );
    upserted?;
    deleted?;
    Ok(())
}

#[derive(Default)]
struct WorkColumns {
    ids: Vec<Uuid>,
    due: Vec<Option<OffsetDateTime>>,
    watch1: Vec<bool>,
    watch2: Vec<bool>,
    seen1: Vec<OffsetDateTime>,
    seen2: Vec<OffsetDateTime>,
    versions: Vec<i64>,
}

impl WorkColumns {
    fn push(&mut self, w: &WorkRow, p: &Pending) {
        self.ids.push(w.match_id);
        self.due.push(p.state_due);
        self.watch1.push(p.watch[0]);
        self.watch2.push(p.watch[1]);
        self.seen1.push(p.seen[0]);
        self.seen2.push(p.seen[1]);
        self.versions.push(w.version);
    }
}

#[derive(Default)]
struct AnswerColumns {
    players: Vec<Uuid>,
    keys: Vec<String>,
    hashes: Vec<Vec<u8>>,
    statuses: Vec<i32>,
    bodies: Vec<Value>,
    at: Vec<OffsetDateTime>,
}

impl AnswerColumns {
    fn push(&mut self, a: &StoredAnswer) {
        self.players.push(a.player);
        self.keys.push(a.key.clone());
        self.hashes.push(a.request_hash.clone());
        self.statuses.push(i32::from(a.status));
        self.bodies.push(a.body.clone());
        self.at.push(a.at);
    }
}
