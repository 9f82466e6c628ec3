//! Test databases against the real PostgreSQL: each test gets its own database, cloned from a
//! template migrated once per migration set, and dropped when the test ends.
//!
//! The server is `DATABASE_URL` (an admin connection) or `postgres://postgres@127.0.0.1:5432/postgres`.

use std::time::{SystemTime, UNIX_EPOCH};

use eventlog::{EventLog, NewEvent, Pool, StreamAppend};
use serde_json::Value;
use sha2::{Digest, Sha256};
use time::OffsetDateTime;
use tokio::sync::OnceCell;
use tokio_postgres::{Client, NoTls};
use uuid::Uuid;

/// Serialises template creation between test processes (ASCII "discstpl").
const TEMPLATE_LOCK_KEY: i64 = 0x6469_7363_7374_706c;

/// Test databases older than this are left-overs of killed runs, dropped at the next start.
const STALE_AFTER_SECS: u64 = 3600;

static TEMPLATE: OnceCell<String> = OnceCell::const_new();

/// The admin connection string.
pub fn admin_url() -> String {
    std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned())
}

/// `url` with its database name replaced by `db`.
pub fn url_for(url: &str, db: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let after_scheme = base.find("://").map(|i| i + 3).unwrap_or(0);
    let host_end = base[after_scheme..]
        .find('/')
        .map(|i| i + after_scheme)
        .unwrap_or(base.len());
    let mut out = format!("{}/{db}", &base[..host_end]);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    out
}

/// A plain client on the admin database; its connection task runs on the current runtime.
pub async fn admin() -> Client {
    raw_client(&admin_url()).await
}

/// A plain (unpooled) client on `url`.
pub async fn raw_client(url: &str) -> Client {
    let (client, connection) = tokio_postgres::connect(url, NoTls)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to {url}: {e:?}"));
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// A hash of the migration files, so that a changed migration gets a new template.
fn migrations_fingerprint() -> String {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("migrations folder")
        .map(|e| e.expect("dir entry").path())
        .collect();
    files.sort();
    let mut hasher = Sha256::new();
    for f in files {
        hasher.update(f.file_name().expect("file name").as_encoded_bytes());
        hasher.update([0]);
        hasher.update(std::fs::read(&f).expect("migration file"));
        hasher.update([0]);
    }
    let digest = hasher.finalize();
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// The migrated template's name, creating it on first use. Guarded by an advisory lock
/// against other test processes; built under a temporary name and renamed, so a crash never
/// leaves a half-migrated template behind.
async fn template() -> &'static str {
    TEMPLATE
        .get_or_init(|| async {
            let name = format!("discs_template_{}", migrations_fingerprint());
            let admin = admin().await;
            admin
                .execute("SELECT pg_advisory_lock($1)", &[&TEMPLATE_LOCK_KEY])
                .await
                .expect("template lock");
            drop_stale_test_databases(&admin).await;
            let exists = admin
                .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&name])
                .await
                .expect("look up template")
                .is_some();
            if !exists {
                let building = format!("{name}_building");
                // One statement per call: a multi-statement string runs as one transaction,
                // where CREATE/DROP DATABASE are not allowed.
                for sql in [
                    format!("DROP DATABASE IF EXISTS \"{building}\" WITH (FORCE)"),
                    format!("CREATE DATABASE \"{building}\""),
                ] {
                    admin.batch_execute(&sql).await.expect("create template");
                }
                {
                    let pool = eventlog::connect(&url_for(&admin_url(), &building), 1)
                        .await
                        .expect("connect to template");
                    eventlog::migrate(&pool).await.expect("migrate template");
                }
                // RENAME waits (up to 5 s) for the migrating session to finish closing.
                for sql in [
                    format!("ALTER DATABASE \"{building}\" RENAME TO \"{name}\""),
                    format!(
                        "ALTER DATABASE \"{name}\" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false"
                    ),
                ] {
                    admin.batch_execute(&sql).await.expect("publish template");
                }
            }
            admin
                .execute("SELECT pg_advisory_unlock($1)", &[&TEMPLATE_LOCK_KEY])
                .await
                .expect("template unlock");
            name
        })
        .await
}

/// Drops `discs_test_<unix secs>_...` databases left by runs that were killed.
async fn drop_stale_test_databases(admin: &Client) {
    let rows = admin
        .query(
            "SELECT datname FROM pg_database WHERE datname LIKE 'discs\\_test\\_%'",
            &[],
        )
        .await
        .expect("list test databases");
    let now = now_secs();
    for row in rows {
        let name: String = row.get(0);
        let created = name
            .split('_')
            .nth(2)
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(0);
        if now.saturating_sub(created) > STALE_AFTER_SECS {
            let _ = admin
                .batch_execute(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
                .await;
        }
    }
}

/// A database of its own for one test; dropped (with its connections) when this is dropped.
pub struct TestDb {
    pub name: String,
    pub url: String,
    pub pool: Pool,
    pub log: EventLog,
}

impl TestDb {
    /// A migrated database, cloned from the template; a pool of `max_size` connections.
    pub async fn migrated(max_size: usize) -> TestDb {
        let template = template().await;
        Self::create(&format!("TEMPLATE \"{template}\""), max_size).await
    }

    /// An empty database, not migrated.
    pub async fn empty(max_size: usize) -> TestDb {
        Self::create("TEMPLATE template0", max_size).await
    }

    async fn create(clause: &str, max_size: usize) -> TestDb {
        let name = format!(
            "discs_test_{}_{}",
            now_secs(),
            &Uuid::new_v4().simple().to_string()[..12]
        );
        admin()
            .await
            .batch_execute(&format!("CREATE DATABASE \"{name}\" {clause}"))
            .await
            .unwrap_or_else(|e| panic!("create {name}: {e:?}"));
        let url = url_for(&admin_url(), &name);
        let pool = eventlog::connect(&url, max_size)
            .await
            .unwrap_or_else(|e| panic!("connect {name}: {e}"));
        let log = EventLog::new(pool.clone());
        TestDb {
            name,
            url,
            pool,
            log,
        }
    }

    /// A plain client on this database, outside the pool.
    pub async fn client(&self) -> Client {
        raw_client(&self.url).await
    }

    /// Opens `n` pooled connections at once and returns them, so that the next `n`
    /// concurrent calls each find a connection ready and none has to wait for another.
    pub async fn warm_up(&self, n: usize) {
        let mut held = Vec::with_capacity(n);
        for _ in 0..n {
            held.push(self.pool.get().await.expect("pooled connection"));
        }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        self.pool.close();
        let name = self.name.clone();
        // Drop runs inside the test's runtime, which cannot block on itself: use a thread.
        let dropped = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async {
                admin()
                    .await
                    .batch_execute(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
                    .await
            })
        })
        .join();
        if let Ok(Err(e)) = dropped {
            eprintln!("could not drop test database {}: {e:?}", self.name);
        }
    }
}

/// An event of type `event_type` with payload `data`, recorded now.
pub fn event(event_type: &str, data: Value) -> NewEvent {
    NewEvent {
        event_type: event_type.to_owned(),
        schema_version: 1,
        data,
        actor: Some(Uuid::from_u128(42)),
        recorded_at: OffsetDateTime::now_utc(),
    }
}

/// A one-stream append of the given events.
pub fn to_stream(stream: &str, expected_version: i64, events: Vec<NewEvent>) -> StreamAppend {
    StreamAppend {
        stream: stream.to_owned(),
        expected_version,
        events,
    }
}

/// `n` move events numbered from `from`.
pub fn moves(from: usize, n: usize) -> Vec<NewEvent> {
    (from..from + n)
        .map(|i| event("move_played", serde_json::json!({"seat": 1 + i % 2, "move": format!("{}", 1 + i % 7), "by": "human"})))
        .collect()
}

/// The number of rows in `events`.
pub async fn count_events(db: &TestDb) -> i64 {
    db.client()
        .await
        .query_one("SELECT count(*) FROM events", &[])
        .await
        .expect("count")
        .get(0)
}

/// Blocks (without sleeping) until backend `pid` waits on a lock held by another session.
pub async fn wait_until_blocked(client: &Client, pid: i32) {
    loop {
        let blocked: bool = client
            .query_one("SELECT cardinality(pg_blocking_pids($1)) > 0", &[&pid])
            .await
            .expect("pg_blocking_pids")
            .get(0);
        if blocked {
            return;
        }
        tokio::task::yield_now().await;
    }
}
