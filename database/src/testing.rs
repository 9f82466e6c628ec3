//! Test databases against the real PostgreSQL: each test gets its own database, cloned from a
//! template migrated once per migration set. When a test ends, its database is renamed (so that
//! nothing still holding its old name reaches it), emptied back to what a fresh clone holds and
//! kept for the next test of the process; one whose schema the test changed is dropped instead.
//! Creating and dropping a database was a third of the integration tests' PostgreSQL time.
//!
//! The server is `DATABASE_URL` (an admin connection) or `postgres://postgres@127.0.0.1:5432/postgres`;
//! where no server answers there, a private cluster is started (`crate::cluster`), so
//! `cargo test` works on a machine where PostgreSQL is installed but not running. Used by every
//! crate's integration tests and by the benches (feature `testing`); not by production code.

use std::sync::Mutex;
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

/// What a fresh clone of the template holds, read from the first clone of this process.
static PRISTINE: OnceCell<Pristine> = OnceCell::const_new();

/// Migrated databases this process's tests have finished with, emptied and renamed
/// (`discs_spare_<pid>_<unix secs>_<random>`), for the next test to take.
static SPARES: Mutex<Vec<String>> = Mutex::new(Vec::new());

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

/// Drops `discs_test_<unix secs>_...` databases left by runs that were killed, and the spares of
/// test processes that have ended.
async fn drop_stale_test_databases(admin: &Client) {
    let rows = admin
        .query(
            "SELECT datname FROM pg_database \
             WHERE datname LIKE 'discs\\_test\\_%' OR datname LIKE 'discs\\_spare\\_%'",
            &[],
        )
        .await
        .expect("list test databases");
    let now = now_secs();
    for row in rows {
        let name: String = row.get(0);
        let field = |i: usize| name.split('_').nth(i).and_then(|s| s.parse::<u64>().ok());
        let stale = if name.starts_with("discs_spare_") {
            let ended =
                field(2).is_none_or(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists());
            ended || now.saturating_sub(field(3).unwrap_or(0)) > STALE_AFTER_SECS
        } else {
            now.saturating_sub(field(2).unwrap_or(0)) > STALE_AFTER_SECS
        };
        if stale {
            let _ = admin
                .batch_execute(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
                .await;
        }
    }
}

/// A database of its own for one test; given back (or dropped) when this is dropped.
pub struct TestDb {
    /// The database's name (`discs_test_<unix secs>_<random>`, or a spare's).
    pub name: String,
    /// Its URL.
    pub url: String,
    /// A pool on it.
    pub pool: Pool,
    /// A clone of the migrated template: emptied and kept for the next test when it ends.
    migrated: bool,
}

impl TestDb {
    /// A migrated database: a spare this process emptied, or a new clone of the template; a
    /// pool of `max_size` connections.
    pub async fn migrated(max_size: usize) -> TestDb {
        let template = template().await;
        loop {
            let spare = SPARES.lock().unwrap_or_else(|e| e.into_inner()).pop();
            let Some(name) = spare else { break };
            let url = url_for(&admin_url().await, &name);
            // A spare another process dropped as stale is skipped.
            if let Ok(pool) = crate::connect(&url, max_size).await {
                return TestDb {
                    name,
                    url,
                    pool,
                    migrated: true,
                };
            }
        }
        let db = Self::create(&format!("TEMPLATE \"{template}\""), max_size, true).await;
        PRISTINE
            .get_or_init(|| async { Pristine::read(&db.client().await).await })
            .await;
        db
    }

    /// An empty database, not migrated.
    pub async fn empty(max_size: usize) -> TestDb {
        Self::create("TEMPLATE template0", max_size, false).await
    }

    async fn create(clause: &str, max_size: usize, migrated: bool) -> TestDb {
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
        TestDb {
            name,
            url,
            pool,
            migrated,
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
        let (name, migrated) = (self.name.clone(), self.migrated);
        // Drop runs inside the test's runtime, which cannot block on itself: use a thread.
        let ended = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async {
                let admin = admin().await;
                if migrated && let Some(spare) = give_back(&admin, &name).await {
                    SPARES.lock().unwrap_or_else(|e| e.into_inner()).push(spare);
                    return Ok(());
                }
                admin
                    .batch_execute(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
                    .await
            })
        })
        .join();
        if let Ok(Err(e)) = ended {
            eprintln!("could not drop test database {}: {e:?}", self.name);
        }
    }
}

/// Renames the finished database `name` to a spare's name (after ending its sessions: an
/// instance still running under the old name cannot reach it again) and empties it back to
/// what a fresh clone holds; `None`, having dropped it, where its schema, grants or settings
/// are no longer the template's, or where a step fails.
async fn give_back(admin: &Client, name: &str) -> Option<String> {
    let pristine = PRISTINE.get()?;
    let spare = format!(
        "discs_spare_{}_{}_{}",
        std::process::id(),
        now_secs(),
        &Uuid::new_v4().simple().to_string()[..12]
    );
    admin
        .execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = $1 AND pid <> pg_backend_pid()",
            &[&name],
        )
        .await
        .ok()?;
    // RENAME waits (up to 5 s) for the ended sessions to go.
    admin
        .batch_execute(&format!("ALTER DATABASE \"{name}\" RENAME TO \"{spare}\""))
        .await
        .ok()?;
    let emptied = async {
        let (client, connection) =
            tokio_postgres::connect(&url_for(&admin_url().await, &spare), NoTls)
                .await
                .ok()?;
        tokio::spawn(connection);
        let catalog: String = client.query_one(CATALOG, &[]).await.ok()?.get(0);
        if catalog != pristine.catalog {
            return None;
        }
        let held: Vec<String> = client
            .query(&pristine.holding, &[])
            .await
            .ok()?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let mut reset = String::from("BEGIN; SET LOCAL session_replication_role = replica;\n");
        for table in &held {
            reset.push_str(&format!("DELETE FROM {table};\n"));
        }
        reset.push_str(&pristine.refill);
        reset.push_str("COMMIT;");
        client.batch_execute(&reset).await.ok()?;
        if !held.is_empty() {
            client
                .batch_execute(&format!("VACUUM {}", held.join(", ")))
                .await
                .ok()?;
        }
        Some(())
    };
    match emptied.await {
        Some(()) => Some(spare),
        None => {
            let _ = admin
                .batch_execute(&format!("DROP DATABASE IF EXISTS \"{spare}\" WITH (FORCE)"))
                .await;
            None
        }
    }
}

/// What a fresh clone of the migrated template holds, beyond its schema.
struct Pristine {
    /// [`CATALOG`]'s digest of it.
    catalog: String,
    /// A query naming its tables that hold rows (qualified and quoted).
    holding: String,
    /// Statements that put back the rows the migrations wrote and the sequences' states.
    refill: String,
}

impl Pristine {
    async fn read(client: &Client) -> Pristine {
        let catalog: String = client
            .query_one(CATALOG, &[])
            .await
            .expect("the catalog's digest")
            .get(0);
        let tables: Vec<String> = client
            .query(
                "SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c \
                 JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema') \
                 AND n.nspname NOT LIKE 'pg\\_%' ORDER BY 1",
                &[],
            )
            .await
            .expect("the tables")
            .iter()
            .map(|r| r.get(0))
            .collect();
        let holding = tables
            .iter()
            .map(|t| format!("SELECT '{t}' WHERE EXISTS (SELECT FROM {t})"))
            .collect::<Vec<_>>()
            .join(" UNION ALL ");
        let mut refill = String::new();
        for table in &tables {
            // The rows as one JSON array, put back through the table's own row type.
            let rows: Option<String> = client
                .query_opt(
                    &format!(
                        "SELECT format('INSERT INTO %s SELECT * FROM json_populate_recordset(NULL::%s, %L);', \
                         '{table}', '{table}', json_agg(t)) FROM {table} t HAVING count(*) > 0"
                    ),
                    &[],
                )
                .await
                .unwrap_or_else(|e| panic!("the rows of {table}: {e:?}"))
                .map(|r| r.get(0));
            if let Some(rows) = rows {
                refill.push_str(&rows);
                refill.push('\n');
            }
        }
        for row in client
            .query(
                "SELECT format('SELECT setval(%L, %s, %L);', format('%I.%I', schemaname, sequencename), \
                 coalesce(last_value, start_value), last_value IS NOT NULL) FROM pg_sequences",
                &[],
            )
            .await
            .expect("the sequences")
        {
            refill.push_str(row.get(0));
            refill.push('\n');
        }
        Pristine {
            catalog,
            holding,
            refill,
        }
    }
}

/// A digest of what a test could change in a database beyond its rows: relations and their
/// grants, columns and defaults, constraints, indexes, triggers (and whether enabled),
/// functions, schemas, types, rules, the database's settings, publications and slots.
const CATALOG: &str = "
WITH ns AS (
  SELECT oid, nspname FROM pg_namespace
   WHERE nspname NOT IN ('pg_catalog', 'information_schema') AND nspname NOT LIKE 'pg\\_%'
)
SELECT md5(string_agg(item, E'\\n' ORDER BY item)) FROM (
  SELECT format('rel %s.%s %s %s %s', ns.nspname, c.relname, c.relkind, c.relpersistence, c.relacl) AS item
    FROM pg_class c JOIN ns ON ns.oid = c.relnamespace
  UNION ALL
  SELECT format('col %s.%s %s %s %s %s', ns.nspname, c.relname, a.attname,
                format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, d.adrelid))
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN ns ON ns.oid = c.relnamespace
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
   WHERE a.attnum > 0 AND NOT a.attisdropped
  UNION ALL
  SELECT format('con %s %s %s', co.conrelid::regclass, co.conname, pg_get_constraintdef(co.oid))
    FROM pg_constraint co JOIN ns ON ns.oid = co.connamespace
  UNION ALL
  SELECT format('idx %s', pg_get_indexdef(i.indexrelid))
    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN ns ON ns.oid = c.relnamespace
  UNION ALL
  SELECT format('trg %s %s %s', t.tgrelid::regclass, t.tgname, t.tgenabled)
    FROM pg_trigger t WHERE NOT t.tgisinternal
  UNION ALL
  SELECT format('fn %s %s %s', p.oid::regprocedure, md5(p.prosrc), p.proconfig)
    FROM pg_proc p JOIN ns ON ns.oid = p.pronamespace
  UNION ALL
  SELECT format('ns %s %s', n.nspname, n.nspacl) FROM pg_namespace n
   WHERE n.nspname NOT LIKE 'pg\\_temp\\_%' AND n.nspname NOT LIKE 'pg\\_toast\\_temp\\_%'
  UNION ALL
  SELECT format('type %s', t.oid::regtype) FROM pg_type t JOIN ns ON ns.oid = t.typnamespace
  UNION ALL
  SELECT format('enum %s %s', e.enumtypid::regtype, e.enumlabel) FROM pg_enum e
  UNION ALL
  SELECT format('rule %s %s %s', r.ev_class::regclass, r.rulename, r.ev_enabled)
    FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class JOIN ns ON ns.oid = c.relnamespace
  UNION ALL
  SELECT format('set %s %s', s.setrole, s.setconfig) FROM pg_db_role_setting s
   WHERE s.setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
  UNION ALL
  SELECT format('db %s %s %s', d.datallowconn, d.datconnlimit, d.datacl) FROM pg_database d
   WHERE d.datname = current_database()
  UNION ALL
  SELECT format('pub %s', pubname) FROM pg_publication
  UNION ALL
  SELECT format('ext %s %s', extname, extversion) FROM pg_extension
  UNION ALL
  SELECT format('slot %s', slot_name) FROM pg_replication_slots WHERE database = current_database()
  UNION ALL
  SELECT format('lo %s', count(*)) FROM pg_largeobject_metadata
) q";
