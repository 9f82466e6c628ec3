//! Group commit: the commands of one instance go to PostgreSQL together, each with its match's
//! work row and its `Idempotency-Key` answer, in one transaction per batch.
//!
//! A command is handed to [`Committer::submit`] and answered once its batch has committed (or
//! failed). Each thread that submits commands has its own lane (a queue, its tasks and their
//! connections, all on that thread). A lane's tasks take whatever commands are waiting (up to
//! [`MAX_BATCH`]) and commit them in rounds where no stream appears twice, each stream's
//! expected version checked on its own, a conflict failing only its own command:
//! * a round of commands on known heads is one statement ([`ROUNDS`]): the log's `WITH`
//!   clauses ([`eventlog::append_on_heads_with!`], on [`HeadBatch`]'s typed arguments), then the
//!   live path's, writing the work rows and stored answers of the streams it moved; one round
//!   trip, a transaction of its own, no `BEGIN` or `COMMIT`, no database function around it;
//! * any other round (a command creating a stream or on several, or a retry) is a transaction:
//!   one `eventlog_append_batch` call, then the work rows and stored answers of the commands
//!   that went through, then the commit.
//!
//! Under load a batch carries many commands for one commit; alone, a command waits for nobody.
//!
//! A round names only the tables it has rows for (a round without work rows or answers has no
//! clause for them): a table named with no rows still costs PostgreSQL its opening, locking and
//! checks, and a round of moves without `Idempotency-Key` is then the append and the work-row
//! upsert alone. The log's SQL is the log crate's: its clauses come from it whole, and this
//! module's name only the live path's tables. A test hook can fail a batch just before or just
//! after its commit.

use std::collections::HashMap;
use std::sync::{Arc, Mutex as StdMutex, RwLock};
use std::thread::ThreadId;

use deadpool_postgres::{GenericClient, Pool};
use time::OffsetDateTime;
use tokio::sync::{Mutex, mpsc, oneshot};
use tokio_postgres::error::SqlState;
use uuid::Uuid;

use domain::ids::{MatchId, PlayerId};

use eventlog::{
    AppendError, AppendOutcome, EventLog, Hash, HeadAppend, HeadArguments, HeadBatch, StreamAppend,
};
use tokio_postgres::types::ToSql;

/// Commands per batch at most: a bound on one transaction's locks and on the wait of a batch's
/// first caller.
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
    /// The human of a solo match against CPU level 4 or 5 (counted against
    /// `DISCS_STRONG_SOLO_PER_PLAYER`).
    pub strong_player: Option<Uuid>,
    /// The fair-play guard of a ranked match beyond its public opening: its stored form and
    /// its position's depth (`domain::boundary::Guard`).
    pub live_key: Option<(String, u32)>,
    /// The match's human players: seated in `live_seats` when the row is written by
    /// [`write_work`] (a creation or a repair; a round's own upsert leaves them as they are).
    pub players: Vec<Uuid>,
}

/// A stored answer to a request with an `Idempotency-Key`, committed with its command.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredAnswer {
    pub player: Uuid,
    pub key: String,
    pub request_hash: Vec<u8>,
    pub status: u16,
    /// The body's bytes, as the request answers them.
    pub body: String,
    pub at: OffsetDateTime,
}

/// One command for the log, with what commits beside it.
pub struct Job {
    pub command_id: Uuid,
    pub appends: Vec<StreamAppend>,
    pub work: Option<WorkRow>,
    pub answer: Option<StoredAnswer>,
    /// The hash of the stream's last event, when the command's state came with it: a command
    /// on one existing stream then takes the set-based fast path ([`EventLog::append_on_heads`]).
    pub head: Option<Hash>,
}

/// Why a command's batch did not answer it.
#[derive(Debug, thiserror::Error)]
pub enum CommitError {
    #[error(transparent)]
    Append(#[from] AppendError),
    #[error("the batch failed: {0}")]
    Batch(String),
    /// The batch failed because the database is out of reach: its outcome may be unknown (a
    /// connection lost at commit), and a retry of the same command is safe.
    #[error("the database is out of reach: {0}")]
    Unavailable(String),
    /// A test hook stopped the batch at this stage.
    #[error("stopped by a hook at {0:?}")]
    Hooked(Stage),
}

impl CommitError {
    /// Whether the command failed because the database is out of reach.
    pub fn is_outage(&self) -> bool {
        match self {
            CommitError::Append(e) => e.is_outage(),
            CommitError::Unavailable(_) => true,
            CommitError::Batch(_) | CommitError::Hooked(_) => false,
        }
    }
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

/// The instance's committer: a lane per thread that submits commands, each a queue, the tasks
/// that drain it and their own connections.
///
/// A lane's tasks and connections live on the thread of its callers: on an HTTP worker (a
/// single-threaded runtime) the request, its batch and PostgreSQL's answer are handled in one
/// wake-up of one thread, with no hop to another thread and back. Under load on a shared
/// machine each such hop waits for a core, and it was most of a move's latency.
#[derive(Clone)]
pub struct Committer {
    inner: Arc<Inner>,
}

struct Inner {
    settings: tokio_postgres::Config,
    tasks: usize,
    lanes: StdMutex<HashMap<ThreadId, mpsc::Sender<(Job, Reply)>>>,
    hook: Arc<RwLock<Option<Hook>>>,
}

impl Committer {
    /// A committer whose lanes run `tasks` tasks each, with a connection each (more tasks
    /// overlap one batch's round trip with the next one's flush), connected with `settings`
    /// ([`database::settings`]) and [`eventlog::WRITERS_OPTIONS`]. Lanes start with their first
    /// command.
    pub fn new(mut settings: tokio_postgres::Config, tasks: usize) -> Committer {
        // A round's plan stays index lookups whatever the statistics said when it was made.
        let options = match settings.get_options() {
            Some(o) => format!("{o} {}", eventlog::WRITERS_OPTIONS),
            None => eventlog::WRITERS_OPTIONS.to_owned(),
        };
        settings.options(&options);
        Committer {
            inner: Arc::new(Inner {
                settings,
                tasks: tasks.max(1),
                lanes: StdMutex::default(),
                hook: Arc::default(),
            }),
        }
    }

    /// Sets (or clears) the hook called inside every batch (tests that crash a batch).
    pub fn set_hook(&self, hook: Option<Hook>) {
        *self.inner.hook.write().unwrap_or_else(|p| p.into_inner()) = hook;
    }

    /// Commits `job` with whatever else is waiting on this thread's lane; answers once it is
    /// durable.
    pub async fn submit(&self, job: Job) -> Result<AppendOutcome, CommitError> {
        let (reply, answer) = oneshot::channel();
        let mut item = (job, reply);
        // A lane whose runtime has stopped is replaced once.
        for _ in 0..2 {
            let lane = self.lane()?;
            match lane.send(item).await {
                Ok(()) => {
                    return answer.await.map_err(|_| {
                        CommitError::Batch("the committer dropped the command".into())
                    })?;
                }
                Err(mpsc::error::SendError(back)) => item = back,
            }
        }
        Err(CommitError::Batch("the committer has stopped".into()))
    }

    /// This thread's lane, started (on this thread's runtime) if it has none or its tasks
    /// have stopped.
    fn lane(&self) -> Result<mpsc::Sender<(Job, Reply)>, CommitError> {
        let mut lanes = self.inner.lanes.lock().unwrap_or_else(|p| p.into_inner());
        let thread = std::thread::current().id();
        if let Some(lane) = lanes.get(&thread).filter(|l| !l.is_closed()) {
            return Ok(lane.clone());
        }
        let pool = database::pool(self.inner.settings.clone(), self.inner.tasks)
            .map_err(|e| CommitError::Batch(e.to_string()))?;
        let (queue, receiver) = mpsc::channel(4096);
        let receiver = Arc::new(Mutex::new(receiver));
        for _ in 0..self.inner.tasks {
            let (receiver, pool, hook) = (receiver.clone(), pool.clone(), self.inner.hook.clone());
            tokio::spawn(async move {
                while let Some(batch) = next_batch(&receiver).await {
                    run(&pool, &hook, batch).await;
                }
            });
        }
        lanes.insert(thread, queue.clone());
        Ok(queue)
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

/// Commits a batch and answers its callers, in rounds of one transaction each: two copies of
/// one command, or two commands on one stream, never share a round (the second waits for the
/// next one), and commands go in stream order, so that two rounds lock their streams in one
/// order. A round that fails as a whole (a deadlock with a writer outside the committer, a
/// command applied before; see [`retry_alone`]) is retried one command at a time.
async fn run(pool: &Pool, hook: &RwLock<Option<Hook>>, mut batch: Vec<(Job, Reply)>) {
    batch.sort_by(|a, b| first_stream(&a.0).cmp(first_stream(&b.0)));
    let hook = hook.read().unwrap_or_else(|p| p.into_inner()).clone();
    for group in rounds(batch) {
        let jobs: Vec<&Job> = group.iter().map(|(j, _)| j).collect();
        match commit(pool, hook.as_ref(), &jobs, Path::Fast).await {
            Ok(answers) => {
                for ((_, reply), answer) in group.into_iter().zip(answers) {
                    let _ = reply.send(answer.map_err(CommitError::from));
                }
            }
            Err(e) if retry_alone(&e) => {
                for (job, reply) in group {
                    let answer = match commit(pool, hook.as_ref(), &[&job], Path::General).await {
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
                let (text, outage) = (e.to_string(), e.is_outage());
                for (_, reply) in group {
                    let _ = reply.send(Err(match &e {
                        CommitError::Hooked(stage) => CommitError::Hooked(*stage),
                        _ if outage => CommitError::Unavailable(text.clone()),
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

/// Splits a batch into rounds in which no command id and no stream appears twice, keeping
/// the batch's order within each round.
fn rounds(batch: Vec<(Job, Reply)>) -> Vec<Vec<(Job, Reply)>> {
    let mut rounds: Vec<Vec<(Job, Reply)>> = Vec::new();
    for item in batch {
        let free = rounds
            .iter()
            .position(|round| round.iter().all(|(other, _)| !clash(&item.0, other)));
        match free {
            Some(r) => rounds[r].push(item),
            None => rounds.push(vec![item]),
        }
    }
    rounds
}

/// Whether two commands may not share a round: the same command, or a stream in common.
fn clash(a: &Job, b: &Job) -> bool {
    a.command_id == b.command_id
        || a.appends
            .iter()
            .any(|x| b.appends.iter().any(|y| x.stream == y.stream))
}

/// Which appends a round may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    /// Commands on one existing stream with a known head go through
    /// [`EventLog::append_on_heads`], the others through [`EventLog::append_batch_on`].
    Fast,
    /// Everything through [`EventLog::append_batch_on`] (a retry after a round failed).
    General,
}

fn takes_fast_path(job: &Job) -> Option<HeadAppend<'_>> {
    match (job.appends.as_slice(), job.head) {
        ([append], Some(head)) if append.expected_version >= 1 => Some(HeadAppend {
            command_id: job.command_id,
            append,
            head,
        }),
        _ => None,
    }
}

/// Whether a failed round may succeed command by command on the general path (a deadlock or
/// a serialization failure with some other writer, a command applied before), rather than
/// failing for every command alike.
fn retry_alone(e: &CommitError) -> bool {
    let CommitError::Append(AppendError::Store(eventlog::Error::Db(db))) = e else {
        return false;
    };
    // A unique violation comes from the fast path when a command applied long ago is decided
    // again on a newer head (a retry whose stored answer has expired: its events' ids are in
    // the log at older versions); the general path checks the command id first and answers
    // "already applied", and it answers every race properly.
    lost_to_another_writer(db)
}

/// Whether a statement failed on another writer rather than on itself: a deadlock, a
/// serialization failure, or a unique violation (a twin written meanwhile). The commands of a
/// batch that failed so may each go through on their own.
pub fn lost_to_another_writer(db: &tokio_postgres::Error) -> bool {
    matches!(
        db.code(),
        Some(
            &SqlState::T_R_DEADLOCK_DETECTED
                | &SqlState::T_R_SERIALIZATION_FAILURE
                | &SqlState::UNIQUE_VIOLATION
        )
    )
}

/// Writes work rows (`live_write_work`, migration V12: upserts for active matches, where an
/// older version never overwrites a newer row's timers; deletes for finished ones).
const WRITE_WORK: &str = "SELECT live_write_work($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";

/// Stores `Idempotency-Key` answers (`live_store_answers`, migration V10).
const STORE_ANSWERS: &str = "SELECT live_store_answers($1, $2, $3, $4, $5, $6)";

/// A round on known heads as one statement: the log's clauses ([`eventlog::append_on_heads_with!`],
/// parameters `$1` to `$15`), then the live path's, each only when the round has rows for it
/// (a table named with no rows still costs PostgreSQL its opening, locking and checks) and each
/// writing only the rows of the streams that moved: `worked` upserts the active matches' work
/// rows (an older version never overwrites a newer row's timers), `gone` deletes the finished
/// ones', `answered` stores the `Idempotency-Key` answers. Indexed by [`round_shape`].
static ROUNDS: std::sync::LazyLock<[String; 8]> =
    std::sync::LazyLock::new(|| std::array::from_fn(round_sql));

/// Which of the live path's clauses a round has: its index in [`ROUNDS`].
fn round_shape(work: &WorkColumns<'_>, stored: &AnswerColumns<'_>) -> usize {
    usize::from(!work.ids.is_empty())
        | usize::from(!work.gone.is_empty()) << 1
        | usize::from(!stored.players.is_empty()) << 2
}

/// The statement of a round of shape `shape` ([`round_shape`]).
fn round_sql(shape: usize) -> String {
    let mut next = HeadArguments::COUNT + 1;
    // `$n::type[]` for each of `types`, numbered on.
    let mut arrays = |types: &[&str]| {
        let list: Vec<String> = types
            .iter()
            .enumerate()
            .map(|(i, t)| format!("${}::{t}[]", next + i))
            .collect();
        next += types.len();
        list.join(", ")
    };
    let mut sql = format!("WITH {}", eventlog::append_on_heads_with!());
    if shape & 1 != 0 {
        let work = arrays(&[
            "uuid",
            "timestamptz",
            "boolean",
            "boolean",
            "timestamptz",
            "timestamptz",
            "bigint",
            "uuid",
            "text",
            "smallint",
            "text",
        ]);
        sql.push_str(&format!(
            ", worked AS ( \
                 INSERT INTO match_work AS w \
                     (match_id, state_due, watch1, watch2, seen1, seen2, version, strong_player, \
                      live_key, live_depth) \
                 SELECT u.match_id, u.state_due, u.watch1, u.watch2, u.seen1, u.seen2, u.version, \
                        u.strong_player, u.live_key, u.live_depth \
                   FROM unnest({work}) \
                        AS u(match_id, state_due, watch1, watch2, seen1, seen2, version, \
                             strong_player, live_key, live_depth, stream) \
                  WHERE u.stream IN (SELECT m.stream_id FROM moved m) \
                 ON CONFLICT (match_id) DO UPDATE SET \
                     state_due = CASE WHEN w.version <= EXCLUDED.version \
                                      THEN EXCLUDED.state_due ELSE w.state_due END, \
                     watch1 = CASE WHEN w.version <= EXCLUDED.version \
                                   THEN EXCLUDED.watch1 ELSE w.watch1 END, \
                     watch2 = CASE WHEN w.version <= EXCLUDED.version \
                                   THEN EXCLUDED.watch2 ELSE w.watch2 END, \
                     seen1 = greatest(w.seen1, EXCLUDED.seen1), \
                     seen2 = greatest(w.seen2, EXCLUDED.seen2), \
                     live_key = CASE WHEN w.version <= EXCLUDED.version \
                                     THEN EXCLUDED.live_key ELSE w.live_key END, \
                     live_depth = CASE WHEN w.version <= EXCLUDED.version \
                                       THEN EXCLUDED.live_depth ELSE w.live_depth END, \
                     version = greatest(w.version, EXCLUDED.version), \
                     strong_player = EXCLUDED.strong_player \
             )"
        ));
    }
    if shape & 2 != 0 {
        let gone = arrays(&["uuid", "text"]);
        sql.push_str(&format!(
            ", gone AS ( \
                 DELETE FROM match_work w USING unnest({gone}) AS u(match_id, stream) \
                  WHERE w.match_id = u.match_id \
                    AND u.stream IN (SELECT m.stream_id FROM moved m) \
             )"
        ));
    }
    if shape & 4 != 0 {
        let answers = arrays(&[
            "uuid",
            "text",
            "bytea",
            "integer",
            "text",
            "timestamptz",
            "text",
        ]);
        sql.push_str(&format!(
            ", answered AS ( \
                 INSERT INTO idempotency_keys \
                     (player_id, key, request_hash, status, body, created_at) \
                 SELECT a.player_id, a.key, a.request_hash, a.status, a.body, a.created_at \
                   FROM unnest({answers}) \
                        AS a(player_id, key, request_hash, status, body, created_at, stream) \
                  WHERE a.stream IN (SELECT m.stream_id FROM moved m) \
                 ON CONFLICT DO NOTHING \
             )"
        ));
    }
    sql.push_str(" SELECT r_stream, r_event_id, r_position, r_tx FROM appended");
    sql
}

/// One transaction: the appends, then the work rows and answers of the commands that went
/// through. `Err` when the batch as a whole failed (nothing of it committed, or a hook).
async fn commit(
    pool: &Pool,
    hook: Option<&Hook>,
    jobs: &[&Job],
    path: Path,
) -> Result<Vec<Result<AppendOutcome, AppendError>>, CommitError> {
    if path == Path::Fast && hook.is_none() {
        let heads: Option<Vec<HeadAppend<'_>>> = jobs.iter().map(|j| takes_fast_path(j)).collect();
        if let Some(heads) = heads {
            return commit_in_one_statement(pool, jobs, &heads).await;
        }
    }
    let mut client = pool.get().await.map_err(AppendError::from)?;
    let tx = client.transaction().await.map_err(AppendError::from)?;
    let mut fast: Vec<(usize, HeadAppend<'_>)> = Vec::new();
    let mut general: Vec<(usize, (Uuid, &[StreamAppend]))> = Vec::new();
    for (index, job) in jobs.iter().enumerate() {
        match takes_fast_path(job).filter(|_| path == Path::Fast) {
            Some(head) => fast.push((index, head)),
            None => general.push((index, (job.command_id, job.appends.as_slice()))),
        }
    }
    // Both appends go out together (their streams are disjoint within a round).
    let heads: Vec<HeadAppend<'_>> = fast.iter().map(|(_, h)| *h).collect();
    let commands: Vec<(Uuid, &[StreamAppend])> = general.iter().map(|(_, c)| *c).collect();
    let (fast_answers, general_answers) = tokio::join!(
        async {
            if heads.is_empty() {
                return Ok(Vec::new());
            }
            EventLog::append_on_heads(&tx, &heads).await
        },
        async {
            if commands.is_empty() {
                return Ok(Vec::new());
            }
            EventLog::append_batch_on(&tx, &commands).await
        }
    );
    let mut answers: Vec<Option<Result<AppendOutcome, AppendError>>> =
        std::iter::repeat_with(|| None).take(jobs.len()).collect();
    let placed = fast
        .iter()
        .map(|(i, _)| *i)
        .zip(fast_answers?)
        .chain(general.iter().map(|(i, _)| *i).zip(general_answers?));
    for (index, answer) in placed {
        answers[index] = Some(answer);
    }
    let answers: Vec<Result<AppendOutcome, AppendError>> = answers
        .into_iter()
        .map(|a| a.unwrap_or_else(|| Err(AppendError::Invalid("a command went unanswered".into()))))
        .collect();
    let through = || {
        jobs.iter()
            .zip(&answers)
            .filter(|(_, a)| matches!(a, Ok(AppendOutcome::Appended(_))))
            .map(|(j, _)| *j)
    };
    let work: Vec<&WorkRow> = through().filter_map(|j| j.work.as_ref()).collect();
    let mut stored = AnswerColumns::default();
    for a in through().filter_map(|j| j.answer.as_ref()) {
        stored.push(a, "");
    }
    let (worked, answered) = tokio::join!(write_work(&tx, &work), async {
        if stored.players.is_empty() {
            return Ok(0);
        }
        let statement = tx.prepare_cached(STORE_ANSWERS).await?;
        tx.execute(&statement, &stored.params()).await
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

/// A round of fast-path commands in one statement ([`ROUNDS`]), hence one round trip and one
/// transaction without `BEGIN` or `COMMIT`: the append, then the work rows and stored answers
/// of the commands whose streams it moved.
async fn commit_in_one_statement(
    pool: &Pool,
    jobs: &[&Job],
    heads: &[HeadAppend<'_>],
) -> Result<Vec<Result<AppendOutcome, AppendError>>, CommitError> {
    let batch = HeadBatch::new(heads)?;
    let client = pool.get().await.map_err(AppendError::from)?;
    let mut work = WorkColumns::default();
    let mut stored = AnswerColumns::default();
    for (job, head) in jobs.iter().zip(heads) {
        let stream = head.append.stream.as_str();
        if let Some(w) = &job.work {
            work.push(w, stream);
        }
        if let Some(a) = &job.answer {
            stored.push(a, stream);
        }
    }
    let arguments = batch.arguments();
    let mut params = arguments.params();
    let shape = round_shape(&work, &stored);
    if !work.ids.is_empty() {
        params.extend(work.params());
        params.push(&work.streams);
    }
    if !work.gone.is_empty() {
        params.extend([&work.gone as &(dyn ToSql + Sync), &work.gone_streams]);
    }
    if !stored.players.is_empty() {
        params.extend(stored.params());
        params.push(&stored.streams);
    }
    let statement = client
        .prepare_cached(&ROUNDS[shape])
        .await
        .map_err(AppendError::from)?;
    let rows = client
        .query(&statement, &params)
        .await
        .map_err(AppendError::from)?;
    Ok(batch.answers(&client, &rows).await?)
}

/// Writes work rows in the caller's transaction, in one statement (`live_write_work`): upserts
/// for active matches (an older version never overwrites a newer row's timers), deletes for
/// finished ones.
pub async fn write_work(
    client: &impl GenericClient,
    rows: &[&WorkRow],
) -> Result<(), tokio_postgres::Error> {
    if rows.is_empty() {
        return Ok(());
    }
    let mut work = WorkColumns::default();
    for w in rows {
        work.push(w, "");
    }
    let mut params = work.params();
    params.push(&work.gone);
    let statement = client.prepare_cached(WRITE_WORK).await?;
    client.execute(&statement, &params).await?;
    let (players, matches): (Vec<Uuid>, Vec<Uuid>) = rows
        .iter()
        .filter_map(|w| Some((w.match_id, w.pending.as_ref()?)))
        .flat_map(|(m, p)| p.players.iter().map(move |&player| (player, m)))
        .unzip();
    if !players.is_empty() {
        // After the work rows, which the seats reference.
        client
            .execute(
                "INSERT INTO live_seats (player_id, match_id) \
                 SELECT * FROM unnest($1::uuid[], $2::uuid[]) ON CONFLICT DO NOTHING",
                &[&players, &matches],
            )
            .await?;
    }
    Ok(())
}

/// The real-time matches `player` is seated in (`live_seats`), whatever started them.
pub async fn seated_live(
    client: &impl GenericClient,
    player: PlayerId,
) -> Result<Vec<MatchId>, tokio_postgres::Error> {
    let rows = client
        .query(
            "SELECT match_id FROM live_seats WHERE player_id = $1",
            &[&player.as_uuid()],
        )
        .await?;
    Ok(rows.iter().map(|r| MatchId::from_uuid(r.get(0))).collect())
}

/// Work rows as `live_write_work`'s arrays: the upserted rows' columns and the deleted rows'
/// matches, each row with its command's stream (for a round's clauses: [`ROUNDS`]).
#[derive(Default)]
struct WorkColumns<'a> {
    ids: Vec<Uuid>,
    due: Vec<Option<OffsetDateTime>>,
    watch1: Vec<bool>,
    watch2: Vec<bool>,
    seen1: Vec<OffsetDateTime>,
    seen2: Vec<OffsetDateTime>,
    versions: Vec<i64>,
    strong: Vec<Option<Uuid>>,
    live_keys: Vec<Option<&'a str>>,
    live_depths: Vec<Option<i16>>,
    streams: Vec<&'a str>,
    gone: Vec<Uuid>,
    gone_streams: Vec<&'a str>,
}

impl<'a> WorkColumns<'a> {
    fn push(&mut self, w: &'a WorkRow, stream: &'a str) {
        let Some(p) = &w.pending else {
            self.gone.push(w.match_id);
            self.gone_streams.push(stream);
            return;
        };
        self.ids.push(w.match_id);
        self.due.push(p.state_due);
        self.watch1.push(p.watch[0]);
        self.watch2.push(p.watch[1]);
        self.seen1.push(p.seen[0]);
        self.seen2.push(p.seen[1]);
        self.versions.push(w.version);
        self.strong.push(p.strong_player);
        let live = p.live_key.as_ref();
        self.live_keys.push(live.map(|(key, _)| key.as_str()));
        self.live_depths
            .push(live.map(|&(_, depth)| i16::try_from(depth).unwrap_or(i16::MAX)));
        self.streams.push(stream);
    }

    /// The upserted rows' columns, `live_write_work`'s first ten arguments.
    fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        vec![
            &self.ids,
            &self.due,
            &self.watch1,
            &self.watch2,
            &self.seen1,
            &self.seen2,
            &self.versions,
            &self.strong,
            &self.live_keys,
            &self.live_depths,
        ]
    }
}

/// Answers as `live_store_answers`' arrays, each with its command's stream.
#[derive(Default)]
struct AnswerColumns<'a> {
    players: Vec<Uuid>,
    keys: Vec<&'a str>,
    hashes: Vec<&'a [u8]>,
    statuses: Vec<i32>,
    bodies: Vec<&'a str>,
    at: Vec<OffsetDateTime>,
    streams: Vec<&'a str>,
}

impl<'a> AnswerColumns<'a> {
    fn push(&mut self, a: &'a StoredAnswer, stream: &'a str) {
        self.players.push(a.player);
        self.keys.push(&a.key);
        self.hashes.push(&a.request_hash);
        self.statuses.push(i32::from(a.status));
        self.bodies.push(&a.body);
        self.at.push(a.at);
        self.streams.push(stream);
    }

    /// The columns, `live_store_answers`' first six arguments.
    fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        vec![
            &self.players,
            &self.keys,
            &self.hashes,
            &self.statuses,
            &self.bodies,
            &self.at,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(command: u128, streams: &[&str]) -> (Job, Reply) {
        let job = Job {
            command_id: Uuid::from_u128(command),
            appends: streams
                .iter()
                .map(|s| StreamAppend {
                    stream: (*s).to_owned(),
                    expected_version: 1,
                    events: Vec::new(),
                })
                .collect(),
            work: None,
            answer: None,
            head: None,
        };
        (job, oneshot::channel().0)
    }

    fn shape(rounds: &[Vec<(Job, Reply)>]) -> Vec<Vec<u128>> {
        rounds
            .iter()
            .map(|r| r.iter().map(|(j, _)| j.command_id.as_u128()).collect())
            .collect()
    }

    #[test]
    fn a_round_holds_each_command_and_each_stream_once_in_batch_order() {
        let batch = vec![
            job(1, &["match-a"]),
            job(2, &["match-a"]),
            job(3, &["match-b"]),
            job(1, &["match-a"]),
            job(4, &["match-b", "match-c"]),
            job(5, &["match-c"]),
            job(6, &["match-d"]),
        ];
        // 5 goes first, beside 3, as 4 (which shares its stream) waits for the next round.
        assert_eq!(
            shape(&rounds(batch)),
            [vec![1, 3, 5, 6], vec![2, 4], vec![1]]
        );
    }

    #[test]
    fn only_a_single_existing_stream_with_a_known_head_takes_the_fast_path() {
        let mut one = job(1, &["match-a"]).0;
        assert!(takes_fast_path(&one).is_none(), "no head");
        one.head = Some([1; 32]);
        assert!(takes_fast_path(&one).is_some());
        one.appends[0].expected_version = 0;
        assert!(takes_fast_path(&one).is_none(), "a new stream");
        let mut two = job(2, &["match-a", "ticket-b"]).0;
        two.head = Some([1; 32]);
        assert!(takes_fast_path(&two).is_none(), "two streams");
    }
}
