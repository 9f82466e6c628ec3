//! The ranked queue: open a ticket in a pool, read it, cancel it.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;
use service::checks;

use domain::games::GameId;
use domain::ids::TicketId;
use domain::matches::{DaysPerMove, TurnSeconds};
use domain::tickets::Pool;

use crate::auth::Auth;
use crate::error::ApiError;
use crate::idempotency;
use crate::input;
use crate::state::ApiState;
use service::answers::Body;
use service::ranked;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "JoinQueueRequest")]
pub struct NewTicket {
    game: GameId,
    /// The pool's turn limit; none by default.
    #[serde(default)]
    turn_seconds: Option<TurnSeconds>,
    /// A correspondence pool: days per move (its games are rated on the game's correspondence
    /// ladder, and seat nobody: a player may have many open). Not with `turn_seconds`.
    #[serde(default)]
    days_per_move: Option<DaysPerMove>,
}

/// `POST /v1/queue`.
pub async fn open(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    payload: web::Payload,
) -> HttpResponse {
    let (app, auth) = (&app, &auth);
    idempotency::command(app, auth, &req, payload, |command_id, body| async move {
        let t: NewTicket = input::json(&body)?;
        if t.turn_seconds.is_some() && t.days_per_move.is_some() {
            return Err(service::reasons::Invalid::TwoClocks.into());
        }
        let pool = Pool {
            game: t.game,
            turn_seconds: t.turn_seconds,
            days_per_move: t.days_per_move,
        };
        let view = ranked::open_ticket(&app.ranked, auth.player, pool, command_id).await?;
        Ok((StatusCode::CREATED, Body::of(&view)?))
    })
    .await
}

/// `GET /v1/queue/{ticket}` (owner only).
pub async fn get(
    app: web::Data<ApiState>,
    auth: Auth,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id: TicketId = checks::id(&path)?;
    Ok(HttpResponse::Ok().json(ranked::own_ticket(&app, auth.player, id).await?))
}

/// `DELETE /v1/queue/{ticket}`.
pub async fn cancel(
    app: web::Data<ApiState>,
    auth: Auth,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    app.limiter.check(&auth.player)?;
    let id: TicketId = checks::id(&path)?;
    Ok(HttpResponse::Ok().json(ranked::cancel_ticket(&app, auth.player, id).await?))
}
