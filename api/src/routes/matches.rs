//! Matches: solo games against the CPU, moves, leaving and returning, resigning, and reading a
//! match (view, events, replay).

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use service::checks;

use domain::cpu;
use domain::games::GameId;
use domain::ids::{MatchId, Seat};
use domain::matches::{Settings, replay};

use crate::auth::Auth;
use crate::error::ApiError;
use crate::idempotency;
use crate::input;
use crate::state::ApiState;
use service::Error;
use service::answers::Body;
use service::live::play;
use service::reasons::{Illegal, Invalid};
use service::views::{EventView, OpeningJson, PlyJson};

/// Who moves first: the player or the CPU.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FirstChoice {
    Me,
    Cpu,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = super::openapi::legal_moves_hidden_where_the_game_allows)]
#[schemars(rename = "CreateSoloMatchRequest")]
pub struct NewSolo {
    game: GameId,
    #[serde(default = "default_level")]
    #[schemars(range(min = *domain::cpu::LEVELS.start(), max = *domain::cpu::LEVELS.end()))]
    cpu_level: u8,
    #[serde(default, deserialize_with = "input::object")]
    settings: Settings,
    #[serde(default = "me")]
    first: FirstChoice,
}

fn default_level() -> u8 {
    cpu::DEFAULT_LEVEL
}

fn me() -> FirstChoice {
    FirstChoice::Me
}

/// `POST /v1/matches`: a solo match against the CPU; not for a banned player (`forbidden`).
pub async fn create_solo(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    payload: web::Payload,
) -> HttpResponse {
    let (app, auth) = (&app, &auth);
    idempotency::command_keyed(app, auth, &req, payload, |key, body| async move {
        let solo: NewSolo = input::json(&body)?;
        let solo = play::Solo {
            game: solo.game,
            cpu_level: solo.cpu_level,
            settings: solo.settings,
            first: match solo.first {
                FirstChoice::Me => Seat::ONE,
                FirstChoice::Cpu => Seat::TWO,
            },
        };
        let (view, stored) =
            play::start_solo(app, auth.player, key.command_id, solo, key.record).await?;
        Ok((StatusCode::CREATED, Body::of(&view)?, stored))
    })
    .await
}

/// `GET /v1/matches/{id}`.
pub async fn get(
    app: web::Data<ApiState>,
    auth: Auth,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let loaded = play::open(&app, auth.player, &path).await?;
    Ok(HttpResponse::Ok().json(loaded.view()?))
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "PlayMoveRequest")]
pub struct MoveBody {
    /// `1`..`7` (Four in a Row) or `a1`..`h8` (Reversi); upper case accepted.
    #[serde(rename = "move")]
    #[schemars(regex(pattern = "^([1-7]|[a-hA-H][1-8])$"))]
    mv: String,
    /// The match version the move was chosen at: another version is `version_conflict`.
    #[schemars(range(max = 9_223_372_036_854_775_807u64))]
    expected_version: Option<u64>,
}

/// `POST /v1/matches/{id}/moves`.
pub async fn post_move(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    seated_command(app, auth, req, path, payload, |body| {
        let m: MoveBody = input::json(body)?;
        if m.mv.len() > 8 {
            return Err(Error::IllegalMove(Illegal::NotAMove(m.mv)).into());
        }
        Ok((play::Asked::Move(m.mv), m.expected_version))
    })
    .await
}

#[derive(Deserialize, Default, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "MatchCommandRequest")]
pub struct VersionBody {
    /// The match version the command was chosen at: another version is `version_conflict`.
    #[schemars(range(max = 9_223_372_036_854_775_807u64))]
    expected_version: Option<u64>,
}

/// `POST /v1/matches/{id}/resign`.
pub async fn resign(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    seated_command(app, auth, req, path, payload, |body| {
        let b: VersionBody = input::json(body)?;
        Ok((play::Asked::Resign, b.expected_version))
    })
    .await
}

/// `POST /v1/matches/{id}/leave`.
pub async fn leave(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    presence_command(app, auth, req, path, payload, true).await
}

/// `POST /v1/matches/{id}/return`.
pub async fn return_(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    presence_command(app, auth, req, path, payload, false).await
}

/// `POST /v1/matches/{id}/heartbeat`: presence only; writes no event (unless it brings an away
/// player back).
pub async fn heartbeat(
    app: web::Data<ApiState>,
    auth: Auth,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    app.limiter.check(&auth.player)?;
    let loaded = play::open(&app, auth.player, &path).await?;
    loaded.seat_required(auth.player)?;
    Ok(HttpResponse::Ok().json(loaded.view()?))
}

/// Leaving and returning: no-ops (answered with the view) when already in that state.
async fn presence_command(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
    leaving: bool,
) -> HttpResponse {
    let (app, auth) = (&app, &auth);
    idempotency::command_keyed(app, auth, &req, payload, |key, body| async move {
        let b: VersionBody = input::json(&body)?;
        let id: MatchId = checks::id(&path)?;
        let (view, stored) =
            play::presence_command(app, auth.player, id, key, leaving, b.expected_version).await?;
        Ok((StatusCode::OK, Body::of(&view)?, stored))
    })
    .await
}

/// The shape of a seated player's command: read the body, then the one use case
/// ([`play::seated_command`]), answered with the view right after the player's own command.
async fn seated_command<F>(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
    asked: F,
) -> HttpResponse
where
    F: FnOnce(&[u8]) -> Result<(play::Asked, Option<u64>), ApiError>,
{
    let (app, auth) = (&app, &auth);
    idempotency::command_keyed(app, auth, &req, payload, |key, body| async move {
        let id: MatchId = checks::id(&path)?;
        let (asked, expected) = asked(&body)?;
        let (view, stored) =
            play::seated_command(app, auth.player, id, key, asked, expected).await?;
        Ok((StatusCode::OK, Body::of(&view)?, stored))
    })
    .await
}

/// `GET /v1/matches/{id}/events`.
pub async fn events(
    app: web::Data<ApiState>,
    auth: Auth,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let (loaded, events) = play::open_finished_with_events(&app, auth.player, &path).await?;
    let finished = loaded.get()?.is_finished();
    let events: Vec<EventView> = events
        .iter()
        .map(|e| EventView::shown(e, finished))
        .collect();
    Ok(HttpResponse::Ok().json(Events { events }))
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProofQuery {
    /// Prove against this checkpoint (one you hold); the latest by default.
    #[schemars(range(min = 1, max = 9_007_199_254_740_991u64))]
    checkpoint: Option<u64>,
}

/// `GET /v1/matches/{id}/proof[?checkpoint=n]`.
pub async fn proof(
    app: web::Data<ApiState>,
    auth: Auth,
    path: web::Path<String>,
    query: Result<web::Query<ProofQuery>, actix_web::Error>,
) -> Result<HttpResponse, ApiError> {
    let query = query.map_err(input::query_error)?;
    let proof = service::history::proof_for(&app, auth.player, &path, query.checkpoint).await?;
    Ok(HttpResponse::Ok().json(proof))
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlyQuery {
    /// Only this ply (0 is the starting position).
    #[schemars(range(max = 4_294_967_295u32))]
    ply: Option<u32>,
}

/// `GET /v1/matches/{id}/replay[?ply=n]`.
pub async fn replay(
    app: web::Data<ApiState>,
    auth: Auth,
    path: web::Path<String>,
    query: Result<web::Query<PlyQuery>, actix_web::Error>,
) -> Result<HttpResponse, ApiError> {
    let query = query.map_err(input::query_error)?;
    let (loaded, events) = play::open_finished_with_events(&app, auth.player, &path).await?;
    let m = loaded.get()?;
    let hide = !m.settings.shows_legal_moves(m.game);
    let stamped = events
        .iter()
        .map(play::stamped)
        .collect::<Result<Vec<_>, _>>()?;
    let mut plies = replay::plies(&stamped);
    if let Some(n) = query.ply {
        let one = plies
            .into_iter()
            .nth(n as usize)
            .ok_or_else(|| Error::InvalidRequest(Invalid::PlyPastEnd(n)))?;
        plies = vec![one];
    }
    let plies: Vec<PlyJson> = plies.into_iter().map(|p| PlyJson::new(p, hide)).collect();
    Ok(HttpResponse::Ok().json(Replay {
        moves: m.moves.concat(),
        opening: OpeningJson::of(m.game, &m.moves),
        plies,
    }))
}

/// Every event of a match, oldest first.
#[derive(Serialize, JsonSchema)]
#[schemars(rename = "MatchEvents")]
pub struct Events {
    events: Vec<EventView>,
}

/// A match ply by ply (one ply with `?ply=n`).
#[derive(Serialize, JsonSchema)]
pub struct Replay {
    /// The game record, passes omitted.
    moves: String,
    /// The named opening the game followed; `null` before a first move.
    opening: Option<OpeningJson>,
    plies: Vec<PlyJson>,
}
