//! Analysis: the exact (or, out of budget, estimated) score and best moves of any position, and
//! a finished match judged ply by ply (SPEC §6).
//!
//! The searches are pure ([`domain::analysis`]) and run on a blocking thread, so a long solve
//! never holds up the async workers. Their time budget lives here: a timer sets the search's stop
//! flag when `budget_ms` runs out (the domain reads no clock), and so does a dropped request.

use service::checks;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use domain::analysis::{
    Analyser, Analysis, AnalysisError, game_positions, position_after, proven_outcome,
};
use domain::fairplay;
use domain::games::{AnyPosition, GameId, Side};
use domain::ids::{JobId, PlayerId};
use domain::search::Limits;

use crate::auth::Auth;
use crate::error::ApiError;
use crate::error::unexpected;
use crate::idempotency;
use crate::input;
use crate::state::ApiState;
use service::Error;
use service::analysis::boundary::{self, Boundary};
use service::analysis::jobs;
use service::analysis::searches::StopOnDrop;
use service::analysis::solved::{self, Source};
use service::live::answers::Body;
use service::live::play;
use service::reasons::{Active, Invalid};
use service::state::AppState;

/// `budget_ms` when the client names none, for one position.
const DEFAULT_BUDGET_MS: u64 = 2_000;
/// `budget_ms` when the client names none, for a whole match.
const DEFAULT_MATCH_BUDGET_MS: u64 = 5_000;
/// The most a client may ask for.
const MAX_BUDGET_MS: u64 = 30_000;
/// Each position of a match analysis gets at most this many nodes, so that one hard opening
/// position cannot eat the budget of all the others.
const MATCH_PLY_NODES: u64 = 2_000_000;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BudgetQuery {
    /// The search's time budget (default 2000 for a position, 5000 for a match).
    #[schemars(range(min = 1, max = 30000))]
    budget_ms: Option<u64>,
}

impl BudgetQuery {
    fn budget(&self, default_ms: u64) -> Result<Duration, ApiError> {
        match self.budget_ms.unwrap_or(default_ms) {
            ms @ 1..=MAX_BUDGET_MS => Ok(Duration::from_millis(ms)),
            got => Err(Invalid::Budget {
                max: MAX_BUDGET_MS,
                got,
            }
            .into()),
        }
    }
}

/// A position given by its game record or by its board and side to move.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "AnalysisRequest")]
pub struct PositionBody {
    game: GameId,
    /// The game so far, passes omitted (`4453`, `f5d6c3`).
    #[schemars(length(max = 128))]
    moves: Option<String>,
    /// Rows as in the match view: 6 of 7 cells top row first (Four in a Row), 8 of 8 row 1
    /// first (Reversi).
    #[schemars(length(min = 6, max = 8))]
    board: Option<Vec<String>>,
    /// The colour to move.
    #[schemars(regex(pattern = "^[RYBW]$"))]
    side: Option<String>,
}

/// The schema of [`PositionBody`]: either `moves`, or `board` and `side`, never both (a null
/// counts as absent), as two named forms.
pub fn position_forms(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    super::openapi::one_of_forms::<PositionBody>(
        generator,
        &[
            (
                "PositionByMoves",
                "A position by its game record.",
                &["game", "moves"],
            ),
            (
                "PositionByBoard",
                "A position by its board and the colour to move.",
                &["game", "board", "side"],
            ),
        ],
    )
}

/// The value and best moves of a position.
#[derive(Serialize, JsonSchema)]
pub struct PositionAnalysis {
    /// In the game's convention, from the side to move's point of view.
    score: i32,
    /// Every move reaching `score` when `exact`; the best found otherwise; empty for a pass.
    best_moves: Vec<String>,
    /// Whether `score` is proven under perfect play.
    exact: bool,
    /// The proven outcome for the side to move: from an exact `score`, or, in Four in a Row's
    /// first plies, from the shipped outcome book, which proves the outcome without its distance
    /// (`exact` is then false and `score` an estimate of the distance on the proven side of 0;
    /// a proven draw scores 0). Null when unproven.
    outcome: Option<ProvenOutcome>,
    /// Where the answer comes from: `search` (searched now) or `cache` (solved before, this
    /// position or one of its images under the game's symmetries).
    source: Source,
}

/// An outcome under perfect play, for the side it is told from.
#[derive(Serialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ProvenOutcome {
    Win,
    Draw,
    Loss,
}

impl ProvenOutcome {
    /// From a sign: 1 a win, 0 a draw, -1 a loss.
    pub fn of_sign(sign: i32) -> ProvenOutcome {
        match sign.signum() {
            1 => ProvenOutcome::Win,
            0 => ProvenOutcome::Draw,
            _ => ProvenOutcome::Loss,
        }
    }
}

/// A finished match judged ply by ply.
#[derive(Serialize, JsonSchema)]
pub struct MatchAnalysis {
    plies: Vec<PlyJudged>,
    /// The background jobs searching the positions this analysis left inexact, until they are
    /// exact or their time cap is spent (`GET /v1/analysis/jobs/{job_id}`); asking again
    /// answers their plies from the cache once they are solved.
    jobs: Vec<JobId>,
}

/// Why an answer leaves a position's values out.
#[derive(Serialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Withheld {
    /// The position is that of a live ranked match beyond its public opening, or can follow
    /// one (in any image of the board, and in Reversi with the colours exchanged): nothing is
    /// said of its value until that match ends.
    LiveRankedPosition,
}

/// One ply, from the point of view of the side that played it.
#[derive(Serialize, JsonSchema)]
pub struct PlyJudged {
    ply: u32,
    #[serde(rename = "move")]
    mv: String,
    /// Null when the ply is withheld.
    score_before: Option<i32>,
    /// Equal to `score_before` for a best move, lower for a mistake; null when the ply is
    /// withheld.
    score_after: Option<i32>,
    best_moves: Vec<String>,
    exact: bool,
    /// How the move compares with the best one, when both values are exact: `best` (it keeps
    /// the value), `inaccuracy` (the same outcome, a worse margin or a longer way), `error`
    /// (the outcome lost); null otherwise.
    quality: Option<MoveQuality>,
    /// The proven outcome after the move for the side that played it (from an exact
    /// `score_after`, or Four in a Row's outcome book: see `PositionAnalysis::outcome`).
    outcome: Option<ProvenOutcome>,
    /// Whether the position before the move was critical: exact, at least two legal moves of
    /// different values, and neither a one-move win nor a forced block (the positions the
    /// fair-play statistics count).
    critical: bool,
    /// `cache` when the position before the move was solved before (by any analysis, here or
    /// on another instance), `search` when it was searched now.
    source: Source,
    /// `live_ranked_position` when the position before or after the move lies within the
    /// fair-play boundary of a live ranked match: the scores are then null, `best_moves`
    /// empty, `exact` and `critical` false and `quality` and `outcome` null, until that match
    /// ends. Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    withheld: Option<Withheld>,
}

/// A move's quality (`domain::fairplay::Quality`).
#[derive(Serialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum MoveQuality {
    Best,
    Inaccuracy,
    Error,
}

impl MoveQuality {
    fn of(q: fairplay::Quality) -> MoveQuality {
        match q {
            fairplay::Quality::Best => MoveQuality::Best,
            fairplay::Quality::Inaccuracy => MoveQuality::Inaccuracy,
            fairplay::Quality::Error => MoveQuality::Error,
        }
    }
}

impl PositionBody {
    fn position(&self) -> Result<AnyPosition, ApiError> {
        match (&self.moves, &self.board, &self.side) {
            (Some(moves), None, None) => Ok(position_after(self.game, moves)?),
            (None, Some(board), Some(side)) => {
                let side = side_of(self.game, side)?;
                let rows: Vec<&str> = board.iter().map(String::as_str).collect();
                Ok(AnyPosition::from_rows(self.game, &rows, side)?)
            }
            _ => Err(Invalid::PositionShape.into()),
        }
    }
}

/// The side whose colour letter is `letter` (`R`/`Y`, `B`/`W`; any case).
pub(crate) fn side_of(game: GameId, letter: &str) -> Result<Side, ApiError> {
    let start = AnyPosition::start(game);
    [Side::First, Side::Second]
        .into_iter()
        .find(|&s| letter.eq_ignore_ascii_case(&start.color(s).to_string()))
        .ok_or_else(|| {
            Invalid::Side {
                first: start.color(Side::First),
                second: start.color(Side::Second),
                game,
            }
            .into()
        })
}

/// `POST /v1/analysis[?budget_ms=n]`: the score and best moves of one position.
pub async fn position(
    app: web::Data<ApiState>,
    auth: Auth,
    query: Result<web::Query<BudgetQuery>, actix_web::Error>,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    app.limiter.check(&auth.player)?;
    let query = query.map_err(input::query_error)?;
    let budget = query.budget(DEFAULT_BUDGET_MS)?;
    let body = input::body(payload).await?;
    let pos = input::json::<PositionBody>(&body)?.position()?;
    if pos.outcome().is_some() {
        return Err(AnalysisError::Finished.into());
    }
    let boundary = guarded(&app, auth.player, &pos).await?;
    let client = app.pool.get().await.map_err(unexpected)?;
    let (analysis, source) = match solved::lookup(&client, &boundary, &pos).await? {
        Some(known) => (known, Source::Cache),
        None => {
            drop(client);
            let threads = app.searches.analysis_threads();
            let analysis = budgeted(&app, auth.player, budget, move |stop| {
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
            (analysis, Source::Search)
        }
    };
    let Analysis {
        score,
        best_moves,
        exact,
        ..
    } = analysis;
    Ok(HttpResponse::Ok().json(PositionAnalysis {
        score,
        best_moves,
        exact,
        outcome: proven_outcome(&pos, score, exact).map(ProvenOutcome::of_sign),
        source,
    }))
}

/// `GET /v1/matches/{id}/analysis[?budget_ms=n]`: a finished match ply by ply. A seated caller
/// counts as present, as for every read of a match.
pub async fn of_match(
    app: web::Data<ApiState>,
    auth: Auth,
    path: web::Path<String>,
    query: Result<web::Query<BudgetQuery>, actix_web::Error>,
) -> Result<HttpResponse, ApiError> {
    let query = query.map_err(input::query_error)?;
    let budget = query.budget(DEFAULT_MATCH_BUDGET_MS)?;
    let loaded = play::open(&app, auth.player, &path).await?;
    let m = loaded.get()?;
    if !m.is_finished() {
        return Err(Error::MatchActive(Active::Analysis).into());
    }
    let (game, moves, match_id) = (m.game, m.moves.clone(), loaded.id);
    // The record was replayed from the log: a move that does not replay is a broken log.
    let (before, end) = game_positions(game, &moves).map_err(unexpected)?;
    let mut positions: Vec<AnyPosition> = before.iter().map(|(pos, _)| *pos).collect();
    positions.push(end);
    // Through the fair-play boundary: nothing for a seated player beyond the public opening,
    // and no value of a position within a live ranked match's reach.
    boundary::refuse_seated(&app, auth.player).await?;
    let boundary = boundary::load(&app, game, end.ply()).await?;
    let withheld: Vec<bool> = positions.iter().map(|p| boundary.withholds(p)).collect();
    let client = app.pool.get().await.map_err(unexpected)?;
    let known = solved::lookup_all(&client, &boundary, &positions).await?;
    drop(client);
    let cached: Vec<bool> = known.iter().map(Option::is_some).collect();
    let threads = app.searches.analysis_threads();
    let judged = budgeted(&app, auth.player, budget, move |stop| {
        let per_ply = Limits {
            threads,
            ..Limits::stoppable(MATCH_PLY_NODES, Some(stop))
        };
        Analyser::new().analyse_game(game, &moves, &per_ply, &known)
    })
    .await?
    .map_err(unexpected)?;
    // What was solved now goes into the cache; what is still inexact is owed a deeper search.
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
    let jobs = jobs::queue_missing(&app, auth.player, &owed).await?;
    let plies = (judged.plies.into_iter().zip(cached).zip(&before))
        .enumerate()
        .map(|(i, ((p, cached), (pos, _)))| {
            if withheld[i] || withheld[i + 1] {
                return PlyJudged {
                    ply: p.ply,
                    mv: p.mv,
                    score_before: None,
                    score_after: None,
                    best_moves: Vec::new(),
                    exact: false,
                    quality: None,
                    outcome: None,
                    critical: false,
                    source: Source::Search,
                    withheld: Some(Withheld::LiveRankedPosition),
                };
            }
            PlyJudged {
                outcome: {
                    // The position after the move, told from the mover's side.
                    let after = &positions[i + 1];
                    proven_outcome(after, p.score_after, p.exact).map(|o| {
                        let o = if p.exact || after.side_to_move() == pos.side_to_move() {
                            o
                        } else {
                            -o
                        };
                        ProvenOutcome::of_sign(o)
                    })
                },
                ply: p.ply,
                quality: p
                    .exact
                    .then(|| MoveQuality::of(fairplay::quality(p.score_before, p.score_after))),
                critical: p.exact && fairplay::is_critical(pos, p.best_moves.len()),
                mv: p.mv,
                score_before: Some(p.score_before),
                score_after: Some(p.score_after),
                best_moves: p.best_moves,
                exact: p.exact,
                source: if cached {
                    Source::Cache
                } else {
                    Source::Search
                },
                withheld: None,
            }
        })
        .collect();
    Ok(HttpResponse::Ok().json(MatchAnalysis { plies, jobs }))
}

/// `POST /v1/analysis/jobs`: queues a search of a position (the body of `POST /v1/analysis`)
/// that runs in the background until it is exact or its time cap is spent; 202 with the job.
pub async fn create_job(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    payload: web::Payload,
) -> HttpResponse {
    let (app, auth) = (&app, &auth);
    idempotency::command(app, auth, &req, payload, |command_id, body| async move {
        let pos = input::json::<PositionBody>(&body)?.position()?;
        if pos.outcome().is_some() {
            return Err(AnalysisError::Finished.into());
        }
        guarded(app, auth.player, &pos).await?;
        let job = jobs::queue(app, auth.player, JobId::from_uuid(command_id), &pos).await?;
        Ok((StatusCode::ACCEPTED, Body::of(&told(job))?))
    })
    .await
}

/// `GET /v1/analysis/jobs/{job_id}`: your job, its progress and, once done, its answer.
pub async fn get_job(
    app: web::Data<ApiState>,
    auth: Auth,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id: JobId = checks::id(&path)?;
    let job = jobs::own(&app, auth.player, id).await?;
    // A job queued before a ranked match keeps running; its answer waits for the match's end,
    // and for the end of any live ranked match its position can follow.
    boundary::refuse_seated(&app, auth.player).await?;
    if job.result.is_some()
        && let Some(pos) = domain::boundary::position_of_key(&job.key)
    {
        boundary::refuse_position(&app, &pos).await?;
    }
    Ok(HttpResponse::Ok().json(told(job)))
}

/// The fair-play boundary for a question about `pos` asked by `player`: refused to a player
/// seated in a live ranked match (`in_ranked_match`), and to anyone
/// where `pos` is a live ranked position or can follow one (`in_ranked_match.position`).
async fn guarded(app: &AppState, player: PlayerId, pos: &AnyPosition) -> Result<Boundary, Error> {
    boundary::refuse_seated(app, player).await?;
    let boundary = boundary::load(app, pos.game(), pos.ply()).await?;
    if boundary.withholds(pos) {
        return Err(Error::LivePosition);
    }
    Ok(boundary)
}

/// A job as its asker reads it: why it failed, in their language.
fn told(mut job: jobs::JobView) -> jobs::JobView {
    if let Some(failure) = job.failure {
        let attempts = ("attempts", jobs::MAX_ATTEMPTS.to_string());
        let lang = crate::requests::lang();
        job.error = Some(crate::texts::failure(lang, failure.code(), &[attempts]));
    }
    job
}

/// Runs `search` on a blocking thread and sets its stop flag once `budget` has passed. When the
/// instance already runs as many searches as it allows, the answer is a 429 at once.
async fn budgeted<T, F>(
    app: &AppState,
    player: PlayerId,
    budget: Duration,
    search: F,
) -> Result<T, ApiError>
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
