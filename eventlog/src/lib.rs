//! The PostgreSQL event log of discs: append with expected versions and idempotency, read a
//! stream, read everything in commit-safe order, and audit the hash chains.
//!
//! # Design
//!
//! * **One table of events** (`migrations/V1__event_log.sql`), each in a stream with a
//!   gapless `version`, a global `position`, and `tx`, the id of the writing transaction.
//! * **Appends are one round trip**: the `eventlog_append` SQL function checks idempotency,
//!   compare-and-sets each stream's row in `streams` (version and last hash, locked in
//!   stream-id order), computes the hash chain and inserts the events, all in the statement's
//!   own short transaction. A stream not at its expected version raises; the statement rolls
//!   back whole, so a multi-stream append is all or nothing. `unique (stream_id, version)`
//!   is the backstop.
//! * **Group commit**: [`EventLog::append_batch_on`] appends many independent commands in the
//!   caller's transaction (`eventlog_append_batch`: the heads locked in one statement, each
//!   command checked in memory, the writes set-based), and [`EventLog::append_on_heads`] does
//!   the common case, one existing stream whose head hash the caller holds, in one set-based
//!   statement with the chain computed here ([`append_on_heads_with!`]'s `WITH` clauses; a
//!   caller adds its own clauses to write its rows in the same statement, with a
//!   [`HeadBatch`]'s typed arguments). Either way a conflict fails only its command.
//! * **Idempotency**: event ids are UUIDv5 of (command id, stream, index). A retried command
//!   finds its ids stored and gets back what it wrote then, as stored
//!   ([`AppendOutcome::AlreadyApplied`]). When two copies of one command race, the loser's
//!   conflict is checked against the winner's ids, so it too answers `AlreadyApplied`; a
//!   duplicate is never swallowed without reading it back.
//! * **Commit-safe global order**: positions are handed out at insert time but become visible
//!   at commit, so a reader following `position` alone can step over a late commit. Readers
//!   follow `(tx, position)` instead and only look below the current snapshot's `xmin`, the
//!   oldest transaction still running: everything below it has committed or rolled back for
//!   good. Horizon and rows come from one statement, hence one snapshot. Rolled-back appends
//!   leave holes in `position` that nobody waits for; a long-running *writing* transaction
//!   anywhere in the cluster makes readers wait (never skip). A logical dump and restore
//!   renumbers transactions: restore physically, or add an epoch column in front of the order.
//! * **Tamper evidence**: `hash = sha256(prev_hash || canonical bytes)` per stream
//!   ([`canonical`] documents the bytes), and the `streams` row holds each chain's tail.
//!   [`EventLog::verify_all`] recomputes every link from the stored columns. A Merkle tree over
//!   the whole log in commit order ([`merkle`], stored as tiles by [`tree`]) gives the roots
//!   that the core signs and publishes outside the database, and inclusion and consistency
//!   proofs against them: a writer who rewrites events and recomputes every chain is still
//!   caught.
//! * **Payload versions**: `schema_version` is stored with each event and read back as written;
//!   the domain's `decode` functions (`MatchEvent::decode`, `TicketEvent::decode`) lift old
//!   payloads on read.
//! * **Only what survives a failover is read**: with a synchronous standby, PostgreSQL shows a
//!   commit on the primary before the standby has it when the committing backend's wait is cut
//!   short (its postmaster killed, the query cancelled). Every read here (a stream, the whole
//!   log, the last checkpoint) is therefore followed, in the same round trip, by the primary's
//!   WAL flush position, and returns only once a synchronous standby has flushed that far: what
//!   a reader saw, a promoted standby still holds (see `read::confirm_replicated`).
//!
//! The SQL lives next to the code that runs it. Connecting, the migrations (of every crate) and
//! the private PostgreSQL cluster are the `database` crate's.

#![warn(missing_docs)]

mod append;
pub mod canonical;
mod error;
mod heads;
mod identity;
pub mod merkle;
mod read;
pub mod tree;
mod verify;

pub use append::{AppendOutcome, NewEvent, StreamAppend};
pub use canonical::{Hash, event_id};
pub use deadpool_postgres::Pool;
pub use error::{AppendError, Error};
pub use heads::{HeadAppend, HeadArguments, HeadBatch, WRITERS_OPTIONS};
pub use read::{
    Checkpoint, RecordedEvent, count_of_type, first_events, first_stamped_values, first_values,
    last_of_types, last_position, stream_events,
};
pub use tree::{Leaf, TreeHead};
pub use verify::{BrokenLink, ChainReport, LinkProblem};

/// The event log: cheap to clone (it shares the pool), safe to use from many tasks.
#[derive(Clone, Debug)]
pub struct EventLog {
    pool: Pool,
    /// How long a read waits for the synchronous standby to confirm what it saw.
    replication_wait: std::time::Duration,
}

impl EventLog {
    /// Uses `pool` (from `database::connect`, migrated with `database::migrate`).
    pub fn new(pool: Pool) -> Self {
        EventLog {
            pool,
            replication_wait: std::time::Duration::from_secs(10),
        }
    }

    /// How long a read waits for the synchronous standby to confirm the commits it saw before
    /// failing with [`Error::NotReplicated`] (10 s by default: a standby that does not answer
    /// for that long is being dropped from `synchronous_standby_names` by Patroni, or is
    /// failing over).
    pub fn with_replication_wait(mut self, wait: std::time::Duration) -> Self {
        self.replication_wait = wait;
        self
    }

    /// The pool, for callers that keep other tables in the same database.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }
}
