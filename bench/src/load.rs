//! `load-bench`: many players playing solo games over HTTP at once; moves/s and latency.
//!
//! `cargo run --release -p bench --bin load-bench -- [--players 1,8,32,128] [--seconds 15]`
//!
//! Starts the real application in this process on a random port, against a database of its own
//! on the server of `DATABASE_URL` (dropped at the end). Each simulated player creates a solo
//! Four in a Row match against the CPU at level 1 and plays it to the end, again and again:
//! `POST /moves` (the measured call: decide, append, the CPU's reply appended, answer), then
//! `GET` the match for its next legal moves.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Parser;
use serde_json::{Value, json};
use tokio::sync::Mutex;

mod in_process;

#[derive(Parser)]
#[command(about = "HTTP load: concurrent solo games, moves/s and latency")]
struct Cli {
    /// Admin connection to the PostgreSQL server to use.
    #[arg(
        long,
        env = "DATABASE_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/postgres"
    )]
    database_url: String,
    /// Concurrent players, one run each.
    #[arg(long, value_delimiter = ',', default_value = "1,8,32,128")]
    players: Vec<usize>,
    /// Length of each run.
    #[arg(long, default_value_t = 15)]
    seconds: u64,
}

#[derive(Default)]
struct Stats {
    latencies_us: Vec<u64>,
    errors: u64,
    games: u64,
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<()> {
    let cli = Cli::parse();
    let cli = &cli;
    in_process::with_server(&cli.database_url, "discs_load", |server| async move {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(256)
            .build()?;
        println!(
            "server={} database={} ({}) cores={}",
            server.base,
            server.name,
            server.db_url,
            std::thread::available_parallelism().map_or(0, usize::from)
        );
        for &players in &cli.players {
            run(
                &http,
                &server.base,
                players,
                Duration::from_secs(cli.seconds),
            )
            .await?;
        }
        Ok(())
    })
    .await
}

async fn run(http: &reqwest::Client, base: &str, players: usize, length: Duration) -> Result<()> {
    let stats = Arc::new(Mutex::new(Stats::default()));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..players {
        let (http, base, stats) = (http.clone(), base.to_owned(), stats.clone());
        tasks.push(tokio::spawn(async move {
            player(&http, &base, i, start + length, stats).await
        }));
    }
    for t in tasks {
        t.await??;
    }
    let secs = start.elapsed().as_secs_f64();
    let mut s = stats.lock().await;
    s.latencies_us.sort_unstable();
    let n = s.latencies_us.len();
    let pct = |p: f64| {
        s.latencies_us
            .get(((n as f64 * p) as usize).min(n.saturating_sub(1)))
            .copied()
            .unwrap_or(0) as f64
            / 1000.0
    };
    println!(
        "players={players} moves={n} seconds={secs:.1} moves_per_s={:.0} p50_ms={:.2} p99_ms={:.2} games={} errors={}",
        n as f64 / secs,
        pct(0.50),
        pct(0.99),
        s.games,
        s.errors
    );
    Ok(())
}

async fn player(
    http: &reqwest::Client,
    base: &str,
    i: usize,
    until: Instant,
    stats: Arc<Mutex<Stats>>,
) -> Result<()> {
    let me: Value = http
        .post(format!("{base}/v1/players"))
        .json(&json!({"name": format!("load-{i}")}))
        .send()
        .await?
        .json()
        .await?;
    let token = me["token"].as_str().context("a token")?.to_owned();
    let mut local = Stats::default();
    while Instant::now() < until {
        let view: Value = http
            .post(format!("{base}/v1/matches"))
            .bearer_auth(&token)
            .json(&json!({"game": "four_in_a_row", "cpu_level": 1}))
            .send()
            .await?
            .json()
            .await?;
        let id = view["match_id"].as_str().context("a match")?.to_owned();
        let mut view = view;
        while view["status"] == "active" && Instant::now() < until {
            let legal = view["legal_moves"].as_array().cloned().unwrap_or_default();
            let Some(mv) = legal.get(i % legal.len().max(1)).and_then(Value::as_str) else {
                break;
            };
            let started = Instant::now();
            let res = http
                .post(format!("{base}/v1/matches/{id}/moves"))
                .bearer_auth(&token)
                .json(&json!({"move": mv}))
                .send()
                .await?;
            let ok = res.status().is_success();
            let _ = res.bytes().await?;
            if ok {
                local
                    .latencies_us
                    .push(started.elapsed().as_micros() as u64);
            } else {
                local.errors += 1;
            }
            view = http
                .get(format!("{base}/v1/matches/{id}"))
                .bearer_auth(&token)
                .send()
                .await?
                .json()
                .await?;
        }
        if view["status"] == "finished" {
            local.games += 1;
        }
    }
    let mut s = stats.lock().await;
    s.latencies_us.extend(local.latencies_us);
    s.errors += local.errors;
    s.games += local.games;
    Ok(())
}
