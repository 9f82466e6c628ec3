//! The instance's cap on concurrent CPU searches. CPU moves that search (levels 3–5) and
//! analyses share `slots` (one per core by default); a move waits for one in a queue of bounded
//! length, and beyond it is refused with 429 `rate_limited`. Analyses, which hold a slot for
//! their whole budget, never wait and never take the last slot: a CPU player always has one.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use tokio::sync::{Semaphore, SemaphorePermit};

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
}

/// A held search slot (and, for an analysis, its analysis slot).
pub struct Slot<'a> {
    _slot: SemaphorePermit<'a>,
    _analysis: Option<SemaphorePermit<'a>>,
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
    /// `slots` searches at once (at least one), `max_waiting` moves waiting beyond them.
    pub fn new(slots: usize, max_waiting: usize) -> Searches {
        let size = slots.max(1);
        Searches {
            slots: Semaphore::new(size),
            analysis_slots: Semaphore::new((size - 1).max(1)),
            size,
            max_waiting,
            waiting: AtomicUsize::new(0),
            refused: AtomicU64::new(0),
        }
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

    /// A slot for an analysis, only if one is free now (and not the last one); 429 otherwise.
    pub fn for_analysis(&self) -> Result<Slot<'_>, ApiError> {
        let analysis = self
            .analysis_slots
            .try_acquire()
            .map_err(|_| self.refuse())?;
        let slot = self.slots.try_acquire().map_err(|_| self.refuse())?;
        Ok(Slot {
            _slot: slot,
            _analysis: Some(analysis),
        })
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

    #[tokio::test]
    async fn moves_queue_up_to_the_bound_and_analyses_never_take_the_last_slot() {
        let searches = Searches::new(2, 1);
        let analysis = searches.for_analysis().expect("one analysis");
        assert!(
            matches!(searches.for_analysis(), Err(ApiError::RateLimited(1))),
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
