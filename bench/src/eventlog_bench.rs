//! `eventlog-bench`: throughput of the event log on a real PostgreSQL — appends per second at
//! several concurrencies, replay of a million events next to a raw `COPY` of the same rows, and
//! a full rebuild of the ratings and history projections from such a log, and the opening
//! explorer over a million games: its rebuild (ingest), storage, and `GET /v1/explorer`'s latency
//! through the real server.
//!
//! It creates its own database `discs_bench_<pid>_<random>` on the server of `DATABASE_URL`
//! and drops it at the end (unless `--keep`). Results are printed as `key=value` lines that
//! `bench/append-vs-pgbench.sh` reads.

use std::pin::pin;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use domain::cpu;
use domain::games::GameId;
use domain::ids::{PlayerId, Seat};
use domain::matches::{
    Action, Command as MatchCommand, CreateMatch, FirstMoveRule, MatchEvent, MatchState, MovedBy,
    Occupant, Settings, Stamped, decide, evolve,
};
use eventlog::canonical::{self, EventContent, GENESIS, Hash};
use eventlog::{AppendOutcome, Checkpoint, EventLog, NewEvent, RecordedEvent, StreamAppend};
use futures_util::StreamExt;
use serde_json::{Value, json};
use std::collections::HashMap;
use time::OffsetDateTime;
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, NoTls};
use uuid::Uuid;

#[derive(Parser)]
#[command(about = "Throughput of the discs event log")]
struct Cli {
    /// Admin connection to the server to measure (the bench creates its own database there).
    #[arg(
        long,
        env = "DATABASE_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/postgres"
    )]
    database_url: String,
    /// Keep the bench database instead of dropping it.
    #[arg(long)]
    keep: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Clone)]
enum Command {
    /// Concurrent writers, each appending one-event commands to its own match streams.
    Append {
        /// Writer counts to measure, one run each.
        #[arg(long, value_delimiter = ',', default_value = "1,8,32")]
        writers: Vec<usize>,
        /// Length of each run.
        #[arg(long, default_value_t = 10)]
        seconds: u64,
        /// Events per match stream before a writer starts a new one.
        #[arg(long, default_value_t = 40)]
        events_per_stream: i64,
    },
    /// Bulk-load streams with valid hash chains, then replay them all with `read_all_after`
    /// and compare with a raw COPY of the same rows.
    Replay {
        #[arg(long, default_value_t = 25_000)]
        streams: usize,
        #[arg(long, default_value_t = 40)]
        events_per_stream: usize,
        /// Events per `read_all_after` call.
        #[arg(long, default_value_t = 5000)]
        batch: i64,
        /// Also time `verify_all` over the loaded log.
        #[arg(long)]
        verify: bool,
    },
    /// Bulk-load whole ranked matches between a pool of players, then rebuild the `ratings`
    /// and `history` projections from position 0 and compare with a raw COPY of the log.
    Rebuild {
        /// Matches to load (about 43 events each: whole games of both kinds).
        #[arg(long, default_value_t = 23_500)]
        streams: usize,
        /// Distinct players the matches are drawn between.
        #[arg(long, default_value_t = 2_000)]
        players: usize,
    },
    /// Bulk-load streams with valid hash chains, then time what signed checkpoints cost
    /// (issue 45): growing the Merkle tree over the whole log, signing and publishing a
    /// checkpoint, a match's inclusion proof, a checkpoint after a burst of new events, and
    /// `discs verify --checkpoints` over the whole log.
    Checkpoints {
        #[arg(long, default_value_t = 25_000)]
        streams: usize,
        #[arg(long, default_value_t = 40)]
        events_per_stream: usize,
        /// Inclusion proofs asked.
        #[arg(long, default_value_t = 200)]
        proofs: usize,
    },
    /// Bulk-load whole ranked games, rebuild the `explorer` projection from position 0 (the
    /// ingest rate), measure its tables, then time `GET /v1/explorer` through the real server at
    /// the opening position and at ply 10 under every combination of filters.
    Explorer {
        #[arg(long, default_value_t = 1_000_000)]
        games: usize,
        #[arg(long, default_value_t = 20_000)]
        players: usize,
        /// Requests per position and filter combination.
        #[arg(long, default_value_t = 40)]
        requests: usize,
    },
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<()> {
    let cli = Cli::parse();
    let name = format!(
        "discs_bench_{}_{}",
        std::process::id(),
        &Uuid::new_v4().simple().to_string()[..8]
    );
    let admin = raw_client(&cli.database_url).await?;
    admin
        .batch_execute(&format!("CREATE DATABASE \"{name}\""))
        .await
        .with_context(|| format!("create database {name}"))?;
    println!("database={name}");
    let url = database::testing::url_for(&cli.database_url, &name);
    let result = run(&cli, &url).await;
    if !cli.keep {
        admin
            .batch_execute(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
            .await
            .with_context(|| format!("drop database {name}"))?;
    }
    result
}

async fn run(cli: &Cli, url: &str) -> Result<()> {
    let pool = database::connect(url, 1).await?;
    database::migrate(&pool).await?;
    drop(pool);
    let commands = match &cli.command {
        Some(c) => vec![c.clone()],
        None => vec![
            Command::Append {
                writers: vec![1, 8, 32],
                seconds: 10,
                events_per_stream: 40,
            },
            Command::Replay {
                streams: 25_000,
                events_per_stream: 40,
                batch: 5000,
                verify: false,
            },
        ],
    };
    for command in commands {
        match command {
            Command::Append {
                writers,
                seconds,
                events_per_stream,
            } => {
                for (run, &w) in writers.iter().enumerate() {
                    bench_appends(url, run, w, Duration::from_secs(seconds), events_per_stream)
                        .await?;
                }
            }
            Command::Replay {
                streams,
                events_per_stream,
                batch,
                verify,
            } => bench_replay(url, streams, events_per_stream, batch, verify).await?,
            Command::Rebuild { streams, players } => bench_rebuild(url, streams, players).await?,
            Command::Checkpoints {
                streams,
                events_per_stream,
                proofs,
            } => bench_checkpoints(url, streams, events_per_stream, proofs).await?,
            Command::Explorer {
                games,
                players,
                requests,
            } => bench_explorer(url, games, players, requests).await?,
        }
    }
    Ok(())
}

/// A realistic move event: small JSON, a player, a timestamp.
fn move_event(i: i64, actor: Uuid) -> NewEvent {
    NewEvent {
        event_type: "move_played".to_owned(),
        schema_version: 1,
        data: move_data(i),
        actor: Some(actor),
        recorded_at: OffsetDateTime::now_utc(),
    }
}

fn move_data(i: i64) -> Value {
    const SQUARES: [&str; 8] = ["d3", "c4", "f5", "e6", "c3", "f4", "e3", "d6"];
    json!({"seat": 1 + i % 2, "move": SQUARES[(i % 8) as usize], "by": "human"})
}

async fn bench_appends(
    url: &str,
    run: usize,
    writers: usize,
    duration: Duration,
    events_per_stream: i64,
) -> Result<()> {
    let pool = database::connect(url, writers).await?;
    let log = EventLog::new(pool.clone());
    {
        // Open every connection before the clock starts.
        let mut held = Vec::new();
        for _ in 0..writers {
            held.push(pool.get().await?);
        }
    }
    let barrier = Arc::new(tokio::sync::Barrier::new(writers));
    let tasks: Vec<_> = (0..writers)
        .map(|w| {
            let log = log.clone();
            let barrier = barrier.clone();
            tokio::spawn(async move {
                let actor = Uuid::new_v4();
                let mut latencies = Vec::with_capacity(1 << 16);
                let mut stream_no = 0;
                let mut stream = format!("match-{run}-{w}-{stream_no}");
                let mut version = 0;
                barrier.wait().await;
                let deadline = Instant::now() + duration;
                while Instant::now() < deadline {
                    if version == events_per_stream {
                        stream_no += 1;
                        stream = format!("match-{run}-{w}-{stream_no}");
                        version = 0;
                    }
                    let append = StreamAppend {
                        stream: stream.clone(),
                        expected_version: version,
                        events: vec![move_event(version, actor)],
                    };
                    let started = Instant::now();
                    let outcome = log.append(Uuid::new_v4(), append).await?;
                    latencies.push(started.elapsed());
                    anyhow::ensure!(matches!(outcome, AppendOutcome::Appended(_)));
                    version += 1;
                }
                anyhow::Ok(latencies)
            })
        })
        .collect();
    let started = Instant::now();
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await??);
    }
    let elapsed = started.elapsed().as_secs_f64();
    latencies.sort_unstable();
    let pct = |p: f64| -> f64 {
        let i = ((latencies.len() as f64 - 1.0) * p).round() as usize;
        latencies.get(i).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    println!(
        "append writers={writers} appends={} seconds={elapsed:.2} appends_per_s={:.0} p50_ms={:.2} p99_ms={:.2}",
        latencies.len(),
        latencies.len() as f64 / elapsed,
        pct(0.50),
        pct(0.99)
    );
    pool.close();
    Ok(())
}

async fn bench_checkpoints(
    url: &str,
    streams: usize,
    events_per_stream: usize,
    proofs: usize,
) -> Result<()> {
    use service::history;
    let client = raw_client(url).await?;
    let loaded = load(&client, streams, events_per_stream, streams * 2).await?;
    client.batch_execute("VACUUM (ANALYZE) events").await?;
    let pool = database::connect(url, 4).await?;
    let log = EventLog::new(pool.clone());
    let dir = std::env::temp_dir().join(format!("discs-bench-checkpoints-{}", Uuid::new_v4()));
    let config = service::config::HistoryConfig {
        checkpoint_dir: Some(dir.join("checkpoints")),
        checkpoint_key: Some("42".repeat(32)),
        checkpoint_key_file: None,
        checkpoint_interval: 60,
        closings_file: Some(dir.join("closed-accounts")),
    };
    let db = discs::config::ServeConfig::defaults(url)?.core.db;
    let signer = history::History::from_config(&config, &db, log.identity().await?)?;
    let clock = service::clock::SystemClock;
    let started = Instant::now();
    let head = history::grow(&log).await?;
    let grow_s = started.elapsed().as_secs_f64();
    anyhow::ensure!(
        head.size == loaded,
        "the tree holds {} of {loaded}",
        head.size
    );
    println!(
        "checkpoints grow events={loaded} seconds={grow_s:.2} events_per_s={:.0}",
        loaded as f64 / grow_s
    );
    let started = Instant::now();
    let first = history::checkpoint_committed(&pool, &log, &signer, &clock)
        .await?
        .context("signed")?;
    println!(
        "checkpoints sign_and_publish size={} seconds={:.2} (the leaves file of every event)",
        first.size,
        started.elapsed().as_secs_f64()
    );
    // Proofs of random matches' last events against that checkpoint.
    let ends: Vec<i64> = client
        .query(
            "SELECT max(position) FROM events GROUP BY stream_id ORDER BY random() LIMIT $1",
            &[&(proofs as i64)],
        )
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let mut times = Vec::new();
    for position in ends {
        let started = Instant::now();
        let (leaf, path) = log
            .inclusion(position, first.size)
            .await?
            .context("a proof")?;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        anyhow::ensure!(leaf < first.size && !path.is_empty());
    }
    times.sort_by(f64::total_cmp);
    let q = |p: f64| times[((times.len() - 1) as f64 * p) as usize];
    println!(
        "checkpoints inclusion_proof n={} p50_ms={:.1} p99_ms={:.1} max_ms={:.1}",
        times.len(),
        q(0.5),
        q(0.99),
        q(1.0)
    );
    // A burst of new events, then the next checkpoint: what the signer does each interval.
    let more = load_from(&client, streams, 250, events_per_stream, 500).await?;
    let started = Instant::now();
    let next = history::checkpoint_committed(&pool, &log, &signer, &clock)
        .await?
        .context("signed")?;
    println!(
        "checkpoints next new_events={more} seconds={:.3}",
        started.elapsed().as_secs_f64()
    );
    anyhow::ensure!(next.size == loaded + more);
    let started = Instant::now();
    let report = history::verify_folder(&log, &signer_dir(&dir), &signer.public_key()).await?;
    let verify_s = started.elapsed().as_secs_f64();
    anyhow::ensure!(report.is_ok(), "{:?}", report.problems);
    println!(
        "checkpoints verify events={} checkpoints={} seconds={verify_s:.2} events_per_s={:.0}",
        report.events,
        report.checkpoints,
        report.events as f64 / verify_s
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn signer_dir(dir: &std::path::Path) -> std::path::PathBuf {
    dir.join("checkpoints")
}

async fn bench_replay(
    url: &str,
    streams: usize,
    events_per_stream: usize,
    batch: i64,
    verify: bool,
) -> Result<()> {
    let client = raw_client(url).await?;
    let started = Instant::now();
    let loaded = load(&client, streams, events_per_stream, streams * 2).await?;
    let load_secs = started.elapsed().as_secs_f64();
    println!(
        "load events={loaded} seconds={load_secs:.2} events_per_s={:.0}",
        loaded as f64 / load_secs
    );
    client.batch_execute("VACUUM (ANALYZE) events").await?;
    client.batch_execute("VACUUM (ANALYZE) streams").await?;

    let pool = database::connect(url, 2).await?;
    let log = EventLog::new(pool);
    for round in 1..=2 {
        // The fold of the domain: every event decoded (schema version checked) and evolved
        // into its match's state, as a projection rebuild would.
        let mut events = 0_u64;
        let mut undecodable = 0_u64;
        let mut states: HashMap<String, MatchState> = HashMap::new();
        let started = Instant::now();
        let end = replay(&log, Checkpoint::START, batch, |e| {
            events += 1;
            match MatchEvent::decode(&e.event_type, e.schema_version, &e.data) {
                Ok(event) => evolve(
                    states.entry(e.stream.clone()).or_default(),
                    &Stamped {
                        at: e.recorded_at,
                        event,
                    },
                ),
                Err(_) => undecodable += 1,
            }
        })
        .await?;
        let secs = started.elapsed().as_secs_f64();
        anyhow::ensure!(events == loaded, "replayed {events} of {loaded} events");
        anyhow::ensure!(undecodable == 0, "{undecodable} events did not decode");
        let discs: u64 = states
            .values()
            .filter_map(|s| s.get())
            .map(|m| u64::from(m.position.ply()))
            .sum();
        println!(
            "replay round={round} events={events} batch={batch} seconds={secs:.2} events_per_s={:.0} last_position={} matches={} plies={discs}",
            events as f64 / secs,
            end.position,
            states.len()
        );

        for format in ["text", "binary"] {
            let started = Instant::now();
            let (rows, bytes) = raw_copy(&client, format).await?;
            let secs = started.elapsed().as_secs_f64();
            println!(
                "copy round={round} format={format} bytes={bytes} seconds={secs:.2} rows_per_s={:.0}",
                rows as f64 / secs
            );
        }
    }
    if verify {
        let started = Instant::now();
        let report = log.verify_all().await?;
        let secs = started.elapsed().as_secs_f64();
        anyhow::ensure!(report.is_ok(), "the loaded log does not verify: {report:?}");
        println!(
            "verify_all streams={} events={} seconds={secs:.2} events_per_s={:.0}",
            report.streams_checked,
            report.events_checked,
            report.events_checked as f64 / secs
        );
    }
    Ok(())
}

async fn bench_rebuild(url: &str, streams: usize, players: usize) -> Result<()> {
    use projections::{Projection, Runner, rebuild};
    let client = raw_client(url).await?;
    let started = Instant::now();
    // Whole games: no Reversi game has more than 60 moves, passes and its two bookends.
    let loaded = load(&client, streams, 200, players).await?;
    println!(
        "load events={loaded} matches={streams} players={players} seconds={:.2}",
        started.elapsed().as_secs_f64()
    );
    client.batch_execute("VACUUM (ANALYZE) events").await?;
    let pool = database::connect(url, 4).await?;
    let runner = Runner::new(EventLog::new(pool));
    for round in 1..=2 {
        for format in ["text", "binary"] {
            let started = Instant::now();
            let (rows, bytes) = raw_copy(&client, format).await?;
            println!(
                "copy round={round} format={format} rows={rows} bytes={bytes} seconds={:.2}",
                started.elapsed().as_secs_f64()
            );
        }
        let mut total = 0.0;
        for p in [Projection::Ratings, Projection::History] {
            let id = rebuild::register(&runner, p).await?;
            let started = Instant::now();
            let applied = rebuild::rebuild(&runner, p, id, |_| {}).await?;
            let secs = started.elapsed().as_secs_f64();
            total += secs;
            println!(
                "rebuild round={round} projection={p} events_applied={applied} seconds={secs:.2}"
            );
        }
        let rated: i64 = client
            .query_one("SELECT count(*) FROM rating_points", &[])
            .await?
            .get(0);
        let history: i64 = client
            .query_one("SELECT count(*) FROM match_history", &[])
            .await?
            .get(0);
        println!(
            "rebuild round={round} both_seconds={total:.2} rating_points={rated} history_rows={history}"
        );
    }
    Ok(())
}

async fn bench_explorer(url: &str, games: usize, players: usize, requests: usize) -> Result<()> {
    use projections::{Projection, Runner, rebuild};
    let client = raw_client(url).await?;
    let started = Instant::now();
    let loaded = load(&client, games, 200, players).await?;
    println!(
        "load events={loaded} games={games} players={players} seconds={:.2}",
        started.elapsed().as_secs_f64()
    );
    client.batch_execute("VACUUM (ANALYZE) events").await?;
    let pool = database::connect(url, 4).await?;
    let runner = Runner::new(EventLog::new(pool));
    let id = rebuild::register(&runner, Projection::Explorer).await?;
    let started = Instant::now();
    let applied = rebuild::rebuild(&runner, Projection::Explorer, id, |_| {}).await?;
    let secs = started.elapsed().as_secs_f64();
    println!(
        "explorer rebuild events_applied={applied} seconds={secs:.1} games_per_second={:.0}",
        games as f64 / secs
    );
    client.batch_execute("VACUUM (ANALYZE)").await?;
    let mut total = 0_i64;
    for table in ["explorer_moves", "explorer_games", "explorer_ratings"] {
        let row = client
            .query_one(
                &format!("SELECT count(*), pg_total_relation_size('{table}') FROM {table}"),
                &[],
            )
            .await?;
        let (rows, bytes): (i64, i64) = (row.get(0), row.get(1));
        total += bytes;
        println!("storage table={table} rows={rows} bytes={bytes}");
    }
    println!(
        "storage total_bytes={total} bytes_per_game={:.0}",
        total as f64 / games as f64
    );
    explorer_latency(url, games, requests).await
}

/// `GET /v1/explorer` through the real server on the bench's database: at the start and at ply
/// 10 of a loaded game of each kind, under every combination of the filters, one client.
async fn explorer_latency(url: &str, games: usize, requests: usize) -> Result<()> {
    use discs::config::ServeConfig;
    let defaults = ServeConfig::defaults(url)?;
    let config = ServeConfig {
        core: service::config::CoreConfig {
            no_workers: true,
            history: defaults
                .core
                .history
                .under(&std::env::temp_dir().join("discs-bench-explorer")),
            ..defaults.core
        },
        edge: api::config::EdgeConfig {
            addr: "127.0.0.1:0".into(),
            rate_per_second: 1e9,
            rate_burst: 1e9,
            anon_per_second: 1e9,
            anon_burst: 1e9,
            signups_per_minute: 1e6,
            ..defaults.edge
        },
    };
    let app = discs::startup::Application::build(config).await?;
    let base = format!("http://127.0.0.1:{}", app.port());
    let handle = app.handle();
    tokio::spawn(app.run_until_stopped());
    let http = reqwest::Client::new();
    let token = http
        .post(format!("{base}/v1/players"))
        .json(&json!({"name": "bench"}))
        .send()
        .await?
        .json::<Value>()
        .await?["token"]
        .as_str()
        .context("a token")?
        .to_owned();
    // The months of the middle of the load and of its last quarter.
    let start = OffsetDateTime::now_utc() - time::Duration::days(30);
    let month = |game: usize| {
        let at = start + time::Duration::seconds(game as i64 * 60);
        format!("{:04}-{:02}", at.year(), u8::from(at.month()))
    };
    let (middle, late) = (month(games / 2), month(games * 3 / 4));
    let ranked = ["", "&ranked=true", "&ranked=false"];
    let ratings = ["", "&ratings=1400", "&ratings=1200,1400,1600"];
    let months = [
        String::new(),
        format!("&since={middle}"),
        format!("&since={middle}&until={late}"),
    ];
    for seed in [0_u32, 1] {
        let game = real_game(seed, 200, 2);
        let game_id = match game.first() {
            Some(MatchEvent::MatchCreated(c)) => c.game,
            _ => anyhow::bail!("a game starts with match_created"),
        };
        let ten: String = game
            .iter()
            .filter_map(|e| match e {
                MatchEvent::MovePlayed(m) => Some(m.mv.as_str()),
                _ => None,
            })
            .take(10)
            .collect();
        for (at, moves) in [("start", String::new()), ("ply10", ten)] {
            let mut times = Vec::new();
            let mut games_at_start = 0;
            for r in ranked {
                for b in ratings {
                    for m in &months {
                        let path = format!("{base}/v1/explorer/{game_id}?moves={moves}{r}{b}{m}");
                        for _ in 0..requests {
                            let t = Instant::now();
                            let res = http.get(&path).bearer_auth(&token).send().await?;
                            let status = res.status();
                            let body: Value = res.json().await?;
                            times.push(t.elapsed());
                            anyhow::ensure!(status.is_success(), "{path}: {status} {body}");
                            if r.is_empty() && b.is_empty() && m.is_empty() {
                                games_at_start = body["moves"].as_array().map_or(0, |a| {
                                    a.iter().filter_map(|x| x["games"].as_i64()).sum()
                                });
                            }
                        }
                    }
                }
            }
            times.sort();
            let ms = |q: f64| times[((times.len() - 1) as f64 * q) as usize].as_secs_f64() * 1000.0;
            println!(
                "latency game={game_id} at={at} games_there={games_at_start} requests={} p50_ms={:.2} p99_ms={:.2} max_ms={:.2}",
                times.len(),
                ms(0.5),
                ms(0.99),
                ms(1.0)
            );
        }
    }
    handle.stop(true).await;
    Ok(())
}

/// Reads the whole log after `from` in batches, handing every event to `fold`.
async fn replay(
    log: &EventLog,
    from: Checkpoint,
    batch: i64,
    fold: impl FnMut(&RecordedEvent),
) -> Result<Checkpoint> {
    Ok(log.for_each_after(from, batch, fold).await?)
}

/// `COPY (SELECT ... ORDER BY tx, position) TO STDOUT`: the rows a replay reads, shipped raw.
async fn raw_copy(client: &Client, format: &str) -> Result<(u64, u64)> {
    let sql = format!(
        "COPY (SELECT position, tx, stream_id, version, event_id, event_type, schema_version, \
         data, actor, recorded_at, prev_hash, hash FROM events ORDER BY tx, position) \
         TO STDOUT (FORMAT {format})"
    );
    let mut stream = pin!(client.copy_out(&sql).await?);
    let mut bytes = 0_u64;
    let mut newlines = 0_u64;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        bytes += chunk.len() as u64;
        if format == "text" {
            newlines += chunk.iter().filter(|&&b| b == b'\n').count() as u64;
        }
    }
    let rows = if format == "text" {
        newlines
    } else {
        client
            .query_one("SELECT count(*) FROM events", &[])
            .await?
            .get::<_, i64>(0) as u64
    };
    Ok((rows, bytes))
}

/// Loads `streams` x `events_per_stream` events with valid hash chains by binary COPY, in
/// groups of 1000 matches played side by side (so streams interleave in the log as live
/// matches do), one transaction per group.
/// The first `limit` events of a real match: Reversi (even seeds) or Four in a Row (odd seeds)
/// between two CPU players at level 1, decided by the domain like any match.
fn real_game(seed: u32, limit: usize, players: u32) -> Vec<MatchEvent> {
    let game = if seed.is_multiple_of(2) {
        GameId::Reversi
    } else {
        GameId::FourInARow
    };
    let player = |n: u32| PlayerId::from_uuid(Uuid::from_u128(u128::from(n) << 1 | 1));
    let mut state = MatchState::default();
    let mut out = Vec::new();
    let mut action = Action::CreateMatch(CreateMatch {
        game,
        seats: [
            Occupant::Human {
                player_id: player((seed * 2) % players),
            },
            Occupant::Human {
                player_id: player((seed * 2 + 1) % players),
            },
        ],
        settings: Settings::default(),
        first_seat: Seat::ONE,
        first_rule: FirstMoveRule::Setting,
        ranked: true,
        room_id: None,
        tournament_id: None,
        cpu_seed: u64::from(seed),
    });
    let at = OffsetDateTime::UNIX_EPOCH;
    while out.len() < limit {
        let Ok(events) = decide(&state, &MatchCommand { at, action }) else {
            break;
        };
        for event in events {
            evolve(
                &mut state,
                &Stamped {
                    at,
                    event: event.clone(),
                },
            );
            out.push(event);
        }
        let Some(m) = state.get() else { break };
        let Some(seat) = m.to_move() else { break };
        let Some(mv) = cpu::choose_move(&m.position, 1, u64::from(seed)) else {
            break;
        };
        action = Action::PlayMove {
            seat,
            mv,
            by: MovedBy::Human,
        };
    }
    out.truncate(limit);
    out
}

/// `players` distinct players (an even number) share the matches.
async fn load(
    client: &Client,
    streams: usize,
    events_per_stream: usize,
    players: usize,
) -> Result<u64> {
    load_from(client, 0, streams, events_per_stream, players).await
}

/// [`load`] of the streams numbered `first..first + streams`.
async fn load_from(
    client: &Client,
    first: usize,
    streams: usize,
    events_per_stream: usize,
    players: usize,
) -> Result<u64> {
    let streams = first + streams;
    let player_pool = u32::try_from(players.max(2) & !1).unwrap_or(u32::MAX - 1);
    const GROUP: usize = 1000;
    let columns = [
        Type::TEXT,
        Type::INT8,
        Type::UUID,
        Type::TEXT,
        Type::INT2,
        Type::JSONB,
        Type::UUID,
        Type::TIMESTAMPTZ,
        Type::BYTEA,
        Type::BYTEA,
    ];
    let start = OffsetDateTime::now_utc() - time::Duration::days(30);
    let mut loaded = 0_u64;
    let mut heads: Vec<(String, i64, Hash)> = Vec::with_capacity(streams);
    let mut bytes = Vec::with_capacity(256);
    for group in (first..streams).step_by(GROUP) {
        let ids: Vec<usize> = (group..(group + GROUP).min(streams)).collect();
        let names: Vec<String> = ids
            .iter()
            .map(|&i| format!("match-{}", Uuid::from_u128(i as u128)))
            .collect();
        let players: Vec<Uuid> = ids.iter().map(|_| Uuid::new_v4()).collect();
        let mut last: Vec<Hash> = vec![GENESIS; ids.len()];
        let sink = client
            .copy_in(
                "COPY events (stream_id, version, event_id, event_type, schema_version, data, \
                 actor, recorded_at, prev_hash, hash) FROM STDIN (FORMAT binary)",
            )
            .await?;
        let mut writer = pin!(BinaryCopyInWriter::new(sink, &columns));
        let games: Vec<Vec<MatchEvent>> = ids
            .iter()
            .map(|&i| real_game(i as u32, events_per_stream, player_pool))
            .collect();
        for v in 0..events_per_stream {
            let version = v as i64 + 1;
            for (k, stream) in names.iter().enumerate() {
                let Some(event) = games[k].get(v) else {
                    continue;
                };
                let (event_type, data) = (event.event_type(), event.data());
                let schema_version = event.schema_version();
                let event_id = Uuid::new_v4();
                let actor = Some(players[k]);
                let recorded_at = canonical::truncate_to_micros(
                    start + time::Duration::seconds((group + k) as i64 * 60 + v as i64 * 5),
                );
                bytes.clear();
                canonical::event_bytes(
                    &EventContent {
                        stream,
                        version,
                        event_id,
                        event_type,
                        schema_version,
                        data: &data,
                        actor,
                        recorded_at,
                    },
                    &mut bytes,
                );
                let prev = last[k];
                let hash = canonical::chain_hash(&prev, &bytes);
                last[k] = hash;
                writer
                    .as_mut()
                    .write(&[
                        stream,
                        &version,
                        &event_id,
                        &event_type,
                        &schema_version,
                        &data,
                        &actor,
                        &recorded_at,
                        &prev.as_slice(),
                        &hash.as_slice(),
                    ])
                    .await?;
                loaded += 1;
            }
        }
        writer.finish().await?;
        for (k, stream) in names.into_iter().enumerate() {
            heads.push((stream, games[k].len() as i64, last[k]));
        }
    }
    let sink = client
        .copy_in("COPY streams (stream_id, version, last_hash) FROM STDIN (FORMAT binary)")
        .await?;
    let mut writer = pin!(BinaryCopyInWriter::new(
        sink,
        &[Type::TEXT, Type::INT8, Type::BYTEA]
    ));
    for (stream, version, hash) in &heads {
        writer
            .as_mut()
            .write(&[stream, version, &hash.as_slice()])
            .await?;
    }
    writer.finish().await?;
    Ok(loaded)
}

async fn raw_client(url: &str) -> Result<Client> {
    let config = tokio_postgres::Config::from_str(url).context("database url")?;
    let (client, connection) = config
        .connect(NoTls)
        .await
        .with_context(|| format!("connect to {url}"))?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            eprintln!("connection error: {e:?}");
        }
    });
    Ok(client)
}
