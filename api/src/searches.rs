//! The instance's cap on concurrent CPU searches. CPU moves that search (levels 3–5) and
//! analyses share `slots` (one per core by default); a move waits for one in a queue of bounded
//! length, and beyond it is refused with 429 `rate_limited`. Analyses, which hold a slot for
//! their whole budget, never wait and never take the last slot: a CPU player always has one;
//! and one player runs at most `analyses_per_player` of them at once on an instance.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use tokio::sync::{Semaphore, SemaphorePermit};

use domain::ids::PlayerId;

use crate::error::ApiError;

/// Seconds a refused search is asked to wait (`Retry-After`).
const RETRY_SECONDS: u64 = 1;

pub struct Searches {
    slots: Semaphore,
    /// Slots analyses may hold: all but one (one when there is one).
    analysis_slots: Semaphore,
    size: usize,
    max_waiting: usize,
    waiting: AtomicUsize,
    refused: AtomicU64,
    /// Analyses running per player, and how many one player may run.
    analyses: Mutex<HashMap<PlayerId, usize>>,
    analyses_per_player: usize,
}

/// A held search slot (and, for an analysis, its analysis slot and its player's place).
pub struct Slot<'a> {
    _slot: SemaphorePermit<'a>,
    _analysis: Option<(SemaphorePermit<'a>, PlayerAnalysis<'a>)>,
}

/// One of a player's running analyses, counted out when dropped.
struct PlayerAnalysis<'a> {
    searches: &'a Searches,
    player: PlayerId,
}

impl Drop for PlayerAnalysis<'_> {
    fn drop(&mut self) {
        let mut running = self.searches.analyses();
        if let Some(n) = running.get_mut(&self.player) {
            *n -= 1;
            if *n == 0 {
                running.remove(&self.player);
            }
        }
    }
}

/// What `/metrics` reports of the searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchStats {
    pub slots: usize,
    pub running: usize,
    pub waiting: usize,
    pub refused: u64,
}

impl Searches {
    /// `slots` searches at once (at least one), `max_waiting` moves waiting beyond them, and
    /// at most `analyses_per_player` analyses (at least one) of one player at once.
    pub fn new(slots: usize, max_waiting: usize, analyses_per_player: usize) -> Searches {
        let size = slots.max(1);
        Searches {
            slots: Semaphore::new(size),
            analysis_slots: Semaphore::new((size - 1).max(1)),
            size,
            max_waiting,
            waiting: AtomicUsize::new(0),
            refused: AtomicU64::new(0),
            analyses: Mutex::default(),
            analyses_per_player: analyses_per_player.max(1),
        }
    }

    fn analyses(&self) -> std::sync::MutexGuard<'_, HashMap<PlayerId, usize>> {
        self.analyses.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A slot for a CPU move's search: at once, or after waiting in the queue; 429 when the
    /// queue is full.
    pub async fn for_move(&self) -> Result<Slot<'_>, ApiError> {
        if let Ok(slot) = self.slots.try_acquire() {
            return Ok(Slot {
                _slot: slot,
                _analysis: None,
            });
        }
        if self.waiting.fetch_add(1, Ordering::AcqRel) >= self.max_waiting {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            return Err(self.refuse());
        }
        // Counted out however the wait ends (a dropped request included).
        let _queued = Queued(&self.waiting);
        let slot = self
            .slots
            .acquire()
            .await
            .map_err(|_| ApiError::RateLimited(RETRY_SECONDS))?;
        Ok(Slot {
            _slot: slot,
            _analysis: None,
        })
    }

    /// A slot for an analysis of `player`, only if one is free now (and not the last one) and
    /// the player runs fewer than `analyses_per_player`; 429 otherwise.
    pub fn for_analysis(&self, player: PlayerId) -> Result<Slot<'_>, ApiError> {
        let mine = {
            let mut running = self.analyses();
            let n = running.entry(player).or_default();
            if *n >= self.analyses_per_player {
                drop(running);
                return Err(self.refuse());
            }
            *n += 1;
            PlayerAnalysis {
                searches: self,
                player,
            }
        };
        let analysis = self
            .analysis_slots
            .try_acquire()
            .map_err(|_| self.refuse())?;
        let slot = self.slots.try_acquire().map_err(|_| self.refuse())?;
        Ok(Slot {
            _slot: slot,
            _analysis: Some((analysis, mine)),
        })
    }

    /// How many analyses one player may run at once.
    pub fn analyses_per_player(&self) -> usize {
        self.analyses_per_player
    }

    pub fn stats(&self) -> SearchStats {
        SearchStats {
            slots: self.size,
            running: self.size - self.slots.available_permits(),
            waiting: self.waiting.load(Ordering::Acquire),
            refused: self.refused.load(Ordering::Acquire),
        }
    }

    fn refuse(&self) -> ApiError {
        self.refused.fetch_add(1, Ordering::AcqRel);
        ApiError::RateLimited(RETRY_SECONDS)
    }
}

struct Queued<'a>(&'a AtomicUsize);

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use futures_util::FutureExt;

    use super::*;

    const ADA: PlayerId = PlayerId::from_uuid(uuid::Uuid::from_u128(1));
    const BOB: PlayerId = PlayerId::from_uuid(uuid::Uuid::from_u128(2));

    #[test]
    fn a_player_runs_at_most_their_share_of_analyses() {
        let searches = Searches::new(8, 0, 2);
        let first = searches.for_analysis(ADA).expect("a first analysis");
        let second = searches.for_analysis(ADA).expect("a second one");
        assert!(matches!(
            searches.for_analysis(ADA),
            Err(ApiError::RateLimited(1))
        ));
        let other = searches
            .for_analysis(BOB)
            .expect("another player is not held back");
        drop(first);
        let third = searches
            .for_analysis(ADA)
            .expect("a place freed by the first");
        assert_eq!(searches.stats().running, 3);
        assert_eq!(searches.stats().refused, 1);
        drop((second, third, other));
        assert!(searches.analyses().is_empty(), "nothing left counted");
    }

    #[tokio::test]
    async fn moves_queue_up_to_the_bound_and_analyses_never_take_the_last_slot() {
        let searches = Searches::new(2, 1, 2);
        let analysis = searches.for_analysis(ADA).expect("one analysis");
        assert!(
            matches!(searches.for_analysis(BOB), Err(ApiError::RateLimited(1))),
            "the last slot is kept for moves"
        );
        let running = searches.for_move().await.expect("the last slot");
        // All slots taken: one move may wait, the next one is refused.
        let mut queued = Box::pin(searches.for_move());
        assert!((&mut queued).now_or_never().is_none(), "it waits");
        assert_eq!(searches.stats().waiting, 1);
        assert!(matches!(
            searches.for_move().await,
            Err(ApiError::RateLimited(1))
        ));
        drop(analysis);
        let slot = queued.await.expect("the freed slot");
        assert_eq!(
            searches.stats(),
            SearchStats {
                slots: 2,
                running: 2,
                waiting: 0,
                refused: 2
            }
        );
        drop((slot, running));
        assert_eq!(searches.stats().running, 0);
    }
}
