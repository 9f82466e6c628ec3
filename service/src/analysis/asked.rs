//! What a player asks of analysis: one position within a time budget, a finished match ply by
//! ply, a background job and its answer. Each goes through the fair-play boundary first, reads
//! the cache of solved positions, searches what it lacks on a blocking thread, stores what it
//! solved and queues jobs for what it left inexact. The HTTP edge parses the question and
//! renders the answer; the searches themselves are the domain's ([`domain::analysis`]).
//!
//! The time budget lives here: a timer sets the search's stop flag when it runs out (the domain
//! reads no clock), and so does a dropped request.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use domain::analysis::{Analyser, Analysis, AnalysisError, PlyAnalysis, game_positions};
use domain::games::AnyPosition;
use domain::ids::{JobId, PlayerId};
use domain::search::Limits;

use super::boundary;
use super::jobs::{self, JobView};
use super::solved::{self, Source};
use crate::analysis::Analyses;
use crate::error::{Error, unexpected};
use crate::live::LivePath;
use crate::live::play;
use crate::reasons::Active;
use crate::searches::StopOnDrop;

/// The score and best moves of `pos` (a game not over): from the cache of solved positions, or
/// searched within `budget` (stored when exact).
pub async fn position(
    app: &LivePath,
    player: PlayerId,
    pos: AnyPosition,
    budget: Duration,
) -> Result<(Analysis, Source), Error> {
    if pos.outcome().is_some() {
        return Err(AnalysisError::Finished.into());
    }
    let boundary = boundary::guard(app, player, &pos, pos.ply()).await?;
    let client = app.pool.get().await.map_err(unexpected)?;
    if let Some(known) = solved::lookup(&client, &boundary, &pos).await? {
        return Ok((known, Source::Cache));
    }
    drop(client);
    let threads = app.searches.analysis_threads();
    let analysis = budgeted(app, player, budget, move |stop| {
        let limits = Limits {
            threads,
            ..Limits::stoppable(u64::MAX, Some(stop))
        };
        Analyser::new().analyse(&pos, &limits)
    })
    .await??;
    if analysis.exact {
        let client = app.pool.get().await.map_err(unexpected)?;
        solved::store(&client, &pos, &analysis, app.now()).await?;
    }
    Ok((analysis, Source::Search))
}

/// One ply of a judged match.
#[derive(Debug, Clone)]
pub struct JudgedPly {
    /// The domain's judgement of the move.
    pub judgement: PlyAnalysis,
    /// The position before the move, and after it.
    pub before: AnyPosition,
    pub after: AnyPosition,
    /// Answered from the cache of solved positions.
    pub cached: bool,
    /// Its position before or after the move lies within a live ranked match's reach: its
    /// values must not be told.
    pub withheld: bool,
}

/// A finished match judged ply by ply, and the jobs queued for the plies left inexact.
#[derive(Debug, Clone)]
pub struct JudgedMatch {
    pub plies: Vec<JudgedPly>,
    pub jobs: Vec<JobId>,
}

/// The match `raw_id` (finished; `match_active` otherwise) judged ply by ply within `budget`,
/// through the fair-play boundary: refused to a seated player, and no value of a position
/// within a live ranked match's reach (those plies are marked and get no job). What it solves
/// goes into the cache; what it leaves inexact is queued as jobs.
pub async fn of_match(
    app: &Analyses,
    player: PlayerId,
    raw_id: &str,
    budget: Duration,
) -> Result<JudgedMatch, Error> {
    let loaded = play::open(app, player, raw_id).await?;
    let m = loaded.get()?;
    if !m.is_finished() {
        return Err(Error::MatchActive(Active::Analysis));
    }
    let (game, moves, match_id) = (m.game, m.moves.clone(), loaded.id);
    // The record was replayed from the log: a move that does not replay is a broken log.
    let (before, end) = game_positions(game, &moves).map_err(unexpected)?;
    let mut positions: Vec<AnyPosition> = before.iter().map(|(pos, _)| *pos).collect();
    positions.push(end);
    boundary::refuse_seated(app, player).await?;
    let boundary = boundary::load(app, game, end.ply()).await?;
    let withheld: Vec<bool> = positions.iter().map(|p| boundary.withholds(p)).collect();
    let client = app.pool.get().await.map_err(unexpected)?;
    let known = solved::lookup_all(&client, &boundary, &positions).await?;
    drop(client);
    let cached: Vec<bool> = known.iter().map(Option::is_some).collect();
    let (threads, nodes) = (app.searches.analysis_threads(), app.jobs.analysis_ply_nodes);
    let judged = budgeted(app, player, budget, move |stop| {
        let per_ply = Limits {
            threads,
            ..Limits::stoppable(nodes, Some(stop))
        };
        Analyser::new().analyse_game(game, &moves, &per_ply, &known)
    })
    .await?
    .map_err(unexpected)?;
    let client = app.pool.get().await.map_err(unexpected)?;
    let solved_now: Vec<_> = (judged.before.iter().zip(&cached))
        .filter(|(_, cached)| !**cached)
        .map(|(verdict, _)| verdict.clone())
        .collect();
    solved::store_all(&client, &solved_now, app.now()).await?;
    drop(client);
    let owed: Vec<(JobId, AnyPosition)> = (judged.before.iter().enumerate())
        .filter(|(i, (_, verdict))| !verdict.exact && !withheld[*i])
        .map(|(i, (pos, _))| (jobs::match_job_id(match_id.as_uuid(), i + 1), *pos))
        .collect();
    let jobs = jobs::queue_missing(app, player, &owed).await?;
    let plies = (judged.plies.into_iter().zip(cached))
        .enumerate()
        .map(|(i, (judgement, cached))| JudgedPly {
            judgement,
            before: positions[i],
            after: positions[i + 1],
            cached,
            withheld: withheld[i] || withheld[i + 1],
        })
        .collect();
    Ok(JudgedMatch { plies, jobs })
}

/// Queues a background search of `pos` for `player` under `id` (through the boundary).
pub async fn queue_job(
    app: &Analyses,
    player: PlayerId,
    id: JobId,
    pos: AnyPosition,
) -> Result<JobView, Error> {
    if pos.outcome().is_some() {
        return Err(AnalysisError::Finished.into());
    }
    boundary::guard(app, player, &pos, pos.ply()).await?;
    // The job found may be an older one under the same id (its stored answer purged), of
    // another position: its answer goes through the boundary as a read of it would.
    answerable(app, jobs::queue(app, player, id, &pos).await?).await
}

/// `player`'s job `id`. A job queued before a ranked match keeps running; its answer waits for
/// the match's end, and for the end of any live ranked match its position can follow.
pub async fn job(app: &LivePath, player: PlayerId, id: JobId) -> Result<JobView, Error> {
    let job = jobs::own(app, player, id).await?;
    boundary::refuse_seated(app, player).await?;
    answerable(app, job).await
}

/// A job as its player may see it: with an answer only while the position it searched can
/// follow no live ranked match's (`in_ranked_match` otherwise), however the job is reached.
async fn answerable(app: &LivePath, job: JobView) -> Result<JobView, Error> {
    if job.result.is_some()
        && let Some(pos) = domain::boundary::position_of_key(&job.key)
    {
        boundary::refuse_position(app, &pos).await?;
    }
    Ok(job)
}

/// Runs `search` on a blocking thread and sets its stop flag once `budget` has passed. When the
/// instance already runs as many searches as it allows, `rate_limited` at once.
async fn budgeted<T, F>(
    app: &LivePath,
    player: PlayerId,
    budget: Duration,
    search: F,
) -> Result<T, Error>
where
    T: Send + 'static,
    F: FnOnce(&AtomicBool) -> T + Send + 'static,
{
    let _slot = app.searches.for_analysis(player).await?;
    tracing::info!(
        budget_ms = u64::try_from(budget.as_millis()).unwrap_or(u64::MAX),
        "analysis search started"
    );
    let stop = Arc::new(AtomicBool::new(false));
    let guard = StopOnDrop(Arc::clone(&stop));
    let flag = Arc::clone(&stop);
    let mut task = tokio::task::spawn_blocking(move || search(&flag));
    let out = tokio::select! {
        out = &mut task => out,
        () = tokio::time::sleep(budget) => {
            stop.store(true, Ordering::Relaxed);
            task.await
        }
    };
    drop(guard);
    out.map_err(unexpected)
}
