//! The database of discs: the connection settings and pools every part uses, finding a
//! PostgreSQL server or starting a private cluster where none answers ([`cluster`]), creating
//! the application's database, running every crate's migrations (`migrations/`, embedded)
//! under an advisory lock, and telling an outage from any other failure.

#![warn(missing_docs)]

pub mod cluster;
mod error;
#[cfg(feature = "testing")]
pub mod testing;

use std::str::FromStr;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Object, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;

pub use deadpool_postgres::Pool;
pub use error::{Error, chain, db_outage, pool_outage};

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
        config.application_name("discs");
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
        .map_err(|e| Error::Setup(format!("the server check panicked: {e}")))??;
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
        return Err(Error::Setup(format!(
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
            // Lost the race: "already exists" if the other creation had committed, a unique
            // violation on the catalogue if it was still in flight.
            Err(e)
                if e.code() == Some(&tokio_postgres::error::SqlState::DUPLICATE_DATABASE)
                    || e.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION) => {}
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

/// [`migrate`] when a migration is pending, else nothing (no lock, no statement that needs the
/// owner's rights): what a server does at start, so that one connecting as the instances' role
/// ([`grant_instance_role`]) starts once the owner has migrated (`discs migrate`).
pub async fn migrate_pending(pool: &Pool) -> Result<MigrationReport, Error> {
    if migrations_pending(pool).await? == 0 {
        return Ok(MigrationReport {
            applied: Vec::new(),
        });
    }
    migrate(pool).await
}

/// What the instances' role is granted: `instance_role.sql`, `{role}` its quoted name.
const INSTANCE_ROLE: &str = include_str!("instance_role.sql");

/// Makes `role` the instances' role on the database `pool` reaches: created (`LOGIN`) when
/// missing, its password set when one is given, and granted what `instance_role.sql` says (every
/// table read and written, the event log only read and appended to). Run as the database's owner,
/// after [`migrate`] (again after every migration: it covers new tables); idempotent.
pub async fn grant_instance_role(
    pool: &Pool,
    role: &str,
    password: Option<&str>,
) -> Result<(), Error> {
    let plain = role.len() <= 63
        && role.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && role
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !plain {
        return Err(Error::Setup(format!(
            "the instances' role `{role}` must be lower-case letters, digits or `_` (at most 63, \
             not starting with a digit)"
        )));
    }
    let client = pool.get().await?;
    let exists = client
        .query_opt("SELECT 1 FROM pg_roles WHERE rolname = $1", &[&role])
        .await?
        .is_some();
    if !exists {
        match client
            .batch_execute(&format!("CREATE ROLE \"{role}\" LOGIN"))
            .await
        {
            Ok(()) => {}
            // Another process created it meanwhile.
            Err(e)
                if e.code() == Some(&tokio_postgres::error::SqlState::DUPLICATE_OBJECT)
                    || e.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION) => {}
            Err(e) => return Err(e.into()),
        }
    }
    if let Some(password) = password {
        // A utility statement takes no parameters: the server quotes the literal.
        let statement: String = client
            .query_one(
                "SELECT format('ALTER ROLE %I PASSWORD %L', $1::text, $2::text)",
                &[&role, &password],
            )
            .await?
            .get(0);
        client.batch_execute(&statement).await?;
    }
    client
        .batch_execute(&INSTANCE_ROLE.replace("{role}", &format!("\"{role}\"")))
        .await?;
    Ok(())
}

/// A digest of the embedded migrations (names, versions, checksums): a database migrated by
/// another set has another fingerprint (the test harness names its template by it).
pub fn migrations_fingerprint() -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    for m in embedded::migrations::runner().get_migrations() {
        hasher.update(m.name().as_bytes());
        hasher.update(m.version().to_le_bytes());
        hasher.update(m.checksum().to_le_bytes());
    }
    let digest = hasher.finalize();
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}
