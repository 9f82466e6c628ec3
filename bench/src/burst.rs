//! `ranked-burst`: a burst of fresh players queueing for ranked games at once, over HTTP against
//! the real server; how long each ticket waits for its match, and whether every pairing is right.
//!
//! ```text
//! cargo run --release -p bench --bin ranked-burst -- [--players 5000] [--within 10] [--pools 1]
//! ```
//!
//! Starts the real application in this process on a random port (its waves, projections and
//! workers running as in `discs serve`, default schedule), against a database of its own on the
//! server of `DATABASE_URL` (dropped at the end). Creates the players first, then sends their
//! `POST /v1/queue` evenly over `--within` seconds (player i to pool i mod `--pools`: Four in a
//! Row and Reversi without a turn limit, then at 30 s and 60 s). A reader of the log (the
//! commit-safe `read_types_after`) notes when each `ticket_matched` becomes visible.
//!
//! It reports, per ticket, the wait from sending its request to its match being in the log
//! (the client's clock: an upper bound of the server's, which starts when the ticket commits),
//! and the `waited_ms` the wave recorded (the server's clock, ticket opened to the wave that
//! paired it); p50, p99 and max of both; pairings written per second (pairings over the span
//! from the first to the last becoming visible). Then it checks what a player would: every
//! ticket matched exactly once, each match with two distinct players who both got it, and each
//! match playable at once (the player to move plays a legal move: 200). Exits non-zero if a
//! check fails.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use clap::Parser;
use discs::config::ServeConfig;
use eventlog::{Checkpoint, EventLog};
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::sync::Mutex;

mod in_process;

#[derive(Parser)]
#[command(about = "Ranked bursts: many fresh players queueing at once, time to match")]
struct Cli {
    /// Admin connection to the PostgreSQL server to use.
    #[arg(
        long,
        env = "DATABASE_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/postgres"
    )]
    database_url: String,
    /// Players queueing (one ticket each).
    #[arg(long, default_value_t = 5000)]
    players: usize,
    /// Seconds over which the tickets are sent, evenly.
    #[arg(long, default_value_t = 10.0)]
    within: f64,
    /// Pools used (1 to 6): both games, without a turn limit, then 30 s and 60 s.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=6))]
    pools: u8,
    /// Requests in flight at once at most.
    #[arg(long, default_value_t = 256)]
    concurrency: usize,
    /// Seconds after the last ticket to wait for the matches before giving up.
    #[arg(long, default_value_t = 60)]
    patience: u64,
}

/// The pools in the order `--pools` takes them.
const POOLS: [(&str, Option<u32>); 6] = [
    ("four_in_a_row", None),
    ("reversi", None),
    ("four_in_a_row", Some(30)),
    ("reversi", Some(30)),
    ("four_in_a_row", Some(60)),
    ("reversi", Some(60)),
];

struct Player {
    id: String,
    token: String,
}

/// A ticket as the client saw it open.
struct Sent {
    player: usize,
    at: Instant,
}

/// A `ticket_matched` as the log reader saw it.
struct Seen {
    at: Instant,
    match_id: String,
    opponent: String,
    waited_ms: u64,
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<()> {
    let cli = Cli::parse();
    // The server's own log, when asked for (`RUST_LOG=service::ranked=info`: each wave).
    if std::env::var_os("RUST_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .init();
    }
    let cli = &cli;
    in_process::with_server(&cli.database_url, "discs_burst", |server| async move {
        let defaults = ServeConfig::defaults(&server.db_url)?;
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(cli.concurrency)
            .build()?;
        println!(
            "server={} database={} cores={} players={} within_s={} pools={} \
             wave_interval_ms={} wave_trigger={}",
            server.base,
            server.name,
            std::thread::available_parallelism().map_or(0, usize::from),
            cli.players,
            cli.within,
            cli.pools,
            defaults.core.wave_interval_ms,
            defaults.core.wave_trigger,
        );
        run(cli, &http, &server.base, &server.db_url).await
    })
    .await
}

async fn run(cli: &Cli, http: &reqwest::Client, base: &str, db_url: &str) -> Result<()> {
    let started = Instant::now();
    let players: Vec<Player> = futures_util::stream::iter(0..cli.players)
        .map(|i| sign_up(http, base, i))
        .buffered(cli.concurrency)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<_>>()?;
    println!(
        "signed_up={} seconds={:.1}",
        players.len(),
        started.elapsed().as_secs_f64()
    );

    // The log reader, from the end of the log as it is now.
    let log = EventLog::new(database::connect(db_url, 2).await?);
    let from = log.last_checkpoint().await?;
    let seen: Arc<Mutex<HashMap<String, Vec<Seen>>>> = Arc::default();
    // Each pool pairs all its tickets but one when it has an odd count.
    let pools = usize::from(cli.pools);
    let expected: usize = (0..pools)
        .map(|k| {
            let n = (cli.players + pools - 1 - k) / pools;
            n - n % 2
        })
        .sum();
    let tokens: Arc<HashMap<String, String>> = Arc::new(
        players
            .iter()
            .map(|p| (p.id.clone(), p.token.clone()))
            .collect(),
    );
    let reader = tokio::spawn(read_matches(
        log,
        from,
        seen.clone(),
        expected,
        Play {
            http: http.clone(),
            base: base.to_owned(),
            tokens,
        },
    ));

    let burst = Instant::now();
    let sent = queue_everyone(cli, http, base, &players, burst).await?;
    let queued_in = burst.elapsed();
    println!(
        "queued={} seconds={:.2} tickets_per_s={:.0}",
        sent.len(),
        queued_in.as_secs_f64(),
        sent.len() as f64 / queued_in.as_secs_f64()
    );

    let deadline = Instant::now() + Duration::from_secs(cli.patience);
    let plays = match tokio::time::timeout_at(deadline.into(), reader).await {
        Ok(plays) => plays??,
        Err(_) => {
            println!("gave up after {} s of patience", cli.patience);
            Vec::new()
        }
    };
    let seen = seen.lock().await;
    report(&players, &sent, &seen, burst, pools)?;
    let mut failed = Vec::new();
    let count = plays.len();
    for p in plays {
        if let Err(e) = p.await? {
            failed.push(e);
        }
    }
    println!(
        "played_first_moves={} failed={} (each match's first move as soon as it was seen, \
         then a resignation)",
        count - failed.len(),
        failed.len(),
    );
    if let Some(e) = failed.first() {
        bail!("{} matches not playable, e.g. {e:#}", failed.len());
    }
    Ok(())
}

/// What the log reader needs to play a match it sees: the server and every player's token.
struct Play {
    http: reqwest::Client,
    base: String,
    tokens: Arc<HashMap<String, String>>,
}

/// A match as its players find it at once: the player to move plays a legal move (200), then
/// resigns (the bench's players play one move; their turn timers would otherwise load the
/// server with timeouts that no burst of real players leaves behind).
async fn first_move(play: &Play, id: &str, someone: &str) -> Result<()> {
    let token = play.tokens.get(someone).context("a player of the match")?;
    let view: Value = play
        .http
        .get(format!("{}/v1/matches/{id}", play.base))
        .bearer_auth(token)
        .send()
        .await?
        .json()
        .await?;
    let to_move = view["to_move"].as_u64().context("to_move")?;
    let mover = view["seats"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["seat"].as_u64() == Some(to_move)))
        .and_then(|s| s["player_id"].as_str())
        .context("the seat to move")?;
    let token = play.tokens.get(mover).context("the player to move")?;
    let mv = view["legal_moves"][0].as_str().context("a legal move")?;
    let res = play
        .http
        .post(format!("{}/v1/matches/{id}/moves", play.base))
        .bearer_auth(token)
        .json(&json!({"move": mv, "expected_version": view["version"]}))
        .send()
        .await?;
    ensure!(
        res.status().as_u16() == 200,
        "move in {id}: {}",
        res.status()
    );
    let res = play
        .http
        .post(format!("{}/v1/matches/{id}/resign", play.base))
        .bearer_auth(token)
        .json(&json!({}))
        .send()
        .await?;
    ensure!(
        res.status().as_u16() == 200,
        "resign in {id}: {}",
        res.status()
    );
    Ok(())
}

/// Sends every player's `POST /v1/queue` evenly over `--within` seconds from `burst`: each
/// ticket's id, with who sent it and when.
async fn queue_everyone(
    cli: &Cli,
    http: &reqwest::Client,
    base: &str,
    players: &[Player],
    burst: Instant,
) -> Result<Vec<(String, Sent)>> {
    let step = Duration::from_secs_f64(cli.within / cli.players.max(1) as f64);
    futures_util::stream::iter(players.iter().enumerate())
        .map(|(i, p)| {
            let (game, turn) = POOLS[i % usize::from(cli.pools)];
            let due = burst + step * u32::try_from(i).unwrap_or(u32::MAX);
            async move {
                tokio::time::sleep_until(due.into()).await;
                let at = Instant::now();
                let res = http
                    .post(format!("{base}/v1/queue"))
                    .bearer_auth(&p.token)
                    .json(&json!({"game": game, "turn_seconds": turn}))
                    .send()
                    .await?;
                let status = res.status();
                let body: Value = res.json().await?;
                ensure!(status.as_u16() == 201, "queue: {status} {body}");
                let ticket = body["ticket_id"].as_str().context("ticket_id")?.to_owned();
                Ok((ticket, Sent { player: i, at }))
            }
        })
        .buffer_unordered(cli.concurrency)
        .collect::<Vec<Result<_>>>()
        .await
        .into_iter()
        .collect()
}

async fn sign_up(http: &reqwest::Client, base: &str, i: usize) -> Result<Player> {
    let me: Value = http
        .post(format!("{base}/v1/players"))
        .json(&json!({"name": format!("burst-{i}")}))
        .send()
        .await?
        .json()
        .await?;
    Ok(Player {
        id: me["player_id"].as_str().context("player_id")?.to_owned(),
        token: me["token"].as_str().context("token")?.to_owned(),
    })
}

/// Notes each `ticket_matched` when it becomes visible, and has each new match played at once,
/// until `expected` tickets are matched; the plays, to await.
async fn read_matches(
    log: EventLog,
    mut from: Checkpoint,
    seen: Arc<Mutex<HashMap<String, Vec<Seen>>>>,
    expected: usize,
    play: Play,
) -> Result<Vec<tokio::task::JoinHandle<Result<()>>>> {
    let play = Arc::new(play);
    let mut plays = Vec::new();
    let mut matches = std::collections::HashSet::new();
    let mut count = 0;
    while count < expected {
        let events = log
            .read_types_after(from, &["ticket_matched"], 10_000)
            .await?;
        let at = Instant::now();
        let Some(last) = events.last() else {
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        };
        from = last.checkpoint();
        let mut seen = seen.lock().await;
        for e in &events {
            let ticket = e.stream.trim_start_matches("ticket-").to_owned();
            let one = Seen {
                at,
                match_id: e.data["match_id"].as_str().unwrap_or_default().to_owned(),
                opponent: e.data["opponent"].as_str().unwrap_or_default().to_owned(),
                waited_ms: e.data["waited_ms"].as_u64().unwrap_or(u64::MAX),
            };
            if matches.insert(one.match_id.clone()) {
                let (play, id, someone) =
                    (play.clone(), one.match_id.clone(), one.opponent.clone());
                plays.push(tokio::spawn(async move {
                    first_move(&play, &id, &someone).await
                }));
            }
            seen.entry(ticket).or_default().push(one);
            count += 1;
        }
    }
    Ok(plays)
}

fn percentiles(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let at = |p: f64| v[((v.len() as f64 * p) as usize).min(v.len() - 1)];
    (at(0.50), at(0.99), v[v.len() - 1])
}

/// Prints the waits and checks the pairings: every ticket matched once, two distinct players
/// per match, each naming the other.
fn report(
    players: &[Player],
    sent: &[(String, Sent)],
    seen: &HashMap<String, Vec<Seen>>,
    burst: Instant,
    pools: usize,
) -> Result<()> {
    let mut problems = Vec::new();
    // A pool with an odd count of tickets leaves one of them waiting.
    let mut left_over = vec![0usize; pools];
    let (mut observed, mut recorded) = (Vec::new(), Vec::new());
    let mut by_match: HashMap<&str, Vec<usize>> = HashMap::new();
    for (ticket, s) in sent {
        match seen.get(ticket).map(Vec::as_slice) {
            None | Some([]) => {
                let pool = s.player % pools;
                left_over[pool] += 1;
                let in_pool = sent
                    .iter()
                    .filter(|(_, o)| o.player % pools == pool)
                    .count();
                if left_over[pool] > in_pool % 2 {
                    problems.push(format!("ticket {ticket} not matched"));
                }
            }
            Some([one]) => {
                observed.push(one.at.saturating_duration_since(s.at).as_secs_f64() * 1000.0);
                recorded.push(one.waited_ms as f64);
                by_match.entry(&one.match_id).or_default().push(s.player);
                let opponent_ok = sent.iter().any(|(t, o)| {
                    players[o.player].id == one.opponent
                        && seen
                            .get(t)
                            .is_some_and(|v| v.iter().any(|x| x.match_id == one.match_id))
                });
                if !opponent_ok {
                    problems.push(format!("ticket {ticket}: its opponent is not in its match"));
                }
            }
            Some(many) => problems.push(format!("ticket {ticket} matched {} times", many.len())),
        }
    }
    for (id, seated) in &by_match {
        if seated.len() != 2 || seated[0] == seated[1] {
            problems.push(format!("match {id} holds players {seated:?}"));
        }
    }
    if !observed.is_empty() {
        let matched = observed.len();
        let (p50, p99, max) = percentiles(observed);
        let (r50, r99, rmax) = percentiles(recorded);
        let times: Vec<Instant> = seen.values().flatten().map(|s| s.at).collect();
        let first = times.iter().min().copied().unwrap_or(burst);
        let last = times.iter().max().copied().unwrap_or(burst);
        let span = last
            .saturating_duration_since(first)
            .as_secs_f64()
            .max(1e-3);
        println!(
            "matched_tickets={} matches={} wait_ms p50={p50:.0} p99={p99:.0} max={max:.0} \
             (sent to visible in the log) waited_ms p50={r50:.0} p99={r99:.0} max={rmax:.0} \
             (server: opened to its wave) last_match_after_s={:.2} pairings_per_s={:.0}",
            matched,
            by_match.len(),
            last.saturating_duration_since(burst).as_secs_f64(),
            by_match.len() as f64 / span,
        );
    }
    if !problems.is_empty() {
        for p in problems.iter().take(20) {
            println!("problem: {p}");
        }
        bail!("{} problems", problems.len());
    }
    Ok(())
}
