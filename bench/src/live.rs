//! `live-bench`: the client side of bench/live-vs-pgbench.sh: solo matches for wrk to play, and
//! many event streams held open on a running server.
//!
//! ```text
//! live-bench prepare --base http://127.0.0.1:PORT --matches N --out FILE.lua [--players 300] [--finished]
//! live-bench streams --base http://127.0.0.1:PORT --match-id ID [--count 1000]
//! ```
//!
//! `prepare` creates players, then N solo Four in a Row matches against the CPU at level 1 with
//! the player to move first (match i belongs to player i mod players), 32 requests at a time, and
//! writes FILE.lua for bench/live-moves.lua: one `token match_id` pair per line, in a long Lua
//! string (LuaJIT caps a chunk's constants, so not one table entry per pair). With `--finished`
//! each match is then played to its end (moves in columns 1, 4 and 7, then a resignation), for
//! bench/replays.lua to read back (bench/replica-reads.sh).
//!
//! `streams` creates `count` players and opens one event stream per player on match ID (watchers
//! need no seat), prints `ready open=.. failed=..` once every stream has been tried, then holds
//! them open and prints what they receive every 5 s until killed.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use futures_util::StreamExt;
use serde_json::{Value, json};

#[derive(Parser)]
#[command(about = "Live-path benchmark helper: prepare matches for wrk, hold event streams open")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Create players and solo matches; write their (token, match_id) pairs as a Lua file.
    Prepare {
        /// The server, e.g. http://127.0.0.1:8080.
        #[arg(long)]
        base: String,
        /// Solo matches to create.
        #[arg(long)]
        matches: usize,
        /// Players owning them (round robin).
        #[arg(long, default_value_t = 300)]
        players: usize,
        /// Requests in flight at once.
        #[arg(long, default_value_t = 32)]
        concurrency: usize,
        /// The Lua data file to write.
        #[arg(long)]
        out: std::path::PathBuf,
        /// Play each match to its end: three moves, then a resignation.
        #[arg(long)]
        finished: bool,
    },
    /// Open `count` event streams on one match, one player each, and hold them until killed.
    Streams {
        #[arg(long)]
        base: String,
        #[arg(long)]
        match_id: String,
        #[arg(long, default_value_t = 1000)]
        count: usize,
        /// Requests in flight at once while creating players and opening streams.
        #[arg(long, default_value_t = 32)]
        concurrency: usize,
    },
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<()> {
    let http = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .pool_max_idle_per_host(1024)
        .build()?;
    match Cli::parse().command {
        Command::Prepare {
            base,
            matches,
            players,
            concurrency,
            out,
            finished,
        } => {
            let sizes = (matches, players, concurrency);
            prepare(&http, &base, sizes, finished, &out).await
        }
        Command::Streams {
            base,
            match_id,
            count,
            concurrency,
        } => streams(&http, &base, &match_id, count, concurrency).await,
    }
}

/// `count` new players' tokens, `concurrency` requests at a time.
async fn new_players(
    http: &reqwest::Client,
    base: &str,
    prefix: &str,
    count: usize,
    concurrency: usize,
) -> Result<Vec<String>> {
    futures_util::stream::iter(0..count)
        .map(|i| async move {
            let res = http
                .post(format!("{base}/v1/players"))
                .json(&json!({"name": format!("{prefix}-{i}")}))
                .send()
                .await?;
            let body: Value = ok_json(res, "POST /v1/players").await?;
            Ok(body["token"].as_str().context("a token")?.to_owned())
        })
        .buffered(concurrency)
        .collect::<Vec<Result<String>>>()
        .await
        .into_iter()
        .collect()
}

/// The JSON body of a successful answer, or an error with the status and body.
async fn ok_json(res: reqwest::Response, what: &str) -> Result<Value> {
    let status = res.status();
    let text = res.text().await?;
    if !status.is_success() {
        bail!("{what}: {status}: {text}");
    }
    Ok(serde_json::from_str(&text)?)
}

async fn prepare(
    http: &reqwest::Client,
    base: &str,
    (matches, players, concurrency): (usize, usize, usize),
    finished: bool,
    out: &std::path::Path,
) -> Result<()> {
    let started = Instant::now();
    let players = players.clamp(1, matches.max(1));
    let tokens = new_players(http, base, "live", players, concurrency).await?;
    let done = AtomicU64::new(0);
    let ids: Vec<String> = futures_util::stream::iter(0..matches)
        .map(|i| {
            let (token, done) = (&tokens[i % players], &done);
            async move {
                let res = http
                    .post(format!("{base}/v1/matches"))
                    .bearer_auth(token)
                    .json(&json!({"game": "four_in_a_row", "cpu_level": 1, "first": "me"}))
                    .send()
                    .await?;
                let view = ok_json(res, "POST /v1/matches").await?;
                let id = view["match_id"].as_str().context("a match_id")?.to_owned();
                if finished {
                    finish(http, base, token, &id).await?;
                }
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                if n % 10_000 == 0 {
                    eprintln!("prepare: {n}/{matches} matches");
                }
                Ok(id)
            }
        })
        .buffered(concurrency)
        .collect::<Vec<Result<String>>>()
        .await
        .into_iter()
        .collect::<Result<_>>()?;
    let state = if finished { "finished " } else { "" };
    let mut lua = format!(
        "-- live-bench prepare: {matches} {state}solo four_in_a_row matches (cpu_level 1, first: me) \
         of {players} players on {base}.\n-- One \"token match_id\" pair per line.\nreturn [[\n"
    );
    for (i, id) in ids.iter().enumerate() {
        lua.push_str(&tokens[i % players]);
        lua.push(' ');
        lua.push_str(id);
        lua.push('\n');
    }
    lua.push_str("]]\n");
    std::fs::write(out, lua).with_context(|| format!("write {}", out.display()))?;
    let secs = started.elapsed().as_secs_f64();
    println!(
        "prepared matches={matches} players={players} seconds={secs:.1} matches_per_s={:.0} out={}",
        matches as f64 / secs,
        out.display()
    );
    Ok(())
}

/// Plays a prepared match to its end: moves in columns 1, 4 and 7 (legal whatever the CPU
/// replies, and no four in a row for anyone), then a resignation.
async fn finish(http: &reqwest::Client, base: &str, token: &str, id: &str) -> Result<()> {
    for column in ["1", "4", "7"] {
        let res = http
            .post(format!("{base}/v1/matches/{id}/moves"))
            .bearer_auth(token)
            .json(&json!({ "move": column }))
            .send()
            .await?;
        ok_json(res, "POST /v1/matches/{id}/moves").await?;
    }
    let res = http
        .post(format!("{base}/v1/matches/{id}/resign"))
        .bearer_auth(token)
        .json(&json!({}))
        .send()
        .await?;
    let view = ok_json(res, "POST /v1/matches/{id}/resign").await?;
    if view["status"] != "finished" {
        bail!("match {id} not finished after resigning: {view}");
    }
    Ok(())
}

/// What the open streams have seen.
#[derive(Default)]
struct Counts {
    open: AtomicU64,
    failed: AtomicU64,
    ended: AtomicU64,
    frames: AtomicU64,
    bytes: AtomicU64,
}

impl Counts {
    fn line(&self) -> String {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        format!(
            "open={} failed={} ended={} frames={} bytes={}",
            get(&self.open),
            get(&self.failed),
            get(&self.ended),
            get(&self.frames),
            get(&self.bytes)
        )
    }
}

async fn streams(
    http: &reqwest::Client,
    base: &str,
    match_id: &str,
    count: usize,
    concurrency: usize,
) -> Result<()> {
    let started = Instant::now();
    let tokens = new_players(http, base, "watch", count, concurrency).await?;
    println!(
        "streams: {count} players created in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    let counts = Arc::new(Counts::default());
    let url = format!("{base}/v1/matches/{match_id}/stream");
    let first_error = futures_util::stream::iter(tokens)
        .map(|token| {
            let (http, url, counts) = (http.clone(), url.clone(), counts.clone());
            async move {
                let opened = http
                    // A JWT is URL-safe as it is.
                    .get(format!("{url}?access_token={token}"))
                    .send()
                    .await
                    .map_err(anyhow::Error::from)
                    .and_then(|res| match res.status().is_success() {
                        true => Ok(res),
                        false => Err(anyhow::anyhow!("GET stream: {}", res.status())),
                    });
                match opened {
                    Ok(res) => {
                        counts.open.fetch_add(1, Ordering::Relaxed);
                        tokio::spawn(follow(res, counts));
                        None
                    }
                    Err(e) => {
                        counts.failed.fetch_add(1, Ordering::Relaxed);
                        Some(e.to_string())
                    }
                }
            }
        })
        .buffer_unordered(concurrency)
        .collect::<Vec<Option<String>>>()
        .await
        .into_iter()
        .flatten()
        .next();
    if let Some(e) = first_error {
        println!("streams: first failure: {e}");
    }
    println!(
        "ready {} seconds={:.1}",
        counts.line(),
        started.elapsed().as_secs_f64()
    );
    loop {
        tokio::time::sleep(Duration::from_secs(5)).await;
        println!("streams: {}", counts.line());
    }
}

/// Reads one event stream to its end, counting its frames (blocks with a `data:` line).
async fn follow(mut res: reqwest::Response, counts: Arc<Counts>) {
    let mut pending: Vec<u8> = Vec::new();
    while let Ok(Some(chunk)) = res.chunk().await {
        counts
            .bytes
            .fetch_add(chunk.len() as u64, Ordering::Relaxed);
        pending.extend_from_slice(&chunk);
        while let Some(end) = pending.windows(2).position(|w| w == b"\n\n") {
            let block: Vec<u8> = pending.drain(..end + 2).collect();
            if block.windows(5).any(|w| w == b"data:") {
                counts.frames.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    counts.open.fetch_sub(1, Ordering::Relaxed);
    counts.ended.fetch_add(1, Ordering::Relaxed);
}
