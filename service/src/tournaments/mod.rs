//! Tournaments over the live path: the commands of players and admins ([`commands`]), the
//! organiser that pairs, records results and ends them ([`organiser`]), what a client reads
//! ([`views`]) and what its stream sends ([`feed`]).
//!
//! A tournament is the fold of its stream (`domain::tournaments`), decided and appended with an
//! expected version like a match; each instance keeps the folds it has read ([`Folds`]) and
//! catches them up with the events after their version. Its matches are ordinary matches,
//! created in the transaction that appends their pairings (so no pairing is ever without its
//! match, or a match without its pairing) with match ids derived from the tournament and its
//! version: two instances that decide the same step write it once. The write side keeps two
//! small tables beside the log: `tournament_codes` (the invite codes of private tournaments,
//! never in the stream) and `tournament_seats` (a player's place in a tournament that has not
//! ended: the ranked queue refuses a ticket while a tournament of theirs runs, and the arena's
//! organiser pauses a player it has not seen for [`PAUSED_AFTER`]).

use std::collections::HashMap;
use std::ops::Deref;
use std::sync::{Arc, Mutex};

use time::{Duration, OffsetDateTime};
use tokio::sync::Notify;

use domain::ids::TournamentId;
use domain::tournaments::standings::Line;
use domain::tournaments::{Tournament, TournamentEvent, evolve};
use eventlog::{NewEvent, RecordedEvent};

use crate::error::{Error, unexpected};
use crate::live::LivePath;
use crate::reasons::Missing;

pub mod commands;
pub mod feed;
pub mod organiser;
pub mod views;

/// An arena player not seen (no stream, no call on the tournament, no game) for this long is
/// paused, and not paired until they resume.
pub const PAUSED_AFTER: Duration = Duration::seconds(120);

/// What tournaments use: the live path (their matches are created there), the folds this
/// instance read, and the organiser's wake-up. Cheap to clone.
#[derive(Clone)]
pub struct Tournaments {
    pub path: LivePath,
    pub folds: Arc<Folds>,
    /// Wakes this instance's organiser (a join, a result seen here).
    pub wake: Arc<Notify>,
}

impl Deref for Tournaments {
    type Target = LivePath;

    fn deref(&self) -> &LivePath {
        &self.path
    }
}

impl Tournaments {
    pub fn new(path: LivePath) -> Tournaments {
        Tournaments {
            path,
            folds: Arc::default(),
            wake: Arc::default(),
        }
    }
}

/// The tournaments this instance folded, each at the version it last read; and where the
/// organiser's reading of match results stands.
#[derive(Default)]
pub struct Folds {
    folds: Mutex<HashMap<TournamentId, Arc<Tournament>>>,
    pub(crate) results: Mutex<Option<eventlog::Checkpoint>>,
    /// One writer per tournament on this instance at a time: commands and organiser steps on a
    /// tournament queue here instead of racing each other to its next version (a race lost
    /// is decided again; hundreds of joins at once would lose most of theirs).
    writers: Mutex<HashMap<TournamentId, Arc<tokio::sync::Mutex<()>>>>,
    /// Each tournament's standings at the version last asked for.
    standings: Mutex<HashMap<TournamentId, Counted>>,
}

/// Standings at a version of the stream.
type Counted = (u64, Arc<Vec<Line>>);

impl Folds {
    /// The standings of `t` (tournament `id`), computed once per version on this instance.
    pub fn lines(&self, id: TournamentId, t: &Tournament) -> Arc<Vec<Line>> {
        let mut standings = self.standings.lock().unwrap_or_else(|p| p.into_inner());
        match standings.get(&id) {
            Some((v, lines)) if *v == t.version => lines.clone(),
            _ => {
                let lines = Arc::new(domain::tournaments::standings::standings(t));
                standings.insert(id, (t.version, lines.clone()));
                lines
            }
        }
    }

    /// Waits for this instance's turn to write tournament `id`.
    pub(crate) async fn writer(&self, id: TournamentId) -> tokio::sync::OwnedMutexGuard<()> {
        let lock = {
            let mut writers = self.writers.lock().unwrap_or_else(|p| p.into_inner());
            writers.entry(id).or_default().clone()
        };
        lock.lock_owned().await
    }

    fn get(&self, id: TournamentId) -> Option<Arc<Tournament>> {
        self.lock().get(&id).cloned()
    }

    /// Keeps `t` unless a fold at a later version is kept already.
    fn keep(&self, id: TournamentId, t: Arc<Tournament>) {
        let mut folds = self.lock();
        match folds.get(&id) {
            Some(kept) if kept.version >= t.version => {}
            _ => {
                folds.insert(id, t);
            }
        }
    }

    /// Drops the fold of `id` (an append lost to another writer: the log says what it is).
    pub(crate) fn forget(&self, id: TournamentId) {
        self.lock().remove(&id);
    }

    /// Drops what this instance keeps of ended tournaments (a read folds them again), and the
    /// turns nobody waits for: what is kept stays bounded by the tournaments under way.
    pub(crate) fn forget_ended(&self) {
        let ended: Vec<TournamentId> = {
            let mut folds = self.lock();
            let ended = folds
                .iter()
                .filter(|(_, t)| t.finished || t.cancelled)
                .map(|(id, _)| *id)
                .collect::<Vec<_>>();
            for id in &ended {
                folds.remove(id);
            }
            ended
        };
        let mut standings = self.standings.lock().unwrap_or_else(|p| p.into_inner());
        for id in &ended {
            standings.remove(id);
        }
        drop(standings);
        let folds = self.lock();
        standings_retain(&self.standings, |id| folds.contains_key(id));
        drop(folds);
        let mut writers = self.writers.lock().unwrap_or_else(|p| p.into_inner());
        writers.retain(|_, turn| Arc::strong_count(turn) > 1);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<TournamentId, Arc<Tournament>>> {
        self.folds.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Keeps the standings of the tournaments `keep` says.
fn standings_retain(
    standings: &Mutex<HashMap<TournamentId, Counted>>,
    keep: impl Fn(&TournamentId) -> bool,
) {
    let mut standings = standings.lock().unwrap_or_else(|p| p.into_inner());
    standings.retain(|id, _| keep(id));
}

/// Decodes a stored tournament event.
pub fn decode(e: &RecordedEvent) -> Result<TournamentEvent, Error> {
    TournamentEvent::decode(&e.event_type, e.schema_version, &e.data)
        .map_err(|reason| Error::Unexpected(anyhow::anyhow!("{}: {reason}", e.stream)))
}

/// Folds `events` (after `state`'s version, in order) onto `state`.
pub fn fold_onto(
    mut state: Option<Tournament>,
    events: &[RecordedEvent],
) -> Result<Option<Tournament>, Error> {
    for e in events {
        state = evolve(state, e.recorded_at, &decode(e)?);
    }
    Ok(state)
}

/// Tournament `id` as its stream has it now (`not_found` when it does not exist): this
/// instance's fold, caught up with the events after it.
pub async fn load(app: &Tournaments, id: TournamentId) -> Result<Arc<Tournament>, Error> {
    let kept = app.folds.get(id);
    let after = kept.as_ref().map_or(0, |t| t.version as i64);
    let events = app
        .log
        .read_stream_after(&id.stream(), after)
        .await
        .map_err(unexpected)?;
    let t = match (kept, events.is_empty()) {
        (Some(t), true) => t,
        (kept, _) => {
            let base = kept.map(Arc::unwrap_or_clone);
            let t =
                Arc::new(fold_onto(base, &events)?.ok_or(Error::NotFound(Missing::Tournament))?);
            app.folds.keep(id, t.clone());
            t
        }
    };
    Ok(t)
}

/// What an append of `events` looks like in the log.
pub(crate) fn new_events(
    events: &[TournamentEvent],
    actor: Option<domain::ids::PlayerId>,
    at: OffsetDateTime,
) -> Vec<NewEvent> {
    events
        .iter()
        .map(|e| NewEvent {
            event_type: e.event_type().to_owned(),
            schema_version: TournamentEvent::SCHEMA_VERSION,
            data: e.data(),
            actor: actor.map(|p| p.as_uuid()),
            recorded_at: at,
        })
        .collect()
}

/// `t` with `events` (decided at `at`) applied.
pub(crate) fn applied(
    t: Option<Tournament>,
    events: &[TournamentEvent],
    at: OffsetDateTime,
) -> Option<Tournament> {
    events.iter().fold(t, |t, e| evolve(t, at, e))
}
