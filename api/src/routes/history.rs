//! The signed checkpoints of the log, public and read-only (`service::history` signs them).

use actix_web::{HttpResponse, web};

use crate::error::ApiError;
use crate::ratelimit::ByAddress;
use crate::state::ApiState;
use service::Error;
use service::error::unexpected;
use service::reasons::{Invalid, Missing};

/// `GET /v1/checkpoints/latest`.
pub async fn latest(app: web::Data<ApiState>, _: ByAddress) -> Result<HttpResponse, ApiError> {
    one(&app, None).await
}

/// `GET /v1/checkpoints/{seq}`.
pub async fn get(
    app: web::Data<ApiState>,
    _: ByAddress,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    one(&app, Some(seq_of(&path)?)).await
}

/// `GET /v1/checkpoints/{seq}/consistency?from=n`: the query.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FromQuery {
    /// The earlier checkpoint, one you hold.
    #[schemars(range(min = 1, max = 9_007_199_254_740_991u64))]
    from: u64,
}

/// `GET /v1/checkpoints/{seq}/consistency?from=n`: that checkpoint `seq` extends checkpoint `n`.
pub async fn consistency(
    app: web::Data<ApiState>,
    _: ByAddress,
    path: web::Path<String>,
    query: Result<web::Query<FromQuery>, actix_web::Error>,
) -> Result<HttpResponse, ApiError> {
    let query = query.map_err(crate::input::query_error)?;
    let to = seq_of(&path)?;
    let from = i64::try_from(query.from).unwrap_or(i64::MAX);
    let answer = service::history::consistency(&app, from, to)
        .await
        .map_err(unexpected)?
        .ok_or(Error::NotFound(Missing::Checkpoint))?;
    Ok(HttpResponse::Ok().json(answer))
}

fn seq_of(path: &str) -> Result<i64, Error> {
    path.parse()
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| Error::from(Invalid::Id(path.to_owned())))
}

async fn one(app: &ApiState, seq: Option<i64>) -> Result<HttpResponse, ApiError> {
    let note = service::history::recorded(app, seq)
        .await
        .map_err(unexpected)?
        .ok_or(Error::NotFound(Missing::Checkpoint))?;
    Ok(HttpResponse::Ok()
        .content_type("application/json")
        .body(note))
}
