//! The event log's errors: storage failures, and the ways an append can be refused.

use std::error::Error as StdError;
use std::fmt::Write as _;

/// Why the event log could not do what was asked (other than refusing an append; see
/// [`AppendError`]). Callers usually treat every case as "unexpected": it means the database
/// is unreachable, misconfigured, or holds rows this code does not understand.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The database URL could not be parsed.
    #[error("invalid database url: {}", chain(.0))]
    Config(#[source] tokio_postgres::Error),
    /// The connection pool could not be built.
    #[error("cannot build the connection pool: {0}")]
    Build(#[from] deadpool_postgres::BuildError),
    /// No connection could be had from the pool in time (server down, or pool exhausted).
    #[error("no database connection: {}", chain(.0))]
    Pool(#[from] deadpool_postgres::PoolError),
    /// A statement failed. The display includes PostgreSQL's own message (the bare
    /// `tokio_postgres::Error` display says only "db error").
    #[error("database error: {}", chain(.0))]
    Db(#[from] tokio_postgres::Error),
    /// A migration failed.
    #[error("migration failed: {}", chain(.0))]
    Migration(#[from] refinery::Error),
    /// No PostgreSQL server could be found or started.
    #[error(transparent)]
    Cluster(#[from] crate::cluster::ClusterError),
    /// A stored row breaks an invariant this crate relies on (for example a hash that is not
    /// 32 bytes): someone wrote to the table behind the log's back.
    #[error("corrupt event log row: {0}")]
    Corrupt(String),
}

/// Why an append wrote nothing. `Conflict` is the expected outcome of a lost race and maps to
/// a 409 upstream; the input cases are programming errors of the caller; `Store` is unexpected.
#[derive(Debug, thiserror::Error)]
#[allow(missing_docs)] // Conflict's fields say it all: which stream, which version, which one it is at
pub enum AppendError {
    /// The stream is not at the version the command was decided against; nothing was written.
    #[error("version conflict on stream {stream}: expected {expected}, actual {actual}")]
    Conflict {
        stream: String,
        expected: i64,
        actual: i64,
    },
    /// An append with no events (or a stream append with no events) has nothing to record.
    #[error("nothing to append")]
    Empty,
    /// One command named the same stream twice; merge the events into one stream append.
    #[error("stream {0} appears twice in one command")]
    DuplicateStream(String),
    /// Expected versions start at 0 (a new stream).
    #[error("invalid expected version {expected} for stream {stream}")]
    InvalidExpectedVersion { stream: String, expected: i64 },
    /// The input cannot be stored faithfully (a NUL character, which PostgreSQL text and jsonb
    /// reject; an empty stream id; a schema version below 1; ...).
    #[error("invalid event: {0}")]
    Invalid(String),
    /// In a batch: a twin of this command (same command id) committed elsewhere while the
    /// batch ran, so this command was undone; appending it again answers "already applied".
    #[error("a twin of this command committed concurrently; append it again")]
    Retry,
    /// The database failed or returned something unexpected.
    #[error(transparent)]
    Store(#[from] Error),
}

impl From<tokio_postgres::Error> for AppendError {
    fn from(e: tokio_postgres::Error) -> Self {
        AppendError::Store(Error::Db(e))
    }
}

impl From<deadpool_postgres::PoolError> for AppendError {
    fn from(e: deadpool_postgres::PoolError) -> Self {
        AppendError::Store(Error::Pool(e))
    }
}

/// Formats an error followed by its sources, `a: b: c`, skipping a source whose text the
/// previous message already contains (deadpool and refinery repeat their inner error).
pub(crate) fn chain(e: &dyn StdError) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            let _ = write!(out, ": {text}");
        }
        source = s.source();
    }
    out
}
