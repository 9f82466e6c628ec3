//! `restore-drill`: the client side of deploy/restore-drill.sh (issue 45): load through discs
//! recording every acknowledged move, close an account, snapshot the projections, and after
//! the point-in-time restore check that everything acknowledged before the mistake is back.
//!
//! ```text
//! restore-drill load --secs N --record FILE [--pairs 4] [--players FILE]
//! restore-drill close --players FILE --out FILE
//! restore-drill snapshot --out FILE
//! restore-drill check --record FILE [--record FILE ...] --snapshot FILE --closed FILE
//! ```
//!
//! `load` runs `--pairs` pairs of players (signed up once, kept in `--players`): the first pair
//! plays ranked Four in a Row (the queue, then the match), the others room matches, random legal moves
//! to the end, again and again for `--secs`; every acknowledged move is appended to `--record`
//! as a JSON line `{"match_id","version","move","acked_at"}`. `snapshot` waits until every
//! projection has caught up with the log, then writes the projections' tables (sorted rows).
//! `check` reads every recorded move back from the log at its version, audits every hash chain,
//! compares the projections (rebuilt by `discs rebuild` beforehand) with the snapshot, looks for
//! the closed account's name in every table, and plays a move through discs. It prints
//! `restore-drill check ok: ...` or every failure, and exits 1 on any.
//!
//! `DISCS_URL` is the load balancer, `DATABASE_URL` the primary.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use serde_json::{Value, json};

use domain::rng::SplitMix64;

#[derive(Parser)]
#[command(about = "Restore drill: load, close, snapshot, check")]
struct Cli {
    #[command(subcommand)]
    step: Step,
}

#[derive(Subcommand)]
enum Step {
    Load {
        #[arg(long, env = "DISCS_URL")]
        base: String,
        #[arg(long)]
        secs: u64,
        #[arg(long)]
        record: PathBuf,
        #[arg(long, default_value_t = 4)]
        pairs: usize,
        /// Where the players' ids, names and tokens are kept between steps.
        #[arg(long, default_value = "deploy/local/drill-players.json")]
        players: PathBuf,
    },
    Close {
        #[arg(long, env = "DISCS_URL")]
        base: String,
        #[arg(long, default_value = "deploy/local/drill-players.json")]
        players: PathBuf,
        #[arg(long)]
        out: PathBuf,
    },
    Snapshot {
        #[arg(long, env = "DATABASE_URL")]
        database_url: String,
        #[arg(long)]
        out: PathBuf,
    },
    Check {
        #[arg(long, env = "DISCS_URL")]
        base: String,
        #[arg(long, env = "DATABASE_URL")]
        database_url: String,
        #[arg(long, required = true)]
        record: Vec<PathBuf>,
        #[arg(long)]
        snapshot: PathBuf,
        #[arg(long)]
        closed: PathBuf,
    },
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<()> {
    match Cli::parse().step {
        Step::Load {
            base,
            secs,
            record,
            pairs,
            players,
        } => load(base.trim_end_matches('/'), secs, &record, pairs, &players).await,
        Step::Close { base, players, out } => {
            close(base.trim_end_matches('/'), &players, &out).await
        }
        Step::Snapshot { database_url, out } => {
            let tables = snapshot(&database_url, true).await?;
            std::fs::write(&out, serde_json::to_vec_pretty(&tables)?)?;
            let rows: usize = tables.values().map(Vec::len).sum();
            println!(
                "restore-drill snapshot: {rows} rows of {} tables",
                tables.len()
            );
            Ok(())
        }
        Step::Check {
            base,
            database_url,
            record,
            snapshot: file,
            closed,
        } => {
            check(
                base.trim_end_matches('/'),
                &database_url,
                &record,
                &file,
                &closed,
            )
            .await
        }
    }
}

#[derive(Clone, serde::Serialize, serde::Deserialize)]
struct Account {
    id: String,
    name: String,
    token: String,
}

async fn accounts(
    http: &reqwest::Client,
    base: &str,
    file: &Path,
    n: usize,
) -> Result<Vec<Account>> {
    let mut all: Vec<Account> = match std::fs::read(file) {
        Ok(bytes) => serde_json::from_slice(&bytes)?,
        Err(_) => Vec::new(),
    };
    while all.len() < n {
        let name = format!("Drill Player {}", all.len() + 1);
        let res: Value = http
            .post(format!("{base}/v1/players"))
            .json(&json!({ "name": name }))
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        all.push(Account {
            id: res["player_id"].as_str().context("an id")?.to_owned(),
            name,
            token: res["token"].as_str().context("a token")?.to_owned(),
        });
    }
    std::fs::write(file, serde_json::to_vec(&all)?)?;
    Ok(all)
}

/// Sends a request until it is answered (a 503 or a broken connection is tried again);
/// anything but a 2xx is an error.
async fn answered(make: impl Fn() -> reqwest::RequestBuilder, what: &str) -> Result<Value> {
    for _ in 0..100 {
        match make().send().await {
            Ok(res) if res.status().is_success() => return Ok(res.json().await?),
            Ok(res) if res.status() == reqwest::StatusCode::SERVICE_UNAVAILABLE => {}
            Ok(res) => {
                let status = res.status();
                bail!("{what}: {status} {}", res.text().await.unwrap_or_default())
            }
            Err(_) => {}
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!("{what}: no answer")
}

/// A POST by `who` with a fresh `Idempotency-Key` (the same one on every retry), until answered.
async fn keyed(
    http: &reqwest::Client,
    url: String,
    who: &Account,
    body: Value,
    what: &str,
) -> Result<Value> {
    let key = uuid::Uuid::now_v7().to_string();
    answered(
        || {
            http.post(&url)
                .bearer_auth(&who.token)
                .header("idempotency-key", &key)
                .json(&body)
        },
        what,
    )
    .await
}

struct Recorder {
    file: Mutex<std::fs::File>,
    acked: std::sync::atomic::AtomicU64,
}

impl Recorder {
    fn ack(&self, match_id: &str, version: &Value, mv: &str) {
        let line = json!({
            "match_id": match_id,
            "version": version,
            "move": mv,
            "acked_at": time::OffsetDateTime::now_utc().format(&time::format_description::well_known::Rfc3339).unwrap_or_default(),
        });
        let mut f = self.file.lock().expect("record");
        let _ = writeln!(f, "{line}");
        self.acked.fetch_add(1, Ordering::Relaxed);
    }
}

/// Plays `match_id` between `a` and `b` with random legal moves to its end.
async fn play_to_end(
    http: &reqwest::Client,
    base: &str,
    match_id: &str,
    a: &Account,
    b: &Account,
    rng: &mut SplitMix64,
    record: &Recorder,
) -> Result<()> {
    let mut view = answered(
        || {
            http.get(format!("{base}/v1/matches/{match_id}"))
                .bearer_auth(&a.token)
        },
        "GET /v1/matches/{id}",
    )
    .await?;
    while view["status"] == "active" {
        let seat = view["to_move"].as_u64().context("a seat to move")? as usize;
        let mover = view["seats"][seat - 1]["player_id"]
            .as_str()
            .unwrap_or_default();
        let who = if mover == a.id { a } else { b };
        let legal: Vec<String> = view["legal_moves"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m.as_str().map(str::to_owned))
            .collect();
        let mv = legal
            .get(rng.index(legal.len().max(1)))
            .cloned()
            .context("a legal move")?;
        let body = json!({"move": mv, "expected_version": view["version"]});
        let url = format!("{base}/v1/matches/{match_id}/moves");
        view = keyed(http, url, who, body, "POST /v1/matches/{id}/moves").await?;
        record.ack(match_id, &view["version"], &mv);
    }
    Ok(())
}

async fn ranked_game(
    http: &reqwest::Client,
    base: &str,
    a: &Account,
    b: &Account,
    rng: &mut SplitMix64,
    record: &Recorder,
) -> Result<()> {
    let mut tickets = Vec::new();
    for p in [a, b] {
        let url = format!("{base}/v1/queue");
        let t = keyed(
            http,
            url,
            p,
            json!({"game": "four_in_a_row"}),
            "POST /v1/queue",
        )
        .await?;
        tickets.push(t["ticket_id"].as_str().context("a ticket")?.to_owned());
    }
    let started = Instant::now();
    let match_id = loop {
        let t = answered(
            || {
                http.get(format!("{base}/v1/queue/{}", tickets[0]))
                    .bearer_auth(&a.token)
            },
            "GET /v1/queue/{ticket}",
        )
        .await?;
        if let Some(id) = t["match_id"].as_str() {
            break id.to_owned();
        }
        if started.elapsed() > Duration::from_secs(30) {
            bail!("no pairing in 30 s: {t}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    play_to_end(http, base, &match_id, a, b, rng, record).await
}

async fn room_game(
    http: &reqwest::Client,
    base: &str,
    a: &Account,
    b: &Account,
    rng: &mut SplitMix64,
    record: &Recorder,
) -> Result<()> {
    let url = format!("{base}/v1/rooms");
    let room = keyed(
        http,
        url,
        a,
        json!({"game": "four_in_a_row"}),
        "POST /v1/rooms",
    )
    .await?;
    let (room_id, code) = (
        room["room_id"].as_str().context("a room")?.to_owned(),
        room["code"].as_str().context("a code")?.to_owned(),
    );
    let key = uuid::Uuid::now_v7().to_string();
    answered(
        || {
            http.post(format!("{base}/v1/rooms/{code}/join"))
                .bearer_auth(&b.token)
                .header("idempotency-key", &key)
        },
        "POST /v1/rooms/{code}/join",
    )
    .await?;
    let url = format!("{base}/v1/rooms/{room_id}/matches");
    let started = keyed(http, url, a, json!({}), "POST /v1/rooms/{id}/matches").await?;
    let match_id = started["match_id"].as_str().context("a match")?.to_owned();
    play_to_end(http, base, &match_id, a, b, rng, record).await
}

async fn load(base: &str, secs: u64, record: &Path, pairs: usize, players: &Path) -> Result<()> {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()?;
    let all = accounts(&http, base, players, pairs * 2).await?;
    let recorder = Arc::new(Recorder {
        file: Mutex::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(record)?,
        ),
        acked: Default::default(),
    });
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for k in 0..pairs {
        let (a, b) = (all[2 * k].clone(), all[2 * k + 1].clone());
        let (http, base, recorder, stop) = (
            http.clone(),
            base.to_owned(),
            recorder.clone(),
            stop.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut rng = SplitMix64(k as u64 + 1 + secs * 1000);
            let mut games = 0u64;
            while !stop.load(Ordering::Relaxed) {
                // One pair queues (two pairs in one pool could be paired across).
                if k == 0 {
                    ranked_game(&http, &base, &a, &b, &mut rng, &recorder).await?;
                } else {
                    room_game(&http, &base, &a, &b, &mut rng, &recorder).await?;
                }
                games += 1;
            }
            anyhow::Ok(games)
        }));
    }
    tokio::time::sleep(Duration::from_secs(secs)).await;
    stop.store(true, Ordering::Relaxed);
    let mut games = 0;
    for t in tasks {
        games += t.await??;
    }
    println!(
        "restore-drill load: {games} games, {} moves acknowledged, in {}",
        recorder.acked.load(Ordering::Relaxed),
        record.display()
    );
    Ok(())
}

async fn close(base: &str, players: &Path, out: &Path) -> Result<()> {
    let http = reqwest::Client::new();
    let all: Vec<Account> = serde_json::from_slice(&std::fs::read(players)?)?;
    // A room player: never in a ranked match when the load stopped.
    let who = all.get(2).context("a player")?;
    let asked = answered(
        || {
            http.post(format!("{base}/v1/players/me/closing"))
                .bearer_auth(&who.token)
        },
        "POST /v1/players/me/closing",
    )
    .await?;
    let confirmation = asked["confirmation"].as_str().context("a confirmation")?;
    let closed = answered(
        || {
            http.post(format!("{base}/v1/players/me/close"))
                .bearer_auth(&who.token)
                .json(&json!({ "confirmation": confirmation }))
        },
        "POST /v1/players/me/close",
    )
    .await?;
    std::fs::write(
        out,
        serde_json::to_vec(
            &json!({"player_id": who.id, "name": who.name, "label": closed["label"]}),
        )?,
    )?;
    println!(
        "restore-drill close: {} is now {}",
        who.name, closed["label"]
    );
    Ok(())
}

async fn connect(url: &str) -> Result<tokio_postgres::Client> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
    tokio::spawn(connection);
    Ok(client)
}

/// The projections' rows, sorted; first waiting (when `settle`) until every projection has
/// caught up with the log.
async fn snapshot(url: &str, settle: bool) -> Result<BTreeMap<String, Vec<String>>> {
    use projections::{Projection, Runner};
    let client = connect(url).await?;
    if settle {
        let runner = Runner::new(eventlog::EventLog::new(database::connect(url, 2).await?));
        let started = Instant::now();
        for p in Projection::ALL {
            let last = runner.last_committed(p).await?;
            while Some(runner.checkpoint(p).await?.0) < last {
                if started.elapsed() > Duration::from_secs(60) {
                    bail!(
                        "the projection {} is still behind the log after 60 s",
                        p.name()
                    );
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
    let mut out = BTreeMap::new();
    for table in Projection::ALL.iter().flat_map(|p| p.tables()) {
        let mut rows: Vec<String> = client
            .query(&format!("SELECT t::text FROM {table} t"), &[])
            .await
            .with_context(|| format!("reading {table}"))?
            .iter()
            .map(|r| r.get(0))
            .collect();
        rows.sort();
        out.insert((*table).to_owned(), rows);
    }
    Ok(out)
}

async fn check(
    base: &str,
    url: &str,
    records: &[PathBuf],
    snap: &Path,
    closed: &Path,
) -> Result<()> {
    let mut failures = Vec::new();
    let client = connect(url).await?;
    // 1. Every acknowledged move, at its version.
    let mut acked = 0;
    for file in records {
        for line in std::fs::read_to_string(file)?.lines() {
            let a: Value = serde_json::from_str(line)?;
            let stream = format!("match-{}", a["match_id"].as_str().unwrap_or_default());
            let version = a["version"].as_i64().unwrap_or(0);
            let row = client
                .query_opt(
                    "SELECT e.version FROM events e WHERE e.stream_id = $1 AND e.version <= $2 \
                     AND e.event_type = 'move_played' AND e.data->>'move' = $3 \
                     ORDER BY e.version DESC LIMIT 1",
                    &[&stream, &version, &a["move"].as_str().unwrap_or_default()],
                )
                .await?;
            if row.is_none() {
                failures.push(format!("acknowledged move lost: {line}"));
            }
            acked += 1;
        }
    }
    // 2. Every chain.
    let pool = database::connect(url, 2).await?;
    let chains = eventlog::EventLog::new(pool).verify_all().await?;
    if !chains.is_ok() {
        failures.push(format!("broken chains: {:?}", chains.broken));
    }
    // 3. The projections, rebuilt, as before the mistake.
    let before: BTreeMap<String, Vec<String>> = serde_json::from_slice(&std::fs::read(snap)?)?;
    let after = snapshot(url, true).await?;
    for (table, rows) in &before {
        let now = after.get(table).cloned().unwrap_or_default();
        if &now != rows {
            let missing = rows.iter().filter(|r| !now.contains(r)).count();
            let extra = now.iter().filter(|r| !rows.contains(r)).count();
            failures.push(format!(
                "{table}: {} rows before, {} after the restore and rebuild ({missing} missing, {extra} new)",
                rows.len(),
                now.len()
            ));
        }
    }
    // 4. The account closed after the restore target is closed again.
    let closed: Value = serde_json::from_slice(&std::fs::read(closed)?)?;
    let name = closed["name"].as_str().unwrap_or("?");
    let tables = client
        .query(
            "SELECT quote_ident(table_name) FROM information_schema.tables \
             WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
            &[],
        )
        .await?;
    for t in tables {
        let table: String = t.get(0);
        let n: i64 = client
            .query_one(
                &format!("SELECT count(*) FROM {table} t WHERE strpos(t::text, $1) > 0"),
                &[&name],
            )
            .await?
            .get(0);
        if n > 0 {
            failures.push(format!(
                "the closed account's name is still in {table} ({n} rows)"
            ));
        }
    }
    // 5. discs serves: a new player plays a move.
    let http = reqwest::Client::new();
    let served = async {
        let p = answered(
            || {
                http.post(format!("{base}/v1/players"))
                    .json(&json!({"name": "After Restore"}))
            },
            "POST /v1/players",
        )
        .await?;
        let token = p["token"].as_str().context("a token")?.to_owned();
        let m = answered(
            || {
                http.post(format!("{base}/v1/matches"))
                    .bearer_auth(&token)
                    .json(&json!({"game": "four_in_a_row", "cpu_level": 1, "first": "me"}))
            },
            "POST /v1/matches",
        )
        .await?;
        let id = m["match_id"].as_str().context("a match")?;
        answered(
            || {
                http.post(format!("{base}/v1/matches/{id}/moves"))
                    .bearer_auth(&token)
                    .json(&json!({"move": "4", "expected_version": m["version"]}))
            },
            "POST /v1/matches/{id}/moves",
        )
        .await
    };
    if let Err(e) = served.await {
        failures.push(format!("discs does not serve: {e:#}"));
    }
    let rows: usize = before.values().map(Vec::len).sum();
    if failures.is_empty() {
        println!(
            "restore-drill check ok: {acked} acknowledged moves back, {} chains verify ({} events), \
             {rows} projection rows rebuilt as before, the closed account's name nowhere, a move played",
            chains.streams_checked, chains.events_checked
        );
        Ok(())
    } else {
        for f in &failures {
            println!("restore-drill check FAILED: {f}");
        }
        std::process::exit(1)
    }
}
