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
    let seq: i64 = path
        .parse()
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| Error::from(Invalid::Id(path.into_inner())))?;
    one(&app, Some(seq)).await
}

async fn one(app: &ApiState, seq: Option<i64>) -> Result<HttpResponse, ApiError> {
    let note = service::history::recorded(&app.pool, seq)
        .await
        .map_err(unexpected)?
        .ok_or(Error::NotFound(Missing::Checkpoint))?;
    Ok(HttpResponse::Ok()
        .content_type("application/json")
        .body(note))
}
