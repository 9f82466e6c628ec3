//! The real `discs serve` process under real signals. SIGTERM: requests in flight finish, open
//! event streams end with a reconnect hint, the process exits 0; its logs are JSON lines that
//! carry each request's id. SIGKILL in the middle of a matchmaking wave's write: no half
//! pairing is left, and the next instance pairs every ticket once; likewise in the middle of a
//! tournament organiser's step.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};

/// How long the test waits for anything the process should do at once.
const PATIENCE: Duration = Duration::from_secs(60);

/// The next log line (as JSON) for which `wanted` holds; every line must be JSON.
fn next_line(lines: &mpsc::Receiver<String>, wanted: impl Fn(&Value) -> bool) -> Value {
    loop {
        let line = lines
            .recv_timeout(PATIENCE)
            .expect("the server logs what it does");
        let value: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("a log line that is not JSON ({e}): {line}"));
        if wanted(&value) {
            return value;
        }
    }
}

/// The server process, killed if the test ends before it has exited (a failed assertion must
/// not leave it running).
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

fn message(line: &Value) -> &str {
    line["fields"]["message"].as_str().unwrap_or("")
}

/// Starts `discs serve` on `db_url` with JSON logs on stderr and the given environment; the
/// process, its log lines and its address once it serves.
fn serve(db_url: &str, env: &[(&str, &str)]) -> (Server, mpsc::Receiver<String>, String) {
    let mut server = Server(
        Command::new(env!("CARGO_BIN_EXE_discs"))
            .arg("serve")
            .env("DATABASE_URL", db_url)
            .env("DISCS_ADDR", "127.0.0.1:0")
            .env("DISCS_LOG_FORMAT", "json")
            .env("RUST_LOG", "info")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("discs starts"),
    );
    let stderr = server.0.stderr.take().expect("piped");
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let serving = next_line(&lines, |l| message(l) == "discs is serving");
    let port = serving["fields"]["port"]
        .as_u64()
        .expect("the port is logged");
    (server, lines, format!("http://127.0.0.1:{port}"))
}

// Two threads: the test blocks on the log while the requests it spawned go on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_requests_in_flight_finish_ends_streams_and_exits_zero() {
    let db = database::testing::TestDb::migrated(1).await;
    let (mut server, lines, base) = serve(&db.url, &[("DISCS_SHUTDOWN_SECONDS", "30")]);
    let http = reqwest::Client::new();

    let player: Value = http
        .post(format!("{base}/v1/players"))
        .json(&json!({"name": "Ada"}))
        .send()
        .await
        .expect("sign-up")
        .json()
        .await
        .expect("json");
    let token = player["token"].as_str().expect("a token").to_owned();
    let view: Value = http
        .post(format!("{base}/v1/matches"))
        .bearer_auth(&token)
        .json(&json!({"game": "four_in_a_row", "cpu_level": 1}))
        .send()
        .await
        .expect("a match")
        .json()
        .await
        .expect("json");
    let match_id = view["match_id"].as_str().expect("an id").to_owned();
    let stream = http
        .get(format!("{base}/v1/matches/{match_id}/stream"))
        .bearer_auth(&token)
        .send()
        .await
        .expect("a stream");
    assert_eq!(stream.status(), 200);

    // An analysis that takes its whole budget (the empty board is not solved in 1.5 s) is in
    // flight when the signal comes: the log says when its search has started.
    let analysis = tokio::spawn({
        let (http, base, token) = (http.clone(), base.clone(), token.clone());
        async move {
            http.post(format!("{base}/v1/analysis?budget_ms=1500"))
                .bearer_auth(&token)
                .header("x-request-id", "analysis-under-sigterm")
                .json(&json!({"game": "four_in_a_row", "moves": ""}))
                .send()
                .await
                .expect("the analysis is answered")
        }
    });
    let started = next_line(&lines, |l| message(l) == "analysis search started");
    assert_eq!(started["span"]["request_id"], "analysis-under-sigterm");

    let killed = Command::new("kill")
        .args(["-TERM", &server.0.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());

    // The stream ends, its last frame a reconnect hint.
    let mut body = stream.bytes_stream();
    let mut text = String::new();
    while let Some(chunk) = tokio::time::timeout(PATIENCE, body.next())
        .await
        .expect("the stream ends on shutdown")
    {
        text.push_str(&String::from_utf8_lossy(&chunk.expect("a chunk")));
    }
    assert!(text.ends_with("retry: 1000\n\n"), "{text}");

    let answered = analysis.await.expect("joined");
    assert_eq!(answered.status(), 200);
    assert_eq!(answered.headers()["x-request-id"], "analysis-under-sigterm");
    let result: Value = answered.json().await.expect("json");
    assert!(result["best_moves"].is_array(), "{result}");

    let status = tokio::task::spawn_blocking(move || server.0.wait().map(|s| (s, server)))
        .await
        .expect("joined")
        .expect("the process ends")
        .0;
    assert!(status.success(), "{status:?}");
    next_line(&lines, |l| message(l) == "stopped");
    assert!(
        reqwest::get(format!("{base}/healthz")).await.is_err(),
        "nothing listens after the exit"
    );
}

/// A player signed up on `base`: (id, token).
async fn sign_up(http: &reqwest::Client, base: &str, name: &str) -> (uuid::Uuid, String) {
    let me: Value = http
        .post(format!("{base}/v1/players"))
        .json(&json!({"name": name}))
        .send()
        .await
        .expect("sign-up")
        .json()
        .await
        .expect("json");
    let id = me["player_id"]
        .as_str()
        .expect("an id")
        .parse()
        .expect("uuid");
    (id, me["token"].as_str().expect("a token").to_owned())
}

/// Counts in the database: matches created, ticket streams at version 1 (waiting), slots
/// holding a ticket, work rows.
async fn pairing_state(client: &tokio_postgres::Client) -> [i64; 4] {
    let row = client
        .query_one(
            "SELECT (SELECT count(*) FROM events WHERE event_type = 'match_created'), \
                    (SELECT count(*) FROM streams \
                      WHERE stream_id LIKE 'ticket-%' AND version = 1), \
                    (SELECT count(*) FROM queue_slots WHERE ticket_id IS NOT NULL), \
                    (SELECT count(*) FROM match_work)",
            &[],
        )
        .await
        .expect("counts");
    [row.get(0), row.get(1), row.get(2), row.get(3)]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wave_killed_mid_write_leaves_no_half_pairing() {
    let db = database::testing::TestDb::migrated(1).await;
    // Six tickets open on an instance that runs no background work, so no wave pairs them yet.
    let (_front, _front_lines, base) = serve(&db.url, &[("DISCS_NO_WORKERS", "true")]);
    let http = reqwest::Client::new();
    let mut players = Vec::new();
    for i in 0..6 {
        let (id, token) = sign_up(&http, &base, &format!("P{i}")).await;
        let res = http
            .post(format!("{base}/v1/queue"))
            .bearer_auth(&token)
            .json(&json!({"game": "four_in_a_row"}))
            .send()
            .await
            .expect("queued");
        assert_eq!(res.status(), 201);
        players.push(id);
    }
    // The queue projection holds all six before any wave looks at it.
    let rebuilt = Command::new(env!("CARGO_BIN_EXE_discs"))
        .args(["rebuild", "queue"])
        .env("DATABASE_URL", &db.url)
        .stderr(Stdio::null())
        .status()
        .expect("discs rebuild runs");
    assert!(rebuilt.success());

    // The first player's slot row is locked: a wave that pairs them appends the matches and the
    // tickets' events in its transaction, then waits for the lock before it can commit.
    let locker = database::testing::raw_client(&db.url).await;
    locker.batch_execute("BEGIN").await.expect("begin");
    locker
        .execute(
            "SELECT 1 FROM queue_slots WHERE player_id = $1 FOR UPDATE",
            &[&players[0]],
        )
        .await
        .expect("locked");
    let (waves, lines, _) = serve(&db.url, &[("RUST_LOG", "info,service::ranked=debug")]);
    let appended = next_line(&lines, |l| message(l) == "pairings appended");
    assert_eq!(appended["fields"]["pairings"], 3, "one wave over all six");
    let killed = Command::new("kill")
        .args(["-KILL", &waves.0.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    drop(waves);
    locker.batch_execute("ROLLBACK").await.expect("rollback");

    // Nothing of the wave's write remains: no match, every ticket waiting, every slot holding
    // its ticket, no work row.
    let client = database::testing::raw_client(&db.url).await;
    assert_eq!(pairing_state(&client).await, [0, 6, 6, 0]);

    // Another instance pairs every ticket once.
    let (_again, lines, _) = serve(&db.url, &[]);
    let mut paired = 0;
    while paired < 3 {
        let wave = next_line(&lines, |l| message(l) == "wave");
        paired += wave["fields"]["paired"].as_u64().expect("paired");
    }
    assert_eq!(paired, 3);
    assert_eq!(pairing_state(&client).await, [3, 0, 0, 3]);
    let rows = client
        .query(
            "SELECT stream_id, count(*) FROM events WHERE event_type = 'ticket_matched' \
             GROUP BY 1",
            &[],
        )
        .await
        .expect("matched");
    assert_eq!(rows.len(), 6);
    assert!(rows.iter().all(|r| r.get::<_, i64>(1) == 1));
}

/// The tournament's stream version, its games (pairings), the matches created, and work rows.
async fn tournament_state(client: &tokio_postgres::Client, stream: &str) -> [i64; 4] {
    let row = client
        .query_one(
            "SELECT (SELECT coalesce(max(version), 0) FROM events WHERE stream_id = $1), \
                    (SELECT count(*) FROM events \
                      WHERE stream_id = $1 AND event_type = 'pairing_made'), \
                    (SELECT count(*) FROM events WHERE event_type = 'match_created'), \
                    (SELECT count(*) FROM match_work)",
            &[&stream],
        )
        .await
        .expect("counts");
    [row.get(0), row.get(1), row.get(2), row.get(3)]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tournament_step_killed_mid_write_leaves_no_half_pairing() {
    let db = database::testing::TestDb::migrated(1).await;
    let (_front, _front_lines, base) = serve(&db.url, &[("DISCS_NO_WORKERS", "true")]);
    let http = reqwest::Client::new();
    // An admin's rated arena starting in two seconds, four players in it.
    let token = Command::new(env!("CARGO_BIN_EXE_discs"))
        .args(["token", "--admin", "Root"])
        .env("DATABASE_URL", &db.url)
        .stderr(Stdio::null())
        .output()
        .expect("discs token runs");
    let admin_token = String::from_utf8(token.stdout).expect("utf-8");
    let starts = time::OffsetDateTime::now_utc() + time::Duration::seconds(2);
    let created: Value = http
        .post(format!("{base}/v1/tournaments"))
        .bearer_auth(admin_token.trim())
        .json(
            &json!({"game": "four_in_a_row", "format": "arena", "name": "Killed",
                      "minutes": 30, "rated": true,
                      "starts_at": starts.format(&time::format_description::well_known::Rfc3339)
                          .expect("a time")}),
        )
        .send()
        .await
        .expect("created")
        .json()
        .await
        .expect("json");
    let id = created["tournament_id"].as_str().expect("an id").to_owned();
    let stream = format!("tournament-{id}");
    let mut players = Vec::new();
    for i in 0..4 {
        let (player, token) = sign_up(&http, &base, &format!("P{i}")).await;
        let res = http
            .post(format!("{base}/v1/tournaments/{id}/join"))
            .bearer_auth(&token)
            .send()
            .await
            .expect("joined");
        assert_eq!(res.status(), 200);
        players.push(player);
    }
    let client = database::testing::raw_client(&db.url).await;
    let joined = tournament_state(&client, &stream).await;
    assert_eq!(joined, [5, 0, 0, 0]);

    // A player's ranked seat is being taken by another transaction, not yet committed: the
    // organiser's step (the start and the first pairings, their matches and work rows, then
    // the rated games' seats) appends and then waits for it.
    let locker = database::testing::raw_client(&db.url).await;
    locker.batch_execute("BEGIN").await.expect("begin");
    let elsewhere = uuid::Uuid::now_v7();
    locker
        .execute(
            "INSERT INTO match_work (match_id, watch1, watch2, seen1, seen2) \
             VALUES ($1, false, false, now(), now())",
            &[&elsewhere],
        )
        .await
        .expect("a work row");
    locker
        .execute(
            "INSERT INTO ranked_seats (player_id, match_id) VALUES ($1, $2)",
            &[&players[0], &elsewhere],
        )
        .await
        .expect("a seat being taken");
    let (organiser, lines, _) = serve(&db.url, &[("RUST_LOG", "info,service::tournaments=debug")]);
    let appended = next_line(&lines, |l| message(l) == "tournament step appended");
    assert_eq!(
        appended["fields"]["events"], 3,
        "the start and two pairings"
    );
    let killed = Command::new("kill")
        .args(["-KILL", &organiser.0.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    drop(organiser);
    locker.batch_execute("ROLLBACK").await.expect("rollback");
    // Nothing of the step remains.
    assert_eq!(tournament_state(&client, &stream).await, joined);

    // Another instance starts it and pairs everyone once, each game with its match.
    let (_again, lines, _) = serve(&db.url, &[]);
    let step = next_line(&lines, |l| message(l) == "tournament step");
    assert_eq!(step["fields"]["pairings"], 2);
    assert_eq!(tournament_state(&client, &stream).await, [8, 2, 2, 2]);
    let rows = client
        .query(
            "SELECT p.value, count(*) FROM events e, jsonb_array_elements_text(e.data->'players') p \
              WHERE e.stream_id = $1 AND e.event_type = 'pairing_made' GROUP BY 1",
            &[&stream],
        )
        .await
        .expect("pairings");
    assert_eq!(rows.len(), 4, "every player paired");
    assert!(rows.iter().all(|r| r.get::<_, i64>(1) == 1), "once");
}
