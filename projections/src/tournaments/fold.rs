//! The folds the tournaments projection keeps between batches ([`Folds`]); a stream's events are
//! folded through the domain's `Aggregate` (`crate::fold`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use uuid::Uuid;

use domain::tournaments::Tournament;
use domain::tournaments::standings::Line;

/// The folds a runner keeps, by stream, at the version of the last batch it applied, with the
/// standing lines that batch wrote (a later batch writes only the lines that changed).
#[derive(Debug, Default)]
pub struct Folds(Mutex<HashMap<String, Kept>>);

#[derive(Debug)]
pub(super) struct Kept {
    pub(super) t: Arc<Tournament>,
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
