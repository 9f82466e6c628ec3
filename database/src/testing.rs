//! Test databases against the real PostgreSQL: each test gets its own database, cloned from a
//! template migrated once per migration set, and dropped when the test ends.
//!
//! The server is `DATABASE_URL` (an admin connection) or `postgres://postgres@127.0.0.1:5432/postgres`;
//! where no server answers there, a private cluster is started (`crate::cluster`), so
//! `cargo test` works on a machine where PostgreSQL is installed but not running. Used by every
//! crate's integration tests and by the benches (feature `testing`); not by production code.

use std::time::{SystemTime, UNIX_EPOCH};

use tokio::sync::OnceCell;
use tokio_postgres::{Client, NoTls};
use uuid::Uuid;

use crate::Pool;

/// Serialises template creation between test processes (ASCII "discstpl").
const TEMPLATE_LOCK_KEY: i64 = 0x6469_7363_7374_706c;

/// Test databases older than this are left-overs of killed runs, dropped at the next start.
const STALE_AFTER_SECS: u64 = 3600;

static TEMPLATE: OnceCell<String> = OnceCell::const_new();

static ADMIN_URL: OnceCell<String> = OnceCell::const_new();

/// The admin connection string: `DATABASE_URL`, or the local server, or a private cluster
/// started for the purpose when none answers.
pub async fn admin_url() -> String {
    ADMIN_URL
        .get_or_init(|| async {
            let configured = std::env::var("DATABASE_URL")
                .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
            let data_dir = crate::cluster::default_data_dir();
            tokio::task::spawn_blocking(move || {
                crate::cluster::ensure_server(&configured, &data_dir)
            })
            .await
            .expect("the server check runs")
            .unwrap_or_else(|e| panic!("no PostgreSQL for the tests: {e}"))
            .url()
            .to_owned()
        })
        .await
        .clone()
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
    raw_client(&admin_url().await).await
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

/// The migrated template's name (by the migrations' fingerprint, so that a changed migration
/// gets a new template), creating it on first use. Guarded by an advisory lock
/// against other test processes; built under a temporary name and renamed, so a crash never
/// leaves a half-migrated template behind.
async fn template() -> &'static str {
    TEMPLATE
        .get_or_init(|| async {
            let name = format!("discs_template_{}", crate::migrations_fingerprint());
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
                    let pool = crate::connect(&url_for(&admin_url().await, &building), 1)
                        .await
                        .expect("connect to template");
                    crate::migrate(&pool).await.expect("migrate template");
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
    /// The database's name (`discs_test_<unix secs>_<random>`).
    pub name: String,
    /// Its URL.
    pub url: String,
    /// A pool on it.
    pub pool: Pool,
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
        let url = url_for(&admin_url().await, &name);
        let pool = crate::connect(&url, max_size)
            .await
            .unwrap_or_else(|e| panic!("connect {name}: {e}"));
        TestDb { name, url, pool }
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
