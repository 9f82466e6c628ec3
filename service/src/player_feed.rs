//! A player's own stream (`GET /v1/players/me/stream`): what happens to them anywhere, as it
//! commits: a challenge sent or received and each answer to it (`challenge`), a match of theirs
//! starting (`match_started`), their turn in a correspondence game (`your_turn`), a match of
//! theirs ending (`match_ended`), a tournament they entered starting (`tournament_started`: its
//! first round). Each frame's id is the log's commit-safe place of its event
//! (`<tx>.<position>`), so a client that reconnects with `Last-Event-ID`, on any instance, gets
//! what it missed from the log and then the instance's tail; nothing is kept per player.
//!
//! The matches followed are the player's open correspondence games and real-time matches when
//! the stream opens (`live_seats`: solo, room, queue, tournament and challenge games alike), and
//! every match created for them while it is open.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

use domain::challenges::{Challenge, ChallengeSent};
use domain::ids::{ChallengeId, MatchId, PlayerId, TournamentId};
use eventlog::{Checkpoint, RecordedEvent};

use crate::aggregates;
use crate::challenges::Challenges;
use crate::error::{Error, unexpected};
use crate::live::feeds::{Feed, Open, Opened, open_place};
use crate::live::play;
use crate::reasons::Invalid;

/// The most events of the log a resumed stream reads to catch up; further behind, the stream
/// starts over from now with a `resync` frame (read the inbox again).
const CATCH_UP: i64 = 10_000;

/// The place of the event a client last received, as its frame's id gave it (`<tx>.<position>`).
pub fn after(raw: &str) -> Result<Checkpoint, Error> {
    raw.trim()
        .split_once('.')
        .and_then(|(tx, position)| {
            Some(Checkpoint {
                tx: tx.parse().ok()?,
                position: position.parse().ok()?,
            })
        })
        .filter(|c| c.tx >= 0 && c.position >= 0)
        .ok_or(Error::InvalidRequest(Invalid::LastEventId))
}

/// `player`'s stream, after `after` (the id of the last frame received) or from now.
pub async fn stream(
    app: &Challenges,
    player: PlayerId,
    generation: Option<u32>,
    after: Option<Checkpoint>,
) -> Result<Open<PlayerFeed>, Error> {
    // Subscribed before anything is read: nothing falls between the two.
    let batches = app.live.batches().subscribe();
    let place = match open_place(app, player, generation, false).await? {
        Ok(place) => place,
        Err(why) => return Ok(Open::Refused(why)),
    };
    // "From now" is the log's place now, read before what the player is in: whatever commits
    // after it comes through the tail (a match created then is followed from its creation),
    // and the tail's older events are passed over.
    let from = match after {
        Some(after) => after,
        None => app.log.last_checkpoint().await.map_err(unexpected)?,
    };
    let mut followed: HashSet<MatchId> = crate::live::correspondence::of(app, player)
        .await?
        .into_iter()
        .collect();
    let (received, sent) = crate::challenges::open_of(app, player).await?;
    let challenges = received.iter().chain(&sent).map(|l| l.id).collect();
    let tournaments = crate::tournaments::commands::entered(app, player)
        .await?
        .into_iter()
        .collect();
    let client = app.pool.get().await.map_err(unexpected)?;
    followed.extend(
        crate::live::commit::seated_live(&client, player)
            .await
            .map_err(unexpected)?,
    );
    drop(client);
    let mut feed = PlayerFeed {
        app: app.clone(),
        player,
        sent: Some(from),
        gap: after.is_some(),
        batches,
        followed,
        challenges,
        tournaments,
        past: false,
    };
    // A comment first: the answer starts at once, whatever follows.
    let mut history = vec![Bytes::from_static(b": following\n\n")];
    if after.is_some() {
        history.extend(feed.catch_up().await?);
    }
    Ok(Open::Ready(Opened {
        place,
        history,
        feed,
    }))
}

/// A player's frames from the log and the instance's tail.
pub struct PlayerFeed {
    app: Challenges,
    player: PlayerId,
    /// The last event looked at (sent or not): the log's place when the stream opened, at
    /// first; `None` after a `resync`, until the next batch.
    sent: Option<Checkpoint>,
    /// Events were missed since `sent`: read them from the log before anything else.
    gap: bool,
    batches: broadcast::Receiver<Arc<projections::Batch>>,
    /// The player's matches whose moves and end the stream tells.
    followed: HashSet<MatchId>,
    /// The player's challenges (open when the stream opened, or sent since): the others' are
    /// passed over without reading them.
    challenges: HashSet<ChallengeId>,
    /// The tournaments the player is entered in (when the stream opened, or joined since).
    tournaments: HashSet<TournamentId>,
    /// Reading the log's past (a resume): a challenge not known here is read to see whose it is.
    past: bool,
}

impl PlayerFeed {
    /// The frames of the log's events after `sent`, up to [`CATCH_UP`] of them; further behind,
    /// a `resync` frame and the stream goes on from the tail.
    async fn catch_up(&mut self) -> Result<Vec<Bytes>, Error> {
        let from = self.sent.unwrap_or_default();
        let events = self
            .app
            .log
            .read_all_after(from, CATCH_UP)
            .await
            .map_err(unexpected)?;
        self.gap = false;
        if events.len() as i64 >= CATCH_UP {
            self.sent = None;
            return Ok(vec![Bytes::from_static(b"event: resync\ndata: {}\n\n")]);
        }
        self.past = true;
        let frames = self.frames_of(&events).await;
        self.past = false;
        frames
    }

    /// The frames of `events` (in the log's order) that concern the player, after `sent`.
    async fn frames_of(&mut self, events: &[RecordedEvent]) -> Result<Vec<Bytes>, Error> {
        let mut out = Vec::new();
        for (i, e) in events.iter().enumerate() {
            let at = e.checkpoint();
            if self.sent.is_some_and(|sent| at <= sent) {
                continue;
            }
            // The next event of its stream, if the same read holds it (a command's events are
            // read together): a move its own command follows with a pass or the end is not the
            // turn it seems.
            let then = events[i + 1..].iter().find(|n| n.stream == e.stream);
            if let Some((kind, data)) = self.notice(e, then).await? {
                out.push(Bytes::from(format!(
                    "id: {}.{}\nevent: {kind}\ndata: {data}\n\n",
                    at.tx, at.position
                )));
            }
            self.sent = Some(at);
        }
        Ok(out)
    }

    /// What `e` tells the player, if anything.
    async fn notice(
        &mut self,
        e: &RecordedEvent,
        then: Option<&RecordedEvent>,
    ) -> Result<Option<(&'static str, Value)>, Error> {
        let me = self.player;
        if let Some(raw) = e.stream.strip_prefix("challenge-") {
            let Ok(id) = raw.parse::<ChallengeId>() else {
                return Ok(None);
            };
            let mine = if e.event_type == "challenge_sent" {
                let sent: ChallengeSent = serde_json::from_value(e.data.clone())
                    .map_err(|err| Error::Unexpected(anyhow::anyhow!("{}: {err}", e.stream)))?;
                sent.challenger == me || sent.challenged == me
            } else if self.challenges.contains(&id) {
                true
            } else if self.past {
                aggregates::load::<Challenge>(&self.app, &self.app.kept, id)
                    .await?
                    .is_some_and(|c| c.involves(me))
            } else {
                false
            };
            if !mine {
                return Ok(None);
            }
            self.challenges.insert(id);
            let mut data = json!({"type": e.event_type, "challenge_id": id});
            if let Some(match_id) = e.data.get("match_id") {
                data["match_id"] = match_id.clone();
            }
            if let Some(reason) = e.data.get("reason") {
                data["reason"] = reason.clone();
            }
            return Ok(Some(("challenge", data)));
        }
        if let Some(id) = TournamentId::of_stream(&e.stream) {
            return Ok(self.tournament_notice(id, e));
        }
        let Some(id) = MatchId::of_stream(&e.stream) else {
            return Ok(None);
        };
        match e.event_type.as_str() {
            "match_created" => {
                let seated = e.data["seats"].as_array().is_some_and(|seats| {
                    seats
                        .iter()
                        .any(|s| s["player_id"].as_str() == Some(&me.to_string()))
                });
                if !seated {
                    return Ok(None);
                }
                self.followed.insert(id);
                Ok(Some((
                    "match_started",
                    json!({"match_id": id, "game": e.data["game"], "ranked": e.data["ranked"]}),
                )))
            }
            "match_ended" if self.followed.remove(&id) => Ok(Some((
                "match_ended",
                json!({"match_id": id, "result": e.data}),
            ))),
            "move_played" | "passed" if self.followed.contains(&id) => {
                if then.is_some_and(|n| n.tx == e.tx && n.version == e.version + 1) {
                    return Ok(None);
                }
                // Whose turn it is after this event, as the event says (a reader of the past
                // gets the turns of the past): the other seat than the one that moved or passed.
                let Some(seat) = e.data["seat"]
                    .as_u64()
                    .and_then(|n| u8::try_from(n).ok())
                    .and_then(|n| domain::ids::Seat::try_from(n).ok())
                else {
                    return Ok(None);
                };
                let loaded = play::load(&self.app, id).await?;
                let Some(m) = loaded.state.get() else {
                    return Ok(None);
                };
                let next = seat.other();
                let (Some(days), true) = (
                    m.settings.days_per_move,
                    m.seat(next).player_id() == Some(me),
                ) else {
                    return Ok(None);
                };
                let deadline = e.recorded_at + time::Duration::days(i64::from(days.get()));
                Ok(Some((
                    "your_turn",
                    json!({
                        "match_id": id,
                        "version": e.version,
                        "deadline": deadline
                            .format(&time::format_description::well_known::Rfc3339)
                            .map_err(unexpected)?,
                    }),
                )))
            }
            _ => Ok(None),
        }
    }
}

impl PlayerFeed {
    /// What a tournament's event tells the player: its start (the first round) when they are
    /// entered in it; who is entered follows their joins, withdrawals and removals.
    fn tournament_notice(
        &mut self,
        id: TournamentId,
        e: &RecordedEvent,
    ) -> Option<(&'static str, Value)> {
        let me = Some(self.player.to_string());
        let about_me = e.data["player_id"].as_str().map(str::to_owned) == me;
        match e.event_type.as_str() {
            "player_joined" if about_me => {
                self.tournaments.insert(id);
                None
            }
            "player_withdrew" | "player_removed" if about_me => {
                self.tournaments.remove(&id);
                None
            }
            "round_started" if e.data["round"] == 1 && self.tournaments.contains(&id) => {
                Some(("tournament_started", json!({"tournament_id": id})))
            }
            "tournament_finished" | "tournament_cancelled" => {
                self.tournaments.remove(&id);
                None
            }
            _ => None,
        }
    }
}

impl Feed for PlayerFeed {
    async fn next(&mut self) -> Option<(Vec<Bytes>, bool)> {
        loop {
            if self.gap {
                let out = self.catch_up().await.ok()?;
                if !out.is_empty() {
                    return Some((out, false));
                }
                continue;
            }
            match self.batches.recv().await {
                Ok(batch) => {
                    if self.sent.is_some_and(|sent| batch.from > sent) {
                        // The tail skipped some events since the last one looked at.
                        self.gap = true;
                        continue;
                    }
                    let out = self.frames_of(&batch.events).await.ok()?;
                    self.sent = Some(self.sent.map_or(batch.to, |s| s.max(batch.to)));
                    if !out.is_empty() {
                        return Some((out, false));
                    }
                }
                // Too far behind: the client resumes with Last-Event-ID.
                Err(RecvError::Lagged(_) | RecvError::Closed) => return None,
            }
        }
    }

    fn presence(&self) -> Option<Duration> {
        None
    }

    async fn present(&mut self) {}
}
