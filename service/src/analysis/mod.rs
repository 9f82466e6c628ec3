//! Analysis beyond one request: the shared cache of solved positions (`solved`), background jobs (`queue`, this instance's side of them,
//! and `jobs`, their rows and runner), the fair-play boundary every answer about a position
//! goes through (`boundary`), the move quality of finished ranked matches (`quality`) and the
//! engine-assistance evidence read from it (`fair`); [`Analyses`], the context they take.

pub mod asked;
pub mod boundary;
pub mod fair;
pub mod jobs;
pub mod quality;
pub mod queue;
pub mod solved;

use std::ops::Deref;
use std::sync::Arc;

use crate::live::LivePath;

/// What analysis uses: the live path (positions of matches, the boundary's settings, the cap on
/// concurrent searches) and this instance's side of the jobs. Cheap to clone.
#[derive(Clone)]
pub struct Analyses {
    pub path: LivePath,
    /// This instance's side of the background analysis jobs.
    pub jobs: Arc<queue::Jobs>,
}

impl Deref for Analyses {
    type Target = LivePath;

    fn deref(&self) -> &LivePath {
        &self.path
    }
}
