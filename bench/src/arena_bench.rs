//! `arena-bench`: a tournament of many players over the real server, end to end: how long a
//! player waits from the end of a game to their next pairing, and how long a result takes to
//! show in the standings; or, with `--format swiss`, how long the first round of a Swiss
//! tournament takes from its start to its pairings being in the log.
//!
//! ```text
//! cargo run --release -p bench --bin arena-bench -- [--players 10000] [--window 120]
//!     [--think 20..40] [--format arena|swiss]
//! ```
//!
//! Starts the real application in this process (its organiser, projections and workers running
//! as in `discs serve`) on a database of its own on the server of `DATABASE_URL` (dropped at the
//! end). Signs the players up and has an admin create a rated Four in a Row arena (10 minutes,
//! 60 s turns) that starts once they have all joined. Each player is an in-process client: a
//! reader of the log (the commit-safe `read_types_after`, as the tournament's event stream
//! follows it) hands each `pairing_made` to its two players; each game lasts a think time drawn
//! per game from `--think` seconds, then one of the two (by the match id) resigns over HTTP (a
//! view, then the resignation). After `--window` seconds of play it stops and measures, from the
//! log (the server's clock): for every game that ended in the window (but its last 5 s), the wait
//! from its `match_ended` to the player's next `pairing_made`, p50/p99/max, and how many were
//! not paired again by the end; and, from a sampler reading the standings as a player does every
//! 100 ms, the time from a game's end to the first sample whose standings hold its result.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use api::auth::{Keys, Role};
use clap::Parser;
use futures_util::StreamExt;
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use tokio::sync::mpsc;
use uuid::Uuid;

use domain::ids::PlayerId;
use eventlog::EventLog;

mod in_process;

#[derive(Parser)]
#[command(about = "A large arena over the real server: game end to next pairing")]
struct Cli {
    /// Admin connection to the PostgreSQL server to use.
    #[arg(
        long,
        env = "DATABASE_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/postgres"
    )]
    database_url: String,
    #[arg(long, default_value_t = 10_000)]
    players: usize,
    /// Seconds of play measured.
    #[arg(long, default_value_t = 120)]
    window: u64,
    /// A game's length in seconds, drawn per game between these (`20..40`).
    #[arg(long, default_value = "20..40")]
    think: String,
    /// `arena`, or `swiss` (its first round only).
    #[arg(long, default_value = "arena")]
    format: String,
    /// Requests in flight at once at most while signing up and joining.
    #[arg(long, default_value_t = 128)]
    concurrency: usize,
}

struct Player {
    id: String,
    token: String,
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<()> {
    let cli = Cli::parse();
    if std::env::var_os("RUST_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .init();
    }
    let (lo, hi) = cli
        .think
        .split_once("..")
        .and_then(|(a, b)| Some((a.parse::<f64>().ok()?, b.parse::<f64>().ok()?)))
        .context("--think takes `low..high` in seconds")?;
    ensure!(0.0 <= lo && lo <= hi, "--think: low..high");
    let cli = &cli;
    in_process::with_server(&cli.database_url, "discs_arena", |server| async move {
        println!(
            "server={} database={} cores={} players={} format={} window_s={} think_s={lo}..{hi}",
            server.base,
            server.name,
            std::thread::available_parallelism().map_or(0, usize::from),
            cli.players,
            cli.format,
            cli.window,
        );
        run(cli, &server, (lo, hi)).await
    })
    .await
}

async fn run(cli: &Cli, server: &in_process::Server, think: (f64, f64)) -> Result<()> {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(cli.concurrency)
        .build()?;
    let base = server.base.as_str();
    let started = Instant::now();
    let players: Vec<Player> = futures_util::stream::iter(0..cli.players)
        .map(|i| sign_up(&http, base, i))
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
    let admin = sign_up(&http, base, usize::MAX).await?;
    let secret = discs::startup::server_secret(&server.db_url).await?;
    let keys = Keys::new(&secret, None, 1)?;
    let admin_token = keys.issue(
        admin.id.parse::<PlayerId>()?,
        Role::Admin,
        0,
        OffsetDateTime::now_utc(),
    )?;
    // Joining takes a while: the start leaves room for it.
    let lead = Duration::from_secs_f64(20.0 + cli.players as f64 / 150.0);
    let starts_at = OffsetDateTime::now_utc() + lead;
    let body = match cli.format.as_str() {
        "swiss" => json!({"rounds": 9}),
        _ => json!({"minutes": 10}),
    };
    let mut body = body;
    for (k, v) in [
        ("game", json!("four_in_a_row")),
        ("format", json!(cli.format)),
        ("name", json!("Bench")),
        ("starts_at", json!(starts_at.format(&Rfc3339)?)),
        ("rated", json!(true)),
        ("settings", json!({"turn_seconds": 60})),
    ] {
        body[k] = v;
    }
    let created: Value = http
        .post(format!("{base}/v1/tournaments"))
        .bearer_auth(&admin_token)
        .json(&body)
        .send()
        .await?
        .json()
        .await?;
    let id = created["tournament_id"]
        .as_str()
        .with_context(|| format!("a tournament: {created}"))?
        .to_owned();
    let joined = Instant::now();
    let joins: Vec<Result<()>> = futures_util::stream::iter(&players)
        .map(|p| {
            let (http, id) = (&http, &id);
            async move {
                let res = http
                    .post(format!("{base}/v1/tournaments/{id}/join"))
                    .bearer_auth(&p.token)
                    .send()
                    .await?;
                ensure!(res.status().is_success(), "join: {}", res.text().await?);
                Ok(())
            }
        })
        .buffer_unordered(cli.concurrency)
        .collect()
        .await;
    joins.into_iter().collect::<Result<()>>()?;
    println!(
        "joined={} seconds={:.1} starts_in_s={:.1}",
        players.len(),
        joined.elapsed().as_secs_f64(),
        (starts_at - OffsetDateTime::now_utc()).as_seconds_f64()
    );
    ensure!(
        OffsetDateTime::now_utc() < starts_at,
        "the joins took longer than the lead"
    );

    let log = EventLog::new(database::connect(&server.db_url, 4).await?);
    let stream = format!("tournament-{id}");
    if cli.format == "swiss" {
        return swiss_round(&log, &stream, starts_at, players.len()).await;
    }

    // The players, each with the channel its pairings come on.
    let stop = Arc::new(AtomicBool::new(false));
    let mut inboxes: HashMap<String, mpsc::UnboundedSender<String>> = HashMap::new();
    let mut tasks = Vec::new();
    for (i, p) in players.iter().enumerate() {
        let (tx, rx) = mpsc::unbounded_channel();
        inboxes.insert(p.id.clone(), tx);
        tasks.push(tokio::spawn(play(
            http.clone(),
            base.to_owned(),
            p.id.clone(),
            p.token.clone(),
            rx,
            think,
            i as u64,
            stop.clone(),
        )));
    }
    let follower = tokio::spawn(follow(log.clone(), stream.clone(), inboxes, stop.clone()));
    let sampler = tokio::spawn(sample(
        http.clone(),
        base.to_owned(),
        players[0].token.clone(),
        id.clone(),
        stop.clone(),
    ));
    let until = starts_at + Duration::from_secs(cli.window);
    tokio::time::sleep(Duration::from_secs_f64(
        (until - OffsetDateTime::now_utc())
            .as_seconds_f64()
            .max(0.0),
    ))
    .await;
    stop.store(true, Ordering::Relaxed);
    follower.await??;
    let samples = sampler.await??;
    for t in tasks {
        t.abort();
    }
    measure(&server.db_url, &stream, starts_at, until, &samples).await
}

async fn sign_up(http: &reqwest::Client, base: &str, i: usize) -> Result<Player> {
    let me: Value = http
        .post(format!("{base}/v1/players"))
        .json(&json!({"name": format!("arena-{i}")}))
        .send()
        .await?
        .json()
        .await?;
    Ok(Player {
        id: me["player_id"].as_str().context("player_id")?.to_owned(),
        token: me["token"].as_str().context("token")?.to_owned(),
    })
}

/// Hands each `pairing_made` of `stream` to its two players as it becomes visible.
async fn follow(
    log: EventLog,
    stream: String,
    inboxes: HashMap<String, mpsc::UnboundedSender<String>>,
    stop: Arc<AtomicBool>,
) -> Result<()> {
    let mut from = log.last_checkpoint().await?;
    while !stop.load(Ordering::Relaxed) {
        let events = log
            .read_types_after(from, &["pairing_made"], 10_000)
            .await?;
        let Some(last) = events.last() else {
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        };
        from = last.checkpoint();
        for e in events.iter().filter(|e| e.stream == stream) {
            let m = e.data["match_id"].as_str().unwrap_or_default().to_owned();
            for p in e.data["players"].as_array().into_iter().flatten() {
                if let Some(inbox) = p.as_str().and_then(|p| inboxes.get(p)) {
                    let _ = inbox.send(m.clone());
                }
            }
        }
    }
    Ok(())
}

/// A player: each game they are paired into lasts a think time, then the loser (by the match
/// id: its first byte's parity picks seat 1 or 2) resigns.
#[allow(clippy::too_many_arguments)]
async fn play(
    http: reqwest::Client,
    base: String,
    me: String,
    token: String,
    mut pairings: mpsc::UnboundedReceiver<String>,
    think: (f64, f64),
    seed: u64,
    stop: Arc<AtomicBool>,
) -> Result<()> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    while let Some(m) = pairings.recv().await {
        // xorshift: a think time per game, the same every run.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let u = (state % 10_000) as f64 / 10_000.0;
        tokio::time::sleep(Duration::from_secs_f64(think.0 + u * (think.1 - think.0))).await;
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        let view: Value = http
            .get(format!("{base}/v1/matches/{m}"))
            .bearer_auth(&token)
            .send()
            .await?
            .json()
            .await?;
        let loser_seat1 = Uuid::parse_str(&m)
            .map_or(0, |u| u.as_bytes()[0])
            .is_multiple_of(2);
        let me_seat1 = view["seats"][0]["player_id"].as_str() == Some(me.as_str());
        if me_seat1 == loser_seat1 && view["status"] == "active" {
            let _ = http
                .post(format!("{base}/v1/matches/{m}/resign"))
                .bearer_auth(&token)
                .json(&json!({"expected_version": view["version"]}))
                .send()
                .await?;
        }
    }
    Ok(())
}

/// The version of tournament `id` its standings count up to, as a player reads them
/// (`GET /v1/tournaments/{id}/standings?limit=1`), every 100 ms, with the time.
async fn sample(
    http: reqwest::Client,
    base: String,
    token: String,
    id: String,
    stop: Arc<AtomicBool>,
) -> Result<Vec<(OffsetDateTime, i64)>> {
    let mut samples = Vec::new();
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    while !stop.load(Ordering::Relaxed) {
        tick.tick().await;
        let page: Value = http
            .get(format!("{base}/v1/tournaments/{id}/standings?limit=1"))
            .bearer_auth(&token)
            .send()
            .await?
            .json()
            .await?;
        samples.push((
            OffsetDateTime::now_utc(),
            page["version"].as_i64().unwrap_or(0),
        ));
    }
    Ok(samples)
}

fn percentiles(mut xs: Vec<f64>) -> String {
    if xs.is_empty() {
        return "n=0".into();
    }
    xs.sort_by(f64::total_cmp);
    let at = |q: f64| xs[((xs.len() as f64 * q).ceil() as usize).clamp(1, xs.len()) - 1];
    format!(
        "n={} p50_ms={:.0} p99_ms={:.0} max_ms={:.0}",
        xs.len(),
        at(0.50) * 1e3,
        at(0.99) * 1e3,
        xs[xs.len() - 1] * 1e3
    )
}

/// From the log: each game's end to its players' next pairings; each result's visibility in
/// the standings.
async fn measure(
    db_url: &str,
    stream: &str,
    starts_at: OffsetDateTime,
    until: OffsetDateTime,
    samples: &[(OffsetDateTime, i64)],
) -> Result<()> {
    let client = database::testing::raw_client(db_url).await;
    let rows = client
        .query(
            "SELECT event_type, version, data, recorded_at FROM events \
              WHERE stream_id = $1 AND event_type IN ('pairing_made', 'result_recorded') \
              ORDER BY version",
            &[&stream],
        )
        .await?;
    // match → (players, paired at); match → version of its result.
    let mut games: HashMap<String, (Vec<String>, OffsetDateTime)> = HashMap::new();
    let mut by_player: HashMap<String, Vec<OffsetDateTime>> = HashMap::new();
    let mut recorded: HashMap<String, i64> = HashMap::new();
    for r in &rows {
        let data: Value = r.get(2);
        let m = data["match_id"].as_str().unwrap_or_default().to_owned();
        if r.get::<_, &str>(0) == "pairing_made" {
            let at: OffsetDateTime = r.get(3);
            let players: Vec<String> = data["players"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p.as_str().map(str::to_owned))
                .collect();
            for p in &players {
                by_player.entry(p.clone()).or_default().push(at);
            }
            games.insert(m, (players, at));
        } else {
            recorded.insert(m, r.get(1));
        }
    }
    let streams: Vec<String> = games.keys().map(|m| format!("match-{m}")).collect();
    let ended: HashMap<String, OffsetDateTime> = client
        .query(
            "SELECT stream_id, recorded_at FROM events \
              WHERE event_type = 'match_ended' AND stream_id = ANY($1)",
            &[&streams],
        )
        .await?
        .iter()
        .map(|r| {
            let s: String = r.get(0);
            (s.trim_start_matches("match-").to_owned(), r.get(1))
        })
        .collect();
    let cutoff = until - Duration::from_secs(5);
    let (mut waits, mut unpaired) = (Vec::new(), 0usize);
    let mut visible = Vec::new();
    for (m, (players, _)) in &games {
        let Some(&end) = ended.get(m) else { continue };
        if end < starts_at || end > cutoff {
            continue;
        }
        for p in players {
            match by_player[p].iter().find(|&&at| at >= end) {
                Some(next) => waits.push((*next - end).as_seconds_f64()),
                None => unpaired += 1,
            }
        }
        if let Some(&v) = recorded.get(m)
            && let Some((at, _)) = samples.iter().find(|(_, sv)| *sv >= v)
        {
            visible.push((*at - end).as_seconds_f64().max(0.0));
        }
    }
    let ended_in_window = ended
        .values()
        .filter(|&&e| e >= starts_at && e <= cutoff)
        .count();
    println!(
        "games_paired={} games_ended_in_window={} results_recorded={}",
        games.len(),
        ended_in_window,
        recorded.len()
    );
    println!("game_end_to_next_pairing {}", percentiles(waits));
    println!("not_paired_again_by_the_end={unpaired}");
    println!("game_end_to_standings {}", percentiles(visible));
    Ok(())
}

/// A Swiss tournament's first round: from its start to its pairings in the log.
async fn swiss_round(
    log: &EventLog,
    stream: &str,
    starts_at: OffsetDateTime,
    players: usize,
) -> Result<()> {
    let mut from = log.last_checkpoint().await?;
    let mut pairings = 0usize;
    let mut byes = 0usize;
    loop {
        let events = log
            .read_types_after(from, &["pairing_made", "bye_given"], 10_000)
            .await?;
        let now = OffsetDateTime::now_utc();
        if let Some(last) = events.last() {
            from = last.checkpoint();
        }
        for e in events.iter().filter(|e| e.stream == stream) {
            match e.event_type.as_str() {
                "pairing_made" => pairings += 1,
                _ => byes += 1,
            }
        }
        if 2 * pairings + byes >= players {
            println!(
                "swiss_round_1 players={players} pairings={pairings} byes={byes} \
                 start_to_visible_ms={:.0}",
                (now - starts_at).as_seconds_f64() * 1e3
            );
            return Ok(());
        }
        ensure!(
            now < starts_at + Duration::from_secs(120),
            "round 1 not paired two minutes after the start"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
