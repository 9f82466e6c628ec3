//! Event streams (server-sent events): one pump serves every stream the server offers
//! ([`serve`]: history, then the stream's [`Feed`], keep-alives, presence, the end of the
//! player's rights, the instance's shutdown), each stream holding its place in the registry
//! (`service::live::streams`, opened by [`open_place`]); and `GET /v1/matches/{id}/stream`:
//! each new event with the match view right after it, resumable with `Last-Event-ID` (a stream
//! version). An open match stream of a seated player counts as presence. New events come from
//! the instance's fan-out (`service::live::fanout`), not from reads of their own.

use service::checks;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;

use domain::ids::{MatchId, PlayerId};
use domain::matches::{MatchState, evolve};
use eventlog::RecordedEvent;

use crate::auth::Auth;
use crate::error::ApiError;
use crate::reasons::Unauthenticated;
use crate::state::ApiState;
use service::Error;
use service::live::fanout::{self, Frame};
use service::live::play::{self, Loaded};
use service::live::streams::{Ended, Place};
use service::reasons::{Invalid, Refused};
use service::state::AppState;

/// A comment line this often keeps proxies from closing an idle stream.
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// Sent to every open stream when the instance shuts down: reconnect in a second.
const RECONNECT_HINT: &[u8] = b"retry: 1000\n\n";
/// A seated watcher is marked present this often.
const PRESENCE: Duration = Duration::from_secs(10);
/// Frames a stream's pump may hold for a slow client.
const BUFFERED: usize = 64;

/// What one kind of stream sends after its history.
pub trait Feed: Send + 'static {
    /// The next frames, and whether they are the stream's last; `None` when the feed can go no
    /// further (too far behind: the client resumes with `Last-Event-ID`).
    fn next(&mut self) -> impl Future<Output = Option<(Vec<web::Bytes>, bool)>> + Send;
    /// How often the reader is marked present, if the stream counts as presence.
    fn presence(&self) -> Option<Duration>;
    /// Marks the reader present.
    fn present(&mut self) -> impl Future<Output = ()> + Send;
}

/// A place in the registry for a stream of the caller's, under the caps (`own`: their own
/// match, which the instance's cap never holds back), checked against their rights after it is
/// registered: 401 `revoked` for a token that ended (or a closed account), 403 `forbidden` for
/// a banned player.
pub async fn open_place(app: &ApiState, auth: &Auth, own: bool) -> Result<Place, ApiError> {
    let generation = (!auth.external).then_some(auth.generation);
    let place = app.live.registry.open(auth.player, generation, own)?;
    let client = app.pool.get().await.map_err(service::unexpected)?;
    match app.live.registry.admit(&client, &place, generation).await? {
        Ok(()) => Ok(place),
        Err(Ended::Revoked) => Err(ApiError::Unauthorized(Unauthenticated::Revoked)),
        Err(Ended::Banned) => Err(Error::Forbidden(Refused::Banned).into()),
    }
}

/// The answer of a stream: `history`, then `feed`'s frames, pumped by a task of its own that
/// holds `place` until the stream ends.
pub fn serve(
    app: AppState,
    place: Place,
    history: Vec<web::Bytes>,
    feed: impl Feed,
) -> HttpResponse {
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
    let loaded = play::load(&app, id).await?;
    let seat = loaded.seat_of(auth.player);
    let place = open_place(&app, &auth, seat.is_some()).await?;
    let mut viewer = app.live.view(id);
    play::presence(&app, loaded, auth.player).await?;
    let (current, read) = viewer
        .watch
        .current(play::load_with_events(&app, id))
        .await?;
    let history = history(&app, id, after, &current, read).await?;
    let feed = MatchFeed {
        app: app.app.clone(),
        id,
        sent: current.state.version(),
        done: current.get()?.is_finished(),
        frames: viewer.frames.take(),
        _viewer: viewer,
        seated: seat.map(|_| auth.player),
    };
    Ok(serve(app.app.clone(), place, history, feed))
}

/// A match's frames from the instance's fan-out.
struct MatchFeed {
    app: AppState,
    id: MatchId,
    /// The last version sent.
    sent: u64,
    /// The match had finished when the history was read: nothing follows it.
    done: bool,
    frames: Option<broadcast::Receiver<Arc<Frame>>>,
    /// Held for the subscription's lifetime.
    _viewer: fanout::Viewer,
    /// The reader, when seated in the match.
    seated: Option<PlayerId>,
}

impl Feed for MatchFeed {
    async fn next(&mut self) -> Option<(Vec<web::Bytes>, bool)> {
        let frames = self.frames.as_mut().filter(|_| !self.done)?;
        loop {
            match frames.recv().await {
                Ok(frame) if frame.version > self.sent => {
                    self.sent = frame.version;
                    return Some((vec![frame.bytes.clone()], frame.finished));
                }
                Ok(_) => {}
                // Too far behind, or the watch is gone: the client resumes with Last-Event-ID.
                Err(RecvError::Lagged(_) | RecvError::Closed) => return None,
            }
        }
    }

    fn presence(&self) -> Option<Duration> {
        self.seated.map(|_| PRESENCE)
    }

    async fn present(&mut self) {
        let Some(player) = self.seated else {
            return;
        };
        let marked = match play::load(&self.app, self.id).await {
            Ok(loaded) => play::presence(&self.app, loaded, player).await.map(drop),
            Err(e) => Err(e),
        };
        if let Err(e) = marked {
            tracing::debug!(error = %e, "presence not marked");
        }
    }
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
