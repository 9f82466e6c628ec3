//! `failover-drill`: the client side of deploy/failover-drill.sh: players and event streams
//! through the load balancer while the database's primary is killed, brought back as a standby
//! and switched back to, then the checks.
//!
//! ```text
//! failover-drill --base URL --database-url URL --kill CMD --rejoin CMD --switchover CMD
//!                [--players 20] [--streams 100] [--settle-secs 8] [--ttl 10]
//! ```
//!
//! Each player plays solo Four in a Row matches against the CPU (level 1) as fast as the server
//! answers, retrying a failed move with its `Idempotency-Key`; `--streams` event streams follow
//! the players' current matches, resuming with `Last-Event-ID` whenever they break. After
//! `--settle-secs` of play the drill runs `--kill` (the primary dies; the command returns once a
//! standby is promoted), waits for the first move acknowledged after that, plays on, runs `--rejoin` (the old primary comes back as a standby),
//! `--switchover` (it becomes the primary again), plays on, stops and checks:
//!
//! - every acknowledged move is in the log at the version its answer gave, in the order played;
//! - every hash chain verifies (the admin audit);
//! - no answer was a 500 or anything but a 2xx, a 503 with `Retry-After` or a refused or broken
//!   connection;
//! - every stream saw each match's events once each, in order, with none missing;
//! - every match a player finished, read back at once (its events, through any instance and,
//!   where the instances read from the standby, `DATABASE_READ_URL`, maybe there), ends with the
//!   end its player saw, and its replay answers;
//! - moves were acknowledged again within `--ttl` + 5 seconds of the kill: the end of the longest
//!   stretch without an acknowledgement since the kill (a killed postmaster's backends may serve
//!   their open connections a moment longer) comes at most that long after it.
//!
//! With `--tournament-players`, an admin's arena runs through it all too: its players follow it
//! (`GET /v1/tournaments/{id}`), and in each game one of the two resigns after two seconds (with
//! an `Idempotency-Key`). After the drill, once every ended game has its result, the checks: no
//! match paired twice, nobody in two games at once, every pairing's match in the log naming the
//! tournament, every result the match's own winner, and the standings recounted from the log
//! equal to the projection (`GET /v1/admin/audits/tournaments`).
//!
//! It prints the figures (`moves_acked`, `moves_lost`, `unavailable_503`, `refused`, `no_ack_s`
//! the longest stretch without an acknowledged move, `acked_again_after_kill_s` its end,
//! `promotion_s`, `switchover_s`, `stream_resumes`, `read_back`, ...) and exits non-zero on any failed check.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Parser;
use futures_util::StreamExt;
use serde_json::{Value, json};

use api::auth::{Keys, Role};
use domain::ids::PlayerId;
use domain::rng::SplitMix64;

#[derive(Parser)]
#[command(about = "Failover drill: play through a primary's death, rejoin and switchover")]
struct Cli {
    /// The load balancer in front of the discs instances.
    #[arg(long, env = "DISCS_URL")]
    base: String,
    /// The primary's URL (the admin token is signed with the server's secret read there).
    #[arg(long, env = "DATABASE_URL")]
    database_url: String,
    #[arg(long, default_value_t = 20)]
    players: usize,
    #[arg(long, default_value_t = 100)]
    streams: usize,
    /// Seconds of play before the kill, and between the later steps.
    #[arg(long, default_value_t = 8)]
    settle_secs: u64,
    /// Patroni's `ttl`: a move must be acknowledged again within ttl + 5 s of the kill.
    #[arg(long, default_value_t = 10)]
    ttl: u64,
    /// Players of an arena that runs through it all (0: none).
    #[arg(long, default_value_t = 10)]
    tournament_players: usize,
    /// Shell commands: kill the primary, bring it back as a standby, switch back to it.
    #[arg(long)]
    kill: String,
    #[arg(long)]
    rejoin: String,
    #[arg(long)]
    switchover: String,
}

/// An acknowledged move: (match, version its answer gave, move, sent at, acknowledged at,
/// player).
type Ack = (String, u64, String, Instant, Instant, usize);

/// What every task reports.
#[derive(Default)]
struct Drill {
    acked: Mutex<Vec<Ack>>,
    unavailable: AtomicU64,
    refused: AtomicU64,
    /// Answers that break the rules (a 500, a 503 without Retry-After, any other status).
    violations: Mutex<Vec<String>>,
    /// Each player's current match, for the streams.
    current: Mutex<BTreeMap<usize, String>>,
    /// Per stream and match: the event ids seen, in order.
    seen: Mutex<BTreeMap<(usize, String), Vec<u64>>>,
    resumes: AtomicU64,
    /// Finished matches read back at once by their player (events and replay).
    read_back: AtomicU64,
    stop: AtomicBool,
}

impl Drill {
    fn violation(&self, what: String) {
        eprintln!("violation: {what}");
        self.violations.lock().expect("violations").push(what);
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// How one request ended.
enum Outcome {
    Ok(Value),
    /// A 503 with Retry-After, or no connection: try again.
    Retry,
    /// Anything else: the drill failed (already recorded).
    Broken,
}

async fn send(drill: &Drill, req: reqwest::RequestBuilder, what: &str) -> Outcome {
    let res = match req.send().await {
        Ok(res) => res,
        Err(e) => {
            // Refused, reset or cut by the balancer: the request may or may not have been
            // applied; the retry's Idempotency-Key settles it.
            drill.refused.fetch_add(1, Ordering::Relaxed);
            if !(e.is_connect() || e.is_request() || e.is_timeout() || e.is_body()) {
                drill.violation(format!("{what}: {e}"));
                return Outcome::Broken;
            }
            return Outcome::Retry;
        }
    };
    let status = res.status();
    if status.is_success() {
        return match res.json().await {
            Ok(v) => Outcome::Ok(v),
            Err(_) => {
                drill.refused.fetch_add(1, Ordering::Relaxed);
                Outcome::Retry
            }
        };
    }
    if status == reqwest::StatusCode::SERVICE_UNAVAILABLE
        && res.headers().contains_key("retry-after")
    {
        drill.unavailable.fetch_add(1, Ordering::Relaxed);
        return Outcome::Retry;
    }
    let body = res.text().await.unwrap_or_default();
    drill.violation(format!("{what}: {status} {body}"));
    Outcome::Broken
}

/// Sends until an answer that is not "try again" (or the drill stops).
async fn until_answered(
    drill: &Drill,
    what: &str,
    make: impl Fn() -> reqwest::RequestBuilder,
) -> Option<Value> {
    loop {
        match send(drill, make(), what).await {
            Outcome::Ok(v) => return Some(v),
            Outcome::Broken => return None,
            Outcome::Retry if drill.stopped() => return None,
            Outcome::Retry => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<()> {
    let cli = Cli::parse();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()?;
    let streams_http = reqwest::Client::new();
    let base = cli.base.trim_end_matches('/').to_owned();
    let (mut tokens, mut ids) = (Vec::new(), Vec::new());
    for i in 0..cli.players {
        let res: Value = http
            .post(format!("{base}/v1/players"))
            .json(&json!({"name": format!("Drill{i}")}))
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        tokens.push(res["token"].as_str().context("a token")?.to_owned());
        ids.push(res["player_id"].as_str().context("an id")?.to_owned());
    }
    let drill = Arc::new(Drill::default());
    let mut tasks = Vec::new();
    let arena = match cli.tournament_players {
        0 => None,
        n => Some(arena(&http, &base, &cli.database_url, &ids[0], n).await?),
    };
    if let Some((id, players)) = &arena {
        for (me, token) in players.clone() {
            let (drill, http, base, id) = (drill.clone(), http.clone(), base.clone(), id.clone());
            tasks.push(tokio::spawn(async move {
                arena_player(&drill, &http, &base, &id, &me, &token).await;
            }));
        }
    }
    for (i, token) in tokens.iter().enumerate() {
        let (drill, http, base, token) = (drill.clone(), http.clone(), base.clone(), token.clone());
        tasks.push(tokio::spawn(async move {
            player(&drill, &http, &base, &token, i).await;
        }));
    }
    // The streams start once every player has a match.
    while drill.current.lock().expect("current").len() < cli.players {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for k in 0..cli.streams {
        let (drill, http, base, token) = (
            drill.clone(),
            streams_http.clone(),
            base.clone(),
            tokens[k % cli.players].clone(),
        );
        let owner = k % cli.players;
        tasks.push(tokio::spawn(async move {
            follow(&drill, &http, &base, &token, k, owner).await;
        }));
    }
    let settle = Duration::from_secs(cli.settle_secs);
    tokio::time::sleep(settle).await;
    let before_kill = drill.acked.lock().expect("acked").len();
    let killed_at = Instant::now();
    run("kill", &cli.kill).await?;
    // The kill command returns once a standby is promoted; then the first move acknowledged
    // since.
    let promoted_at = Instant::now();
    while !drill
        .acked
        .lock()
        .expect("acked")
        .iter()
        .any(|a| a.4 > promoted_at)
        && promoted_at.elapsed() < Duration::from_secs(60)
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The outage: the longest stretch without an acknowledgement from the kill on (a killed
    // postmaster's backends may serve their connections a moment longer), and when it ended.
    let mut times: Vec<Instant> = drill
        .acked
        .lock()
        .expect("acked")
        .iter()
        .map(|a| a.4)
        .filter(|&t| t > killed_at)
        .collect();
    times.sort();
    let recovered = times
        .iter()
        .scan(killed_at, |prev, &t| {
            let gap = (t - *prev, t);
            *prev = t;
            Some(gap)
        })
        .max_by_key(|(gap, _)| *gap)
        // None when nothing was acknowledged after the promotion.
        .filter(|_| times.last().is_some_and(|&t| t > promoted_at))
        .map(|(gap, t)| (gap, t - killed_at));
    tokio::time::sleep(settle).await;
    run("rejoin", &cli.rejoin).await?;
    tokio::time::sleep(settle).await;
    let switch_at = Instant::now();
    run("switchover", &cli.switchover).await?;
    let switched = switch_at.elapsed();
    tokio::time::sleep(settle).await;
    drill.stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await?;
    }

    // The checks, against the log as it is now.
    let admin = admin_token(&cli.database_url, &ids[0]).await?;
    let acked = drill.acked.lock().expect("acked").clone();
    let mut by_match: BTreeMap<(String, usize), Vec<(u64, String)>> = BTreeMap::new();
    for (m, v, mv, _, _, p) in &acked {
        by_match
            .entry((m.clone(), *p))
            .or_default()
            .push((*v, mv.clone()));
    }
    let mut lost = 0;
    let mut final_versions = BTreeMap::new();
    for ((m, p), moves) in &by_match {
        let events: Value = http
            .get(format!("{base}/v1/matches/{m}/events"))
            .bearer_auth(&tokens[*p])
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        let events = events["events"].as_array().context("events")?;
        final_versions.insert(m.clone(), events.len() as u64);
        let mut last = 0;
        for (v, mv) in moves {
            if *v <= last {
                drill.violation(format!("{m}: version {v} acknowledged after {last}"));
            }
            // The player's move is the last one they played up to the answer's version (a
            // move that ends the game is followed by the end in the same command).
            let found = events
                .iter()
                .filter(|e| e["version"].as_u64().is_some_and(|x| x <= *v))
                .rfind(|e| e["type"] == "move_played" && e["data"]["seat"] == 1);
            let played = found.is_some_and(|e| {
                e["data"]["move"].as_str() == Some(mv.as_str())
                    && e["version"].as_u64().is_some_and(|x| x > last)
            });
            last = *v;
            if !played {
                lost += 1;
                drill.violation(format!(
                    "{m}: acknowledged move {mv} at version {v} not in the log"
                ));
            }
        }
    }
    let audit: Value = http
        .get(format!("{base}/v1/admin/audits/ratings"))
        .bearer_auth(&admin)
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    if audit["chains_ok"] != true {
        drill.violation(format!("broken chains: {}", audit["broken_chains"]));
    }
    let (mut gaps, mut repeats) = (0, 0);
    for ((k, m), ids) in drill.seen.lock().expect("seen").iter() {
        for (i, id) in ids.iter().enumerate() {
            if *id != i as u64 + 1 {
                if *id <= i as u64 {
                    repeats += 1;
                } else {
                    gaps += 1;
                }
                drill.violation(format!("stream {k} on {m}: {ids:?}"));
                break;
            }
        }
        if let Some(&last) = ids.last()
            && final_versions.get(m).is_some_and(|&f| last > f)
        {
            drill.violation(format!("stream {k} on {m}: saw {last}, beyond the log"));
        }
    }
    let (games, results) = match &arena {
        Some((id, _)) => check_arena(&drill, &http, &base, &admin, id).await?,
        None => (0, 0),
    };
    let recovered_s = recovered.map(|(_, after)| after.as_secs_f64());
    match recovered_s {
        Some(s) if s <= (cli.ttl + 5) as f64 => {}
        other => drill.violation(format!(
            "moves acknowledged again {other:?} s after the kill, over ttl + 5 = {} s",
            cli.ttl + 5
        )),
    }
    let violations = drill.violations.lock().expect("violations").len();
    println!(
        "failover-drill players={} streams={} moves_acked={} before_kill={} moves_lost={lost} \
         unavailable_503={} refused={} no_ack_s={} acked_again_after_kill_s={} \
         promotion_s={:.1} switchover_s={:.1} \
         stream_resumes={} stream_matches={} stream_gaps={gaps} stream_repeats={repeats} \
         read_back={} chains_ok={} tournament_games={games} tournament_results={results} \
         violations={violations}",
        cli.players,
        cli.streams,
        acked.len(),
        before_kill,
        drill.unavailable.load(Ordering::Relaxed),
        drill.refused.load(Ordering::Relaxed),
        recovered.map_or("none".to_owned(), |(gap, _)| format!(
            "{:.2}",
            gap.as_secs_f64()
        )),
        recovered_s.map_or("none".to_owned(), |s| format!("{s:.2}")),
        (promoted_at - killed_at).as_secs_f64(),
        switched.as_secs_f64(),
        drill.resumes.load(Ordering::Relaxed),
        drill.seen.lock().expect("seen").len(),
        drill.read_back.load(Ordering::Relaxed),
        audit["chains_ok"],
    );
    if violations > 0 {
        bail!("{violations} failed checks");
    }
    Ok(())
}

/// Runs a shell command to its end; its output goes to the drill's stderr.
async fn run(step: &str, command: &str) -> Result<()> {
    eprintln!("failover-drill: {step}: {command}");
    let command = command.to_owned();
    let status = tokio::task::spawn_blocking(move || {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(command)
            .status()
    })
    .await??;
    if !status.success() {
        bail!("{step} failed: {status}");
    }
    Ok(())
}

/// An admin token for `player`, signed with the server's own secret.
async fn admin_token(database_url: &str, player: &str) -> Result<String> {
    let secret = discs::startup::server_secret(database_url).await?;
    let keys = Keys::new(&secret, None, 1)?;
    let admin: PlayerId = player.parse().map_err(|e| anyhow::anyhow!("{e:?}"))?;
    keys.issue(admin, Role::Admin, 0, time::OffsetDateTime::now_utc())
}

/// One player: solo matches against the CPU, one after the other, until the drill stops.
async fn player(drill: &Drill, http: &reqwest::Client, base: &str, token: &str, i: usize) {
    let mut rng = SplitMix64(i as u64 + 1);
    while !drill.stopped() {
        let key = uuid::Uuid::now_v7().to_string();
        let Some(view) = until_answered(drill, "POST /v1/matches", || {
            http.post(format!("{base}/v1/matches"))
                .bearer_auth(token)
                .header("idempotency-key", &key)
                .json(&json!({"game": "four_in_a_row", "cpu_level": 1, "first": "me"}))
        })
        .await
        else {
            return;
        };
        let Some(id) = view["match_id"].as_str().map(str::to_owned) else {
            drill.violation(format!("no match id: {view}"));
            return;
        };
        drill.current.lock().expect("current").insert(i, id.clone());
        let mut view = view;
        loop {
            if view["status"] != "active" {
                read_back(drill, http, base, token, &id, &view).await;
                break;
            }
            if view["to_move"] != 1 {
                // The CPU's reply is appended just after our move: look again.
                tokio::time::sleep(Duration::from_millis(5)).await;
                match until_answered(drill, "GET /v1/matches/{id}", || {
                    http.get(format!("{base}/v1/matches/{id}"))
                        .bearer_auth(token)
                })
                .await
                {
                    Some(v) => view = v,
                    None => return,
                }
                continue;
            }
            if drill.stopped() {
                return;
            }
            let legal: Vec<String> = view["legal_moves"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|m| m.as_str().map(str::to_owned))
                .collect();
            let Some(mv) = legal.get(rng.index(legal.len().max(1))).cloned() else {
                drill.violation(format!("{id}: no legal move in {view}"));
                return;
            };
            let (key, version) = (uuid::Uuid::now_v7().to_string(), view["version"].clone());
            let sent = Instant::now();
            let Some(answer) = until_answered(drill, "POST /v1/matches/{id}/moves", || {
                http.post(format!("{base}/v1/matches/{id}/moves"))
                    .bearer_auth(token)
                    .header("idempotency-key", &key)
                    .json(&json!({"move": mv, "expected_version": version}))
            })
            .await
            else {
                return;
            };
            let Some(v) = answer["version"].as_u64() else {
                drill.violation(format!("{id}: an answer without a version: {answer}"));
                return;
            };
            drill
                .acked
                .lock()
                .expect("acked")
                .push((id.clone(), v, mv, sent, Instant::now(), i));
            view = answer;
        }
    }
}

/// Reads a match its player just finished, at once, through any instance (and the standby,
/// where the instance reads from one): its events must end with the end the player saw, and
/// its replay must answer.
async fn read_back(
    drill: &Drill,
    http: &reqwest::Client,
    base: &str,
    token: &str,
    id: &str,
    view: &Value,
) {
    let Some(events) = until_answered(drill, "GET /v1/matches/{id}/events", || {
        http.get(format!("{base}/v1/matches/{id}/events"))
            .bearer_auth(token)
    })
    .await
    else {
        return;
    };
    let last = events["events"].as_array().and_then(|e| e.last());
    if !last.is_some_and(|e| e["type"] == "match_ended" && e["version"] == view["version"]) {
        drill.violation(format!(
            "{id}: read back at once, its events end with {last:?}, the match ended at version {}",
            view["version"]
        ));
        return;
    }
    if until_answered(drill, "GET /v1/matches/{id}/replay", || {
        http.get(format!("{base}/v1/matches/{id}/replay"))
            .bearer_auth(token)
    })
    .await
    .is_some()
    {
        drill.read_back.fetch_add(1, Ordering::Relaxed);
    }
}

/// One event stream: follows player `owner`'s current match, resuming after the last event
/// seen whenever the stream breaks, and moves to the player's next match when one finishes.
async fn follow(
    drill: &Drill,
    http: &reqwest::Client,
    base: &str,
    token: &str,
    k: usize,
    owner: usize,
) {
    let mut done: Vec<String> = Vec::new();
    while !drill.stopped() {
        let Some(m) = drill.current.lock().expect("current").get(&owner).cloned() else {
            return;
        };
        if done.contains(&m) {
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        }
        let last = drill
            .seen
            .lock()
            .expect("seen")
            .get(&(k, m.clone()))
            .and_then(|ids| ids.last().copied());
        let mut req = http.get(format!("{base}/v1/matches/{m}/stream?access_token={token}"));
        if let Some(id) = last {
            req = req.header("last-event-id", id.to_string());
            drill.resumes.fetch_add(1, Ordering::Relaxed);
        }
        let res = match req.send().await {
            Ok(res) if res.status().is_success() => res,
            Ok(res) if res.status() == reqwest::StatusCode::SERVICE_UNAVAILABLE => {
                drill.unavailable.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
            Ok(res) => {
                drill.violation(format!("stream {k} on {m}: {}", res.status()));
                return;
            }
            Err(_) => {
                drill.refused.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let mut body = res.bytes_stream();
        let mut buf = String::new();
        let mut finished = false;
        'read: while !drill.stopped() {
            let chunk = tokio::select! {
                c = body.next() => c,
                () = tokio::time::sleep(Duration::from_millis(500)) => continue 'read,
            };
            let Some(Ok(chunk)) = chunk else {
                break;
            };
            buf.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buf.find("\n\n") {
                let frame: String = buf.drain(..end + 2).collect();
                let (mut id, mut data) = (None, Value::Null);
                for line in frame.lines() {
                    if let Some(v) = line.strip_prefix("id: ") {
                        id = v.parse::<u64>().ok();
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        data = serde_json::from_str(v).unwrap_or(Value::Null);
                    }
                }
                let Some(id) = id else { continue };
                drill
                    .seen
                    .lock()
                    .expect("seen")
                    .entry((k, m.clone()))
                    .or_default()
                    .push(id);
                if data["match"]["status"] == "finished" && data["match"]["version"] == id {
                    finished = true;
                    break 'read;
                }
            }
        }
        if finished {
            done.push(m);
        }
    }
}

/// An admin's arena starting in three seconds, with `n` players joined: its id and the players
/// (id, token).
async fn arena(
    http: &reqwest::Client,
    base: &str,
    database_url: &str,
    admin: &str,
    n: usize,
) -> Result<(String, Vec<(String, String)>)> {
    let token = admin_token(database_url, admin).await?;
    let starts = time::OffsetDateTime::now_utc() + time::Duration::seconds(3);
    let created: Value = http
        .post(format!("{base}/v1/tournaments"))
        .bearer_auth(&token)
        .json(
            &json!({"game": "four_in_a_row", "format": "arena", "name": "Drill arena",
                      "minutes": 30, "rated": true, "settings": {"turn_seconds": null},
                      "starts_at": starts.format(&time::format_description::well_known::Rfc3339)?}),
        )
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    let id = created["tournament_id"]
        .as_str()
        .context("an id")?
        .to_owned();
    let mut players = Vec::new();
    for i in 0..n {
        let res: Value = http
            .post(format!("{base}/v1/players"))
            .json(&json!({"name": format!("Arena{i}")}))
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        let token = res["token"].as_str().context("a token")?.to_owned();
        http.post(format!("{base}/v1/tournaments/{id}/join"))
            .bearer_auth(&token)
            .send()
            .await?
            .error_for_status()?;
        players.push((
            res["player_id"].as_str().context("an id")?.to_owned(),
            token,
        ));
    }
    Ok((id, players))
}

/// An arena player: follows the tournament; in each game of theirs, the player the match id
/// names (its first byte's parity: seat 1 or 2) resigns after two seconds.
async fn arena_player(
    drill: &Drill,
    http: &reqwest::Client,
    base: &str,
    id: &str,
    me: &str,
    token: &str,
) {
    let mut done = String::new();
    while !drill.stopped() {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let req = http
            .get(format!("{base}/v1/tournaments/{id}"))
            .bearer_auth(token);
        let Outcome::Ok(view) = send(drill, req, "tournament").await else {
            continue;
        };
        let Some(m) = view["me"]["match_id"].as_str().map(str::to_owned) else {
            continue;
        };
        if m == done {
            continue;
        }
        let seat1 = u8::from_str_radix(&m[..2], 16).unwrap_or(0) % 2 == 0;
        let req = http
            .get(format!("{base}/v1/matches/{m}"))
            .bearer_auth(token);
        let Outcome::Ok(game) = send(drill, req, "arena match").await else {
            continue;
        };
        let mine_to_lose = (game["seats"][0]["player_id"].as_str() == Some(me)) == seat1;
        if !mine_to_lose || game["status"] != "active" {
            done = m;
            continue;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
        let key = format!("resign-{m}");
        let version = game["version"].clone();
        if until_answered(drill, "arena resign", || {
            http.post(format!("{base}/v1/matches/{m}/resign"))
                .bearer_auth(token)
                .header("idempotency-key", &key)
                .json(&json!({"expected_version": version}))
        })
        .await
        .is_some()
        {
            done = m;
        }
    }
}

/// The arena's checks, once every ended game has its result (a minute at most): the games and
/// the results counted.
async fn check_arena(
    drill: &Drill,
    http: &reqwest::Client,
    base: &str,
    admin: &str,
    id: &str,
) -> Result<(usize, usize)> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let pairings: Value = http
            .get(format!("{base}/v1/tournaments/{id}/pairings?limit=500"))
            .bearer_auth(admin)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        let pairings = pairings["pairings"].as_array().cloned().unwrap_or_default();
        let mut waiting = false;
        let mut playing = std::collections::HashSet::new();
        let mut matches = std::collections::HashSet::new();
        let mut problems = Vec::new();
        for p in &pairings {
            let m = p["match_id"].as_str().unwrap_or_default();
            if !matches.insert(m.to_owned()) {
                problems.push(format!("match {m} paired twice"));
            }
            let game: Value = http
                .get(format!("{base}/v1/matches/{m}"))
                .bearer_auth(admin)
                .send()
                .await?
                .error_for_status()?
                .json()
                .await?;
            if game["tournament_id"] != id {
                problems.push(format!("match {m} does not name the tournament"));
            }
            let ended = game["status"] == "finished";
            match (ended, p["result"].is_null()) {
                (true, true) => waiting = true,
                (false, true) => {
                    for s in p["seats"].as_array().into_iter().flatten() {
                        if !playing.insert(s.to_string()) {
                            problems.push(format!("{s} in two games at once"));
                        }
                    }
                }
                (true, false) => {
                    let seat = game["result"]["winner_seat"].as_u64();
                    let winner = seat.map(|s| p["seats"][(s - 1) as usize].clone());
                    if winner.unwrap_or(Value::Null) != p["winner"] {
                        problems.push(format!("match {m}: result {} against {game}", p["winner"]));
                    }
                }
                (false, false) => problems.push(format!("match {m}: a result while played")),
            }
        }
        if !waiting || Instant::now() > deadline {
            for problem in problems {
                drill.violation(format!("arena: {problem}"));
            }
            if waiting {
                drill.violation("arena: ended games without a result after a minute".into());
            }
            let audit: Value = http
                .get(format!("{base}/v1/admin/audits/tournaments"))
                .bearer_auth(admin)
                .send()
                .await?
                .error_for_status()?
                .json()
                .await?;
            for m in audit["mismatches"].as_array().into_iter().flatten() {
                drill.violation(format!("arena standings: {m}"));
            }
            let results = pairings.iter().filter(|p| !p["result"].is_null()).count();
            return Ok((pairings.len(), results));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
