//! Ranked play: queue tickets (open, cancel, read: [`tickets`]) and the matchmaking waves that
//! pair them ([`waves`]).
//!
//! A ticket is a stream of its own. The write side keeps one row per player in `queue_slots`,
//! changed in the same transaction as the ticket's events, which is what makes "one open ticket
//! per player, none for real-time play during a live ranked match" hold under any race; it also
//! holds what a wave needs of the open ticket (pool, rating, opening time). A pool is a game at
//! a turn limit, or at days per move: a correspondence pool, rated on the game's correspondence
//! ladder, whose games seat nobody. A wave reads a pool's open tickets there
//! (the write side: the queue projection trails the log), pairs them with the pure
//! [`domain::matchmaking::pair`], and writes its pairings up to a hundred to a transaction, each
//! pairing — the match's creation and both `ticket_matched` events, each ticket expected at
//! version 1 — one command of the batch append: a ticket cancelled meanwhile makes that pairing
//! fail whole and alone, and no ticket can be matched twice, also with several instances
//! running waves at once.

use std::ops::Deref;
use std::sync::Arc;

use deadpool_postgres::Pool;
use tokio::sync::Notify;

use crate::live::LivePath;

pub mod tickets;
pub mod waves;

pub use tickets::*;
pub use waves::*;

/// What ranked play uses: the live path (matches are created there), the waves' own
/// connections, their schedule and their wake-up. Cheap to clone.
#[derive(Clone)]
pub struct Ranked {
    pub path: LivePath,
    /// Wakes this instance's wave loop when a ticket opens here (the size trigger).
    pub waves: Arc<Notify>,
    /// When the wave loop runs.
    pub wave_schedule: WaveSchedule,
    /// The connections the waves read and write on, apart from the requests' pool.
    pub wave_pool: Pool,
}

impl Deref for Ranked {
    type Target = LivePath;

    fn deref(&self) -> &LivePath {
        &self.path
    }
}
