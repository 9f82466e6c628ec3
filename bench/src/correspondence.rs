//! `correspondence-bench`: many open correspondence games on one instance (issue 54): whether
//! its memory stays flat while they open, how long a move in any of them takes (each read from
//! the log: an instance keeps none of them in memory), and what their deadlines cost the
//! workers (rows read by time).
//!
//! ```text
//! cargo run --release -p bench --bin correspondence-bench -- [--matches 100000] [--moves 2000]
//! ```
//!
//! Starts the real application in this process on a random port, against a database of its own
//! on the server of `DATABASE_URL` (dropped at the end). Signs up `--players` players, then opens
//! `--matches` Four in a Row games at 3 days a move, each over HTTP as a player would (a room
//! with `days_per_move`, joined, its match started: three calls), noting this process's
//! resident memory (the server's) as they open. Then plays one move in each of `--moves` games
//! drawn at random, timing each call, and reads the plans of the workers' two queries: the
//! claim of real-time work (`match_work`, which holds no correspondence game) and the pass over
//! the correspondence deadlines (`correspondence_games`, by its index on `due`).

use std::time::Instant;

use anyhow::{Context, Result, ensure};
use clap::Parser;
use futures_util::StreamExt;
use serde_json::{Value, json};

use domain::rng::SplitMix64;

mod in_process;

#[derive(Parser)]
#[command(about = "Many open correspondence games: memory, a move's latency, deadlines as rows")]
struct Cli {
    /// Admin connection to the PostgreSQL server to use.
    #[arg(
        long,
        env = "DATABASE_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/postgres"
    )]
    database_url: String,
    /// Open correspondence games.
    #[arg(long, default_value_t = 100_000)]
    matches: usize,
    /// Players sharing them.
    #[arg(long, default_value_t = 1000)]
    players: usize,
    /// Moves played, one each in games drawn at random.
    #[arg(long, default_value_t = 2000)]
    moves: usize,
    /// Requests in flight at once at most.
    #[arg(long, default_value_t = 32)]
    concurrency: usize,
}

/// This process's resident memory, in MiB.
fn rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

/// Answers a client was asked to retry (503, after Retry-After), counted.
static RETRIED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A POST as a client sends it: with an Idempotency-Key, and sent again with it after a 503
/// (as its Retry-After asks, three times at most).
async fn call(
    http: &reqwest::Client,
    base: &str,
    token: Option<&str>,
    path: &str,
    body: Value,
) -> Result<Value> {
    let key = uuid::Uuid::new_v4().to_string();
    for attempt in 0.. {
        let mut req = http
            .post(format!("{base}{path}"))
            .header("idempotency-key", &key)
            .json(&body);
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        let res = req.send().await?;
        let status = res.status();
        let retry = res
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        let answer: Value = res.json().await.unwrap_or(Value::Null);
        if status == reqwest::StatusCode::SERVICE_UNAVAILABLE && attempt < 3 {
            RETRIED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            tokio::time::sleep(std::time::Duration::from_secs(retry.unwrap_or(1))).await;
            continue;
        }
        ensure!(status.is_success(), "{path}: {status} {answer}");
        return Ok(answer);
    }
    unreachable!("the loop returns")
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

#[tokio::main]
async fn main() -> Result<()> {
    let cli = Cli::parse();
    // The server's own log, when asked for (`RUST_LOG=warn`).
    if std::env::var_os("RUST_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .init();
    }
    in_process::with_server(&cli.database_url, "discs_corr_bench", |server| async move {
        let http = reqwest::Client::new();
        let base = server.base.as_str();
        let players: Vec<(String, String)> = futures_util::stream::iter(0..cli.players)
            .map(|i| {
                let http = &http;
                async move {
                    let p = call(http, base, None, "/v1/players", json!({"name": format!("C{i}")}))
                        .await?;
                    Ok::<_, anyhow::Error>((
                        p["player_id"].as_str().context("an id")?.to_owned(),
                        p["token"].as_str().context("a token")?.to_owned(),
                    ))
                }
            })
            .buffered(cli.concurrency)
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .collect::<Result<_>>()?;
        let before = rss_mib();
        println!(
            "{} players on database {}; the server's resident memory {before:.0} MiB",
            players.len(),
            server.name
        );

        // Open the games, noting the memory at each quarter.
        let started = Instant::now();
        let mut games: Vec<(usize, String)> = Vec::with_capacity(cli.matches);
        let mut memory = vec![(0usize, before)];
        for quarter in 0..4 {
            let from = cli.matches * quarter / 4;
            let to = cli.matches * (quarter + 1) / 4;
            let opened: Vec<Result<(usize, String)>> = futures_util::stream::iter(from..to)
                .map(|i| {
                    let (http, players) = (&http, &players);
                    async move {
                        let host = i % players.len();
                        let guest = (host + 1 + i / players.len()) % players.len();
                        let guest = if guest == host { (host + 1) % players.len() } else { guest };
                        let room = call(
                            http,
                            base,
                            Some(&players[host].1),
                            "/v1/rooms",
                            json!({"game": "four_in_a_row", "settings": {"days_per_move": 3}}),
                        )
                        .await?;
                        let code = room["code"].as_str().context("a code")?;
                        let room_id = room["room_id"].as_str().context("a room")?;
                        call(
                            http,
                            base,
                            Some(&players[guest].1),
                            &format!("/v1/rooms/{code}/join"),
                            json!({}),
                        )
                        .await?;
                        let m = call(
                            http,
                            base,
                            Some(&players[host].1),
                            &format!("/v1/rooms/{room_id}/matches"),
                            json!({}),
                        )
                        .await?;
                        Ok((host, m["match_id"].as_str().context("a match")?.to_owned()))
                    }
                })
                .buffer_unordered(cli.concurrency)
                .collect()
                .await;
            for g in opened {
                games.push(g?);
            }
            let rss = rss_mib();
            memory.push((games.len(), rss));
            println!(
                "{} games open after {:.0} s; resident memory {rss:.0} MiB",
                games.len(),
                started.elapsed().as_secs_f64()
            );
        }
        let opening = started.elapsed().as_secs_f64();

        // One move in each of `moves` games drawn at random: each read from the log.
        let mut rng = SplitMix64(54);
        let drawn: Vec<&(usize, String)> = (0..cli.moves.min(games.len()))
            .map(|_| &games[rng.index(games.len())])
            .collect::<std::collections::HashSet<_>>()
            .into_iter()
            .collect();
        let mut latencies: Vec<f64> = futures_util::stream::iter(drawn)
            .map(|(host, id)| {
                let (http, players) = (&http, &players);
                async move {
                    let at = Instant::now();
                    call(
                        http,
                        base,
                        Some(&players[*host].1),
                        &format!("/v1/matches/{id}/moves"),
                        json!({"move": "4"}),
                    )
                    .await?;
                    Ok::<_, anyhow::Error>(at.elapsed().as_secs_f64() * 1000.0)
                }
            })
            .buffer_unordered(cli.concurrency.min(8))
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .collect::<Result<_>>()?;
        latencies.sort_by(f64::total_cmp);
        let after = rss_mib();

        // The workers' due rows: what their claim reads with every game open and none due.
        let client = database::testing::raw_client(&server.db_url).await;
        let rows: i64 = client
            .query_one("SELECT count(*) FROM match_work", &[])
            .await?
            .get(0);
        let plan: Vec<String> = client
            .query(
                "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT match_id FROM match_work \
                  WHERE (lease_until IS NULL OR lease_until < now()) \
                    AND (state_due <= now() OR (watch1 AND seen1 <= now()) \
                         OR (watch2 AND seen2 <= now())) \
                  LIMIT 32 FOR UPDATE SKIP LOCKED",
                &[],
            )
            .await?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let due_plan: Vec<String> = client
            .query(
                "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT match_id FROM correspondence_games \
                  WHERE due <= now() ORDER BY due LIMIT 64",
                &[],
            )
            .await?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let due_rows: i64 = client
            .query_one("SELECT count(*) FROM correspondence_games", &[])
            .await?
            .get(0);

        println!();
        println!("| open games | resident memory (MiB) |");
        println!("|---:|---:|");
        for (n, rss) in &memory {
            println!("| {n} | {rss:.0} |");
        }
        println!("| {} (after {} moves) | {after:.0} |", games.len(), latencies.len());
        println!();
        println!(
            "opened {} games in {opening:.0} s ({:.0} a second, three calls each); {} answers were 503 and sent again",
            games.len(),
            games.len() as f64 / opening,
            RETRIED.load(std::sync::atomic::Ordering::Relaxed)
        );
        println!(
            "a move in a game drawn at random ({} moves, {} at once): p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            latencies.len(),
            cli.concurrency.min(8),
            percentile(&latencies, 0.5),
            percentile(&latencies, 0.99),
            latencies.last().copied().unwrap_or(f64::NAN)
        );
        println!("match_work rows: {rows}; the workers' claim of real-time work:");
        for line in plan {
            println!("    {line}");
        }
        println!("correspondence_games rows: {due_rows}; the workers' pass over them, none due:");
        for line in due_plan {
            println!("    {line}");
        }
        Ok(())
    })
    .await
}
