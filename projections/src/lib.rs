//! The read models of discs, projected from the event log: Glicko-2 ratings, match history,
//! leaderboards and the queue, the opening explorer, the tournaments' standings, with the runner that keeps them current, rebuilds that
//! replace them without a gap, and the admins' rating audits.
//!
//! # Exactly once
//! A projection reads the log in commit-safe `(tx, position)` order ([`eventlog`]), applies a
//! batch to its tables and moves its checkpoint in **one transaction**; the checkpoint row is
//! locked for the batch and compared with where the batch started, so a crash (or a second
//! instance) can never apply an event twice or skip one. See [`runner`].
//!
//! # Determinism
//! Every value comes from the events (their payloads and timestamps), never from the clock at
//! processing time, so a rebuild from position 0 ends byte-identical to the live tables.

use std::fmt;
use std::str::FromStr;

pub mod audit;
pub mod explorer;
pub mod facts;
pub mod fold;
pub mod ledger;
pub mod queries;
pub mod rebuild;
pub mod runner;
mod standings;
mod tables;
pub mod tournaments;

pub use runner::{Batch, Hook, Runner, Stage};

/// Something went wrong while reading the log or writing a read model.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Log(#[from] eventlog::Error),
    #[error("database error: {0}")]
    Db(#[from] tokio_postgres::Error),
    #[error("no database connection: {0}")]
    Pool(#[from] deadpool_postgres::PoolError),
    /// A stored event this build cannot read.
    #[error("event at position {position}: {reason}")]
    Event { position: i64, reason: String },
    /// The checkpoint did not reach a committed event within [`runner::SYNC_PATIENCE`].
    #[error("projection {projection} did not reach {target:?}")]
    Stalled {
        projection: Projection,
        target: eventlog::Checkpoint,
    },
    /// A read model row this build cannot read.
    #[error("read model {table}: {reason}")]
    Model { table: &'static str, reason: String },
    /// A test hook stopped the batch on purpose.
    #[error("stopped by a hook at {0:?}")]
    Hooked(Stage),
}

/// The projections, by name (`ratings`, `history`, `leaderboards`, `queue`, `explorer`,
/// `tournaments`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Projection {
    Ratings,
    History,
    Leaderboards,
    Queue,
    Explorer,
    Tournaments,
}

impl Projection {
    pub const ALL: [Projection; 6] = [
        Projection::Ratings,
        Projection::History,
        Projection::Leaderboards,
        Projection::Queue,
        Projection::Explorer,
        Projection::Tournaments,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Projection::Ratings => "ratings",
            Projection::History => "history",
            Projection::Leaderboards => "leaderboards",
            Projection::Queue => "queue",
            Projection::Explorer => "explorer",
            Projection::Tournaments => "tournaments",
        }
    }

    /// Its tables, in the order a rebuild compares them.
    pub fn tables(self) -> &'static [&'static str] {
        match self {
            Projection::Ratings => &["ratings", "rating_points"],
            Projection::History => &["match_history"],
            Projection::Leaderboards => &["leaderboard", "leaderboard_bots"],
            Projection::Queue => &["queue_tickets", "queue_pairs"],
            Projection::Explorer => &["explorer_moves", "explorer_games", "explorer_ratings"],
            Projection::Tournaments => {
                &["tournaments", "tournament_standings", "tournament_pairings"]
            }
        }
    }

    /// The event types it reads; the others are stepped over.
    pub fn event_types(self) -> &'static [&'static str] {
        match self {
            Projection::Ratings | Projection::History | Projection::Explorer => {
                &["match_created", "match_ended"]
            }
            Projection::Leaderboards => &[
                "match_created",
                "match_ended",
                "player_declared_bot",
                "player_declared_human",
            ],
            Projection::Queue => &["ticket_opened", "ticket_cancelled", "ticket_matched"],
            Projection::Tournaments => &domain::tournaments::TournamentEvent::TYPES,
        }
    }

    /// A key for this projection's advisory lock (one active runner across instances).
    pub fn lock_key(self) -> i64 {
        0x6469_7363_7072_6f00 + self as i64
    }
}

impl fmt::Display for Projection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Projection {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Projection::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                format!("unknown projection `{s}` (ratings, history, leaderboards, queue, explorer, tournaments)")
            })
    }
}
