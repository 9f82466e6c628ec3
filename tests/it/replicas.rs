//! Reads from a replica (`DATABASE_READ_URL`), against a real streaming standby of a private
//! primary, its apply held back an hour (`recovery_min_apply_delay`: every commit after the copy
//! reaches the standby but stays invisible there for the test's length): the read-heavy calls are
//! answered by the standby while it holds what the primary would show, a player's move is in
//! the events, the replay and the history read at once after it, and a standby lagging past the
//! limits, promoted or down serves nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

use reqwest::StatusCode;

use discs::config::ServeConfig;
use service::replicas::{Replicas, Route};

use crate::helpers::{Private, TestApp, config, free_port, spawn_on};

/// `program` of PostgreSQL's, run as the user that owns the clusters (`postgres` when root).
fn pg(program: &str) -> Command {
    // The folder of the real binaries: `initdb` may be a link from a folder that has only a few.
    let initdb = database::cluster::find_bin_dir()
        .expect("PostgreSQL is installed")
        .join("initdb");
    let initdb = std::fs::canonicalize(initdb).expect("initdb");
    let bin = initdb.parent().expect("a folder");
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0");
    if root {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(bin.join(program));
        c
    } else {
        Command::new(bin.join(program))
    }
}

fn run(cmd: &mut Command) {
    let out = cmd.output().expect("the command runs");
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A streaming standby of a [`Private`] primary, in `root/data`, on `port`.
struct Standby {
    root: PathBuf,
    port: u16,
}

impl Standby {
    /// Copies the primary (`pg_basebackup`) and starts the copy as a hot standby that applies
    /// each transaction `delay` after its commit; returns when it accepts connections.
    fn start(primary: &Private, password: &str, root: &Path, delay: &str) -> Standby {
        std::fs::create_dir_all(root).expect("the standby's folder");
        let port = free_port();
        if Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
        {
            run(Command::new("chown").args(["postgres"]).arg(root));
        }
        let data = root.join("data");
        run(pg("pg_basebackup")
            .env("PGPASSWORD", password)
            .args([
                "-h",
                "127.0.0.1",
                "-U",
                "postgres",
                "-X",
                "stream",
                "-R",
                "-c",
                "fast",
            ])
            .args(["-p", &primary.port.to_string(), "-D"])
            .arg(&data));
        // `-R` wrote how to reach the primary; appending keeps the file's owner.
        let auto = data.join("postgresql.auto.conf");
        let mut conf = std::fs::OpenOptions::new()
            .append(true)
            .open(&auto)
            .expect("postgresql.auto.conf");
        std::io::Write::write_all(
            &mut conf,
            format!("recovery_min_apply_delay = '{delay}'\n").as_bytes(),
        )
        .expect("the delay written");
        let standby = Standby {
            root: root.to_owned(),
            port,
        };
        standby.serve();
        standby
    }

    /// Starts the standby's server; returns when it accepts connections.
    fn serve(&self) {
        run(pg("pg_ctl")
            .arg("-D")
            .arg(self.root.join("data"))
            .arg("-l")
            .arg(self.root.join("server.log"))
            .args(["-w", "-t", "60", "-o"])
            .arg(format!(
                "-p {} -c listen_addresses=127.0.0.1 -k {} -c unix_socket_permissions=0700 \
                 -c max_connections=300",
                self.port,
                self.root.display()
            ))
            .arg("start"));
    }

    /// [`Standby::start`] of `primary`, run off the test's thread.
    async fn of(primary: &Private, root: &Path, delay: &'static str) -> Standby {
        let password =
            std::fs::read_to_string(primary.root.join("password")).expect("the password");
        let primary = Private {
            root: primary.root.clone(),
            port: primary.port,
        };
        let root = root.to_owned();
        tokio::task::spawn_blocking(move || Standby::start(&primary, password.trim(), &root, delay))
            .await
            .expect("joined")
    }

    fn stop(&self) {
        run(pg("pg_ctl").arg("-D").arg(self.root.join("data")).args([
            "-m",
            "immediate",
            "-w",
            "stop",
        ]));
    }
}

/// The apps' database on `server` (a URL of the server's `postgres` database).
fn database_on(server: &str, port: u16) -> String {
    let base = server.rsplit_once('/').expect("a database in the URL").0;
    let base = match base.rsplit_once(':') {
        Some((host, _)) => format!("{host}:{port}"),
        None => base.to_owned(),
    };
    format!("{base}/discs_replicas")
}

/// The configuration of an instance reading from `standby`, measured only when the test asks
/// (`Replicas::measure`) besides once at start.
fn reading_from(primary: &str, standby: &str) -> ServeConfig {
    let mut c = config(primary);
    c.core.replicas.urls = vec![standby.to_owned()];
    c.core.replicas.replica_max_lag_ms = 3_600_000;
    c.core.replicas.replica_max_lag_bytes = 1 << 30;
    c.core.replicas.replica_poll_ms = 3_600_000;
    c
}

/// A `Replicas` over `url` with these limits, measured once against `app`'s primary.
async fn measured(app: &TestApp, url: &str, max_lag_ms: u64, max_lag_bytes: u64) -> Replicas {
    let mut c = reading_from(&app.db_url, url).core.replicas;
    c.replica_max_lag_ms = max_lag_ms;
    c.replica_max_lag_bytes = max_lag_bytes;
    let replicas = Replicas::from_config(&c)
        .expect("the settings parse")
        .expect("one replica");
    replicas.measure(&app.state.pool).await;
    replicas
}

/// The test's servers, stopped and their folder removed when the test ends, failed or not.
struct Servers(PathBuf);

impl Drop for Servers {
    fn drop(&mut self) {
        for node in ["primary", "standby"] {
            let data = self.0.join(node).join("data");
            if data.join("postmaster.pid").exists() {
                let _ = pg("pg_ctl")
                    .arg("-D")
                    .arg(&data)
                    .args(["-m", "immediate", "-w", "stop"])
                    .output();
            }
        }
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A private primary in a new folder `discs-<name>-…` of the temporary folder (removed with
/// its servers when the [`Servers`] go): the folder's guard, the primary, the URL of its
/// `postgres` database and that of the apps' database on it.
async fn primary(name: &str) -> (Servers, Private, String, String) {
    let base = std::env::temp_dir().join(format!("discs-{name}-{}", uuid::Uuid::new_v4().simple()));
    let servers = Servers(base.clone());
    let private = Private {
        root: base.join("primary"),
        port: free_port(),
    };
    let server = private.start().await;
    let url = database_on(&server, private.port);
    (servers, private, server, url)
}

#[tokio::test]
async fn reads_go_to_a_standby_that_holds_what_the_primary_shows_and_see_a_move_at_once() {
    let (servers, private, server, url) = primary("replicas").await;
    let base = servers.0.clone();

    // Before the standby exists: a ranked match played to its end and projected.
    let before = spawn_on(&url, config(&url)).await;
    let (ada, bob) = (before.player("Ada").await, before.player("Bob").await);
    let root = before.admin("Root").await;
    let (old, first, second) = before.ranked_with(&ada, &bob, "four_in_a_row").await;
    before.finish_four(&old, &first, &second, true).await;
    before.project().await;

    // The standby: a copy of the primary now, applying nothing newer for an hour.
    let standby = Standby::of(&private, &base.join("standby"), "1h").await;
    let standby_url = database_on(&server, standby.port);

    let plain = spawn_on(&url, config(&url)).await;
    let app = spawn_on(&url, reading_from(&url, &standby_url)).await;
    let replicas = app.state.replicas.clone().expect("a replica configured");
    replicas.measure(&app.state.pool).await;
    assert!(
        replicas.nodes()[0].in_rotation(),
        "{:?}",
        replicas.nodes()[0].lag()
    );

    // The finished past, read through the instance with the replica: the standby answers,
    // with what the primary alone answers.
    let reads = [
        (format!("/v1/matches/{old}/events"), &ada),
        (format!("/v1/matches/{old}/replay"), &ada),
        (format!("/v1/players/{}/matches", ada.id), &ada),
        (
            format!("/v1/players/{}/ratings/four_in_a_row", ada.id),
            &ada,
        ),
        ("/v1/leaderboards/four_in_a_row".to_owned(), &bob),
        ("/v1/admin/audits/ratings".to_owned(), &root),
        (
            format!("/v1/admin/players/{}/ratings/four_in_a_row/explain", bob.id),
            &root,
        ),
    ];
    for (path, who) in &reads {
        let (got, want) = (
            app.get(path, &who.token).await,
            plain.get(path, &who.token).await,
        );
        assert_eq!(got.status, StatusCode::OK, "{path}: {:?}", got.body);
        assert_eq!(got.body, want.body, "{path}");
    }
    assert_eq!(replicas.routed(Route::Replica), reads.len() as u64);
    assert_eq!(replicas.routed(Route::Behind), 0);
    assert_eq!(replicas.routed(Route::Failed), 0);

    // A new match played through the same instance: every commit is on the standby, none of
    // them visible there for an hour. Read at once, the move is there.
    let (new, first, second) = app.ranked_with(&ada, &bob, "four_in_a_row").await;
    app.finish_four(&new, &first, &second, false).await;
    for path in [
        format!("/v1/matches/{new}/events"),
        format!("/v1/matches/{new}/replay"),
    ] {
        let (got, want) = (
            app.get(&path, &ada.token).await,
            plain.get(&path, &ada.token).await,
        );
        assert_eq!(got.status, StatusCode::OK, "{path}: {:?}", got.body);
        assert_eq!(got.body, want.body, "{path}");
    }
    let events = app
        .get(&format!("/v1/matches/{new}/events"), &ada.token)
        .await;
    let last = events.body["events"]
        .as_array()
        .expect("events")
        .last()
        .cloned();
    assert_eq!(last.expect("an event")["type"], "match_ended");
    let replay = app
        .get(&format!("/v1/matches/{new}/replay"), &ada.token)
        .await;
    assert_eq!(replay.body["moves"], "74746464", "{:?}", replay.body);
    app.project().await;
    let history = app
        .get(&format!("/v1/players/{}/matches", ada.id), &ada.token)
        .await;
    // (Both matches ended a minute after their instance's clock started, maybe in one second:
    // their order is not what this test is about.)
    let ids: Vec<&str> = history.body["matches"]
        .as_array()
        .expect("matches")
        .iter()
        .filter_map(|m| m["match_id"].as_str())
        .collect();
    assert!(ids.len() == 2 && ids.contains(&new.as_str()), "{ids:?}");
    let points = app
        .get(
            &format!("/v1/players/{}/ratings/four_in_a_row", ada.id),
            &ada.token,
        )
        .await;
    assert_eq!(points.body["points"].as_array().map(Vec::len), Some(2));
    assert_eq!(replicas.routed(Route::Replica), reads.len() as u64);
    assert_eq!(replicas.routed(Route::Behind), 6);

    // What the standby does hold, it still answers.
    let again = app
        .get(&format!("/v1/matches/{old}/replay"), &ada.token)
        .await;
    assert_eq!(again.status, StatusCode::OK);
    assert_eq!(replicas.routed(Route::Replica), reads.len() as u64 + 1);

    // The lag: the standby holds WAL it has not replayed, so a limit of no bytes leaves it out.
    let strict = measured(&app, &standby_url, 3_600_000, 0).await;
    assert!(!strict.nodes()[0].in_rotation());
    assert!(
        strict.nodes()[0].lag().1.is_some_and(|b| b > 0),
        "{:?}",
        strict.nodes()[0].lag()
    );
    // A server that is not in recovery (here the primary itself) serves no reads.
    let primary_listed = measured(&app, &url, 3_600_000, 1 << 30).await;
    assert!(!primary_listed.nodes()[0].in_rotation());

    // The standby down: the read goes to the primary, the standby leaves the rotation.
    tokio::task::spawn_blocking({
        let standby = Standby {
            root: standby.root.clone(),
            port: standby.port,
        };
        move || standby.stop()
    })
    .await
    .expect("joined");
    let down = app
        .get(&format!("/v1/matches/{old}/replay"), &ada.token)
        .await;
    assert_eq!(down.status, StatusCode::OK, "{:?}", down.body);
    assert_eq!(down.body, again.body);
    assert_eq!(replicas.routed(Route::Failed), 1);
    assert!(!replicas.nodes()[0].in_rotation());
    let unreached = app
        .get(&format!("/v1/players/{}/matches", ada.id), &ada.token)
        .await;
    assert_eq!(unreached.status, StatusCode::OK);
    assert_eq!(replicas.routed(Route::NoReplica), 1);

    drop((app, plain, before));
}

/// A closing writes no event: a standby that lacks it holds the closed account's name. A
/// finished match read there takes its players' names from the primary, and a projection read
/// goes to the primary until the standby holds as many closed accounts.
#[tokio::test]
async fn a_closing_the_standby_lacks_shows_no_erased_name() {
    let (servers, private, server, url) = primary("closings").await;
    let base = servers.0.clone();
    let before = spawn_on(&url, config(&url)).await;
    let (ada, bob) = (before.player("Ada").await, before.player("Bob").await);
    let (old, first, second) = before.ranked_with(&ada, &bob, "four_in_a_row").await;
    before.finish_four(&old, &first, &second, true).await;
    before.project().await;
    let standby = Standby::of(&private, &base.join("standby"), "1h").await;
    let standby_url = database_on(&server, standby.port);
    let app = spawn_on(&url, reading_from(&url, &standby_url)).await;
    let replicas = app.state.replicas.clone().expect("a replica configured");
    replicas.measure(&app.state.pool).await;
    assert!(replicas.nodes()[0].in_rotation());
    let history = format!("/v1/players/{}/matches", bob.id);
    let read = app.get(&history, &bob.token).await;
    assert_eq!(read.status, StatusCode::OK, "{:?}", read.body);
    assert!(read.body.to_string().contains("\"Ada\""), "{:?}", read.body);
    assert_eq!(replicas.routed(Route::Replica), 1);

    // Ada closes her account through the instance that reads from the standby.
    let asked = app
        .post("/v1/players/me/closing", &ada.token, serde_json::json!({}))
        .await;
    let closed = app
        .post(
            "/v1/players/me/close",
            &ada.token,
            serde_json::json!({"confirmation": asked.body["confirmation"]}),
        )
        .await;
    assert_eq!(closed.status, StatusCode::OK, "{:?}", closed.body);
    let label = closed.body["label"].as_str().expect("a label").to_owned();

    // The finished match comes from the standby, its names from the primary.
    let events = app
        .get(&format!("/v1/matches/{old}/events"), &bob.token)
        .await;
    assert_eq!(events.status, StatusCode::OK, "{:?}", events.body);
    assert_eq!(replicas.routed(Route::Replica), 2);
    let view = app.get(&format!("/v1/matches/{old}"), &bob.token).await;
    let names: Vec<&str> = view.body["seats"]
        .as_array()
        .expect("seats")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert!(
        names.contains(&label.as_str()) && !names.contains(&"Ada"),
        "{names:?}"
    );
    // Bob's history: the standby lacks the closing, so the primary answers, with the label.
    let read = app.get(&history, &bob.token).await;
    assert_eq!(read.status, StatusCode::OK, "{:?}", read.body);
    let text = read.body.to_string();
    assert!(text.contains(&label) && !text.contains("\"Ada\""), "{text}");
    assert_eq!(replicas.routed(Route::Behind), 1);
    assert_eq!(replicas.routed(Route::Replica), 2);
    drop((app, before, standby));
}

/// PostgreSQL shows a commit on the primary before the synchronous standby has it when the
/// commit does not wait for it (a cancelled wait, a postmaster killed mid-wait, or, as here,
/// `synchronous_commit = local`). Such a commit is lost if the standby is promoted, so the log
/// hands it to no reader until a synchronous standby has flushed it.
#[tokio::test]
async fn a_commit_the_synchronous_standby_lacks_is_read_by_nobody_until_it_has_it() {
    let (servers, private, _, url) = primary("sync").await;
    let base = servers.0.clone();
    database::create_database_if_missing(&url)
        .await
        .expect("the database");
    let pool = database::connect(&url, 4).await.expect("a pool");
    database::migrate(&pool).await.expect("migrated");

    // Every commit waits for a standby from now on; the standby's server reads that as it
    // starts, well after the reload.
    let admin = pool.get().await.expect("a connection");
    admin
        .batch_execute("ALTER SYSTEM SET synchronous_standby_names = '*'")
        .await
        .expect("the standby made synchronous");
    admin
        .batch_execute("SELECT pg_reload_conf()")
        .await
        .expect("the settings reloaded");
    let standby = Standby::of(&private, &base.join("standby"), "0").await;

    let log = eventlog::EventLog::new(pool.clone());
    let event = |n: i64| eventlog::NewEvent {
        event_type: "noted".to_owned(),
        schema_version: 1,
        data: serde_json::json!({ "n": n }),
        actor: None,
        recorded_at: time::OffsetDateTime::now_utc(),
    };
    let append = |version: i64| eventlog::StreamAppend {
        stream: "test-sync".to_owned(),
        expected_version: version,
        events: vec![event(version + 1)],
    };
    // A synchronous commit returns once the standby has flushed it (it waits for the standby
    // to connect if need be).
    let _ = log
        .append(uuid::Uuid::new_v4(), append(0))
        .await
        .expect("appended");
    let replicated = count(
        &pool,
        "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'",
    );
    assert_eq!(replicated.await, 1);

    // The standby goes away; a commit that does not wait for it is visible on the primary.
    let down = Standby {
        root: standby.root.clone(),
        port: standby.port,
    };
    tokio::task::spawn_blocking(move || down.stop())
        .await
        .expect("joined");
    let local = database::connect(&format!("{url}?options=-c%20synchronous_commit%3Dlocal"), 1)
        .await
        .expect("a pool");
    let _ = eventlog::EventLog::new(local)
        .append(uuid::Uuid::new_v4(), append(1))
        .await
        .expect("appended without the standby");
    let visible = count(
        &pool,
        "SELECT count(*) FROM events WHERE stream_id = 'test-sync'",
    );
    assert_eq!(visible.await, 2, "PostgreSQL shows the unreplicated commit");

    // No reader of the log gets it: not the stream, not the whole log, not its last checkpoint.
    let impatient = log
        .clone()
        .with_replication_wait(std::time::Duration::from_millis(100));
    let refused = [
        impatient.read_stream("test-sync").await.map(|_| ()),
        impatient
            .read_all_after(eventlog::Checkpoint::START, 100)
            .await
            .map(|_| ()),
        impatient
            .read_types_after(eventlog::Checkpoint::START, &["noted"], 100)
            .await
            .map(|_| ()),
        impatient.last_checkpoint().await.map(|_| ()),
    ];
    for read in refused {
        let e = read.expect_err("the read waits for the standby");
        assert!(matches!(e, eventlog::Error::NotReplicated(_)), "{e}");
        assert!(e.is_outage(), "answered as 503");
    }

    // The standby back: once it has caught up, the readers get the event.
    let up = Standby {
        root: standby.root.clone(),
        port: standby.port,
    };
    tokio::task::spawn_blocking(move || up.serve())
        .await
        .expect("joined");
    let patient = log.with_replication_wait(std::time::Duration::from_secs(60));
    let events = patient.read_stream("test-sync").await.expect("read");
    assert_eq!(events.len(), 2);
    let all = patient
        .read_all_after(eventlog::Checkpoint::START, 100)
        .await
        .expect("read");
    assert_eq!(all.len(), 2);
    assert_eq!(
        patient.last_checkpoint().await.expect("read"),
        all[1].checkpoint()
    );
}

/// The one number `sql` answers.
async fn count(pool: &database::Pool, sql: &str) -> i64 {
    pool.get()
        .await
        .expect("a connection")
        .query_one(sql, &[])
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .get(0)
}
