//! Reversi engine benchmark: exact FFO endgame solves and CPU move latency per level.
//!
//! Run with `cargo bench -p domain --bench reversi` (add `-- 40-59` for the FFO positions up to
//! #59, `-- 40-49 skip-cpu` to leave out the CPU latencies, `threads=2` to solve on two
//! threads; `REVERSI_BENCH_TABLE_MIB` sizes the table, 64 MiB by default). Prints markdown
//! tables.

use std::time::{Duration, Instant};

use domain::games::{Game, Reversi, Square};
use domain::search::Limits;
use domain::search::reversi::{Engine, choose};

/// One FFO position: its number, board, and the best score with its moves.
struct Ffo {
    number: usize,
    pos: Reversi,
    score: i32,
    best: Vec<Square>,
}

fn load(file: &str, first: usize) -> Vec<Ffo> {
    let path = format!("{}/../oracles/reversi/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    domain::oracles::ffo_lines(&text)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .into_iter()
        .enumerate()
        .map(|(i, line)| Ffo {
            number: first + i,
            pos: line.position().expect("an FFO board"),
            score: line.best_score().expect("moves"),
            best: line.best_moves(),
        })
        .collect()
}

/// The transposition table's size in MiB: `REVERSI_BENCH_TABLE_MIB`, 64 by default.
fn table_mib() -> usize {
    std::env::var("REVERSI_BENCH_TABLE_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

fn empties(pos: &Reversi) -> u32 {
    64 - 4 - pos.ply()
}

fn ffo(range: (usize, usize), threads: usize) {
    let mut all = load("fforum-1-19.obf", 1);
    all.extend(load("fforum-20-39.obf", 20));
    all.extend(load("fforum-40-59.obf", 40));
    all.extend(load("fforum-60-79.obf", 60));
    println!(
        "| FFO # | empties | expected | engine | best moves (all) | time | nodes | nodes/s | match |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let (mut total_nodes, mut total_time) = (0u64, Duration::ZERO);
    for f in all
        .iter()
        .filter(|f| (range.0..=range.1).contains(&f.number))
    {
        let mut engine = Engine::new(table_mib() << 20);
        let start = Instant::now();
        let limits = Limits {
            threads,
            to_the_end: true,
            ..Limits::UNLIMITED
        };
        let v = engine.analyse(&f.pos, &limits);
        let time = start.elapsed();
        total_nodes += v.nodes;
        total_time += time;
        let ok = v.exact && v.score == f.score && v.best_moves == f.best;
        let moves: Vec<String> = v.best_moves.iter().map(Square::to_string).collect();
        println!(
            "| {} | {} | {:+} | {:+} | {} | {:.3} s | {} | {:.1} M | {} |",
            f.number,
            empties(&f.pos),
            f.score,
            v.score,
            moves.join(" "),
            time.as_secs_f64(),
            v.nodes,
            v.nodes as f64 / time.as_secs_f64() / 1e6,
            if ok { "yes" } else { "NO" }
        );
    }
    println!(
        "\nTotal: {total_nodes} nodes in {:.3} s ({:.1} M nodes/s)\n",
        total_time.as_secs_f64(),
        total_nodes as f64 / total_time.as_secs_f64() / 1e6
    );
}

/// Positions from a few games between levels 4 and 5 (every ply), to time each level on.
fn game_positions(games: u64) -> Vec<Reversi> {
    let mut out = Vec::new();
    for game in 0..games {
        let mut pos = Reversi::start();
        let mut ply = 0u64;
        while pos.outcome().is_none() {
            if pos.must_pass() {
                pos.pass();
                continue;
            }
            out.push(pos);
            let level = if (ply + game).is_multiple_of(2) { 4 } else { 3 };
            let mv = choose(&pos, level, game * 1000 + ply).expect("a move");
            pos.play(mv);
            ply += 1;
        }
    }
    out
}

fn cpu(games: u64) {
    let positions = game_positions(games);
    println!(
        "CPU move latency over {} positions (every move of {games} games between levels 3 and 4):\n",
        positions.len()
    );
    println!("| level | mean | max | max at empties |");
    println!("|---|---|---|---|");
    for level in levels() {
        let mut total = Duration::ZERO;
        let mut max = (Duration::ZERO, 0);
        for (i, pos) in positions.iter().enumerate() {
            let start = Instant::now();
            let mv = choose(pos, level, i as u64);
            let t = start.elapsed();
            assert!(mv.is_some_and(|m| pos.is_legal(m)));
            total += t;
            if t > max.0 {
                max = (t, empties(pos));
            }
        }
        println!(
            "| {level} | {:.1} ms | {:.1} ms | {} |",
            total.as_secs_f64() * 1e3 / positions.len() as f64,
            max.0.as_secs_f64() * 1e3,
            max.1
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let range = args
        .iter()
        .find_map(|a| {
            let (a, b) = a.split_once('-')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .unwrap_or((40, 49));
    let threads = args
        .iter()
        .find_map(|a| a.strip_prefix("threads=")?.parse().ok())
        .unwrap_or(1);
    println!("FFO #{}–#{} on {threads} thread(s)\n", range.0, range.1);
    ffo(range, threads);
    let games = args
        .iter()
        .find_map(|a| a.strip_prefix("games=")?.parse().ok())
        .unwrap_or(3);
    if !args.iter().any(|a| a == "skip-cpu") {
        cpu(games);
    }
}

/// The levels to time: `LEVELS=5` (for example) narrows them down.
fn levels() -> Vec<u8> {
    std::env::var("LEVELS")
        .ok()
        .map(|l| {
            l.bytes()
                .filter(u8::is_ascii_digit)
                .map(|b| b - b'0')
                .collect()
        })
        .unwrap_or_else(|| vec![3, 4, 5])
}
