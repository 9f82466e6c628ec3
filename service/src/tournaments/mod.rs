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

use time::Duration;
use tokio::sync::Notify;

use domain::ids::TournamentId;
use domain::tournaments::Tournament;
use domain::tournaments::standings::Line;

use crate::aggregates::{self, Kept};
use crate::error::Error;
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

/// The tournaments this instance folded, each at the version it last read, with their writers'
/// turns ([`Kept`]); each one's standings at the version last asked for; and where the
/// organiser's reading of match results stands.
#[derive(Default)]
pub struct Folds {
    pub kept: Kept<Tournament>,
    pub(crate) results: Mutex<Option<eventlog::Checkpoint>>,
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

    /// Drops what this instance keeps of ended tournaments (a read folds them again), and the
    /// turns nobody waits for: what is kept stays bounded by the tournaments under way.
    pub(crate) fn forget_ended(&self) {
        self.kept
            .retain(|t| t.as_ref().is_some_and(|t| !t.finished && !t.cancelled));
        standings_retain(&self.standings, |id| self.kept.contains(*id));
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

/// Tournament `id` as its stream has it now (`not_found` when it does not exist): this
/// instance's fold, caught up with the events after it.
pub async fn load(app: &Tournaments, id: TournamentId) -> Result<Arc<Tournament>, Error> {
    aggregates::load(app, &app.folds.kept, id)
        .await?
        .ok_or(Error::NotFound(Missing::Tournament))
}
