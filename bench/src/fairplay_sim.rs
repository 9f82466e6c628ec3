//! `fairplay-sim`: the engine-assistance flags on a simulated ladder over the real server.
//!
//! ```text
//! fairplay-sim [--honest 24] [--rounds 20] [--seed 1] [--ply-nodes 8000000]
//! ```
//!
//! Honest players play like CPU levels 1–3 (a third each); a relay plays level 5's moves (the
//! opening book, the exact solver within its budget, a deep search elsewhere) in every game, and
//! a part-time cheater does so in one game in three (drawn per game), like level 3 otherwise.
//! The server assesses each match at `--ply-nodes` per position. Each round every player
//! queues for Four in a Row; the server's waves pair them (a player left unpaired after 90 s
//! sits the round out); every match is played at once over HTTP. After each round the bench
//! waits until the server has assessed every finished match, then reads `GET /v1/admin/flags`.
//! It prints per round the games each cheater has played, whether they are flagged and their
//! evidence (the flag's z, the pooled and the games test's, the share of games fitted as
//! engine-played), and the highest honest z; at the end the honest players ever flagged (the
//! false positives), the highest honest z seen and the games played.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Parser;
use serde_json::{Value, json};

use api::auth::{Keys, Role};
use domain::cpu::choose_move;
use domain::games::{AnyPosition, GameId};
use domain::ids::PlayerId;
use domain::rng::SplitMix64;
use projections::audit::FlagRules;
use service::analysis::fair::engine_evidence;
use service::config::QualityNodes;

mod in_process;

#[derive(Parser)]
#[command(about = "Engine-assistance flags on a simulated ranked ladder")]
struct Cli {
    #[arg(
        long,
        env = "DATABASE_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/postgres"
    )]
    database_url: String,
    #[arg(long, default_value_t = 24)]
    honest: usize,
    #[arg(long, default_value_t = 20)]
    rounds: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The server's assessment budget per position (its default for Four in a Row).
    #[arg(long, default_value_t = 8_000_000)]
    ply_nodes: u64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Honest(u8),
    Relay,
    PartTime,
}

struct Player {
    id: String,
    token: String,
    kind: Kind,
    games: usize,
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<()> {
    let cli = Cli::parse();
    let cli = &cli;
    let nodes = cli.ply_nodes;
    in_process::with_server_configured(
        &cli.database_url,
        "discs_fairplay",
        |c| c.core.quality_ply_nodes = QualityNodes::all(nodes),
        |server| async move {
            let http = reqwest::Client::new();
            let base = server.base.as_str();
            let db = database::testing::raw_client(&server.db_url).await;
            // The evidence is read as the server reads it, through a pool's client.
            let pool = database::pool(server.db_url.parse()?, 1)?;
            let mut players = Vec::new();
            for i in 0..cli.honest + 2 {
                let kind = match i {
                    i if i == cli.honest => Kind::Relay,
                    i if i == cli.honest + 1 => Kind::PartTime,
                    i => Kind::Honest(1 + (i % 3) as u8),
                };
                let res: Value = http
                    .post(format!("{base}/v1/players"))
                    .json(&json!({"name": format!("P{i}")}))
                    .send()
                    .await?
                    .json()
                    .await?;
                players.push(Player {
                    id: res["player_id"].as_str().context("an id")?.to_owned(),
                    token: res["token"].as_str().context("a token")?.to_owned(),
                    kind,
                    games: 0,
                });
            }
            // An admin token for the flags, signed with the server's own secret.
            let secret = discs::startup::server_secret(&server.db_url).await?;
            let keys = Keys::new(&secret, None, 30)?;
            let admin_id: PlayerId = players[0].id.parse().map_err(|e| anyhow::anyhow!("{e:?}"))?;
            let admin = keys.issue(admin_id, Role::Admin, 0, time::OffsetDateTime::now_utc())?;
            println!(
                "fairplay-sim honest={} rounds={} seed={} ply_nodes={} server={} database={}",
                cli.honest, cli.rounds, cli.seed, cli.ply_nodes, base, server.name
            );
            let mut rng = SplitMix64(cli.seed);
            let mut flagged_honest: HashSet<String> = HashSet::new();
            let mut first_flag: [Option<usize>; 2] = [None, None];
            let mut total_games = 0;
            let mut honest_max_z = f64::NEG_INFINITY;
            let started = Instant::now();
            for round in 1..=cli.rounds {
                let pairs = pair_round(&http, base, &db, &players).await?;
                let mut games = Vec::new();
                for (a, b, match_id) in &pairs {
                    let seeds = (rng.next_u64(), rng.chance(33));
                    games.push(play(&http, base, &players, *a, *b, match_id.clone(), seeds));
                }
                for outcome in futures_util::future::join_all(games).await {
                    outcome?;
                }
                for (a, b, _) in &pairs {
                    players[*a].games += 1;
                    players[*b].games += 1;
                }
                total_games += pairs.len();
                wait_assessed(&db, total_games).await?;
                let flags: Value = http
                    .get(format!("{base}/v1/admin/flags"))
                    .bearer_auth(&admin)
                    .send()
                    .await?
                    .json()
                    .await?;
                let mut line = format!("round={round} games={total_games}");
                for f in flags["flags"].as_array().into_iter().flatten() {
                    if f["kind"] != "engine_assistance" {
                        continue;
                    }
                    let Some(p) = players.iter().position(|p| f["player"] == p.id.as_str()) else {
                        continue;
                    };
                    match players[p].kind {
                        Kind::Honest(level) => {
                            flagged_honest.insert(players[p].id.clone());
                            line += &format!(" FALSE_POSITIVE(level={level} z={:.2})", f["z"].as_f64().unwrap_or(0.0));
                        }
                        Kind::Relay | Kind::PartTime => {
                            let k = usize::from(players[p].kind == Kind::PartTime);
                            first_flag[k].get_or_insert(players[p].games);
                        }
                    }
                }
                // Every player's evidence, flagged or not: the cheaters' scores as they grow, and
                // the highest honest one (the margin under the bar).
                let all = engine_evidence(&pool.get().await?, &FlagRules::default()).await?;
                let of = |id: &str| all.iter().find(|e| e.player.to_string() == id);
                for (k, name) in [(0, "relay"), (1, "part_time")] {
                    let p = &players[cli.honest + k];
                    line += &format!(
                        " {name}_games={} {name}_flagged_at={}",
                        p.games,
                        first_flag[k].map_or("-".to_owned(), |g| g.to_string())
                    );
                    if let Some(e) = of(&p.id).map(|e| &e.evidence) {
                        line += &format!(
                            " {name}_z={:.2}(pooled={:.2},games={:.2},share={:.2},critical={})",
                            e.z, e.z_pooled, e.z_games, e.engine_share, e.critical
                        );
                    }
                }
                let honest_max = players
                    .iter()
                    .take(cli.honest)
                    .filter_map(|p| of(&p.id))
                    .map(|e| e.evidence.z)
                    .fold(f64::NEG_INFINITY, f64::max);
                honest_max_z = honest_max_z.max(honest_max);
                line += &format!(" honest_max_z={honest_max:.2}");
                println!("{line}");
            }
            let honest_games: usize = players.iter().take(cli.honest).map(|p| p.games).sum::<usize>() / 2;
            println!(
                "done games={total_games} honest_players={} honest_flagged={} false_positive_rate={:.3} honest_max_z={honest_max_z:.2} relay_flagged_at={} part_time_flagged_at={} seconds={:.0} (honest game sides {})",
                cli.honest,
                flagged_honest.len(),
                flagged_honest.len() as f64 / cli.honest as f64,
                first_flag[0].map_or("-".to_owned(), |g| g.to_string()),
                first_flag[1].map_or("-".to_owned(), |g| g.to_string()),
                started.elapsed().as_secs_f64(),
                honest_games,
            );
            Ok(())
        },
    )
    .await
}

/// Queues every player and waits for the waves: the pairs made (player indexes and match id).
async fn pair_round(
    http: &reqwest::Client,
    base: &str,
    db: &tokio_postgres::Client,
    players: &[Player],
) -> Result<Vec<(usize, usize, String)>> {
    let before: Vec<Option<uuid::Uuid>> = slots(db, players).await?;
    let mut tickets = Vec::new();
    for p in players {
        let res: Value = http
            .post(format!("{base}/v1/queue"))
            .bearer_auth(&p.token)
            .json(&json!({"game": "four_in_a_row"}))
            .send()
            .await?
            .json()
            .await?;
        tickets.push(res["ticket_id"].as_str().context("a ticket")?.to_owned());
    }
    let started = Instant::now();
    let now = loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let now = slots(db, players).await?;
        let fresh = now
            .iter()
            .zip(&before)
            .filter(|(n, b)| n.is_some() && n != b)
            .count();
        if fresh + 1 >= players.len() || started.elapsed() > Duration::from_secs(90) {
            break now;
        }
    };
    let mut pairs = Vec::new();
    let mut seen = HashSet::new();
    for (i, (n, b)) in now.iter().zip(&before).enumerate() {
        let Some(m) = n.filter(|_| n != b) else {
            // Unpaired this round: the ticket is cancelled.
            http.delete(format!("{base}/v1/queue/{}", tickets[i]))
                .bearer_auth(&players[i].token)
                .send()
                .await?;
            continue;
        };
        if !seen.insert(m) {
            continue;
        }
        let j = now
            .iter()
            .zip(&before)
            .enumerate()
            .position(|(j, (x, y))| j != i && *x == Some(m) && x != y)
            .context("both players of a match")?;
        pairs.push((i, j, m.to_string()));
    }
    Ok(pairs)
}

async fn slots(db: &tokio_postgres::Client, players: &[Player]) -> Result<Vec<Option<uuid::Uuid>>> {
    let mut out = Vec::new();
    for p in players {
        let row = db
            .query_opt(
                "SELECT match_id FROM queue_slots WHERE player_id = $1::text::uuid",
                &[&p.id],
            )
            .await?;
        out.push(row.and_then(|r| r.get(0)));
    }
    Ok(out)
}

/// Plays one match to its end; `(seed, cheat)`: the draws, and whether a part-time cheater
/// relays the engine this game.
async fn play(
    http: &reqwest::Client,
    base: &str,
    players: &[Player],
    a: usize,
    b: usize,
    match_id: String,
    (seed, cheat): (u64, bool),
) -> Result<()> {
    let view: Value = http
        .get(format!("{base}/v1/matches/{match_id}"))
        .bearer_auth(&players[a].token)
        .send()
        .await?
        .json()
        .await?;
    let first = view["seats"][0]["player_id"].as_str().context("a seat")?;
    let seats = if first == players[a].id {
        [a, b]
    } else {
        [b, a]
    };
    let mut rng = SplitMix64(seed);
    let mut pos = AnyPosition::start(GameId::FourInARow);
    while pos.outcome().is_none() {
        let p = &players[seats[pos.side_to_move().index()]];
        let relays = match p.kind {
            Kind::Relay => true,
            Kind::PartTime => cheat,
            Kind::Honest(_) => false,
        };
        let level = match p.kind {
            Kind::Honest(level) => level,
            _ => 3,
        };
        // A relay plays the strongest CPU level's move (the opening book, the exact solver
        // within its budget, a deep search elsewhere); everyone else their own level's.
        let level = if relays { 5 } else { level };
        let seed = rng.next_u64();
        let mv =
            tokio::task::block_in_place(|| choose_move(&pos, level, seed)).context("a move")?;
        let res = http
            .post(format!("{base}/v1/matches/{match_id}/moves"))
            .bearer_auth(&p.token)
            .json(&json!({"move": mv}))
            .send()
            .await?;
        if !res.status().is_success() {
            bail!(
                "move {mv} in {match_id}: {} {}",
                res.status(),
                res.text().await?
            );
        }
        pos.play(&mv).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    Ok(())
}

/// Waits until `games` ranked matches are assessed.
async fn wait_assessed(db: &tokio_postgres::Client, games: usize) -> Result<()> {
    let started = Instant::now();
    loop {
        let done: i64 = db
            .query_one("SELECT count(*) FROM match_quality", &[])
            .await?
            .get(0);
        if done as usize >= games {
            return Ok(());
        }
        if started.elapsed() > Duration::from_secs(1800) {
            bail!("{done} of {games} matches assessed after 30 minutes");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
