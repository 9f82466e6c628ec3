//! Deep analysis as background jobs (`/v1/analysis/jobs`): a position searched until its score
//! is exact or its time cap is spent, on any instance, surviving the death of the one running it.
//!
//! A job is a row of `analysis_jobs`. An instance claims the oldest open job that no live lease
//! holds (`FOR UPDATE SKIP LOCKED`), and while it searches it writes the job's progress (nodes,
//! time spent) and renews its lease every second. A job whose lease ran out, because its instance
//! died, is claimed again by another instance, which goes on from the time already spent; after
//! [`MAX_ATTEMPTS`] claims it is given up as failed. Jobs search in the instance's search slots,
//! behind CPU moves, and give way to an interactive analysis that needs the slot
//! ([`Searches::for_job`](crate::searches::Searches::for_job)); they resume after it with the
//! tables they had. An exact answer also goes into the shared cache of solved positions.

use std::collections::HashSet;
use std::hash::Hash;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use deadpool_postgres::GenericClient;
use schemars::JsonSchema;
use serde::Serialize;

use tokio_postgres::types::{FromSql, ToSql};
use uuid::Uuid;

use domain::analysis::{Analyser, Analysis};
use domain::games::{AnyPosition, GameId, Side};
use domain::ids::{JobId, PlayerId};
use domain::search::Limits;

use crate::analysis::Analyses;
use crate::analysis::boundary::Boundary;
use crate::analysis::solved;
use crate::core::Core;
use crate::error::{Error, unexpected};
use crate::metrics::Limit;
use crate::reasons::Missing;
use crate::searches::{JobSlot, StopOnDrop};

/// How long a claim holds unless it is renewed.
pub const LEASE: Duration = Duration::from_secs(30);
/// How often a running job writes its progress and renews its lease.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);
/// Claims of one job (each ended by the death of its instance) before it is given up.
pub const MAX_ATTEMPTS: i32 = 3;
/// How often an idle runner looks for jobs queued on other instances.
const POLL_EVERY: Duration = Duration::from_secs(1);

/// Where a job stands.
#[derive(Serialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "JobStatus")]
pub enum Status {
    Queued,
    Running,
    Done,
    Failed,
}

impl Status {
    fn of(s: &str) -> Result<Status, Error> {
        Ok(match s {
            "queued" => Status::Queued,
            "running" => Status::Running,
            "done" => Status::Done,
            "failed" => Status::Failed,
            other => return Err(Error::from(anyhow::anyhow!("job status {other:?}"))),
        })
    }
}

/// A job as its asker sees it.
#[derive(Serialize, JsonSchema, Debug, Clone, PartialEq, Eq)]
pub struct JobView {
    pub job_id: JobId,
    pub status: Status,
    /// The answer once `done` (exact, or the best estimate when the time cap ran out); null
    /// before, and for a failed job.
    pub result: Option<JobResult>,
    /// Nodes searched so far, all attempts together.
    pub nodes: u64,
    /// Search time spent so far in milliseconds, all attempts together.
    pub elapsed_ms: u64,
    /// Why a failed job failed, in the asker's language.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why a failed job failed, as data: the edge words it into `error`.
    #[serde(skip)]
    pub failure: Option<Failure>,
    /// The position's canonical key (for the fair-play guard).
    #[serde(skip)]
    pub key: String,
}

/// Why a job failed, kept as its code in `analysis_jobs.error` (a job failed before codes
/// were kept shows the sentence stored then).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// [`MAX_ATTEMPTS`] claims, each ended by the death of its instance.
    GaveUp,
    /// The stored position does not read back.
    Unreadable,
    /// The position is already over: no move to search.
    GameOver,
    /// The analysis refused the position.
    NotAnalysable,
}

impl Failure {
    pub const ALL: [Failure; 4] = [
        Failure::GaveUp,
        Failure::Unreadable,
        Failure::GameOver,
        Failure::NotAnalysable,
    ];

    /// The stable code stored and looked up in the texts.
    pub fn code(self) -> &'static str {
        match self {
            Failure::GaveUp => "gave_up",
            Failure::Unreadable => "unreadable_position",
            Failure::GameOver => "game_over",
            Failure::NotAnalysable => "not_analysable",
        }
    }

    fn of(code: &str) -> Option<Failure> {
        Failure::ALL.into_iter().find(|f| f.code() == code)
    }
}

/// The answer of a finished job, in the orientation of the position asked.
#[derive(Serialize, JsonSchema, Debug, Clone, PartialEq, Eq)]
pub struct JobResult {
    /// In the game's convention, from the side to move's point of view.
    pub score: i32,
    /// Every move reaching `score` when `exact`; the best found otherwise; empty for a pass.
    pub best_moves: Vec<String>,
    /// Whether `score` is proven under perfect play.
    pub exact: bool,
}

const VIEW_COLUMNS: &str =
    "job_id, status, score, best_moves, exact, nodes, elapsed_ms, error, key";

fn view_of(row: &tokio_postgres::Row) -> Result<JobView, Error> {
    let status = Status::of(row.get(1))?;
    let score: Option<i32> = row.get(2);
    Ok(JobView {
        job_id: JobId::from_uuid(row.get(0)),
        status,
        result: score.map(|score| JobResult {
            score,
            best_moves: row.get(3),
            exact: row.get(4),
        }),
        nodes: u64::try_from(row.get::<_, i64>(5)).unwrap_or(0),
        elapsed_ms: u64::try_from(row.get::<_, i64>(6)).unwrap_or(0),
        failure: row.get::<_, Option<&str>>(7).and_then(Failure::of),
        error: row.get(7),
        key: row.get(8),
    })
}

fn side_name(side: Side) -> &'static str {
    match side {
        Side::First => "first",
        Side::Second => "second",
    }
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Queues a job for `pos` (an unfinished position) on behalf of `player`, under `job_id`: a
/// retry with the same id finds the job it queued. A position already solved is answered from
/// the cache at once: its job is done as it is queued. A position that an open job is searching
/// joins that job (its leader) and gets its answer when it ends. A player has at most
/// `DISCS_JOBS_PER_PLAYER` jobs open (`JobsLimit` beyond).
pub async fn queue(
    app: &Analyses,
    player: PlayerId,
    job_id: JobId,
    pos: &AnyPosition,
) -> Result<JobView, Error> {
    let mut client = app.pool.get().await.map_err(unexpected)?;
    let tx = client.transaction().await.map_err(unexpected)?;
    if let Some(job) = view(&tx, job_id).await? {
        return Ok(job);
    }
    let room = room_for_jobs(&tx, app, player).await?;
    if room == 0 {
        app.metrics.refused(Limit::Jobs);
        return Err(Error::JobsLimit(app.jobs.per_player));
    }
    // The job's answer is read through the boundary ([`own`]'s callers): inside, it is whole.
    let known = solved::lookup(&tx, &Boundary::internal(), pos).await?;
    let leader: Option<Uuid> = match known {
        Some(_) => None,
        None => tx
            .query_opt(
                "SELECT job_id FROM analysis_jobs \
                 WHERE key = $1 AND status IN ('queued', 'running') AND leader IS NULL \
                 ORDER BY created_at LIMIT 1",
                &[&pos.canonical().0],
            )
            .await
            .map_err(unexpected)?
            .map(|row| row.get(0)),
    };
    insert(&tx, app, player, job_id, pos, known.as_ref(), leader).await?;
    tx.commit().await.map_err(unexpected)?;
    if known.is_none() && leader.is_none() {
        app.jobs.wake.notify_one();
    }
    view(&client, job_id)
        .await?
        .ok_or_else(|| Error::from(anyhow::anyhow!("job {job_id} vanished as it was queued")))
}

/// How many more jobs `player` may open now (`DISCS_JOBS_PER_PLAYER` less those open), inside
/// the caller's transaction, which holds the player's lock from here on: the count and the
/// insert that follows are one step for concurrent requests of one player.
async fn room_for_jobs(
    tx: &deadpool_postgres::Transaction<'_>,
    app: &Analyses,
    player: PlayerId,
) -> Result<u32, Error> {
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended('analysis_jobs:' || $1::uuid::text, 0))",
        &[&player.as_uuid()],
    )
    .await
    .map_err(unexpected)?;
    let open: i64 = tx
        .query_one(
            "SELECT count(*) FROM analysis_jobs \
             WHERE player_id = $1 AND status IN ('queued', 'running')",
            &[&player.as_uuid()],
        )
        .await
        .map_err(unexpected)?
        .get(0);
    Ok(u32::try_from(i64::from(app.jobs.per_player) - open).unwrap_or(0))
}

/// Queues jobs for the positions of a match whose analysis was not exact, each under its own
/// id (derived from the match and the ply: asking again queues nothing new), unless an open
/// job already has the position. The ids of those of these jobs that exist, new or not.
pub async fn queue_missing(
    app: &Analyses,
    player: PlayerId,
    positions: &[(JobId, AnyPosition)],
) -> Result<Vec<JobId>, Error> {
    let mut client = app.pool.get().await.map_err(unexpected)?;
    let tx = client.transaction().await.map_err(unexpected)?;
    let mut room = room_for_jobs(&tx, app, player).await?;
    let keys: Vec<String> = positions.iter().map(|(_, pos)| pos.canonical().0).collect();
    let open: HashSet<String> = first_column(
        &tx,
        "SELECT key FROM analysis_jobs WHERE key = ANY($1) AND status IN ('queued', 'running')",
        &keys,
    )
    .await?;
    let mut queued = 0;
    for ((job_id, pos), key) in positions.iter().zip(&keys) {
        // Within the player's cap: the rest is queued when the analysis is asked again.
        if !open.contains(key) && room > 0 {
            let n = insert(&tx, app, player, *job_id, pos, None, None).await?;
            queued += n;
            room -= u32::from(n > 0);
        }
    }
    tx.commit().await.map_err(unexpected)?;
    if queued > 0 {
        app.jobs.wake.notify_one();
    }
    let ids: Vec<Uuid> = positions.iter().map(|(id, _)| id.as_uuid()).collect();
    let existing: HashSet<Uuid> = first_column(
        &client,
        "SELECT job_id FROM analysis_jobs WHERE job_id = ANY($1)",
        &ids,
    )
    .await?;
    Ok(positions
        .iter()
        .map(|(id, _)| *id)
        .filter(|id| existing.contains(&id.as_uuid()))
        .collect())
}

/// The first column of what `sql` (one array parameter) returns, as a set.
async fn first_column<P, T>(
    client: &impl GenericClient,
    sql: &str,
    values: &[P],
) -> Result<HashSet<T>, Error>
where
    P: ToSql + Sync,
    T: for<'r> FromSql<'r> + Eq + Hash,
{
    Ok(client
        .query(sql, &[&values])
        .await
        .map_err(unexpected)?
        .iter()
        .map(|row| row.get(0))
        .collect())
}

/// Inserts a job, done at once when `known`, joining `leader`'s search when given; how many
/// rows were written (0 for a retry).
async fn insert(
    client: &impl GenericClient,
    app: &Analyses,
    player: PlayerId,
    job_id: JobId,
    pos: &AnyPosition,
    known: Option<&Analysis>,
    leader: Option<Uuid>,
) -> Result<u64, Error> {
    let (key, _) = pos.canonical();
    let now = app.now();
    let status = if known.is_some() { "done" } else { "queued" };
    client
        .execute(
            "INSERT INTO analysis_jobs (job_id, player_id, game, board, side, key, status, \
             cap_ms, score, best_moves, exact, created_at, finished_at, leader) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) \
             ON CONFLICT (job_id) DO NOTHING",
            &[
                &job_id.as_uuid(),
                &player.as_uuid(),
                &pos.game().as_str(),
                &pos.rows(),
                &side_name(pos.side_to_move()),
                &key,
                &status,
                &millis(app.jobs.cap).max(1),
                &known.map(|k| k.score),
                &known.map(|k| k.best_moves.clone()),
                &known.map(|k| k.exact),
                &now,
                &known.map(|_| now),
                &leader,
            ],
        )
        .await
        .map_err(unexpected)
}

/// A job, if it exists.
async fn view(client: &impl GenericClient, job_id: JobId) -> Result<Option<JobView>, Error> {
    client
        .query_opt(
            &format!("SELECT {VIEW_COLUMNS} FROM analysis_jobs WHERE job_id = $1"),
            &[&job_id.as_uuid()],
        )
        .await
        .map_err(unexpected)?
        .map(|row| view_of(&row))
        .transpose()
}

/// `player`'s job `job_id` (404 for anyone else's: a job is its asker's).
pub async fn own(app: &Core, player: PlayerId, job_id: JobId) -> Result<JobView, Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    let row = client
        .query_opt(
            &format!(
                "SELECT {VIEW_COLUMNS} FROM analysis_jobs WHERE job_id = $1 AND player_id = $2"
            ),
            &[&job_id.as_uuid(), &player.as_uuid()],
        )
        .await
        .map_err(unexpected)?
        .ok_or(Error::NotFound(Missing::Job))?;
    view_of(&row)
}

/// A job this instance has claimed.
#[derive(Debug)]
pub struct Claimed {
    pub job_id: JobId,
    game: String,
    board: Vec<String>,
    side: String,
    cap: Duration,
    /// Nodes and time spent by earlier attempts.
    nodes: u64,
    elapsed: Duration,
    /// This claim's number (1 for the first).
    pub attempt: i32,
}

/// Claims the oldest open job no live lease holds: a queued one (unless it follows an open
/// leader: a follower whose leader ended without settling it is searched on its own), or a
/// running one whose instance stopped renewing its lease.
pub async fn claim(app: &Analyses) -> Result<Option<Claimed>, Error> {
    let now = app.now();
    let client = app.pool.get().await.map_err(unexpected)?;
    let row = client
        .query_opt(
            "UPDATE analysis_jobs j SET status = 'running', owner = $1, lease_until = $3, \
             attempts = j.attempts + 1 \
             FROM (SELECT job_id FROM analysis_jobs o \
                   WHERE (o.status = 'queued' AND NOT EXISTS ( \
                              SELECT 1 FROM analysis_jobs l WHERE l.job_id = o.leader \
                                 AND l.status IN ('queued', 'running'))) \
                      OR (o.status = 'running' AND o.lease_until < $2) \
                   ORDER BY o.created_at LIMIT 1 FOR UPDATE OF o SKIP LOCKED) c \
             WHERE j.job_id = c.job_id \
             RETURNING j.job_id, j.game, j.board, j.side, j.cap_ms, j.nodes, j.elapsed_ms, \
                       j.attempts",
            &[&app.jobs.instance, &now, &(now + LEASE)],
        )
        .await
        .map_err(unexpected)?;
    Ok(row.map(|row| Claimed {
        job_id: JobId::from_uuid(row.get(0)),
        game: row.get(1),
        board: row.get(2),
        side: row.get(3),
        cap: Duration::from_millis(u64::try_from(row.get::<_, i64>(4)).unwrap_or(1)),
        nodes: u64::try_from(row.get::<_, i64>(5)).unwrap_or(0),
        elapsed: Duration::from_millis(u64::try_from(row.get::<_, i64>(6)).unwrap_or(0)),
        attempt: row.get(7),
    }))
}

impl Claimed {
    fn position(&self) -> Result<AnyPosition, String> {
        let game: GameId = self.game.parse().map_err(|e| format!("{e}"))?;
        let side = match self.side.as_str() {
            "first" => Side::First,
            "second" => Side::Second,
            other => return Err(format!("unknown side to move {other:?}")),
        };
        let rows: Vec<&str> = self.board.iter().map(String::as_str).collect();
        AnyPosition::from_rows(game, &rows, side).map_err(|e| e.to_string())
    }
}

/// How a claimed job's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Answered (exactly, or with the best estimate at its time cap).
    Done,
    /// Given up: its position is unusable, or too many instances died running it.
    Failed,
    /// Handed back to the queue: this instance is shutting down.
    Released,
    /// Another instance holds it now (this one's lease ran out).
    Lost,
}

/// Why a running search was stopped.
#[derive(Default)]
struct Stops {
    capped: AtomicBool,
    shutdown: AtomicBool,
    lost: AtomicBool,
}

/// Claims one job and runs it to its end; `None` when no job waits.
pub async fn run_next(app: &Analyses) -> Result<Option<(JobId, Ended)>, Error> {
    let Some(job) = claim(app).await? else {
        return Ok(None);
    };
    let id = job.job_id;
    Ok(Some((id, run(app, job).await?)))
}

/// Runs a claimed job until it is exact, its cap is spent, the instance shuts down or the
/// job is lost.
pub async fn run(app: &Analyses, job: Claimed) -> Result<Ended, Error> {
    if job.attempt > MAX_ATTEMPTS {
        return fail(
            app,
            &job,
            Failure::GaveUp,
            "each attempt ended with its instance",
        )
        .await;
    }
    let pos = match job.position() {
        Ok(pos) => pos,
        Err(why) => return fail(app, &job, Failure::Unreadable, &why).await,
    };
    if pos.outcome().is_some() {
        return fail(app, &job, Failure::GameOver, "no move to search").await;
    }
    {
        let client = app.pool.get().await.map_err(unexpected)?;
        if let Some(known) = solved::lookup(&client, &Boundary::internal(), &pos).await? {
            return finish(app, &job, &known, job.nodes, job.elapsed).await;
        }
    }
    let progress = Arc::new(AtomicU64::new(0));
    let stops = Arc::new(Stops::default());
    let mut analyser = Some(Analyser::new());
    // Nodes and search time of this claim's searches that have ended (one per slot held).
    let (mut searched, mut spent) = (0u64, Duration::ZERO);
    let mut stopping = app.stopping.clone();
    loop {
        let (nodes, elapsed) = (job.nodes + searched, job.elapsed + spent);
        let (slot, stop) = match wait_for_slot(app, &job, nodes, elapsed, &mut stopping).await? {
            Waited::Slot(slot, stop) => (slot, stop),
            Waited::Ended(ended) => return Ok(ended),
        };
        let started = Instant::now();
        // However this future ends (its runtime dropped included), the search stops.
        let _stop_on_drop = StopOnDrop(Arc::clone(&stop));
        let (flag, counter) = (Arc::clone(&stop), Arc::clone(&progress));
        let threads = app.searches.analysis_threads();
        let mut a = analyser.take().unwrap_or_default();
        let mut search = tokio::task::spawn_blocking(move || {
            let limits = Limits {
                max_nodes: u64::MAX,
                stop: Some(&flag),
                progress: Some(&counter),
                threads,
                to_the_end: true,
            };
            let out = a.analyse(&pos, &limits);
            (a, out)
        });
        let so_far = (job.nodes + searched, job.elapsed + spent);
        let out = watch(
            app,
            &job,
            &mut search,
            &stop,
            &stops,
            &progress,
            so_far,
            &mut stopping,
        )
        .await;
        spent += started.elapsed();
        let yielded = slot.yielded();
        drop(slot);
        let (a, analysed) = out.map_err(unexpected)?;
        analyser = Some(a);
        progress.store(0, Ordering::Relaxed);
        let analysis = match analysed {
            Ok(analysis) => analysis,
            Err(e) => return fail(app, &job, Failure::NotAnalysable, &e.to_string()).await,
        };
        searched += analysis.nodes;
        let (nodes, elapsed) = (job.nodes + searched, job.elapsed + spent);
        if stops.lost.load(Ordering::Relaxed) {
            return Ok(Ended::Lost);
        }
        if stops.shutdown.load(Ordering::Relaxed) && !analysis.exact {
            return release(app, &job, nodes, elapsed).await;
        }
        // Exact, out of time, or (which an unbounded search never does) an estimate for no
        // reason: the answer. Only a search stopped for an analysis goes on.
        if analysis.exact || !yielded || stops.capped.load(Ordering::Relaxed) {
            if analysis.exact {
                let client = app.pool.get().await.map_err(unexpected)?;
                solved::store(&client, &pos, &analysis, app.now()).await?;
            }
            return finish(app, &job, &analysis, nodes, elapsed).await;
        }
        // Stopped for an interactive analysis: take a slot again, behind it.
    }
}

/// Watches a running search until it ends: every [`PROGRESS_EVERY`] it writes the job's
/// progress (`so_far`, the nodes and time of the searches before this one, plus this one's) and
/// renews its lease, and it stops the search (`stop`) when the job's cap is spent, the job is
/// lost or the instance shuts down, saying which in `stops`.
#[allow(clippy::too_many_arguments)]
async fn watch<T>(
    app: &Analyses,
    job: &Claimed,
    search: &mut tokio::task::JoinHandle<T>,
    stop: &AtomicBool,
    stops: &Stops,
    progress: &AtomicU64,
    so_far: (u64, Duration),
    stopping: &mut tokio::sync::watch::Receiver<bool>,
) -> Result<T, tokio::task::JoinError> {
    let started = Instant::now();
    let mut tick = tokio::time::interval(PROGRESS_EVERY);
    tick.tick().await;
    loop {
        tokio::select! {
            out = &mut *search => return out,
            _ = tick.tick() => {}
            () = stopped(stopping) => {
                stops.shutdown.store(true, Ordering::Relaxed);
                stop.store(true, Ordering::Relaxed);
                return (&mut *search).await;
            }
        }
        let elapsed = so_far.1 + started.elapsed();
        if elapsed >= job.cap {
            stops.capped.store(true, Ordering::Relaxed);
            stop.store(true, Ordering::Relaxed);
        }
        let nodes = so_far.0 + progress.load(Ordering::Relaxed);
        match renew(app, job, nodes, elapsed).await {
            Ok(true) => {}
            Ok(false) => {
                stops.lost.store(true, Ordering::Relaxed);
                stop.store(true, Ordering::Relaxed);
            }
            // A database out of reach: the search goes on, the lease may lapse.
            Err(e) => tracing::warn!(job = %job.job_id, error = %e, "job progress not written"),
        }
    }
}

/// What waiting for a search slot came to: the slot and its stop flag, or the job's end.
enum Waited<'a> {
    Slot(JobSlot<'a>, Arc<AtomicBool>),
    Ended(Ended),
}

/// Waits for a job slot, renewing the job's lease (at `nodes` and `elapsed` so far) while it
/// waits: the job is lost when another instance took it, released when this one shuts down.
async fn wait_for_slot<'a>(
    app: &'a Analyses,
    job: &Claimed,
    nodes: u64,
    elapsed: Duration,
    stopping: &mut tokio::sync::watch::Receiver<bool>,
) -> Result<Waited<'a>, Error> {
    let waiting = app.searches.for_job();
    tokio::pin!(waiting);
    let mut tick = tokio::time::interval(PROGRESS_EVERY);
    tick.tick().await;
    loop {
        tokio::select! {
            got = &mut waiting => {
                let (slot, stop) = got?;
                return Ok(Waited::Slot(slot, stop));
            }
            _ = tick.tick() => {
                if !renew(app, job, nodes, elapsed).await.unwrap_or(true) {
                    return Ok(Waited::Ended(Ended::Lost));
                }
            }
            () = stopped(stopping) => {
                return Ok(Waited::Ended(release(app, job, nodes, elapsed).await?));
            }
        }
    }
}

/// Returns once the instance is shutting down.
async fn stopped(stopping: &mut tokio::sync::watch::Receiver<bool>) {
    // The guard it returns is not held across the caller's awaits.
    let _ = stopping.wait_for(|s| *s).await;
}

/// Runs `UPDATE analysis_jobs SET {set}` on `job` if this instance still holds it, `$1` and
/// `$2` being the job and the instance, `params` from `$3` on; whether it did.
async fn update_own(
    app: &Analyses,
    job: &Claimed,
    set: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<bool, Error> {
    let (id, owner) = (job.job_id.as_uuid(), app.jobs.instance);
    let mut all: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = vec![&id, &owner];
    all.extend_from_slice(params);
    let client = app.pool.get().await.map_err(unexpected)?;
    let n = client
        .execute(
            &format!(
                "UPDATE analysis_jobs SET {set} \
                 WHERE job_id = $1 AND owner = $2 AND status = 'running'"
            ),
            &all,
        )
        .await
        .map_err(unexpected)?;
    Ok(n == 1)
}

fn count(nodes: u64) -> i64 {
    i64::try_from(nodes).unwrap_or(i64::MAX)
}

/// Writes a running job's progress and renews its lease; false when the job is no longer this
/// instance's.
async fn renew(
    app: &Analyses,
    job: &Claimed,
    nodes: u64,
    elapsed: Duration,
) -> Result<bool, Error> {
    let lease_until = app.now() + LEASE;
    let set = "nodes = $3, elapsed_ms = $4, lease_until = $5";
    update_own(
        app,
        job,
        set,
        &[&count(nodes), &millis(elapsed), &lease_until],
    )
    .await
}

/// What a job ended as, when this instance still held it.
fn ended(held: bool, ended: Ended) -> Ended {
    if held { ended } else { Ended::Lost }
}

/// Ends a job with its answer.
async fn finish(
    app: &Analyses,
    job: &Claimed,
    analysis: &Analysis,
    nodes: u64,
    elapsed: Duration,
) -> Result<Ended, Error> {
    let set = "status = 'done', score = $3, best_moves = $4, exact = $5, nodes = $6, \
               elapsed_ms = $7, finished_at = $8, owner = NULL, lease_until = NULL";
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 6] = [
        &analysis.score,
        &analysis.best_moves,
        &analysis.exact,
        &count(nodes),
        &millis(elapsed),
        &app.now(),
    ];
    let held = update_own(app, job, set, &params).await?;
    if held {
        settle_followers(app, job, Settled::Done(analysis, nodes, elapsed)).await?;
    }
    Ok(ended(held, Ended::Done))
}

/// How a leader ended, for the jobs that joined it.
enum Settled<'a> {
    Done(&'a Analysis, u64, Duration),
    Failed(Failure),
}

/// Ends the jobs that joined `leader` as it ended: its answer, each in its own orientation
/// (through the canonical one), or its failure.
async fn settle_followers(app: &Core, leader: &Claimed, how: Settled<'_>) -> Result<(), Error> {
    let client = app.pool.get().await.map_err(unexpected)?;
    let now = app.now();
    let id = leader.job_id.as_uuid();
    let (analysis, nodes, elapsed) = match how {
        Settled::Failed(failure) => {
            client
                .execute(
                    "UPDATE analysis_jobs SET status = 'failed', error = $2, finished_at = $3 \
                     WHERE leader = $1 AND status = 'queued'",
                    &[&id, &failure.code(), &now],
                )
                .await
                .map_err(unexpected)?;
            return Ok(());
        }
        Settled::Done(analysis, nodes, elapsed) => (analysis, nodes, elapsed),
    };
    let Ok(from) = leader.position() else {
        return Ok(());
    };
    let (_, from_s) = from.canonical();
    let canonical: Vec<String> = analysis
        .best_moves
        .iter()
        .map(|m| from.move_to_canonical(m, from_s))
        .collect::<Result<_, _>>()
        .map_err(unexpected)?;
    let rows = client
        .query(
            "SELECT job_id, game, board, side FROM analysis_jobs \
             WHERE leader = $1 AND status = 'queued'",
            &[&id],
        )
        .await
        .map_err(unexpected)?;
    for row in rows {
        let follower = Claimed {
            job_id: JobId::from_uuid(row.get(0)),
            game: row.get(1),
            board: row.get(2),
            side: row.get(3),
            cap: leader.cap,
            nodes: 0,
            elapsed: Duration::ZERO,
            attempt: 0,
        };
        // A follower that does not read back is left to be claimed on its own (and fail).
        let Ok(pos) = follower.position() else {
            continue;
        };
        let (_, s) = pos.canonical();
        let best_moves: Vec<String> = canonical
            .iter()
            .map(|m| pos.move_from_canonical(m, s))
            .collect::<Result<_, _>>()
            .map_err(unexpected)?;
        client
            .execute(
                "UPDATE analysis_jobs SET status = 'done', score = $2, best_moves = $3, \
                 exact = $4, nodes = $5, elapsed_ms = $6, finished_at = $7 \
                 WHERE job_id = $1 AND status = 'queued'",
                &[
                    &follower.job_id.as_uuid(),
                    &analysis.score,
                    &best_moves,
                    &analysis.exact,
                    &count(nodes),
                    &millis(elapsed),
                    &now,
                ],
            )
            .await
            .map_err(unexpected)?;
    }
    Ok(())
}

/// Deletes the jobs that ended (done or failed) longer ago than `DISCS_JOB_KEEP_HOURS`; how
/// many. An open job is never purged, and neither is a leader whose followers are still open.
pub async fn purge(app: &Analyses) -> Result<u64, Error> {
    let before = app.now() - app.jobs.kept;
    let client = app.pool.get().await.map_err(unexpected)?;
    client
        .execute(
            "DELETE FROM analysis_jobs j WHERE j.finished_at < $1 \
             AND NOT EXISTS (SELECT 1 FROM analysis_jobs f WHERE f.leader = j.job_id \
                             AND f.status IN ('queued', 'running'))",
            &[&before],
        )
        .await
        .map_err(unexpected)
}

/// Ends a job as failed: `failure` is stored (its code) and shown, `cause` only logged.
async fn fail(
    app: &Analyses,
    job: &Claimed,
    failure: Failure,
    cause: &str,
) -> Result<Ended, Error> {
    tracing::warn!(job = %job.job_id, failure = failure.code(), cause, "analysis job failed");
    let set = "status = 'failed', error = $3, finished_at = $4, owner = NULL, lease_until = NULL";
    let held = update_own(app, job, set, &[&failure.code(), &app.now()]).await?;
    if held {
        settle_followers(app, job, Settled::Failed(failure)).await?;
    }
    Ok(ended(held, Ended::Failed))
}

/// Hands a job back to the queue (this instance is stopping): another instance takes it up at
/// once, from the time already spent; a release is not a failed attempt.
async fn release(
    app: &Analyses,
    job: &Claimed,
    nodes: u64,
    elapsed: Duration,
) -> Result<Ended, Error> {
    let set = "status = 'queued', nodes = $3, elapsed_ms = $4, attempts = attempts - 1, \
               owner = NULL, lease_until = NULL";
    let held = update_own(app, job, set, &[&count(nodes), &millis(elapsed)]).await?;
    Ok(ended(held, Ended::Released))
}

/// The runners of `discs serve`: `runners` loops that each take jobs one at a time until the
/// instance shuts down.
pub async fn run_forever(app: Analyses, runners: usize) {
    let loops = (0..runners.max(1)).map(|_| runner(app.clone()));
    futures_util::future::join_all(loops).await;
}

async fn runner(app: Analyses) {
    let mut stopping = app.stopping.clone();
    loop {
        if *stopping.borrow() {
            return;
        }
        match run_next(&app).await {
            Ok(Some((id, ended))) => {
                tracing::info!(job = %id, ended = ?ended, "analysis job ran");
                continue;
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, "analysis job runner failed"),
        }
        tokio::select! {
            () = app.jobs.wake.notified() => {}
            () = tokio::time::sleep(POLL_EVERY) => {}
            () = stopped(&mut stopping) => return,
        }
    }
}

/// The id of the job a match analysis queues for the position before ply `ply` (0: the end):
/// asking for the analysis again names the same jobs.
pub fn match_job_id(match_id: Uuid, ply: usize) -> JobId {
    JobId::from_uuid(Uuid::new_v5(
        &match_id,
        format!("analysis-job-{ply}").as_bytes(),
    ))
}
