//! Counters of this instance (waves run, pairs made, per pool; refusals of the limits) and the
//! shapes of the queue statistics. `exposition` turns them into `/metrics` and the admin view.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

use domain::tickets::Pool;

/// A limit, other than the rate limiters, whose refusals (429) are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Leaves of one match beyond `DISCS_LEAVES_PER_MATCH` and its refill.
    Leaves,
    /// Active solo matches against CPU levels 4–5 beyond `DISCS_STRONG_SOLO_PER_PLAYER`.
    StrongSolo,
    /// Open analysis jobs beyond `DISCS_JOBS_PER_PLAYER`.
    Jobs,
}

impl Limit {
    pub const ALL: [Limit; 3] = [Limit::Leaves, Limit::StrongSolo, Limit::Jobs];

    /// The `limit` label in `/metrics`.
    pub fn label(self) -> &'static str {
        match self {
            Limit::Leaves => "leaves",
            Limit::StrongSolo => "strong_solo",
            Limit::Jobs => "analysis_jobs",
        }
    }
}

/// Per-pool counters of the waves this instance ran, and refusals by [`Limit`].
#[derive(Debug, Default)]
pub struct Metrics {
    waves: Mutex<BTreeMap<Pool, (u64, u64)>>,
    refused: [AtomicU64; Limit::ALL.len()],
}

impl Metrics {
    /// Counts a call refused by `limit`.
    pub fn refused(&self, limit: Limit) {
        self.refused[limit as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Calls refused by `limit` on this instance.
    pub fn refusals(&self, limit: Limit) -> u64 {
        self.refused[limit as usize].load(Ordering::Relaxed)
    }

    /// Counts a wave over `pool` that made `pairs` pairs.
    pub fn wave(&self, pool: Pool, pairs: usize) {
        if let Ok(mut w) = self.waves.lock() {
            let entry = w.entry(pool).or_default();
            entry.0 += 1;
            entry.1 += pairs as u64;
        }
    }

    /// (waves, pairs) of a pool on this instance.
    pub fn waves_of(&self, pool: Pool) -> (u64, u64) {
        self.waves
            .lock()
            .ok()
            .and_then(|w| w.get(&pool).copied())
            .unwrap_or_default()
    }

    /// (waves, pairs) of every pool this instance has run a wave over.
    pub fn all(&self) -> Vec<(Pool, (u64, u64))> {
        self.waves
            .lock()
            .map(|w| w.iter().map(|(k, v)| (*k, *v)).collect())
            .unwrap_or_default()
    }
}

/// Three percentiles of a distribution.
#[derive(Debug, Clone, Copy, Default, Serialize, schemars::JsonSchema)]
pub struct Percentiles {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
}

/// The matchmaking quality of one pool: over the pairings of the last 24 hours.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PoolStats {
    pub game: String,
    pub turn_seconds: Option<i32>,
    /// A correspondence pool's days per move.
    pub days_per_move: Option<i32>,
    pub waiting: i64,
    pub pairs: i64,
    pub wait_seconds: Percentiles,
    pub rating_gap: Percentiles,
    pub repeat_pair_rate: f64,
    /// Waves run by the instance that answers (each instance counts its own).
    pub waves_run: u64,
}
