//! Analysis over HTTP: the question parsed (a position by its moves or board, a time budget),
//! the answer told (scores, best moves, proven outcomes, withheld plies). What is asked and how
//! it is answered is the core's: `service::analysis::asked`.

use std::time::Duration;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use domain::analysis::{Analysis, position_after, proven_outcome};
use domain::fairplay;
use domain::games::{AnyPosition, GameId, Side};
use domain::ids::JobId;

use crate::auth::Auth;
use crate::error::ApiError;
use crate::idempotency;
use crate::input;
use crate::state::ApiState;
use service::analysis::asked;
use service::analysis::jobs;
use service::analysis::solved::Source;
use service::answers::Body;
use service::checks;
use service::reasons::Invalid;

/// `budget_ms` when the client names none, for one position.
const DEFAULT_BUDGET_MS: u64 = 2_000;
/// `budget_ms` when the client names none, for a whole match.
const DEFAULT_MATCH_BUDGET_MS: u64 = 5_000;
/// The most a client may ask for.
const MAX_BUDGET_MS: u64 = 30_000;

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
    let (analysis, source) = asked::position(&app, auth.player, pos, budget).await?;
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
    let judged = asked::of_match(&app, auth.player, &path, budget).await?;
    let plies = judged.plies.into_iter().map(ply_json).collect();
    Ok(HttpResponse::Ok().json(MatchAnalysis {
        plies,
        jobs: judged.jobs,
    }))
}

/// A judged ply as the API tells it: without its values where they are withheld.
fn ply_json(ply: asked::JudgedPly) -> PlyJudged {
    let asked::JudgedPly {
        judgement: p,
        before,
        after,
        cached,
        withheld,
    } = ply;
    if withheld {
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
        // The position after the move, told from the mover's side.
        outcome: proven_outcome(&after, p.score_after, p.exact).map(|o| {
            let o = if p.exact || after.side_to_move() == before.side_to_move() {
                o
            } else {
                -o
            };
            ProvenOutcome::of_sign(o)
        }),
        ply: p.ply,
        quality: p
            .exact
            .then(|| MoveQuality::of(fairplay::quality(p.score_before, p.score_after))),
        critical: p.exact && fairplay::is_critical(&before, p.best_moves.len()),
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
        let job = asked::queue_job(app, auth.player, JobId::from_uuid(command_id), pos).await?;
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
    let job = asked::job(&app, auth.player, id).await?;
    Ok(HttpResponse::Ok().json(told(job)))
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
