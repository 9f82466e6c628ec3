//! The instance's cap on concurrent CPU searches. CPU moves that search (levels 3–5), analyses
//! and background analysis jobs share `slots` (one per core by default); a move waits for one in
//! a queue of bounded length, and beyond it is refused with 429 `rate_limited`. Analyses and
//! jobs, which hold a slot for long, never take the last slot: a CPU player always has one.
//! An analysis never waits, except for a job to give way: a job's search stops when an
//! analysis needs its slot, and its runner queues for a slot again. One player runs at most
//! `analyses_per_player` analyses at once on an instance. The move-quality assessor has a slot
//! of its own beside them (`for_assessor`): no analysis can starve it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{Notify, Semaphore, SemaphorePermit};

use domain::ids::PlayerId;

use crate::error::Error;

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
    /// The jobs searching now, which an analysis may ask to give way.
    jobs: Mutex<Vec<Arc<Yield>>>,
    /// Told when an analysis slot is released: jobs wait for one here, never in the
    /// semaphore's queue, where they would come before an analysis asking later.
    freed: Notify,
    /// The move-quality assessor's own slot, beside the shared ones.
    assessor: Semaphore,
}

/// Sets a search's stop flag when dropped: a request the client gave up on, or a job runner
/// dropped with its runtime, stops its search (a blocking search would outlive them).
pub struct StopOnDrop(pub Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// A job's search that an analysis may ask to give way: asking sets its stop flag.
#[derive(Default)]
pub struct Yield {
    stop: Arc<AtomicBool>,
    asked: AtomicBool,
}

/// A held slot of a background job, which gives way to an analysis that needs it.
pub struct JobSlot<'a> {
    _slot: Slot<'a>,
    searches: &'a Searches,
    job: Arc<Yield>,
}

impl JobSlot<'_> {
    /// Whether an analysis asked this job to give way.
    pub fn yielded(&self) -> bool {
        self.job.asked.load(Ordering::Acquire)
    }
}

impl Drop for JobSlot<'_> {
    fn drop(&mut self) {
        self.searches
            .running_jobs()
            .retain(|j| !Arc::ptr_eq(j, &self.job));
    }
}

/// A held search slot (and, for an analysis or a job, its analysis slot; for an analysis, its
/// player's place).
pub struct Slot<'a> {
    _slot: SemaphorePermit<'a>,
    _analysis: Option<AnalysisPermit<'a>>,
    _player: Option<PlayerAnalysis<'a>>,
}

/// An analysis slot; its release wakes the jobs waiting for one.
struct AnalysisPermit<'a> {
    permit: Option<SemaphorePermit<'a>>,
    freed: &'a Notify,
}

impl Drop for AnalysisPermit<'_> {
    fn drop(&mut self) {
        // Released first, so that a woken job finds it free (unless an analysis waits for it).
        drop(self.permit.take());
        self.freed.notify_waiters();
    }
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
            jobs: Mutex::default(),
            freed: Notify::new(),
            assessor: Semaphore::new(1),
        }
    }

    fn running_jobs(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Yield>>> {
        self.jobs.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn analyses(&self) -> std::sync::MutexGuard<'_, HashMap<PlayerId, usize>> {
        self.analyses.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A slot for a CPU move's search: at once, or after waiting in the queue; 429 when the
    /// queue is full.
    pub async fn for_move(&self) -> Result<Slot<'_>, Error> {
        if let Ok(slot) = self.slots.try_acquire() {
            return Ok(Slot {
                _slot: slot,
                _analysis: None,
                _player: None,
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
            .map_err(|_| Error::RateLimited(RETRY_SECONDS))?;
        Ok(Slot {
            _slot: slot,
            _analysis: None,
            _player: None,
        })
    }

    /// A slot for an analysis of `player`, only if one is free now (and not the last one) or a
    /// job holds it and gives way, and the player runs fewer than `analyses_per_player`; 429
    /// otherwise.
    pub async fn for_analysis(&self, player: PlayerId) -> Result<Slot<'_>, Error> {
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
        let analysis = match self.analysis_slots.try_acquire() {
            Ok(permit) => permit,
            // A job holds the slot: it stops within a few thousand nodes and lets it go.
            Err(_) if self.ask_a_job_to_yield() => self
                .analysis_slots
                .acquire()
                .await
                .map_err(|_| self.refuse())?,
            Err(_) => return Err(self.refuse()),
        };
        let slot = self.slots.try_acquire().map_err(|_| self.refuse())?;
        Ok(Slot {
            _slot: slot,
            _analysis: Some(AnalysisPermit {
                permit: Some(analysis),
                freed: &self.freed,
            }),
            _player: Some(mine),
        })
    }

    /// Asks one running job that was not asked yet to give its slot way; false when none.
    fn ask_a_job_to_yield(&self) -> bool {
        let jobs = self.running_jobs();
        let Some(job) = jobs.iter().find(|j| !j.asked.load(Ordering::Acquire)) else {
            return false;
        };
        job.asked.store(true, Ordering::Release);
        job.stop.store(true, Ordering::Release);
        true
    }

    /// A slot for a background job's search, waiting as long as it takes (behind moves and
    /// analyses that asked before), and the stop flag of the search it runs: set when an
    /// analysis asks the job to give way ([`JobSlot::yielded`]).
    pub async fn for_job(&self) -> Result<(JobSlot<'_>, Arc<AtomicBool>), Error> {
        let closed = |_| Error::RateLimited(RETRY_SECONDS);
        let analysis = loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if let Ok(permit) = self.analysis_slots.try_acquire() {
                break AnalysisPermit {
                    permit: Some(permit),
                    freed: &self.freed,
                };
            }
            freed.await;
        };
        let slot = self.slots.acquire().await.map_err(closed)?;
        let job = Arc::new(Yield::default());
        self.running_jobs().push(Arc::clone(&job));
        let stop = Arc::clone(&job.stop);
        Ok((
            JobSlot {
                _slot: Slot {
                    _slot: slot,
                    _analysis: Some(analysis),
                    _player: None,
                },
                searches: self,
                job,
            },
            stop,
        ))
    }

    /// The move-quality assessor's own slot: one search on one thread beside the shared
    /// slots, which analyses never take and never ask to give way, so that a busy instance
    /// still assesses its finished ranked matches. Waits while another assessment holds it.
    pub async fn for_assessor(&self) -> Result<SemaphorePermit<'_>, Error> {
        self.assessor
            .acquire()
            .await
            .map_err(|_| Error::RateLimited(RETRY_SECONDS))
    }

    /// How many threads one analysis (or job) searches on: every core the instance allows.
    /// Its one slot still counts it once, so a CPU move always finds a slot; the move then
    /// shares the cores with the analysis for its short search.
    pub fn analysis_threads(&self) -> usize {
        self.size
    }

    /// How many jobs may search at once: as many as there are analysis slots.
    pub fn job_runners(&self) -> usize {
        (self.size - 1).max(1)
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

    fn refuse(&self) -> Error {
        self.refused.fetch_add(1, Ordering::AcqRel);
        Error::RateLimited(RETRY_SECONDS)
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

    #[tokio::test]
    async fn analyses_holding_every_slot_leave_the_assessor_its_own() {
        let searches = Searches::new(2, 0, 1);
        let held = searches.for_analysis(ADA).await.expect("the analysis slot");
        let move_slot = searches.for_move().await.expect("the last slot");
        // Every shared slot is taken, and no job holds one to give way.
        assert!(searches.for_analysis(BOB).await.is_err());
        let assessing = searches
            .for_assessor()
            .now_or_never()
            .expect("at once")
            .expect("its own slot");
        // One assessment at a time.
        assert!(searches.for_assessor().now_or_never().is_none());
        drop(assessing);
        assert!(searches.for_assessor().now_or_never().is_some());
        drop((held, move_slot));
    }

    #[tokio::test]
    async fn a_player_runs_at_most_their_share_of_analyses() {
        let searches = Searches::new(8, 0, 2);
        let first = searches.for_analysis(ADA).await.expect("a first analysis");
        let second = searches.for_analysis(ADA).await.expect("a second one");
        assert!(matches!(
            searches.for_analysis(ADA).await,
            Err(Error::RateLimited(1))
        ));
        let other = searches
            .for_analysis(BOB)
            .await
            .expect("another player is not held back");
        drop(first);
        let third = searches
            .for_analysis(ADA)
            .await
            .expect("a place freed by the first");
        assert_eq!(searches.stats().running, 3);
        assert_eq!(searches.stats().refused, 1);
        drop((second, third, other));
        assert!(searches.analyses().is_empty(), "nothing left counted");
    }

    #[tokio::test]
    async fn moves_queue_up_to_the_bound_and_analyses_never_take_the_last_slot() {
        let searches = Searches::new(2, 1, 2);
        let analysis = searches.for_analysis(ADA).await.expect("one analysis");
        assert!(
            matches!(searches.for_analysis(BOB).await, Err(Error::RateLimited(1))),
            "the last slot is kept for moves"
        );
        let running = searches.for_move().await.expect("the last slot");
        // All slots taken: one move may wait, the next one is refused.
        let mut queued = Box::pin(searches.for_move());
        assert!((&mut queued).now_or_never().is_none(), "it waits");
        assert_eq!(searches.stats().waiting, 1);
        assert!(matches!(
            searches.for_move().await,
            Err(Error::RateLimited(1))
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

    #[tokio::test]
    async fn a_job_waits_for_a_slot_and_gives_way_to_an_analysis() {
        let searches = Searches::new(2, 4, 1);
        let (job, stop) = searches.for_job().await.expect("a free slot");
        assert!(!stop.load(Ordering::Acquire));
        // A second job waits: analyses and jobs never take the last slot.
        let mut second = Box::pin(searches.for_job());
        assert!((&mut second).now_or_never().is_none(), "it waits");
        // An analysis asks the running job to give way, and waits for its slot.
        let mut analysis = Box::pin(searches.for_analysis(ADA));
        assert!(
            (&mut analysis).now_or_never().is_none(),
            "it waits for the job"
        );
        assert!(
            stop.load(Ordering::Acquire),
            "the job's search is told to stop"
        );
        assert!(job.yielded());
        drop(job);
        let analysis = analysis.await.expect("the job's slot");
        // The waiting job still waits: the analysis holds the slot.
        assert!((&mut second).now_or_never().is_none());
        // A running analysis is never asked to give way: a second one is refused.
        assert!(matches!(
            searches.for_analysis(BOB).await,
            Err(Error::RateLimited(1))
        ));
        drop(analysis);
        let (job, stop) = second.await.expect("the slot once the analysis ends");
        assert!(!stop.load(Ordering::Acquire) && !job.yielded());
        assert_eq!(searches.stats().running, 1);
        drop(job);
        assert!(
            searches.running_jobs().is_empty(),
            "nothing left registered"
        );
    }
}
