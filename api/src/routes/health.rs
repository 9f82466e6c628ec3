//! `/healthz` (the process answers) and `/readyz` (the database answers and is migrated).

use actix_web::http::header;
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
        // The cause goes to the log (at most once per interval), not to whoever asks.
        Err(e) => {
            crate::error::log_outage(&e.to_string());
            let reason = if e.is_outage() {
                "the database does not answer"
            } else {
                "the database cannot be used (see the server's log)"
            };
            HttpResponse::ServiceUnavailable()
                .insert_header((
                    header::RETRY_AFTER,
                    crate::error::RETRY_UNAVAILABLE.to_string(),
                ))
                .json(json!({"status": "not_ready", "reason": reason}))
        }
    }
}
