//! `Jobs`: this instance's side of the analysis jobs (its owner id, the caps, how long finished
//! jobs and solved positions are kept, the wake-up), held
//! by [`super::Analyses`] and kept apart from the runner in `jobs`, which takes it.

use std::time::Duration;

use tokio::sync::Notify;
use uuid::Uuid;

use crate::config::QualityNodes;

/// This instance's side of the jobs.
pub struct Jobs {
    /// This instance, as the owner of the jobs it claims.
    pub instance: Uuid,
    /// How long one job may search, its attempts together.
    pub cap: Duration,
    /// Jobs one player may have open at once.
    pub per_player: u32,
    /// How long a finished job is kept.
    pub kept: time::Duration,
    /// How long a solved position is kept in the cache.
    pub solved_kept: time::Duration,
    /// Nodes per position of a move-quality assessment, per game.
    pub quality_ply_nodes: QualityNodes,
    /// Nodes per position of a match analysis asked for by a reader.
    pub analysis_ply_nodes: u64,
    /// Wakes this instance's runner when a job is queued here.
    pub wake: Notify,
}

impl Jobs {
    pub fn new(
        cap: Duration,
        per_player: u32,
        kept: time::Duration,
        solved_kept: time::Duration,
        quality_ply_nodes: QualityNodes,
        analysis_ply_nodes: u64,
    ) -> Jobs {
        Jobs {
            instance: Uuid::new_v4(),
            cap,
            per_player,
            kept,
            solved_kept,
            quality_ply_nodes,
            analysis_ply_nodes,
            wake: Notify::new(),
        }
    }
}
