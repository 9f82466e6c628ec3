//! What a stream sends, kind by kind, without HTTP: the [`Feed`] every stream's pump reads
//! (the edge's one pump, `api::routes::stream`), a place in the registry checked against the
//! reader's rights ([`open_place`]), and the match stream ([`match_stream`]: the history after
//! the client's last event, then each new event with the match view from the instance's
//! fan-out). The tournament stream's feed is `crate::tournaments::feed`.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

use domain::ids::{MatchId, PlayerId};
use domain::matches::{MatchState, evolve};
use eventlog::RecordedEvent;

use crate::error::Error;
use crate::live::LivePath;
use crate::live::fanout::{self, Frame};
use crate::live::play::{self, Loaded};
use crate::live::streams::{Ended, Place};

/// A seated watcher of a match is marked present this often.
const PRESENCE: Duration = Duration::from_secs(10);

/// What one kind of stream sends after its history.
pub trait Feed: Send + 'static {
    /// The next frames, and whether they are the stream's last; `None` when the feed can go no
    /// further (too far behind: the client resumes with `Last-Event-ID`).
    fn next(&mut self) -> impl Future<Output = Option<(Vec<Bytes>, bool)>> + Send;
    /// How often the reader is marked present, if the stream counts as presence.
    fn presence(&self) -> Option<Duration>;
    /// Marks the reader present.
    fn present(&mut self) -> impl Future<Output = ()> + Send;
}

/// A stream ready to serve: its place in the registry, the frames the client missed, and what
/// follows them.
pub struct Opened<F> {
    pub place: Place,
    pub history: Vec<Bytes>,
    pub feed: F,
}

/// What opening a stream gives.
pub enum Open<F> {
    Ready(Opened<F>),
    /// The reader's rights refuse it (a token that ended, a closed account, a ban).
    Refused(Ended),
    /// The stream was read to its end and nothing will follow.
    Over,
}

/// A place in the registry for a stream of `player`'s under the caps (`own`: their own match,
/// which the instance's cap never holds back), checked against their rights once registered
/// (`generation`: the token's, `None` for an external token).
pub async fn open_place(
    live: &LivePath,
    player: PlayerId,
    generation: Option<u32>,
    own: bool,
) -> Result<Result<Place, Ended>, Error> {
    let place = live.live.registry.open(player, generation, own)?;
    Ok(live
        .live
        .registry
        .admit(live, &place, generation)
        .await?
        .map(|()| place))
}

/// The stream of match `id` for `player`, after version `after`.
pub async fn match_stream(
    live: &LivePath,
    player: PlayerId,
    generation: Option<u32>,
    id: MatchId,
    after: u64,
) -> Result<Open<MatchFeed>, Error> {
    let loaded = play::load(live, id).await?;
    let seat = loaded.seat_of(player);
    let place = match open_place(live, player, generation, seat.is_some()).await? {
        Ok(place) => place,
        Err(why) => return Ok(Open::Refused(why)),
    };
    let mut viewer = live.live.view(id);
    play::presence(live, loaded, player).await?;
    let (current, read) = viewer
        .watch
        .current(play::load_with_events(live, id))
        .await?;
    let history = history(live, id, after, &current, read).await?;
    let feed = MatchFeed {
        live: live.clone(),
        id,
        sent: current.state.version(),
        done: current.get()?.is_finished(),
        frames: viewer.frames.take(),
        _viewer: viewer,
        seated: seat.map(|_| player),
    };
    Ok(Open::Ready(Opened {
        place,
        history,
        feed,
    }))
}

/// A match's frames from the instance's fan-out.
pub struct MatchFeed {
    live: LivePath,
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
    async fn next(&mut self) -> Option<(Vec<Bytes>, bool)> {
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
        let marked = match play::load(&self.live, self.id).await {
            Ok(loaded) => play::presence(&self.live, loaded, player).await.map(drop),
            Err(e) => Err(e),
        };
        if let Err(e) = marked {
            tracing::debug!(error = %e, "presence not marked");
        }
    }
}

/// The frames after the client's last event up to the version the fan-out has sent: from the
/// events the watch was just read with, or read from the log once, for this viewer alone.
async fn history(
    live: &LivePath,
    id: MatchId,
    after: u64,
    current: &Loaded,
    read: Option<Vec<RecordedEvent>>,
) -> Result<Vec<Bytes>, Error> {
    let upto = current.state.version();
    if after >= upto {
        return Ok(Vec::new());
    }
    let events = match read {
        Some(events) => events,
        None => play::load_with_events(live, id).await?.1,
    };
    let mut folded = Loaded {
        id,
        state: MatchState::default(),
        names: current.names.clone(),
        head: None,
        row: None,
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
