//! What the fair-play boundary costs and withholds with many live ranked matches (BENCHMARKS.md,
//! "The fair-play boundary"): `--live` ranked matches live at once (half of each game, each
//! a CPU game at `--level` stopped at a random depth beyond the public opening), published as
//! the live path publishes them; then
//! - the publication's cost per move (`Guard::of`) beside the key it replaced (`canonical`);
//! - the read of the guards from `match_work` (`service::analysis::boundary::guards`) with
//!   every live row in the table, as each question pays it (with `--correspondence`, an
//!   instance's first read of the held guards, `service::live::guards::Held`, then a
//!   question's read when none changed);
//! - a check's cost: one asked position's images against every guard of its game;
//! - the share of honest finished games' plies (`--finished` other CPU games of each game)
//!   that the boundary withholds at that load, by phase of the game;
//! - with `--price N`, the horizon's price: for `N` of the live positions of each game, the
//!   distinct questions one ply beyond the horizon ([`domain::boundary::questions_at`]), their
//!   minimum and 1st percentile where the horizon applies, and whether the rule that guards the
//!   rest of a game to its end catches every position whose count falls below the price;
//! - with `--frontier`, the withheld share at other horizons (the frontier against the price);
//! - with `--near N`, the near-position road and the guarded CPU: for `N` live positions of each
//!   game that the solvers prove (Four in a Row plies 12–24, Reversi with at most 18 empty
//!   squares), how often a random move, the CPU's guarded policy (level 2), level 5 and the
//!   majority of the best moves of 24 slight variants of the position (a disc removed, a colour
//!   changed; each one the boundary answers) are a best move of the live position;
//! - with `--correspondence`, the `--live` games are open rated correspondence games instead
//!   (drawn the same way), whose guards are published in `correspondence_games` as
//!   `live::correspondence` does.
//!
//! ```text
//! cargo run --release -p bench --bin boundary-bench -- [--live 10000] [--finished 1000] \
//!     [--price 200] [--frontier] [--near 40] [--correspondence]
//! ```

use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Parser;

use domain::boundary::{
    Asked, Guard, PRICE, horizon_plies, questions_at, rest_is_short, shapes, withheld,
};
use domain::cpu::choose_move;
use domain::games::{AnyPosition, GameId, Side};
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
    /// Live positions of each game whose price is counted (0: none).
    #[arg(long, default_value_t = 0)]
    price: usize,
    /// Also the withheld share at other horizons.
    #[arg(long)]
    frontier: bool,
    /// Live positions of each game the near-position road is tried on (0: none).
    #[arg(long, default_value_t = 0)]
    near: usize,
    /// The live games are open rated correspondence games (any ply; `correspondence_games`).
    #[arg(long)]
    correspondence: bool,
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
        "boundary-bench live={} finished={} level={} correspondence={}",
        cli.live, cli.finished, cli.level, cli.correspondence
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

        if cli.price > 0 {
            price(game, &live[..cli.price.min(live.len())]);
        }
        if cli.near > 0 {
            near(game, cli.level, cli.near);
        }

        // The live rows in match_work, as the live path writes them (or, for correspondence
        // games, in correspondence_games, as `live::correspondence` does).
        let ids: Vec<uuid::Uuid> = guards.iter().map(|_| uuid::Uuid::new_v4()).collect();
        let stored: Vec<String> = guards.iter().map(Guard::key).collect();
        let depths: Vec<i16> = guards.iter().map(|g| g.depth() as i16).collect();
        if cli.correspondence {
            client
                .execute(
                    "INSERT INTO correspondence_games (match_id, due, live_key) \
                     SELECT id, now() + interval '3 days', k \
                     FROM unnest($1::uuid[], $2::text[]) AS u(id, k)",
                    &[&ids, &stored],
                )
                .await?;
        } else {
            client
                .execute(
                    "INSERT INTO match_work (match_id, watch1, watch2, seen1, seen2, version, \
                                             live_key, live_depth) \
                     SELECT id, true, true, now(), now(), 1, k, d \
                     FROM unnest($1::uuid[], $2::text[], $3::int2[]) AS u(id, k, d)",
                    &[&ids, &stored, &depths],
                )
                .await?;
        }
        client
            .batch_execute("ANALYZE match_work; ANALYZE correspondence_games")
            .await?;
        let mut reads = Vec::new();
        let mut read = Vec::new();
        if cli.correspondence {
            // An instance's first read takes every guard; the next ones, none changed, only
            // the last number.
            let held = service::live::guards::Held::default();
            let now = time::OffsetDateTime::now_utc();
            let started = Instant::now();
            read = held.current(&client, game, now).await?.to_vec();
            println!(
                "{game} first read rows={} ms={:.2}",
                read.len(),
                started.elapsed().as_secs_f64() * 1e3
            );
            for _ in 0..200 {
                let started = Instant::now();
                let again = held.current(&client, game, now).await?;
                reads.push(started.elapsed());
                assert_eq!(again.len(), read.len());
            }
        } else {
            for _ in 0..200 {
                let started = Instant::now();
                read = service::analysis::boundary::guards(&client, game, 64).await?;
                reads.push(started.elapsed());
            }
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
        if cli.frontier {
            frontier(game, &live, &finished_lines(game, &cli));
        }
        client
            .batch_execute("DELETE FROM match_work; DELETE FROM correspondence_games")
            .await?;
    }
    Ok(())
}

/// The honest finished games of `game` the bench asks about.
fn finished_lines(game: GameId, cli: &Cli) -> Vec<Vec<AnyPosition>> {
    let g = GameId::ALL.iter().position(|&x| x == game).unwrap_or(0) as u64;
    (0..cli.finished)
        .map(|i| cpu_game(game, cli.level, 7_000_000 * (g + 1) + i as u64))
        .collect()
}

/// The horizon's price over `live`: the distinct questions one ply beyond each position's
/// horizon, where it applies, and the rule's catch where it does not.
fn price(game: GameId, live: &[AnyPosition]) {
    let h = horizon_plies(game);
    let started = Instant::now();
    let (mut counts, mut short, mut short_below, mut missed) = (Vec::new(), 0, 0, 0);
    for pos in live {
        let count = questions_at(pos, pos.ply() + h + 1, PRICE);
        if rest_is_short(pos) {
            short += 1;
            short_below += usize::from(count < PRICE);
        } else {
            missed += usize::from(count < PRICE);
            counts.push(count);
        }
        let [first, second] = pos.disc_masks();
        println!(
            "{game} price ply={} shapes={} short={} count={count}",
            pos.ply(),
            shapes(first | second, game.board(), h + 1),
            rest_is_short(pos)
        );
    }
    counts.sort_unstable();
    let at = |p: f64| counts.get(((counts.len() as f64 - 1.0) * p).round() as usize);
    println!(
        "{game} price horizon={h} positions={} horizon_applies={} min={:?} p1={:?} below_price={missed} \
         to_the_end={short} (of which below the price at the horizon: {short_below}) seconds={:.1}",
        live.len(),
        counts.len(),
        counts.first(),
        at(0.01),
        started.elapsed().as_secs_f64()
    );
}

/// The share of honest finished plies withheld by `live` at horizons other than the game's.
fn frontier(game: GameId, live: &[AnyPosition], finished: &[Vec<AnyPosition>]) {
    let public = game.public_plies();
    for h in [2, 4, 6, 8, 10, 12, 16, 64] {
        let guards: Vec<Guard> = live
            .iter()
            .filter_map(|p| Guard::of(p, public))
            // A guard to the end stays so: only the horizon moves.
            .map(|g| match g.limit() {
                u32::MAX => g,
                _ => g.with_limit(g.depth() + h),
            })
            .collect();
        let (mut asked, mut kept) = (0u64, 0u64);
        for pos in finished.iter().flatten().filter(|p| p.ply() > public) {
            asked += 1;
            kept += u64::from(withheld(&Asked::of(pos), public, &guards));
        }
        println!(
            "{game} frontier horizon={h} withheld={:.3}%",
            100.0 * kept as f64 / asked.max(1) as f64
        );
    }
}

/// The variants of `pos` an attacker would ask instead of it: each disc removed (in Four in a
/// Row the top disc of a column) and each disc's colour changed (in Four in a Row a pair of top
/// discs exchanged, to keep the counts legal), with the side to move the board allows; only
/// boards that parse and are not over.
fn variants(pos: &AnyPosition) -> Vec<AnyPosition> {
    let game = pos.game();
    let rows: Vec<Vec<char>> = pos.rows().iter().map(|r| r.chars().collect()).collect();
    let colours = [pos.color(Side::First), pos.color(Side::Second)];
    let cells: Vec<(usize, usize)> = (0..rows.len())
        .flat_map(|y| (0..rows[y].len()).map(move |x| (y, x)))
        .filter(|&(y, x)| colours.contains(&rows[y][x]))
        // Four in a Row: a column's top disc only.
        .filter(|&(y, x)| {
            game != GameId::FourInARow || y == 0 || !colours.contains(&rows[y - 1][x])
        })
        .collect();
    let other = |c: char| {
        if c == colours[0] {
            colours[1]
        } else {
            colours[0]
        }
    };
    let mut boards: Vec<Vec<Vec<char>>> = Vec::new();
    for &(y, x) in &cells {
        let mut removed = rows.clone();
        removed[y][x] = '.';
        boards.push(removed);
        if game == GameId::FourInARow {
            for &(y2, x2) in cells.iter().filter(|&&(y2, x2)| rows[y2][x2] != rows[y][x]) {
                let mut swapped = rows.clone();
                swapped[y][x] = other(rows[y][x]);
                swapped[y2][x2] = other(rows[y2][x2]);
                boards.push(swapped);
            }
        } else {
            let mut changed = rows.clone();
            changed[y][x] = other(rows[y][x]);
            boards.push(changed);
        }
    }
    let mut out = Vec::new();
    for board in boards {
        let strings: Vec<String> = board.iter().map(|r| r.iter().collect()).collect();
        let refs: Vec<&str> = strings.iter().map(String::as_str).collect();
        for side in [pos.side_to_move(), pos.side_to_move().other()] {
            if let Ok(v) = AnyPosition::from_rows(game, &refs, side)
                && v.outcome().is_none()
                && !v.must_pass()
                && v != *pos
            {
                out.push(v);
                break;
            }
        }
    }
    out
}

/// The near-position road and the guarded CPU, measured on `n` live positions of `game` that
/// the solvers prove (see the module's documentation).
fn near(game: GameId, level: u8, n: usize) {
    use domain::analysis::Analyser;
    use domain::search::Limits;
    let public = game.public_plies();
    let limits = Limits::nodes(200_000_000);
    let mut analyser = Analyser::new();
    let mut rng = SplitMix64(20_261_206);
    let (mut tried, mut chance, mut guarded_cpu, mut strongest) = (0usize, 0.0f64, 0usize, 0usize);
    let (mut majority, mut asked) = ([0usize; 2], [0usize; 2]);
    let started = Instant::now();
    let mut seed = 9_000_000u64;
    while tried < n {
        seed += 1;
        let line = cpu_game(game, level, seed);
        let candidates: Vec<&AnyPosition> = line
            .iter()
            .filter(|p| p.outcome().is_none() && !p.must_pass() && p.ply() > public)
            .filter(|p| match game {
                GameId::FourInARow => (12..=24).contains(&p.ply()),
                GameId::Reversi => 60 - p.ply() <= 18,
            })
            .collect();
        if candidates.is_empty() {
            continue;
        }
        let live = *candidates[rng.index(candidates.len())];
        let Ok(verdict) = analyser.analyse(&live, &limits) else {
            continue;
        };
        let legal = live.legal_moves();
        if !verdict.exact || verdict.best_moves.len() == legal.len() {
            continue;
        }
        let best = &verdict.best_moves;
        tried += 1;
        chance += best.len() as f64 / legal.len() as f64;
        let cpu_seed = rng.next_u64();
        let guarded = choose_move(&live, domain::cpu::GUARDED_LEVEL, cpu_seed);
        guarded_cpu += usize::from(guarded.is_some_and(|m| best.contains(&m)));
        let strong = choose_move(&live, 5, cpu_seed);
        strongest += usize::from(strong.is_some_and(|m| best.contains(&m)));
        // The variants the boundary answers, 24 at most: one change (a disc removed, a colour
        // changed), which the boundary now withholds, and two changes.
        let guard = Guard::of(&live, public).expect("beyond the opening");
        let answered = |v: &AnyPosition| !withheld(&Asked::of(v), public, &[guard]);
        let once = variants(&live);
        let mut seen = std::collections::HashSet::new();
        let twice: Vec<AnyPosition> = once
            .iter()
            .flat_map(variants)
            .filter(|v| *v != live && seen.insert(v.rows()))
            .collect();
        let once: Vec<AnyPosition> = once.into_iter().filter(answered).collect();
        let twice: Vec<AnyPosition> = twice.into_iter().filter(answered).collect();
        for (k, pool) in [once, twice].into_iter().enumerate() {
            let (used, hit) = vote(&mut analyser, &limits, &mut rng, pool, &legal, best);
            asked[k] += used;
            majority[k] += usize::from(hit);
        }
    }
    let share = |k: usize| 100.0 * k as f64 / tried.max(1) as f64;
    println!(
        "{game} near positions={tried} best_move_rate: random={:.1}% guarded_cpu_level2={:.1}% \
         level5={:.1}% majority_of_one_change_variants={:.1}% (answered per position {:.1}) \
         majority_of_two_change_variants={:.1}% (answered per position {:.1}) seconds={:.0}",
        100.0 * chance / tried.max(1) as f64,
        share(guarded_cpu),
        share(strongest),
        share(majority[0]),
        asked[0] as f64 / tried.max(1) as f64,
        share(majority[1]),
        asked[1] as f64 / tried.max(1) as f64,
        started.elapsed().as_secs_f64()
    );
}

/// Solves up to 24 of `pool` (drawn at random) and takes the majority of their best moves that
/// are legal in the live position: how many were solved, and whether the majority is one of
/// `best`.
fn vote(
    analyser: &mut domain::analysis::Analyser,
    limits: &domain::search::Limits,
    rng: &mut SplitMix64,
    mut pool: Vec<AnyPosition>,
    legal: &[String],
    best: &[String],
) -> (usize, bool) {
    let mut votes: std::collections::HashMap<String, f64> = Default::default();
    let mut used = 0;
    while used < 24 && !pool.is_empty() {
        let v = pool.swap_remove(rng.index(pool.len()));
        let Ok(answer) = analyser.analyse(&v, limits) else {
            continue;
        };
        let mine: Vec<&String> = answer
            .best_moves
            .iter()
            .filter(|m| legal.contains(m))
            .collect();
        if !answer.exact || mine.is_empty() {
            continue;
        }
        used += 1;
        for m in &mine {
            *votes.entry((*m).clone()).or_default() += 1.0 / mine.len() as f64;
        }
    }
    let top = votes
        .iter()
        .max_by(|a, b| a.1.total_cmp(b.1).then_with(|| b.0.cmp(a.0)))
        .map(|(m, _)| m.clone());
    (used, top.is_some_and(|m| best.contains(&m)))
}
