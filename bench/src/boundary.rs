//! What the fair-play boundary costs and withholds with many live ranked matches (BENCHMARKS.md,
//! "The fair-play boundary"): `--live` ranked matches live at once (half of each game, each
//! a CPU game at `--level` stopped at a random depth beyond the public opening), published as
//! the live path publishes them; then
//! - the publication's cost per move (`Guard::of`) beside the key it replaced (`canonical`);
//! - the read of the guards from `match_work` (`service::analysis::boundary::guards`) with
//!   every live row in the table, as each question pays it;
//! - a check's cost: one asked position's images against every guard of its game;
//! - the share of honest finished games' plies (`--finished` other CPU games of each game)
//!   that the boundary withholds at that load, by phase of the game.
//!
//!   cargo run --release -p bench --bin boundary-bench -- [--live 10000] [--finished 1000]

use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Parser;

use domain::boundary::{Asked, Guard, withheld};
use domain::cpu::choose_move;
use domain::games::{AnyPosition, GameId};
use domain::rng::SplitMix64;

#[derive(Parser)]
struct Cli {
    /// Ranked matches live at once, half of each game.
    #[arg(long, default_value_t = 10_000)]
    live: usize,
    /// Finished games of each game whose plies are asked about.
    #[arg(long, default_value_t = 1_000)]
    finished: usize,
    /// The CPU level both sides of every game play at.
    #[arg(long, default_value_t = 2)]
    level: u8,
}

/// Every position of a CPU game at `level` (a pass gives a position of its own), start first.
fn cpu_game(game: GameId, level: u8, seed: u64) -> Vec<AnyPosition> {
    let mut pos = AnyPosition::start(game);
    let mut out = vec![pos];
    let mut ply = 0u64;
    while pos.outcome().is_none() {
        if pos.must_pass() {
            pos.pass();
            out.push(pos);
            continue;
        }
        let Some(mv) = choose_move(&pos, level, seed.wrapping_mul(1_000_003) + ply) else {
            break;
        };
        if pos.play(&mv).is_err() {
            break;
        }
        ply += 1;
        out.push(pos);
    }
    out
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<()> {
    let cli = Cli::parse();
    let db = database::testing::TestDb::migrated(4).await;
    let pool = database::connect(&db.url, 4).await?;
    let client = pool.get().await?;
    let mut rng = SplitMix64(20_261_204);
    println!(
        "boundary-bench live={} finished={} level={}",
        cli.live, cli.finished, cli.level
    );
    for (g, game) in GameId::ALL.into_iter().enumerate() {
        let public = game.public_plies();
        // The live matches: CPU games stopped at a random depth beyond the public opening.
        let mut live = Vec::new();
        let mut seed = 1_000_000 * (g as u64 + 1);
        while live.len() < cli.live / 2 {
            seed += 1;
            let line = cpu_game(game, cli.level, seed);
            let open: Vec<&AnyPosition> = line
                .iter()
                .filter(|p| p.ply() >= public && p.outcome().is_none())
                .collect();
            if !open.is_empty() {
                live.push(*open[rng.index(open.len())]);
            }
        }
        // Publication per move: the guard now, the canonical key before.
        let started = Instant::now();
        let guards: Vec<Guard> = live.iter().filter_map(|p| Guard::of(p, public)).collect();
        let guard_ns = started.elapsed().as_nanos() as f64 / live.len() as f64;
        let started = Instant::now();
        let keys: usize = live.iter().map(|p| p.canonical().0.len()).sum();
        let canonical_ns = started.elapsed().as_nanos() as f64 / live.len() as f64;
        println!(
            "{game} publish guard_ns={guard_ns:.0} canonical_key_ns_before={canonical_ns:.0} (keys {keys} bytes)"
        );

        // The live rows in match_work, as the live path writes them.
        let ids: Vec<uuid::Uuid> = guards.iter().map(|_| uuid::Uuid::new_v4()).collect();
        let stored: Vec<String> = guards.iter().map(Guard::key).collect();
        let depths: Vec<i16> = guards.iter().map(|g| g.depth() as i16).collect();
        client
            .execute(
                "INSERT INTO match_work (match_id, watch1, watch2, seen1, seen2, version, \
                                         live_key, live_depth) \
                 SELECT id, true, true, now(), now(), 1, k, d \
                 FROM unnest($1::uuid[], $2::text[], $3::int2[]) AS u(id, k, d)",
                &[&ids, &stored, &depths],
            )
            .await?;
        client.execute("ANALYZE match_work", &[]).await?;
        let mut reads = Vec::new();
        let mut read = Vec::new();
        for _ in 0..200 {
            let started = Instant::now();
            read = service::analysis::boundary::guards(&client, game, 64).await?;
            reads.push(started.elapsed());
        }
        reads.sort();
        println!(
            "{game} read rows={} p50_ms={:.2} p99_ms={:.2}",
            read.len(),
            percentile(&reads, 0.5),
            percentile(&reads, 0.99)
        );

        // Honest finished games asked about ply by ply.
        let mut checks = Vec::new();
        let (mut asked, mut kept) = (0u64, 0u64);
        let mut by_phase: Vec<(u64, u64)> = vec![(0, 0); 8];
        for i in 0..cli.finished {
            let line = cpu_game(game, cli.level, 7_000_000 * (g as u64 + 1) + i as u64);
            for pos in line.iter().filter(|p| p.ply() > public) {
                let started = Instant::now();
                let out = withheld(&Asked::of(pos), public, &read);
                checks.push(started.elapsed());
                asked += 1;
                kept += u64::from(out);
                let phase = (pos.ply() as usize / 10).min(7);
                by_phase[phase].0 += 1;
                by_phase[phase].1 += u64::from(out);
            }
        }
        checks.sort();
        println!(
            "{game} check guards={} p50_us={:.1} p99_us={:.1}",
            read.len(),
            percentile(&checks, 0.5) * 1e3,
            percentile(&checks, 0.99) * 1e3
        );
        println!(
            "{game} withheld plies={asked} withheld={kept} share={:.3}%",
            100.0 * kept as f64 / asked.max(1) as f64
        );
        for (phase, (n, k)) in by_phase.iter().enumerate().filter(|(_, (n, _))| *n > 0) {
            println!(
                "{game} withheld plies {}-{}: {k} of {n} ({:.3}%)",
                phase * 10,
                phase * 10 + 9,
                100.0 * *k as f64 / *n as f64
            );
        }
        client.execute("DELETE FROM match_work", &[]).await?;
    }
    Ok(())
}
