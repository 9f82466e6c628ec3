//! Game-tree search shared types: the limits a search runs under and the verdict it returns.
//!
//! Searches are pure: they are bounded by node counts (so a CPU move is the same on every
//! machine) and may also be stopped early through a flag the caller owns (the API layer sets it
//! when a `budget_ms` runs out). A stopped search says `exact: false`.

use std::sync::atomic::{AtomicBool, Ordering};

pub mod four_in_a_row;
pub mod reversi;

/// SplitMix64: the CPU levels' reproducible draws, seeded from the match's recorded seed and the
/// position. Changing it changes which moves replays pick, so it stays as it is.
pub(crate) struct SplitMix64(pub(crate) u64);

impl SplitMix64 {
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` by multiply-shift (0 when `n` is 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// One of `items`, or `None` when there are none.
    pub(crate) fn pick<T: Copy>(&mut self, items: &[T]) -> Option<T> {
        let i = self.below(items.len() as u64);
        items.get(i as usize).copied()
    }
}

/// What a search may spend.
#[derive(Debug, Clone, Copy)]
pub struct Limits<'a> {
    /// The most nodes the search visits before it gives its best estimate.
    pub max_nodes: u64,
    /// Set by the caller to stop the search as soon as it can (checked every few thousand nodes).
    pub stop: Option<&'a AtomicBool>,
}

impl Limits<'_> {
    /// No bound at all: the search runs to the end.
    pub const UNLIMITED: Limits<'static> = Limits {
        max_nodes: u64::MAX,
        stop: None,
    };

    /// A node budget and no stop flag.
    pub fn nodes(max_nodes: u64) -> Limits<'static> {
        Limits {
            max_nodes,
            stop: None,
        }
    }

    /// Whether the caller asked the search to stop.
    pub fn stopped(&self) -> bool {
        self.stop.is_some_and(|s| s.load(Ordering::Relaxed))
    }
}

/// A search's answer for the side to move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict<M> {
    /// The score in the game's convention (SPEC §6), from the side to move's point of view.
    pub score: i32,
    /// Every move that reaches `score` (all of them when `exact`; the best found otherwise).
    pub best_moves: Vec<M>,
    /// Whether `score` is proven under perfect play.
    pub exact: bool,
    /// Nodes visited.
    pub nodes: u64,
}
