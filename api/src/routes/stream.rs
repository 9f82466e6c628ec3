//! `GET /v1/matches/{id}/stream`: server-sent events, each new event with the match view right
//! after it; resumable with `Last-Event-ID` (a stream version). An open stream counts as
//! presence.

use std::time::Duration;

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::json;
use tokio::sync::mpsc;

use domain::ids::MatchId;
use domain::matches::evolve;

use crate::auth::Auth;
use crate::error::ApiError;
use crate::input;
use crate::play::{self, Loaded};
use crate::state::AppState;
use crate::views::{EventView, MatchView};

/// How often a stream looks for events appended by other instances.
const POLL: Duration = Duration::from_millis(500);
/// A comment line this often keeps proxies from closing an idle stream.
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// A seated watcher is marked present this often.
const PRESENCE: Duration = Duration::from_secs(10);

pub async fn stream(
    app: web::Data<AppState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id: MatchId = input::id(&path)?;
    let after = match req.headers().get("last-event-id") {
        None => 0,
        Some(v) => v
            .to_str()
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .ok_or_else(|| {
                ApiError::InvalidRequest("Last-Event-ID must be a version number".into())
            })?,
    };
    let loaded = play::load(&app, id).await?;
    let loaded = play::presence(&app, loaded, auth.player).await?;
    let (tx, mut rx) = mpsc::channel::<web::Bytes>(64);
    let app = app.get_ref().clone();
    actix_web::rt::spawn(async move {
        if let Err(e) = pump(app, loaded, after, auth, tx).await {
            tracing::debug!(error = %e, "event stream ended");
        }
    });
    let body = futures_util::stream::poll_fn(move |cx| {
        rx.poll_recv(cx).map(|b| b.map(Ok::<_, actix_web::Error>))
    });
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "text/event-stream"))
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header(("x-accel-buffering", "no"))
        .streaming(body))
}

/// Sends the events after `after`, then follows the match until it ends or the client goes.
async fn pump(
    app: AppState,
    loaded: Loaded,
    after: u64,
    auth: Auth,
    tx: mpsc::Sender<web::Bytes>,
) -> Result<(), ApiError> {
    let id = loaded.id;
    let seat = loaded.seat_of(auth.player);
    let m = loaded.get()?;
    let names = play::names(&app, m).await?;
    // Fold from the start, sending what lies after the client's last event.
    let mut state = domain::matches::MatchState::default();
    let mut sent = after;
    let mut changes = app.changes.subscribe();
    let mut pending = loaded.events;
    let mut last_ping = tokio::time::Instant::now();
    let mut last_seen = tokio::time::Instant::now();
    loop {
        for e in &pending {
            evolve(&mut state, &play::stamped(e)?);
            let version = e.version as u64;
            if version <= sent {
                continue;
            }
            let Some(m) = state.get() else { continue };
            let view = MatchView::new(id, m, state.version(), &names);
            let data = json!({"event": EventView::from(e), "match": view});
            let frame = format!(
                "id: {}\nevent: {}\ndata: {}\n\n",
                e.version, e.event_type, data
            );
            if tx.send(web::Bytes::from(frame)).await.is_err() {
                return Ok(());
            }
            sent = version;
        }
        if state.get().is_some_and(|m| m.is_finished()) && sent >= state.version() {
            return Ok(());
        }
        tokio::select! {
            _ = changes.recv() => {}
            _ = tokio::time::sleep(POLL) => {}
        }
        if tx.is_closed() {
            return Ok(());
        }
        if last_ping.elapsed() >= KEEP_ALIVE {
            if tx
                .send(web::Bytes::from_static(b": keep-alive\n\n"))
                .await
                .is_err()
            {
                return Ok(());
            }
            last_ping = tokio::time::Instant::now();
        }
        let fresh = app
            .log
            .read_stream_after(&id.stream(), state.version() as i64)
            .await
            .map_err(play::unexpected)?;
        if seat.is_some() && last_seen.elapsed() >= PRESENCE {
            let current = play::load(&app, id).await?;
            play::presence(&app, current, auth.player).await?;
            last_seen = tokio::time::Instant::now();
        }
        pending = fresh;
    }
}
