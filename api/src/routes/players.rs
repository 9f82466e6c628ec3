//! Players and tokens: sign-up by name, token refresh, a player's profile.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, web};
use serde::Deserialize;
use serde_json::json;
use uuid::Uuid;

use domain::games::GameId;
use domain::ids::PlayerId;

use crate::auth::{Auth, Role};
use crate::error::ApiError;
use crate::input;
use crate::play::unexpected;
use crate::state::AppState;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewPlayer {
    name: String,
}

/// A player's name: 1 to 32 characters, no control characters, no surrounding spaces.
pub fn valid_name(raw: &str) -> Result<String, ApiError> {
    let name = raw.trim();
    let count = name.chars().count();
    if count == 0 || count > 32 {
        return Err(ApiError::InvalidRequest(
            "name must have 1 to 32 characters".into(),
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(ApiError::InvalidRequest(
            "name must not contain control characters".into(),
        ));
    }
    Ok(name.to_owned())
}

/// `POST /v1/players`: a name in, a player and the device's token out.
pub async fn create(
    app: web::Data<AppState>,
    payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let body: NewPlayer = input::json(&input::body(payload).await?)?;
    let name = valid_name(&body.name)?;
    let player = PlayerId::from_uuid(Uuid::now_v7());
    let now = app.now();
    let client = app.pool.get().await.map_err(unexpected)?;
    client
        .execute(
            "INSERT INTO players (player_id, name, created_at) VALUES ($1, $2, $3)",
            &[&player.as_uuid(), &name, &now],
        )
        .await
        .map_err(unexpected)?;
    let token = app.keys.issue(player, Role::Player, now)?;
    Ok(HttpResponse::build(StatusCode::CREATED)
        .json(json!({"player_id": player, "name": name, "token": token})))
}

/// `POST /v1/tokens/refresh`: a valid token for a fresh one.
pub async fn refresh(app: web::Data<AppState>, auth: Auth) -> Result<HttpResponse, ApiError> {
    app.limiter.check(&auth.token)?;
    let token = app.keys.issue(auth.player, auth.role, app.now())?;
    Ok(HttpResponse::Ok().json(json!({ "token": token })))
}

/// `GET /v1/players/{id}`.
pub async fn get(
    app: web::Data<AppState>,
    _auth: Auth,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let player: PlayerId = input::id(&path)?;
    let client = app.pool.get().await.map_err(unexpected)?;
    let row = client
        .query_opt(
            "SELECT name FROM players WHERE player_id = $1",
            &[&player.as_uuid()],
        )
        .await
        .map_err(unexpected)?
        .ok_or(ApiError::NotFound("player"))?;
    let name: String = row.get(0);
    // Ratings are a projection of ranked matches (the ranked-play issue); until a player has
    // played one, SPEC §4 shows the starting values.
    let ratings: serde_json::Map<String, serde_json::Value> = GameId::ALL
        .iter()
        .map(|g| {
            (
                g.to_string(),
                json!({"rating": 1500.0, "deviation": 350.0, "volatility": 0.06, "games": 0, "provisional": true}),
            )
        })
        .collect();
    Ok(HttpResponse::Ok().json(json!({"player_id": player, "name": name, "ratings": ratings})))
}

/// Looks up a player's name (errors as `not_found`).
pub async fn name_of(app: &AppState, player: PlayerId) -> Result<String, ApiError> {
    let client = app.pool.get().await.map_err(unexpected)?;
    let row = client
        .query_opt(
            "SELECT name FROM players WHERE player_id = $1",
            &[&player.as_uuid()],
        )
        .await
        .map_err(unexpected)?
        .ok_or(ApiError::Unauthorized(
            "the token's player does not exist".into(),
        ))?;
    Ok(row.get(0))
}
