//! The tournament stream: its events after the client's last one, then each new one from the
//! batches the instance's tail reads (a gap read from the log first), named for the client
//! (`pairing`, `result`, `status`, and `standings` after anything that changes them), up to
//! the tournament's end. An open stream of a member counts as following the tournament.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

use domain::ids::{PlayerId, TournamentId};
use domain::tournaments::{Tournament, TournamentEvent};
use eventlog::RecordedEvent;

use super::{Tournaments, commands, load};
use crate::aggregates::decode;
use crate::error::{Error, unexpected};
use crate::live::feeds::{Feed, Open, Opened, open_place};
use crate::reasons::Invalid;

/// A follower is marked as following this often.
const PRESENCE: Duration = Duration::from_secs(20);

/// The stream of tournament `id` for `player` after version `after` (`Over` once an ended
/// tournament's stream was read to its end); `invalid_request` when `after` is past the
/// tournament's version.
pub async fn stream(
    app: &Tournaments,
    player: PlayerId,
    generation: Option<u32>,
    id: TournamentId,
    after: i64,
) -> Result<Open<TournamentFeed>, Error> {
    // Subscribed before the history is read: nothing falls between the two.
    let batches = app.live.batches().subscribe();
    let t = load(app, id).await?;
    if after > t.version as i64 {
        return Err(Error::InvalidRequest(Invalid::LastEventId));
    }
    if (t.finished || t.cancelled) && after == t.version as i64 {
        return Ok(Open::Over);
    }
    let place = match open_place(app, player, generation, false).await? {
        Ok(place) => place,
        Err(why) => return Ok(Open::Refused(why)),
    };
    let member = t.entrant(player).is_some();
    let read = app
        .log
        .read_stream_after(&id.stream(), after)
        .await
        .map_err(unexpected)?;
    let mut feed = TournamentFeed {
        app: app.clone(),
        id,
        stream: id.stream(),
        sent: after,
        done: false,
        gap: false,
        batches,
        follower: member.then_some(player),
    };
    let history = feed.frames_of(&read)?;
    Ok(Open::Ready(Opened {
        place,
        history,
        feed,
    }))
}

/// The frames of a tournament event (and a `standings` hint after one that changes them), and
/// whether it ends the tournament.
fn frames(e: &RecordedEvent) -> Result<(Vec<Bytes>, bool), Error> {
    let event = decode::<Tournament>(e)?;
    let name = match event {
        TournamentEvent::PairingMade(_) | TournamentEvent::ByeGiven { .. } => "pairing",
        TournamentEvent::ResultRecorded { .. } => "result",
        _ => "status",
    };
    let data = serde_json::json!({"type": e.event_type, "version": e.version, "data": e.data});
    let mut out = vec![Bytes::from(format!(
        "id: {}\nevent: {name}\ndata: {data}\n\n",
        e.version
    ))];
    let standings = matches!(
        event,
        TournamentEvent::ResultRecorded { .. }
            | TournamentEvent::PlayerRemoved { .. }
            | TournamentEvent::ByeGiven { .. }
            | TournamentEvent::TournamentFinished {}
    );
    if standings {
        out.push(Bytes::from(format!(
            "id: {}\nevent: standings\ndata: {}\n\n",
            e.version,
            serde_json::json!({"version": e.version})
        )));
    }
    let end = matches!(
        event,
        TournamentEvent::TournamentFinished {} | TournamentEvent::TournamentCancelled { .. }
    );
    Ok((out, end))
}

/// A tournament's frames from the batches the instance's tail reads.
pub struct TournamentFeed {
    app: Tournaments,
    id: TournamentId,
    stream: String,
    /// The last version sent.
    sent: i64,
    /// The tournament's end was sent.
    done: bool,
    /// A batch skipped some of the stream's events: read them before anything else.
    gap: bool,
    batches: broadcast::Receiver<Arc<projections::Batch>>,
    follower: Option<PlayerId>,
}

impl TournamentFeed {
    /// The frames of `events` after the last sent, up to the tournament's end.
    fn frames_of(&mut self, events: &[RecordedEvent]) -> Result<Vec<Bytes>, Error> {
        let mut out = Vec::new();
        for e in events {
            if self.done {
                break;
            }
            if e.version <= self.sent {
                continue;
            }
            let (frames, end) = frames(e)?;
            out.extend(frames);
            self.sent = e.version;
            self.done = end;
        }
        Ok(out)
    }
}

impl Feed for TournamentFeed {
    async fn next(&mut self) -> Option<(Vec<Bytes>, bool)> {
        loop {
            if self.done {
                return None;
            }
            if self.gap {
                let read = self
                    .app
                    .log
                    .read_stream_after(&self.stream, self.sent)
                    .await
                    .ok()?;
                self.gap = false;
                let out = self.frames_of(&read).ok()?;
                if !out.is_empty() {
                    return Some((out, self.done));
                }
                continue;
            }
            match self.batches.recv().await {
                Ok(batch) => {
                    let mine: Vec<RecordedEvent> = batch
                        .events
                        .iter()
                        .filter(|e| e.stream == self.stream && e.version > self.sent)
                        .cloned()
                        .collect();
                    // A gap (the fan-out skipped some): read what is missing.
                    if mine.first().is_some_and(|e| e.version > self.sent + 1) {
                        self.gap = true;
                        continue;
                    }
                    let out = self.frames_of(&mine).ok()?;
                    if !out.is_empty() {
                        return Some((out, self.done));
                    }
                }
                // Too far behind: the client resumes with Last-Event-ID.
                Err(RecvError::Lagged(_) | RecvError::Closed) => return None,
            }
        }
    }

    fn presence(&self) -> Option<Duration> {
        self.follower.map(|_| PRESENCE)
    }

    async fn present(&mut self) {
        if let Some(p) = self.follower {
            let _ = commands::seen(&self.app, self.id, p).await;
        }
    }
}
