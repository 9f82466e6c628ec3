//! The rooms' routes over `service::rooms`: a host opens one with settings and an invite code, a
//! friend joins, members start matches and rematches; a room answered with its members' names.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use domain::games::GameId;
use domain::ids::{MatchId, PlayerId, Seat};
use domain::matches::Settings;
use service::answers::Body;
use service::rooms::{self, Room};
use service::state::AppState;

use crate::auth::Auth;
use crate::error::ApiError;
use crate::idempotency;
use crate::input;
use crate::state::ApiState;

/// A room as its members see it.
#[derive(Serialize, JsonSchema)]
pub struct RoomView {
    room_id: Uuid,
    /// The invite code (`POST /v1/rooms/{code}/join`).
    code: String,
    game: GameId,
    settings: Settings,
    /// The host in seat 1, the guest (once joined) in seat 2.
    members: Vec<Member>,
    /// The room's latest match.
    match_id: Option<MatchId>,
}

impl RoomView {
    /// `room` with its members' names.
    async fn of(app: &AppState, room: Room) -> Result<RoomView, ApiError> {
        let players: Vec<PlayerId> = room.members().map(|(_, p)| p).collect();
        let names = service::players::names_of(app, &players).await?;
        let members = room
            .members()
            .map(|(seat, player_id)| Member {
                seat,
                player_id,
                name: names.get(&player_id).cloned().unwrap_or_default(),
            })
            .collect();
        Ok(RoomView {
            room_id: room.room_id,
            code: room.code,
            game: room.game,
            settings: room.settings,
            members,
            match_id: room.match_id,
        })
    }
}

#[derive(Serialize, JsonSchema)]
pub struct Member {
    seat: Seat,
    player_id: PlayerId,
    name: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = super::openapi::legal_moves_hidden_where_the_game_allows)]
#[schemars(rename = "CreateRoomRequest")]
pub struct NewRoom {
    game: GameId,
    #[serde(default, deserialize_with = "input::object")]
    settings: Settings,
}

/// `POST /v1/rooms`.
pub async fn create(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    payload: web::Payload,
) -> HttpResponse {
    let (app, auth) = (&app, &auth);
    idempotency::command(app, auth, &req, payload, |_, body| async move {
        let new: NewRoom = input::json(&body)?;
        let room = rooms::create(app, auth.player, new.game, new.settings).await?;
        Ok((
            StatusCode::CREATED,
            Body::of(&RoomView::of(app, room).await?)?,
        ))
    })
    .await
}

/// `GET /v1/rooms/{room_id}` (members only).
pub async fn get(
    app: web::Data<ApiState>,
    auth: Auth,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let room = rooms::of_member(&app, &path, auth.player).await?;
    Ok(HttpResponse::Ok().json(RoomView::of(&app, room).await?))
}

/// `POST /v1/rooms/{code}/join`: two members at most.
pub async fn join(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    let (app, auth) = (&app, &auth);
    idempotency::command(app, auth, &req, payload, |_, _body| async move {
        let room = rooms::join(app, auth.player, &path).await?;
        Ok((StatusCode::OK, Body::of(&RoomView::of(app, room).await?)?))
    })
    .await
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "ChangeRoomSettingsRequest")]
pub struct Patch {
    #[serde(deserialize_with = "input::object")]
    settings: Settings,
}

/// `PATCH /v1/rooms/{room_id}`: settings, between matches.
pub async fn patch(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    let (app, auth) = (&app, &auth);
    idempotency::command(app, auth, &req, payload, |_, body| async move {
        let patch: Patch = input::json(&body)?;
        let room = rooms::change_settings(app, auth.player, &path, patch.settings).await?;
        Ok((StatusCode::OK, Body::of(&RoomView::of(app, room).await?)?))
    })
    .await
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "StartRoomMatchRequest")]
pub struct StartBody {
    /// Starting alone: the CPU's level in seat 2 (default 2).
    #[schemars(range(min = *domain::cpu::LEVELS.start(), max = *domain::cpu::LEVELS.end()))]
    cpu_level: Option<u8>,
}

/// `POST /v1/rooms/{room_id}/matches`: start (or rematch); alone, against the CPU.
pub async fn start(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
    payload: web::Payload,
) -> HttpResponse {
    let (app, auth) = (&app, &auth);
    idempotency::command(app, auth, &req, payload, |command_id, body| async move {
        let start: StartBody = input::json(&body)?;
        let view = rooms::start(app, auth.player, &path, command_id, start.cpu_level).await?;
        Ok((StatusCode::CREATED, Body::of(&view)?))
    })
    .await
}
