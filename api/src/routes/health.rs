//! `/healthz` (the process answers) and `/readyz` (the database answers and is migrated).

use actix_web::{HttpResponse, web};
use serde_json::json;

use crate::state::AppState;

pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok"}))
}

pub async fn readyz(app: web::Data<AppState>) -> HttpResponse {
    match eventlog::migrations_pending(&app.pool).await {
        Ok(0) => HttpResponse::Ok().json(json!({"status": "ready"})),
        Ok(n) => HttpResponse::ServiceUnavailable()
            .json(json!({"status": "not_ready", "reason": format!("{n} migrations not applied")})),
        Err(e) => HttpResponse::ServiceUnavailable()
            .json(json!({"status": "not_ready", "reason": format!("database: {e}")})),
    }
}
