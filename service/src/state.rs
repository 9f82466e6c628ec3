//! `AppState`: every service's context in one place, for the HTTP edge and the background
//! loops. It sits above the services (none of them imports it): each takes the narrowest
//! context it uses, and `AppState` dereferences to the widest of the chain
//! ([`Analyses`] → [`crate::live::LivePath`] → [`crate::core::Core`]), so a handler passes
//! `&state` to any of them.

use std::ops::Deref;
use std::sync::Arc;

use crate::analysis::Analyses;
use crate::challenges::Challenges;
use crate::history::History;
use crate::ranked::Ranked;
use crate::tournaments::Tournaments;

/// Shared by every handler and worker; cheap to clone.
#[derive(Clone)]
pub struct AppState {
    /// The searches and the jobs, over the live path, over the core.
    pub analysis: Analyses,
    /// The matchmaking waves, over the live path.
    pub ranked: Ranked,
    /// The tournaments' folds and organiser, over the live path.
    pub tournaments: Tournaments,
    /// The challenges' folds, over the live path.
    pub challenges: Challenges,
    /// The checkpoint signer and the ledger of closed accounts (kept outside the database).
    pub history: Arc<History>,
    /// The projections of this database (followed through the live tail).
    pub projections: projections::Runner,
    /// How long stored `Idempotency-Key` answers are kept.
    pub answers_kept: time::Duration,
    /// How long a room that never started a match is kept.
    pub rooms_kept: time::Duration,
}

impl Deref for AppState {
    type Target = Analyses;

    fn deref(&self) -> &Analyses {
        &self.analysis
    }
}
