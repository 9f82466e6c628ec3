//! The event log's errors: storage failures, and the ways an append can be refused.

use database::{chain, db_outage, pool_outage};

/// Why the event log could not do what was asked (other than refusing an append; see
/// [`AppendError`]). Callers usually treat every case as "unexpected": it means the database
/// is unreachable, misconfigured, or holds rows this code does not understand.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No connection could be had from the pool in time (server down, or pool exhausted).
    #[error("no database connection: {}", chain(.0))]
    Pool(#[from] deadpool_postgres::PoolError),
    /// A statement failed. The display includes PostgreSQL's own message (the bare
    /// `tokio_postgres::Error` display says only "db error").
    #[error("database error: {}", chain(.0))]
    Db(#[from] tokio_postgres::Error),
    /// A stored row breaks an invariant this crate relies on (for example a hash that is not
    /// 32 bytes): someone wrote to the table behind the log's back.
    #[error("corrupt event log row: {0}")]
    Corrupt(String),
    /// A read saw commits that no synchronous standby confirmed in time (WAL position given):
    /// they might not survive a failover, so they are not handed out. The role needs to read
    /// `pg_stat_replication` (superuser or `pg_read_all_stats`).
    #[error("the synchronous standby has not confirmed WAL up to {0}")]
    NotReplicated(String),
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

impl Error {
    /// Whether this is the database being out of reach (down, restarting, refusing
    /// connections, or a connection lost mid-statement) rather than a fault of the request or
    /// of the data: the same request may well succeed once it is back.
    pub fn is_outage(&self) -> bool {
        match self {
            Error::Db(e) => db_outage(e),
            Error::Pool(e) => pool_outage(e),
            Error::NotReplicated(_) => true,
            _ => false,
        }
    }
}

impl AppendError {
    /// Whether the append failed because the database is out of reach ([`Error::is_outage`]);
    /// its outcome may then be unknown, and a retry of the same command is safe.
    pub fn is_outage(&self) -> bool {
        matches!(self, AppendError::Store(e) if e.is_outage())
    }
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
