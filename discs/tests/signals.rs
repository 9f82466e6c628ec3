//! The real `discs serve` process under a real SIGTERM: requests in flight finish, open event
//! streams end with a reconnect hint, the process exits 0; its logs are JSON lines that carry
//! each request's id.

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

// Two threads: the test blocks on the log while the requests it spawned go on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_requests_in_flight_finish_ends_streams_and_exits_zero() {
    let db = eventlog::testing::TestDb::migrated(1).await;
    let mut server = Server(
        Command::new(env!("CARGO_BIN_EXE_discs"))
            .arg("serve")
            .env("DATABASE_URL", &db.url)
            .env("DISCS_ADDR", "127.0.0.1:0")
            .env("DISCS_LOG_FORMAT", "json")
            .env("DISCS_SHUTDOWN_SECONDS", "30")
            .env("RUST_LOG", "info")
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
    let base = format!("http://127.0.0.1:{port}");
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
