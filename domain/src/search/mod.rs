//! Game-tree search shared types: the limits a search runs under and the verdict it returns.
//!
//! Searches are pure: they are bounded by node counts (so a CPU move is the same on every
//! machine) and may also be stopped early through a flag the caller owns (the API layer sets it
//! when a `budget_ms` runs out). A stopped search says `exact: false`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

mod arch;
pub mod four_in_a_row;
pub mod reversi;

pub(crate) use crate::rng::SplitMix64;

/// The version of the exact solvers' verdicts, stored beside every cached solved position:
/// raised when a change could change a verdict, so that the verdicts of an older solver are
/// neither read nor kept.
pub const SOLVER_VERSION: i16 = 1;

/// What a search may spend.
#[derive(Debug, Clone, Copy)]
pub struct Limits<'a> {
    /// The most nodes the search visits before it gives its best estimate (on several threads,
    /// this many per thread, counted together: no thread visits more than this, and all of
    /// them no more than this times `threads`).
    pub max_nodes: u64,
    /// Set by the caller to stop the search as soon as it can (checked every few thousand nodes).
    pub stop: Option<&'a AtomicBool>,
    /// Where the search adds the nodes it visits as it goes, each time it checks `stop`, for a
    /// caller that reports progress while it runs (the exact total is the verdict's).
    pub progress: Option<&'a AtomicU64>,
    /// How many threads an analysis may search on (at least one). CPU choices never take more
    /// than one: their searches must stay reproducible.
    pub threads: usize,
    /// Whether the search goes on to prove the score however far the end of the game is: an
    /// analysis job, which has minutes. Without it, a Reversi position with more than
    /// [`reversi::EXACT_MAX_EMPTIES`] empties gets the best midgame estimate the budget allows
    /// (an exact solve there could not finish within an interactive budget). Four in a Row
    /// always solves.
    pub to_the_end: bool,
}

impl<'a> Limits<'a> {
    /// No bound at all: the search runs to the end.
    pub const UNLIMITED: Limits<'static> = Limits {
        max_nodes: u64::MAX,
        stop: None,
        progress: None,
        threads: 1,
        to_the_end: false,
    };

    /// A node budget and no stop flag.
    pub fn nodes(max_nodes: u64) -> Limits<'static> {
        Limits {
            max_nodes,
            ..Limits::UNLIMITED
        }
    }

    /// A node budget and the caller's stop flag.
    pub fn stoppable(max_nodes: u64, stop: Option<&'a AtomicBool>) -> Limits<'a> {
        Limits {
            max_nodes,
            stop,
            ..Limits::UNLIMITED
        }
    }

    /// Whether the caller asked the search to stop.
    pub fn stopped(&self) -> bool {
        self.stop.is_some_and(|s| s.load(Ordering::Relaxed))
    }

    /// Reports `visited` more nodes (since the last call) and says whether the caller asked the
    /// search to stop: what a search does every few thousand nodes.
    pub fn checkpoint(&self, visited: u64) -> bool {
        if let Some(p) = self.progress {
            p.fetch_add(visited, Ordering::Relaxed);
        }
        self.stopped()
    }
}

/// What the CPU and the analysis need of a game: its own search code, behind one trait, so
/// that `cpu.rs` and `analysis.rs` name no game.
pub trait Engine: crate::games::Game {
    /// What the analysis of this game keeps between positions (its transposition table).
    type Analyser: Send + 'static;

    /// A fresh analyser, its tables at the sizes the analysis uses.
    fn analyser() -> Self::Analyser;

    /// The verdict on a position (finished ones included). `with_moves: false` may skip
    /// finding every best move when only the score is needed.
    fn judge(
        analyser: &mut Self::Analyser,
        pos: &Self,
        limits: &Limits,
        with_moves: bool,
    ) -> Verdict<Self::Move>;

    /// The CPU's choice at the searching levels (3–5), node-bounded and seeded.
    fn search_choice(&self, level: u8, seed: u64) -> Option<Self::Move>;

    /// How much the weak levels (1–2) like a legal move (higher: more often).
    fn weak_weight(&self, mv: Self::Move) -> u64;
}

/// A search's answer for the side to move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict<M> {
    /// The score in the game's convention, from the side to move's point of view.
    pub score: i32,
    /// Every move that reaches `score` (all of them when `exact`; the best found otherwise).
    pub best_moves: Vec<M>,
    /// Whether `score` is proven under perfect play.
    pub exact: bool,
    /// Nodes visited.
    pub nodes: u64,
}

/// Runs `play(i)` for every `i` in `0..count` on as many threads as the machine has cores and
/// returns the results in the order of `i`: the strength tests' games, each independent and
/// deterministic (a CPU choice searches on one thread), so that a test of twenty games takes
/// the time of ten on two cores.
#[cfg(test)]
pub(crate) fn on_every_core<T: Send>(count: u64, play: impl Fn(u64) -> T + Sync) -> Vec<T> {
    let next = AtomicU64::new(0);
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let mut done: Vec<(u64, T)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= count {
                            return mine;
                        }
                        mine.push((i, play(i)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a game's thread"))
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, result)| result).collect()
}
