//! Event streams (server-sent events): one pump serves every stream the server offers
//! ([`answer`]: history, then the stream's `Feed` from `service::live::feeds`, keep-alives,
//! presence, the end of the player's rights, the instance's shutdown), each stream holding its
//! place in the registry until it ends; and `GET /v1/matches/{id}/stream`: each new event with
//! the match view right after it, resumable with `Last-Event-ID` (a stream version).

use std::time::Duration;

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use tokio::sync::mpsc;

use domain::ids::MatchId;
use service::checks;

use crate::auth::Auth;
use crate::error::ApiError;
use crate::reasons::Unauthenticated;
use crate::state::ApiState;
use service::Error;
use service::live::feeds::{self, Feed, Open};
use service::live::streams::{Ended, Place};
use service::reasons::{Invalid, Refused};
use service::state::AppState;

/// A comment line this often keeps proxies from closing an idle stream.
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// Sent to every open stream when the instance shuts down: reconnect in a second.
const RECONNECT_HINT: &[u8] = b"retry: 1000\n\n";
/// Frames a stream's pump may hold for a slow client.
const BUFFERED: usize = 64;

/// The answer to opening a stream: its history, then its feed's frames (an ended stream read
/// to its end: 204, which tells an EventSource to stop reconnecting); 401 `revoked` for a token
/// that ended (or a closed account), 403 `forbidden` for a banned player.
pub fn answer<F: Feed>(app: &ApiState, opened: Open<F>) -> Result<HttpResponse, ApiError> {
    match opened {
        Open::Ready(o) => Ok(serve(app.app.clone(), o.place, o.history, o.feed)),
        Open::Over => Ok(HttpResponse::NoContent().finish()),
        Open::Refused(Ended::Revoked) => Err(ApiError::Unauthorized(Unauthenticated::Revoked)),
        Open::Refused(Ended::Banned) => Err(Error::Forbidden(Refused::Banned).into()),
    }
}

/// The token generation a stream holds to (`None` for an external token, which has none).
pub fn generation(auth: &Auth) -> Option<u32> {
    (!auth.external).then_some(auth.generation)
}

/// The answer of a stream: `history`, then `feed`'s frames, pumped by a task of its own that
/// holds `place` until the stream ends.
fn serve(app: AppState, place: Place, history: Vec<web::Bytes>, feed: impl Feed) -> HttpResponse {
    let (tx, rx) = mpsc::channel::<web::Bytes>(BUFFERED);
    actix_web::rt::spawn(pump(app, place, history, feed, tx));
    events_response(rx)
}

enum Step {
    Frames(Option<(Vec<web::Bytes>, bool)>),
    KeepAlive,
    Present,
    Gone,
    Ended(Ended),
    Stopping,
}

/// Pumps the stream ([`frames`]), then gives its place back before the client sees the end.
async fn pump(
    app: AppState,
    mut place: Place,
    history: Vec<web::Bytes>,
    feed: impl Feed,
    tx: mpsc::Sender<web::Bytes>,
) {
    frames(&app, &mut place, history, feed, &tx).await;
    drop(place);
    drop(tx);
}

/// Sends the history, then the feed's frames until the feed ends, the client goes, the
/// player's rights end (an `ended` event says why) or the instance stops (a reconnection hint).
async fn frames(
    app: &AppState,
    place: &mut Place,
    history: Vec<web::Bytes>,
    mut feed: impl Feed,
    tx: &mpsc::Sender<web::Bytes>,
) {
    for frame in history {
        if tx.send(frame).await.is_err() {
            return;
        }
    }
    let mut keep_alive = tokio::time::interval(KEEP_ALIVE);
    let mut presence = tokio::time::interval(feed.presence().unwrap_or(KEEP_ALIVE));
    keep_alive.reset();
    presence.reset();
    let present = feed.presence().is_some();
    let mut stopping = app.stopping.clone();
    loop {
        let step = tokio::select! {
            frames = feed.next() => Step::Frames(frames),
            _ = keep_alive.tick() => Step::KeepAlive,
            _ = presence.tick(), if present => Step::Present,
            () = tx.closed() => Step::Gone,
            why = place.ended() => Step::Ended(why),
            _ = stopping.wait_for(|s| *s) => Step::Stopping,
        };
        match step {
            Step::Frames(None) | Step::Gone => return,
            Step::Frames(Some((frames, last))) => {
                for frame in frames {
                    if tx.send(frame).await.is_err() {
                        return;
                    }
                }
                if last {
                    return;
                }
            }
            Step::KeepAlive => {
                if tx
                    .send(web::Bytes::from_static(b": keep-alive\n\n"))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            Step::Present => feed.present().await,
            Step::Ended(why) => {
                let reason = match why {
                    Ended::Revoked => "revoked",
                    Ended::Banned => "banned",
                };
                let frame = format!("event: ended\ndata: {{\"reason\":\"{reason}\"}}\n\n");
                let _ = tx.send(web::Bytes::from(frame)).await;
                return;
            }
            Step::Stopping => {
                // The instance is going away: the client reconnects (to another one) with
                // Last-Event-ID after this long.
                let _ = tx.send(web::Bytes::from_static(RECONNECT_HINT)).await;
                return;
            }
        }
    }
}

pub async fn stream(
    app: web::Data<ApiState>,
    auth: Auth,
    req: HttpRequest,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id: MatchId = checks::id(&path)?;
    let after = last_event_id(&req)?;
    let opened = feeds::match_stream(&app, auth.player, generation(&auth), id, after).await?;
    answer(&app, opened)
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
