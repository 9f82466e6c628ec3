//! The tournaments projection's fold: a stream's events decoded and folded with the domain's own
//! `evolve`, and the folds a runner keeps between batches ([`Folds`]).

use std::collections::HashMap;
use std::sync::Mutex;

use uuid::Uuid;

use domain::tournaments::standings::Line;
use domain::tournaments::{Tournament, TournamentEvent, evolve};
use eventlog::RecordedEvent;

use crate::Error;

/// The folds a runner keeps, by stream, at the version of the last batch it applied, with the
/// standing lines that batch wrote (a later batch writes only the lines that changed).
#[derive(Debug, Default)]
pub struct Folds(Mutex<HashMap<String, Kept>>);

#[derive(Debug)]
pub(super) struct Kept {
    pub(super) t: Tournament,
    pub(super) lines: HashMap<Uuid, Line>,
}

impl Folds {
    /// The fold at `version`, if kept; a batch that starts anywhere else (a retry after a
    /// rollback, a rebuild) refolds from the log and writes every line.
    pub(super) fn take(&self, stream: &str, version: u64) -> Option<Kept> {
        let mut folds = self.0.lock().unwrap_or_else(|p| p.into_inner());
        folds.remove(stream).filter(|k| k.t.version == version)
    }

    pub(super) fn keep(&self, stream: String, kept: Kept) {
        let mut folds = self.0.lock().unwrap_or_else(|p| p.into_inner());
        folds.insert(stream, kept);
    }
}

/// Decodes a stored tournament event.
pub fn decode(e: &RecordedEvent) -> Result<TournamentEvent, Error> {
    TournamentEvent::decode(&e.event_type, e.schema_version, &e.data).map_err(|reason| {
        Error::Event {
            position: e.position,
            reason,
        }
    })
}

/// Folds `events` (a stream's, in version order) onto `state`.
pub fn fold_onto(
    mut state: Option<Tournament>,
    events: &[&RecordedEvent],
) -> Result<Option<Tournament>, Error> {
    for e in events {
        state = evolve(state, e.recorded_at, &decode(e)?);
    }
    Ok(state)
}
