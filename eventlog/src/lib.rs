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
//!   the common case, one existing stream whose head hash the caller holds, in one plain
//!   statement with the chain computed here. Either way a conflict fails only its command.
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
//!   [`EventLog::verify_all`] recomputes every link from the stored columns.
//! * **Payload versions**: `schema_version` is stored with each event and read back as written;
//!   the domain's `decode` functions (`MatchEvent::decode`, `TicketEvent::decode`) lift old
//!   payloads on read.
//!
//! The SQL lives next to the code that runs it; migrations run under an advisory lock
//! ([`migrate`]), so instances starting together do not race.

#![warn(missing_docs)]

mod append;
pub mod canonical;
pub mod cluster;
mod error;
mod heads;
mod read;
#[cfg(feature = "testing")]
pub mod testing;
mod verify;

use std::str::FromStr;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Object, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;

pub use append::{AppendOutcome, NewEvent, StreamAppend};
pub use canonical::{Hash, event_id};
pub use deadpool_postgres::Pool;
pub use error::{AppendError, Error, db_outage, pool_outage};
pub use heads::{ALONGSIDE_FIRST_PARAM, Alongside, HeadAppend};
pub use read::{
    Checkpoint, RecordedEvent, count_of_type, first_events, last_of_types, last_position,
};
pub use verify::{BrokenLink, ChainReport, LinkProblem};

/// How long a caller waits for a pooled connection (or for a new one to open) before giving
/// up: a dead or saturated database must surface as an error, not a hang.
pub const POOL_TIMEOUT: Duration = Duration::from_secs(5);

/// The session advisory lock key held while migrations run ("discsmig" in ASCII).
pub const MIGRATION_LOCK_KEY: i64 = 0x6469_7363_736d_6967;

mod embedded {
    refinery::embed_migrations!("../migrations");
}

/// Opens a pool of at most `max_size` connections to `url` and checks that one connection
/// works, so a wrong URL or a stopped server fails at startup rather than at the first request.
pub async fn connect(url: &str, max_size: usize) -> Result<Pool, Error> {
    let pool = pool(settings(url)?, max_size)?;
    drop(pool.get().await?);
    Ok(pool)
}

/// The connection settings every pool of discs uses for `url`.
pub fn settings(url: &str) -> Result<tokio_postgres::Config, Error> {
    let mut config = tokio_postgres::Config::from_str(url).map_err(Error::Config)?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(POOL_TIMEOUT);
    }
    if config.get_application_name().is_none() {
        config.application_name("discs-eventlog");
    }
    // Every statement here is a keyed lookup or a batch of them, prepared once per connection.
    // PostgreSQL plans a prepared statement for its parameters' values until a generic plan
    // costs no more; for statements taking arrays or a limit it never does, so it would plan
    // them at every call: the log's tail read and the group commit's statements cost several
    // times their execution in planning. Their generic plans are the same index scans.
    let options = match config.get_options() {
        Some(o) if o.contains("plan_cache_mode") => o.to_owned(),
        Some(o) => format!("{o} -c plan_cache_mode=force_generic_plan"),
        None => "-c plan_cache_mode=force_generic_plan".to_owned(),
    };
    config.options(&options);
    Ok(config)
}

/// A pool of at most `max_size` connections with `settings` ([`settings`]); it opens none
/// until asked. Each connection's I/O runs as a task on the runtime (the thread, for a
/// single-threaded one) where it was opened.
pub fn pool(settings: tokio_postgres::Config, max_size: usize) -> Result<Pool, Error> {
    let manager = Manager::from_config(
        settings,
        NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    Ok(Pool::builder(manager)
        .max_size(max_size.max(1))
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(POOL_TIMEOUT))
        .create_timeout(Some(POOL_TIMEOUT))
        .recycle_timeout(Some(POOL_TIMEOUT))
        .build()?)
}

/// Opens the application's database: finds a server that answers (or starts a private cluster
/// in `data_dir`, see [`cluster`]), creates the database named in `url` if it is missing, and
/// connects a pool of `max_size`.
pub async fn open(url: &str, data_dir: &std::path::Path, max_size: usize) -> Result<Pool, Error> {
    connect(&locate(url, data_dir).await?, max_size).await
}

/// The URL of the application's database, ready to connect to: a server that answers (or a
/// private cluster started in `data_dir`, see [`cluster`]) with the database named in `url`.
pub async fn locate(url: &str, data_dir: &std::path::Path) -> Result<String, Error> {
    let (configured, dir) = (url.to_owned(), data_dir.to_owned());
    let server = tokio::task::spawn_blocking(move || cluster::ensure_server(&configured, &dir))
        .await
        .map_err(|e| Error::Corrupt(format!("the server check panicked: {e}")))??;
    let url = server.url().to_owned();
    create_database_if_missing(&url).await?;
    Ok(url)
}

/// Creates the database a URL names, on its server, unless it exists (several processes may
/// race here: the loser's "already exists" is success).
pub async fn create_database_if_missing(url: &str) -> Result<(), Error> {
    let config = tokio_postgres::Config::from_str(url).map_err(Error::Config)?;
    let Some(name) = config.get_dbname().map(str::to_owned) else {
        return Ok(());
    };
    if name == "postgres" {
        return Ok(());
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(Error::Corrupt(format!(
            "database name `{name}` must be letters, digits, `_` or `-` to be created"
        )));
    }
    let mut admin = config.clone();
    admin.dbname("postgres");
    let (client, connection) = admin.connect(NoTls).await?;
    let task = tokio::spawn(connection);
    let exists = client
        .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&name])
        .await?
        .is_some();
    if !exists {
        match client
            .batch_execute(&format!("CREATE DATABASE \"{name}\""))
            .await
        {
            Ok(()) => {}
            Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::DUPLICATE_DATABASE) => {}
            Err(e) => return Err(e.into()),
        }
    }
    drop(client);
    let _ = task.await;
    Ok(())
}

/// How many embedded migrations the database has not applied yet (`/readyz`).
pub async fn migrations_pending(pool: &Pool) -> Result<usize, Error> {
    let client = pool.get().await?;
    let applied: Vec<i32> = match client
        .query("SELECT version FROM refinery_schema_history", &[])
        .await
    {
        Ok(rows) => rows.iter().map(|r| r.get(0)).collect(),
        Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE) => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    Ok(embedded::migrations::runner()
        .get_migrations()
        .iter()
        .filter(|m| !applied.contains(&m.version()))
        .count())
}

/// What [`migrate`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrationReport {
    /// The migrations applied by this call (`V1__event_log`, ...); empty when the schema was
    /// already current.
    pub applied: Vec<String>,
}

/// Brings the schema up to date. Holds a session advisory lock ([`MIGRATION_LOCK_KEY`]) on
/// the migrating connection for the whole run, because refinery takes none: instances that
/// start together queue here and the later ones find nothing to do.
///
/// The connection is taken out of the pool and closed afterwards, so the lock can never leak
/// into a pooled session (not even if this future is dropped halfway).
pub async fn migrate(pool: &Pool) -> Result<MigrationReport, Error> {
    let mut client = Object::take(pool.get().await?);
    client
        .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK_KEY])
        .await?;
    let report = embedded::migrations::runner().run_async(&mut *client).await;
    // Closing the session would release the lock too; unlocking first keeps it short.
    let unlocked = client
        .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK_KEY])
        .await;
    let report = report?;
    unlocked?;
    Ok(MigrationReport {
        applied: report
            .applied_migrations()
            .iter()
            .map(|m| m.to_string())
            .collect(),
    })
}

/// The event log: cheap to clone (it shares the pool), safe to use from many tasks.
#[derive(Clone, Debug)]
pub struct EventLog {
    pool: Pool,
}

impl EventLog {
    /// Uses `pool` (from [`connect`], migrated with [`migrate`]).
    pub fn new(pool: Pool) -> Self {
        EventLog { pool }
    }

    /// The pool, for callers that keep other tables in the same database.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }
}
