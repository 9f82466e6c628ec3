//! The opening explorer (`GET /v1/explorer/{game}`): what was played from a position in every
//! finished game, how it scored by rating band and month, the exact outcome after each move
//! where it is known, and the last and highest-rated games through it.

use actix_web::{HttpResponse, web};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use domain::analysis::position_after;
use domain::games::{AnyPosition, split_moves};
use service::checks;
use service::explorer::{self, Outcome};
use service::explorer::{Filter, GameRef};
use service::reasons::Invalid;
use service::views::OpeningJson;

use super::analysis::{ProvenOutcome, Withheld};
use crate::auth::Auth;
use crate::error::ApiError;
use crate::input;
use crate::state::ApiState;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExplorerQuery {
    /// The game so far, passes omitted (`4453`, `f5d6c3`); empty or absent with no `board`: the
    /// start.
    #[schemars(length(max = 128))]
    moves: Option<String>,
    /// The board instead of `moves`: its rows as in the match view, separated by `/`.
    #[schemars(length(max = 128))]
    board: Option<String>,
    /// The colour to move, with `board`.
    #[schemars(regex(pattern = "^[RYBWrybw]$"))]
    side: Option<String>,
    /// Rating bands by their lower bounds, comma-separated: 0 (under 1200), 1200, 1400, 1600,
    /// 1800, 2000, 2200 (2200 and over); a game's band is the average of its players' ratings
    /// before it. Default: all.
    #[schemars(regex(
        pattern = "^((0|1200|1400|1600|1800|2000|2200)(,(0|1200|1400|1600|1800|2000|2200))*)?$"
    ))]
    ratings: Option<String>,
    /// The first month counted, `YYYY-MM` (the month a game ended in).
    #[schemars(regex(pattern = "^[0-9]{4}-(0[1-9]|1[0-2])$"))]
    since: Option<String>,
    /// The last month counted, `YYYY-MM`.
    #[schemars(regex(pattern = "^[0-9]{4}-(0[1-9]|1[0-2])$"))]
    until: Option<String>,
    /// Only ranked games (`true`) or only casual ones (`false`); default both.
    ranked: Option<bool>,
}

/// What was played from a position.
#[derive(Serialize, JsonSchema)]
pub struct Explorer {
    /// The position asked about: its rows and the colour to move.
    board: Vec<String>,
    side: char,
    /// The legal moves there (empty once the game is over).
    legal_moves: Vec<String>,
    /// The moves played from it, most played first, in the asker's orientation.
    moves: Vec<MoveJson>,
    /// The named opening of `moves`, when a record was given and it has a name.
    opening: Option<OpeningJson>,
    /// The last games through the position (at most 8), last first.
    recent_games: Vec<GameJson>,
    /// The highest-rated games through it (at most 8), highest first.
    top_games: Vec<GameJson>,
}

/// One move's statistics, from the point of view of the side that played it.
#[derive(Serialize, JsonSchema)]
pub struct MoveJson {
    #[serde(rename = "move")]
    mv: String,
    games: i64,
    wins: i64,
    draws: i64,
    losses: i64,
    /// Its games over all the games from the position.
    share: f64,
    /// The average rating of the players who played it (null if only the CPU did).
    average_rating: Option<f64>,
    /// The exact score of the position after the move for the side that played it, in the
    /// game's convention, where it is known: the cache of solved positions, or a
    /// bounded solve at the request (20,000 nodes a move: Four in a Row's late plies).
    value: Option<i32>,
    /// The proven outcome after the move for the side that played it: `win`, `draw` or `loss`
    /// (from the exact score, the game's end, or Four in a Row's outcome book, which proves the
    /// outcome but not its distance: `value` is then null); null where it is not known.
    outcome: Option<ProvenOutcome>,
    /// Whether `outcome` is proven.
    exact: bool,
    /// `live_ranked_position` when the position after the move lies within the fair-play
    /// boundary of a live ranked match (it is a live position or can follow one): `value` and
    /// `outcome` are then null whatever is known. Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    withheld: Option<Withheld>,
}

/// A game through the position.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "ExplorerGame")]
pub struct GameJson {
    match_id: Uuid,
    /// The average of its players' ratings before it.
    rating: f64,
    /// The month it ended in, `YYYY-MM`.
    month: String,
}

impl GameJson {
    fn of(g: GameRef) -> GameJson {
        GameJson {
            match_id: g.match_id,
            rating: g.rating.round(),
            month: format!("{:04}-{:02}", g.month.year(), u8::from(g.month.month())),
        }
    }
}

/// `GET /v1/explorer/{game}?moves|board&side&ratings&since&until&ranked`.
pub async fn get(
    app: web::Data<ApiState>,
    auth: Auth,
    path: web::Path<String>,
    query: Result<web::Query<ExplorerQuery>, actix_web::Error>,
) -> Result<HttpResponse, ApiError> {
    let game = checks::game(&path)?;
    let q = query.map_err(input::query_error)?;
    let (pos, record) = match (&q.moves, &q.board, &q.side) {
        (moves, None, None) => {
            let moves = moves.as_deref().unwrap_or("");
            (
                position_after(game, moves)?,
                Some(split_moves(game, moves).map_err(service::Error::from)?),
            )
        }
        (None, Some(board), Some(side)) => {
            let side = super::analysis::side_of(game, side)?;
            let rows: Vec<&str> = board.split('/').collect();
            (
                AnyPosition::from_rows(game, &rows, side).map_err(service::Error::from)?,
                None,
            )
        }
        _ => return Err(Invalid::PositionShape.into()),
    };
    let filter = Filter {
        ranked: q.ranked,
        bands: explorer::bands(q.ratings.as_deref())?,
        since: explorer::month(q.since.as_deref())?,
        until: explorer::month(q.until.as_deref())?,
    };
    let answer = explorer::explore(&app, auth.player, &pos, &filter).await?;
    let outcome = |o: Outcome| match o {
        Outcome::Win => ProvenOutcome::Win,
        Outcome::Draw => ProvenOutcome::Draw,
        Outcome::Loss => ProvenOutcome::Loss,
    };
    Ok(HttpResponse::Ok().json(Explorer {
        board: pos.rows(),
        side: pos.color(pos.side_to_move()),
        legal_moves: pos.legal_moves(),
        moves: answer
            .moves
            .into_iter()
            .map(|m| MoveJson {
                mv: m.mv,
                games: m.games,
                wins: m.wins,
                draws: m.draws,
                losses: m.losses,
                share: m.share,
                average_rating: m.average_rating.map(f64::round),
                value: m.value,
                exact: m.outcome.is_some(),
                withheld: m.withheld.then_some(Withheld::LiveRankedPosition),
                outcome: m.outcome.map(outcome),
            })
            .collect(),
        opening: record.and_then(|r| OpeningJson::of(game, &r)),
        recent_games: answer.recent_games.into_iter().map(GameJson::of).collect(),
        top_games: answer.top_games.into_iter().map(GameJson::of).collect(),
    }))
}
