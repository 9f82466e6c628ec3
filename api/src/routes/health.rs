//! `/healthz` (the process answers) and `/readyz` (the database answers and is migrated).

use actix_web::http::header;
use actix_web::{HttpResponse, web};
use schemars::JsonSchema;
use serde::Serialize;

use crate::state::ApiState;

/// `/healthz`: `{"status": "ok"}`.
#[derive(Serialize, JsonSchema)]
pub struct Alive {
    #[schemars(with = "AliveStatus")]
    status: &'static str,
}

/// `/readyz`: `ready`, or `not_ready` with the reason (503).
#[derive(Serialize, JsonSchema)]
pub struct Readiness {
    #[schemars(with = "ReadyStatus")]
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)] // only its schema is used
enum AliveStatus {
    Ok,
}

#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)] // only its schema is used
enum ReadyStatus {
    Ready,
    NotReady,
}

fn not_ready(reason: String) -> Readiness {
    Readiness {
        status: "not_ready",
        reason: Some(reason),
    }
}

pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(Alive { status: "ok" })
}

pub async fn readyz(app: web::Data<ApiState>) -> HttpResponse {
    match app.migrations_pending().await {
        Ok(0) => HttpResponse::Ok().json(Readiness {
            status: "ready",
            reason: None,
        }),
        Ok(n) => HttpResponse::ServiceUnavailable().json(not_ready(crate::texts::note(
            "ready.pending",
            &[("n", n.to_string())],
        ))),
        // The cause goes to the log (at most once per interval), not to whoever asks.
        Err(e) => {
            service::error::log_outage(&e.to_string());
            let reason = if e.is_outage() {
                crate::texts::note("ready.unreachable", &[])
            } else {
                crate::texts::note("ready.unusable", &[])
            };
            HttpResponse::ServiceUnavailable()
                .insert_header((
                    header::RETRY_AFTER,
                    crate::error::RETRY_UNAVAILABLE.to_string(),
                ))
                .json(not_ready(reason))
        }
    }
}
