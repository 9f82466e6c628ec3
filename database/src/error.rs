//! The database's errors: a URL, a pool, a statement, a migration or a server that failed,
//! and which of them are the database being out of reach.

use std::error::Error as StdError;
use std::fmt::Write as _;

/// Why the database could not be reached, set up or migrated.
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
    /// A statement failed.
    #[error("database error: {}", chain(.0))]
    Db(#[from] tokio_postgres::Error),
    /// A migration failed.
    #[error("migration failed: {}", chain(.0))]
    Migration(#[from] refinery::Error),
    /// No PostgreSQL server could be found or started.
    #[error(transparent)]
    Cluster(#[from] crate::cluster::ClusterError),
    /// The setting up could not go on (a database name it will not create, a check that died).
    #[error("{0}")]
    Setup(String),
}

impl Error {
    /// Whether this is the database being out of reach rather than a fault of the setup: the
    /// same call may well succeed once it is back.
    pub fn is_outage(&self) -> bool {
        match self {
            Error::Db(e) => db_outage(e),
            Error::Pool(e) => pool_outage(e),
            _ => false,
        }
    }
}

/// Whether a statement failed because the database is out of reach: the connection is closed
/// or broke (an I/O error, a timeout), the server refused or dropped it (SQLSTATE class 08), it
/// is shutting down or starting (57P01–57P03), or it is no longer the primary (25006, a write on
/// a node demoted under a failover: the next connection finds the new primary).
pub fn db_outage(e: &tokio_postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    if let Some(code) = e.code() {
        let code = code.code();
        return code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03" | "25006");
    }
    e.source().is_some_and(|s| s.is::<std::io::Error>()) || e.to_string().contains("timeout")
}

/// Whether no connection could be had because the database is out of reach (not because of
/// a misconfigured pool).
pub fn pool_outage(e: &deadpool_postgres::PoolError) -> bool {
    use deadpool_postgres::PoolError;
    match e {
        PoolError::Timeout(_) | PoolError::Closed => true,
        PoolError::Backend(e) => db_outage(e),
        _ => false,
    }
}

/// Formats an error followed by its sources, `a: b: c`, skipping a source whose text the
/// previous message already contains (deadpool and refinery repeat their inner error).
pub fn chain(e: &dyn StdError) -> String {
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
