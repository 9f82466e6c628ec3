//! `GET /v1/matches/{id}/stream`: server-sent events, each new event with the match view right
//! after it; resumable with `Last-Event-ID` (a stream version). An open stream counts as
//! presence. New events come from the instance's fan-out (`service::live::fanout`), not from reads of
//! their own.

use service::checks;
use std::time::Duration;

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;

use domain::ids::{MatchId, PlayerId, Seat};
use domain::matches::{MatchState, evolve};
use eventlog::RecordedEvent;

use crate::auth::Auth;
use crate::error::ApiError;
use crate::state::ApiState;
use service::Error;
use service::live::fanout::{self, Viewer};
use service::live::play::{self, Loaded};
use service::reasons::Invalid;
use service::state::AppState;

/// A comment line this often keeps proxies from closing an idle stream.
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// Sent to every open stream when the instance shuts down: reconnect in a second.
const RECONNECT_HINT: &[u8] = b"retry: 1000\n\n";
/// A seated watcher is marked present this often.
const PRESENCE: Duration = Duration::from_secs(10);

pub async fn stream(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id: MatchId = checks::id(&path)?;
    let after = last_event_id(&req)?;
    let loaded = play::load(&app, id).await?;
    let seat = loaded.seat_of(auth.player);
    let viewer = app.live.view(auth.player, id, seat.is_some())?;
    play::presence(&app, loaded, auth.player).await?;
    let (current, read) = viewer
        .watch
        .current(play::load_with_events(&app, id))
        .await?;
    let history = history(&app, id, after, &current, read).await?;
    let (tx, rx) = mpsc::channel::<web::Bytes>(16);
    let app = app.app.clone();
    actix_web::rt::spawn(async move {
        if let Err(e) = pump(app, viewer, current, history, seat, auth.player, tx).await {
            tracing::debug!(error = %e, "event stream ended");
        }
    });
    Ok(events_response(rx))
}

/// The version after which a client resumes (`Last-Event-ID`; 0 without one).
pub fn last_event_id(req: &HttpRequest) -> Result<u64, Error> {
    match req.headers().get("last-event-id") {
        None => Ok(0),
        Some(v) => v
            .to_str()
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .ok_or(Error::InvalidRequest(Invalid::LastEventId)),
    }
}

/// A server-sent events answer of the frames `rx` receives.
pub fn events_response(mut rx: mpsc::Receiver<web::Bytes>) -> HttpResponse {
    let body = futures_util::stream::poll_fn(move |cx| {
        rx.poll_recv(cx).map(|b| b.map(Ok::<_, actix_web::Error>))
    });
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "text/event-stream"))
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header(("x-accel-buffering", "no"))
        .streaming(body)
}

/// The frames after the client's last event up to the version the fan-out has sent: from the
/// events the watch was just read with, or read from the log once, for this viewer alone.
async fn history(
    app: &AppState,
    id: MatchId,
    after: u64,
    current: &Loaded,
    read: Option<Vec<RecordedEvent>>,
) -> Result<Vec<web::Bytes>, ApiError> {
    let upto = current.state.version();
    if after >= upto {
        return Ok(Vec::new());
    }
    let events = match read {
        Some(events) => events,
        None => play::load_with_events(app, id).await?.1,
    };
    let mut folded = Loaded {
        id,
        state: MatchState::default(),
        names: current.names.clone(),
        head: None,
    };
    let mut frames = Vec::new();
    for e in events.iter().take_while(|e| e.version as u64 <= upto) {
        evolve(&mut folded.state, &play::stamped(e)?);
        if e.version as u64 > after {
            frames.push(fanout::frame(&folded, e)?.bytes);
        }
    }
    Ok(frames)
}

/// Sends the history, then the match's frames until it ends or the client goes.
async fn pump(
    app: AppState,
    mut viewer: Viewer,
    current: Loaded,
    history: Vec<web::Bytes>,
    seat: Option<Seat>,
    player: PlayerId,
    tx: mpsc::Sender<web::Bytes>,
) -> Result<(), ApiError> {
    for frame in history {
        if tx.send(frame).await.is_err() {
            return Ok(());
        }
    }
    let mut sent = current.state.version();
    if current.get()?.is_finished() {
        return Ok(());
    }
    let Some(mut frames) = viewer.frames.take() else {
        return Ok(());
    };
    let mut keep_alive = tokio::time::interval(KEEP_ALIVE);
    let mut presence = tokio::time::interval(PRESENCE);
    keep_alive.reset();
    presence.reset();
    let mut stopping = app.stopping.clone();
    loop {
        tokio::select! {
            frame = frames.recv() => match frame {
                Ok(frame) if frame.version > sent => {
                    if tx.send(frame.bytes.clone()).await.is_err() {
                        return Ok(());
                    }
                    sent = frame.version;
                    if frame.finished {
                        return Ok(());
                    }
                }
                Ok(_) => {}
                // Too far behind, or the watch is gone: the client resumes with Last-Event-ID.
                Err(RecvError::Lagged(_) | RecvError::Closed) => return Ok(()),
            },
            _ = keep_alive.tick() => {
                if tx.send(web::Bytes::from_static(b": keep-alive\n\n")).await.is_err() {
                    return Ok(());
                }
            }
            _ = presence.tick(), if seat.is_some() => {
                let loaded = play::load(&app, current.id).await?;
                play::presence(&app, loaded, player).await?;
            }
            () = tx.closed() => return Ok(()),
            _ = stopping.wait_for(|s| *s) => {
                // The instance is going away: the client reconnects (to another one) with
                // Last-Event-ID after this long.
                let _ = tx.send(web::Bytes::from_static(RECONNECT_HINT)).await;
                return Ok(());
            }
        }
    }
}
