//! The match cache: recent match states in memory, keyed by match and version, bounded in size.
//!
//! An entry is only ever a guess. A command decided on a cached state appends with that
//! state's version as its expected version, so a stale entry (another instance moved) costs one
//! conflict and one reload, never a wrong answer; instances stay stateless for correctness.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use domain::ids::{MatchId, PlayerId};
use domain::matches::MatchState;

/// The names of a match's human players, as views show them.
pub type Names = HashMap<PlayerId, String>;

/// A match as some command or read last saw it.
#[derive(Clone)]
pub struct Cached {
    pub state: MatchState,
    pub names: Arc<Names>,
    /// The hash of the match's last event, when known.
    pub head: Option<eventlog::Hash>,
    /// The work row this instance last wrote for the match, if it did.
    pub row: Option<super::loaded::RowHint>,
}

/// At most `capacity` entries, in two generations: lookups promote an entry to the young one;
/// when the young one is full it becomes the old one and the old one is dropped, so the least
/// recently used half goes first.
pub struct MatchCache {
    capacity: usize,
    inner: Mutex<Generations>,
}

#[derive(Default)]
struct Generations {
    young: HashMap<MatchId, Arc<Cached>>,
    old: HashMap<MatchId, Arc<Cached>>,
}

impl MatchCache {
    pub fn new(capacity: usize) -> MatchCache {
        MatchCache {
            capacity: capacity.max(2),
            inner: Mutex::new(Generations::default()),
        }
    }

    pub fn get(&self, id: MatchId) -> Option<Arc<Cached>> {
        let mut g = self.lock();
        if let Some(hit) = g.young.get(&id) {
            return Some(hit.clone());
        }
        let hit = g.old.remove(&id)?;
        self.insert(&mut g, id, hit.clone());
        Some(hit)
    }

    /// Keeps `entry` unless a newer version of the match is already cached.
    pub fn put(&self, id: MatchId, entry: Cached) {
        let mut g = self.lock();
        let newer = g
            .young
            .get(&id)
            .or_else(|| g.old.get(&id))
            .is_some_and(|c| c.state.version() > entry.state.version());
        if !newer {
            g.old.remove(&id);
            self.insert(&mut g, id, Arc::new(entry));
        }
    }

    /// Forgets a match (its entry was found stale).
    pub fn forget(&self, id: MatchId) {
        let mut g = self.lock();
        g.young.remove(&id);
        g.old.remove(&id);
    }

    /// Forgets every match that names `player` (their account closed: the name must not be
    /// shown again, from this instance's memory either).
    pub fn forget_player(&self, player: PlayerId) {
        let mut g = self.lock();
        g.young.retain(|_, c| !c.names.contains_key(&player));
        g.old.retain(|_, c| !c.names.contains_key(&player));
    }

    /// Forgets everything (a listener that may have missed a closing reconnected).
    pub fn clear(&self) {
        let mut g = self.lock();
        g.young.clear();
        g.old.clear();
    }

    /// Entries held now (at most the capacity).
    pub fn len(&self) -> usize {
        let g = self.lock();
        g.young.len() + g.old.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn insert(&self, g: &mut Generations, id: MatchId, entry: Arc<Cached>) {
        if g.young.len() >= self.capacity / 2 {
            g.old = std::mem::take(&mut g.young);
        }
        g.young.insert(id, entry);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Generations> {
        // A panic while holding the lock leaves plain maps behind: still usable.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    fn id(n: u128) -> MatchId {
        MatchId::from_uuid(Uuid::from_u128(n))
    }

    fn entry() -> Cached {
        Cached {
            state: MatchState::default(),
            names: Arc::new(Names::new()),
            head: None,
            row: None,
        }
    }

    #[test]
    fn holds_at_most_its_capacity_and_keeps_recently_used_entries() {
        let cache = MatchCache::new(10);
        for n in 0..100 {
            cache.put(id(n), entry());
            // Entry 0 is used all along: it survives every turnover.
            assert!(cache.get(id(0)).is_some(), "after {n}");
            assert!(cache.len() <= 10);
        }
        assert!(cache.get(id(1)).is_none());
        assert!(cache.get(id(99)).is_some());
        cache.forget(id(99));
        assert!(cache.get(id(99)).is_none());
    }
}
