//! One reader of the log per instance, and the live fan-out of matches to their viewers.
//!
//! * **The tail** ([`run_tail`]) follows the log in commit-safe order (the xid8 horizon, as
//!   projections do), woken after every commit of this instance (at most one read per
//!   [`TAIL_GAP`]) and polling every interval for the others'. Each batch it reads feeds every projection this instance leads
//!   ([`projections::Batch`]) and every match someone watches here: one read per committed
//!   event, however many projections and viewers follow it.
//! * **A watch per viewed match** ([`Watch`]) holds the match folded to its last sent version
//!   and a broadcast channel of frames. Each event becomes one frame (the SSE text with the
//!   event and the match view), serialised once for every viewer. Commits of this instance are
//!   published at once; the tail brings the other instances' within the poll interval; an
//!   event that arrives after a gap is preceded by one read of the missing ones. Versions are
//!   sent in order, each once.
//! * **The stream registry** ([`streams::Registry`]): every open stream's place, under the caps
//!   per player and per instance, ended when its player's rights end.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use serde_json::json;
use tokio::sync::{Notify, broadcast};

use domain::ids::{MatchId, PlayerId};
use domain::matches::evolve;
use eventlog::{Checkpoint, EventLog, RecordedEvent};

use crate::error::Error;
use crate::error::unexpected;
use crate::live::loaded::{Loaded, stamped};
use crate::live::streams;
use crate::views::EventView;

/// Frames a viewer may fall behind by before its stream is closed (it resumes with
/// `Last-Event-ID`).
const FRAMES_BUFFERED: usize = 64;

/// Events per read of the tail.
const TAIL_BATCH: i64 = 1000;

/// The tail reads at most once per this interval: under load the commits of one interval
/// share one read (the instance's own viewers get its commits at once, not through the tail).
const TAIL_GAP: Duration = Duration::from_millis(5);

/// One event of a match as every viewer receives it.
#[derive(Debug)]
pub struct Frame {
    pub version: u64,
    /// `id: …\nevent: …\ndata: {"event":…,"match":…}\n\n`.
    pub bytes: Bytes,
    /// The match is finished after this event.
    pub finished: bool,
}

/// The live side of an instance: the tail's wake-up, the batches for projections, the watched
/// matches and the open streams.
pub struct Live {
    wake: Notify,
    batches: broadcast::Sender<Arc<projections::Batch>>,
    watches: Mutex<HashMap<MatchId, Arc<Watch>>>,
    /// Every open stream of this instance, matches' and tournaments'.
    pub registry: Arc<streams::Registry>,
}

/// A viewed match: its state as last sent, and its viewers.
pub struct Watch {
    frames: broadcast::Sender<Arc<Frame>>,
    /// `None` until the first viewer has read the stream.
    folded: tokio::sync::Mutex<Option<Loaded>>,
}

/// An open match stream's subscription to the match's frames, given back when dropped (its
/// place in the registry is held beside it).
pub struct Viewer {
    live: Arc<Live>,
    id: MatchId,
    pub watch: Arc<Watch>,
    pub frames: Option<broadcast::Receiver<Arc<Frame>>>,
}

impl Drop for Viewer {
    fn drop(&mut self) {
        // The receiver goes first, so that the last viewer's watch is seen unwatched.
        self.frames.take();
        self.live.unsubscribe(self.id);
    }
}

impl Live {
    pub fn new(per_player: usize, max_streams: usize) -> Live {
        Live {
            wake: Notify::new(),
            batches: broadcast::channel(256).0,
            watches: Mutex::new(HashMap::new()),
            registry: Arc::new(streams::Registry::new(per_player, max_streams)),
        }
    }

    /// The batches the tail reads, for projection leaders.
    pub fn batches(&self) -> broadcast::Sender<Arc<projections::Batch>> {
        self.batches.clone()
    }

    /// Tells the tail that this instance has committed something.
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Called after this instance commits events: the tail reads them for the projections, and
    /// the match's viewers here get them now.
    pub fn committed(&self, log: &EventLog, id: MatchId, written: &[RecordedEvent]) {
        self.wake();
        let Some(watch) = self.watch_of(id) else {
            return;
        };
        let stream = id.stream();
        let events: Vec<RecordedEvent> = written
            .iter()
            .filter(|e| e.stream == stream)
            .cloned()
            .collect();
        let log = log.clone();
        tokio::spawn(async move {
            if let Err(e) = watch.apply(&log, id, &events).await {
                tracing::warn!(match_id = %id, error = %e, "live fan-out failed");
            }
        });
    }

    /// Open streams on this instance now.
    pub fn open_streams(&self) -> usize {
        self.registry.total()
    }

    /// A receiver of match `id`'s frames for a stream (which holds its place in the
    /// registry), subscribed before anything is read so that no frame can be missed.
    pub fn view(self: &Arc<Self>, id: MatchId) -> Viewer {
        let mut watches = self.lock_watches();
        let watch = watches
            .entry(id)
            .or_insert_with(|| {
                Arc::new(Watch {
                    frames: broadcast::channel(FRAMES_BUFFERED).0,
                    folded: tokio::sync::Mutex::new(None),
                })
            })
            .clone();
        let frames = watch.frames.subscribe();
        Viewer {
            live: self.clone(),
            id,
            watch,
            frames: Some(frames),
        }
    }

    /// Shows `label` for `player` in every watched match that names them (their account
    /// closed): the frames sent from now on carry the label, not the name.
    pub async fn rename(&self, player: PlayerId, label: &str) {
        let watches: Vec<Arc<Watch>> = self.lock_watches().values().cloned().collect();
        for watch in watches {
            let mut folded = watch.folded.lock().await;
            if let Some(loaded) = folded.as_mut()
                && loaded.names.contains_key(&player)
            {
                let mut names = (*loaded.names).clone();
                names.insert(player, label.to_owned());
                loaded.names = Arc::new(names);
            }
        }
    }

    /// Forgets the watch of a match once its last viewer has gone.
    pub fn unsubscribe(&self, id: MatchId) {
        let mut watches = self.lock_watches();
        if watches
            .get(&id)
            .is_some_and(|w| w.frames.receiver_count() == 0)
        {
            watches.remove(&id);
        }
    }

    fn watch_of(&self, id: MatchId) -> Option<Arc<Watch>> {
        self.lock_watches().get(&id).cloned()
    }

    /// Hands a batch read by the tail to the watches and the projection leaders.
    async fn deliver(&self, log: &EventLog, batch: projections::Batch) {
        let mut by_match: HashMap<MatchId, Vec<RecordedEvent>> = HashMap::new();
        {
            let watches = self.lock_watches();
            if !watches.is_empty() {
                for e in &batch.events {
                    if let Some(id) = MatchId::of_stream(&e.stream)
                        && watches.contains_key(&id)
                    {
                        by_match.entry(id).or_default().push(e.clone());
                    }
                }
            }
        }
        for (id, events) in by_match {
            if let Some(watch) = self.watch_of(id)
                && let Err(e) = watch.apply(log, id, &events).await
            {
                tracing::warn!(match_id = %id, error = %e, "live fan-out failed");
            }
        }
        // No leader here is fine: the projections are led elsewhere.
        let _ = self.batches.send(Arc::new(batch));
    }

    fn lock_watches(&self) -> std::sync::MutexGuard<'_, HashMap<MatchId, Arc<Watch>>> {
        self.watches.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Watch {
    /// The match as last sent. The first viewer reads it from the log, under the watch's lock,
    /// so that an event committed meanwhile is either in that read or applied after it.
    /// Viewers send their own history up to this version and the channel's frames after it.
    /// The first viewer also gets the events it read (`load`: the match and its events), for
    /// its history.
    pub async fn current<Load>(
        &self,
        load: Load,
    ) -> Result<(Loaded, Option<Vec<RecordedEvent>>), Error>
    where
        Load: Future<Output = Result<(Loaded, Vec<RecordedEvent>), Error>>,
    {
        let mut folded = self.folded.lock().await;
        if let Some(f) = folded.as_ref() {
            return Ok((f.clone(), None));
        }
        let (loaded, events) = load.await?;
        *folded = Some(loaded.clone());
        Ok((loaded, Some(events)))
    }

    /// Sends the frames of `events` (one match's, in version order) that follow the last sent
    /// version; reads the missing ones first after a gap.
    async fn apply(
        &self,
        log: &EventLog,
        id: MatchId,
        events: &[RecordedEvent],
    ) -> Result<(), Error> {
        let mut folded = self.folded.lock().await;
        let Some(loaded) = folded.as_mut() else {
            // No viewer has read the match yet: its first read will include these events.
            return Ok(());
        };
        let next = loaded.state.version() as i64 + 1;
        let read;
        let events = match events.iter().find(|e| e.version >= next) {
            None => return Ok(()),
            Some(first) if first.version == next => events,
            Some(_) => {
                read = log
                    .read_stream_after(&id.stream(), next - 1)
                    .await
                    .map_err(unexpected)?;
                &read[..]
            }
        };
        for e in events {
            if e.version as u64 != loaded.state.version() + 1 {
                continue;
            }
            evolve(&mut loaded.state, &stamped(e)?);
            let frame = frame(loaded, e)?;
            // No receiver is fine: the last viewer just left.
            let _ = self.frames.send(Arc::new(frame));
        }
        Ok(())
    }
}

/// The frame of `e`, with `loaded` already folded to it.
pub fn frame(loaded: &Loaded, e: &RecordedEvent) -> Result<Frame, Error> {
    let m = loaded.get()?;
    let data = json!({"event": EventView::shown(e, m.is_finished()), "match": loaded.view()?});
    Ok(Frame {
        version: e.version as u64,
        bytes: Bytes::from(format!(
            "id: {}\nevent: {}\ndata: {}\n\n",
            e.version, e.event_type, data
        )),
        finished: m.is_finished(),
    })
}

/// The instance's one reader of the log: from the end of the log at start, reads whatever has
/// committed each time this instance commits and at least every `poll`.
pub async fn run_tail(log: EventLog, live: Arc<Live>, poll: Duration) {
    let mut at = loop {
        match log.last_checkpoint().await {
            Ok(c) => break c,
            Err(e) => {
                tracing::warn!(error = %e, "the log reader cannot start");
                tokio::time::sleep(poll.max(Duration::from_millis(100))).await;
            }
        }
    };
    loop {
        // A wake-up that came while reading (or in the gap) is kept by `Notify` for this wait.
        let _ = tokio::time::timeout(poll, live.wake.notified()).await;
        at = read_on(&log, &live, at).await;
        tokio::time::sleep(TAIL_GAP).await;
    }
}

/// Reads and delivers everything committed after `at`; where it got to.
async fn read_on(log: &EventLog, live: &Live, mut at: Checkpoint) -> Checkpoint {
    loop {
        let events = match log.read_all_after(at, TAIL_BATCH).await {
            Ok(events) => events,
            Err(e) => {
                tracing::warn!(error = %e, "the log reader failed");
                return at;
            }
        };
        let Some(last) = events.last().map(RecordedEvent::checkpoint) else {
            return at;
        };
        let full = events.len() as i64 == TAIL_BATCH;
        live.deliver(
            log,
            projections::Batch {
                from: at,
                to: last,
                events,
            },
        )
        .await;
        at = last;
        if !full {
            return at;
        }
    }
}
