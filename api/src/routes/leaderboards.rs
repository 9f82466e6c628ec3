//! Leaderboards: the non-provisional players of a game (deviation at most 110, the literal in
//! the query so that the partial index `leaderboard_board` serves it), by rating, humans and
//! declared bots on boards apart; read from a replica when one has caught up
//! (`service::replicas`).

use actix_web::{HttpResponse, web};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use service::checks;
use uuid::Uuid;

use crate::auth::Auth;
use crate::error::ApiError;
use crate::input;
use crate::state::ApiState;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BoardQuery {
    /// Default 50.
    #[schemars(range(min = 1, max = 500))]
    limit: Option<i64>,
    /// `true`: the declared bots' board (a bot is rated on its own); default the humans'.
    #[serde(default)]
    bots: bool,
    /// `true`: the game's correspondence ladder; default its real-time one.
    #[serde(default)]
    correspondence: bool,
}

/// The non-provisional players of a game, best first.
#[derive(Serialize, JsonSchema)]
pub struct Leaderboard {
    entries: Vec<Entry>,
}

#[derive(Serialize, JsonSchema)]
#[schemars(rename = "LeaderboardEntry")]
pub struct Entry {
    rank: usize,
    player_id: Uuid,
    name: String,
    rating: f64,
    deviation: f64,
    games: i32,
}

/// `GET /v1/leaderboards/{game}?limit&bots&correspondence` (default 50, at most 500; the
/// humans' board unless `bots=true`; the real-time ladder unless `correspondence=true`).
pub async fn get(
    app: web::Data<ApiState>,
    _auth: Auth,
    path: web::Path<String>,
    query: Result<web::Query<BoardQuery>, actix_web::Error>,
) -> Result<HttpResponse, ApiError> {
    let game = checks::game(&path)?;
    let q = query.map_err(input::query_error)?;
    let limit = checks::limit(q.limit)?;
    let ladder = domain::ratings::Ladder {
        game,
        correspondence: q.correspondence,
    };
    let rows = service::records::leaderboard(&app, ladder, limit, q.bots).await?;
    let entries = rows
        .into_iter()
        .enumerate()
        .map(|(i, (r, name))| Entry {
            rank: i + 1,
            name,
            player_id: r.player_id,
            rating: r.rating,
            deviation: r.deviation,
            games: r.games,
        })
        .collect();
    Ok(HttpResponse::Ok().json(Leaderboard { entries }))
}
