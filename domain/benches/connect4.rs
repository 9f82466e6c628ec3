//! Four in a Row solver benchmark: the public test sets against the reference solver's means,
//! and the CPU levels' move latency (on sample positions and in play). Run with `cargo bench -p domain --bench connect4`.
//!
//! Each position is solved from a cleared transposition table (like the reference benchmark), one
//! thread; the quick sets are solved once untimed first so that page faults of the fresh table are
//! not what is measured. `C4_BENCH_LINES` (default 100) sets how many lines of each set are timed and
//! `C4_BENCH_HARD_LINES` (default 10) how many of Test_L1_R3, whose positions take seconds each.
//! `C4_BENCH_THREADS` (default 1) solves on that many threads (the analysis' parallel solve);
//! `C4_BENCH_TABLE_BITS` (default 23) sizes the table (2^bits slots of 8 bytes).

use std::hint::black_box;
use std::time::{Duration, Instant};

use domain::games::{Column, FourInARow, Game, Side};
use domain::search::Limits;
use domain::search::four_in_a_row::{Solver, choose};

/// The sets, with the reference solver's published mean solve time (Pons' blog, part 12).
/// Also the mean of connect-four-ai (no book), measured on the project's 2-core machine (a warm
/// table for the four quick sets, a cold one for the two slow ones, L1_R3 over its first 50
/// lines).
const SETS: [(&str, &str, Duration, &str); 6] = [
    (
        "Test_L3_R1",
        "4.6 µs",
        Duration::from_nanos(4_568),
        "6.6 µs",
    ),
    (
        "Test_L2_R1",
        "37 µs",
        Duration::from_nanos(37_450),
        "57.9 µs",
    ),
    (
        "Test_L2_R2",
        "3.2 ms",
        Duration::from_micros(3_212),
        "5.47 ms",
    ),
    (
        "Test_L1_R1",
        "255 µs",
        Duration::from_nanos(254_600),
        "459 µs",
    ),
    (
        "Test_L1_R2",
        "97 ms",
        Duration::from_micros(96_630),
        "171.5 ms",
    ),
    (
        "Test_L1_R3",
        "5.5 s",
        Duration::from_millis(5_490),
        "8.16 s",
    ),
];

/// Sets cheap enough to solve once untimed first, so that the timed pass does not measure the
/// first touch of the table's pages (what the reference's "warm" figures do too).
const WARM: [&str; 4] = ["Test_L3_R1", "Test_L2_R1", "Test_L2_R2", "Test_L1_R1"];

fn load(set: &str, lines: usize) -> Vec<(FourInARow, i32)> {
    let path = format!("{}/../oracles/connect4/{set}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .take(lines)
        .map(|line| {
            let (moves, score) = line.split_once(' ').unwrap_or_else(|| panic!("{line}"));
            let mut pos = FourInARow::start();
            for ch in moves.chars() {
                let mv: Column = ch.to_string().parse().unwrap_or_else(|_| panic!("{line}"));
                pos.play(mv);
            }
            (pos, score.parse().unwrap_or_else(|_| panic!("{line}")))
        })
        .collect()
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn show(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is understood.
    let lines = env_usize("C4_BENCH_LINES", 100);
    let hard_lines = env_usize("C4_BENCH_HARD_LINES", 10);
    let limits = Limits {
        threads: env_usize("C4_BENCH_THREADS", 1),
        ..Limits::UNLIMITED
    };
    let entries = env_usize(
        "C4_BENCH_TABLE_BITS",
        Solver::DEFAULT_ENTRIES.ilog2() as usize,
    );
    let mut solver = Solver::new(1 << entries);
    println!(
        "On {} thread(s), a table of 2^{entries} slots.\n",
        limits.threads
    );
    println!("### Exact solve, score only (cleared table per position)\n");
    println!(
        "| set | positions | mean time | positions/s | mean nodes | nodes/s | reference mean (published) | ratio | connect-four-ai here |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut full_rows = Vec::new();
    for (set, reference, reference_mean, here) in SETS {
        let n = if set == "Test_L1_R3" {
            hard_lines
        } else {
            lines
        };
        let positions = load(set, n);
        if WARM.contains(&set) {
            for (pos, _) in &positions {
                solver.reset();
                black_box(solver.solve(pos, &limits));
            }
        }
        let (mut time, mut nodes) = (Duration::ZERO, 0u64);
        let (mut full_time, mut full_nodes) = (Duration::ZERO, 0u64);
        for (pos, expected) in &positions {
            solver.reset();
            let start = Instant::now();
            let verdict = solver.score(black_box(pos), &limits);
            time += start.elapsed();
            assert!(verdict.exact, "{set}: not exact");
            assert_eq!(verdict.score, *expected, "{set}: wrong score");
            nodes += verdict.nodes;
            if set != "Test_L1_R3" {
                solver.reset();
                let start = Instant::now();
                let verdict = solver.solve(black_box(pos), &limits);
                full_time += start.elapsed();
                assert_eq!(verdict.score, *expected, "{set}: wrong score");
                full_nodes += verdict.nodes;
            }
        }
        let count = positions.len() as u32;
        let mean = time / count;
        println!(
            "| {set} | {count} | {} | {:.0} | {} | {:.2} M | {reference} | {:.2}x | {here} |",
            show(mean),
            f64::from(count) / time.as_secs_f64(),
            nodes / u64::from(count),
            nodes as f64 / time.as_secs_f64() / 1e6,
            mean.as_secs_f64() / reference_mean.as_secs_f64(),
        );
        if set != "Test_L1_R3" {
            full_rows.push(format!(
                "| {set} | {count} | {} | {} |",
                show(full_time / count),
                full_nodes / u64::from(count),
            ));
        }
    }
    println!("\n### Exact solve with every best move (cleared table per position)\n");
    println!("| set | positions | mean time | mean nodes |");
    println!("|---|---|---|---|");
    for row in full_rows {
        println!("{row}");
    }

    println!("\n### CPU move latency\n");
    let cpu_lines = env_usize("C4_BENCH_CPU_LINES", 10);
    let mut positions = vec![FourInARow::start()];
    for (set, _, _, _) in SETS {
        positions.extend(load(set, cpu_lines).into_iter().map(|(p, _)| p));
    }
    println!(
        "Over {} positions: the empty board and the first {cpu_lines} lines of each set.\n",
        positions.len()
    );
    println!("| level | mean | max |");
    println!("|---|---|---|");
    for level in [3u8, 4, 5] {
        let (mut total, mut max) = (Duration::ZERO, Duration::ZERO);
        for (i, pos) in positions.iter().enumerate() {
            let start = Instant::now();
            let mv = choose(black_box(pos), level, i as u64);
            let took = start.elapsed();
            assert!(mv.is_some());
            total += took;
            max = max.max(took);
        }
        println!(
            "| {level} | {} | {} |",
            show(total / positions.len() as u32),
            show(max)
        );
    }
    level_five_in_play();
}

/// Level 5's move latency in play: 20 seeded games against level 3 with level 5 moving first,
/// and 20 with it moving second, timing every level-5 move.
fn level_five_in_play() {
    println!("\n### Level 5 in play against level 3 (20 seeded games per side)\n");
    println!(
        "| level 5 plays | moves timed | mean | max | ply of the max | level 5 won / drew / lost |"
    );
    println!("|---|---|---|---|---|---|");
    for five_first in [true, false] {
        let (mut total, mut max, mut max_ply, mut count) =
            (Duration::ZERO, Duration::ZERO, 0, 0u32);
        let mut results = [0u32; 3];
        for seed in 0..20u64 {
            let mut pos = FourInARow::start();
            let mut ply = 0;
            while pos.outcome().is_none() {
                let five_to_move = (ply % 2 == 0) == five_first;
                let mv = if five_to_move {
                    let start = Instant::now();
                    let mv = choose(black_box(&pos), 5, seed);
                    let took = start.elapsed();
                    total += took;
                    count += 1;
                    if took > max {
                        max = took;
                        max_ply = ply;
                    }
                    mv
                } else {
                    choose(&pos, 3, seed)
                }
                .expect("a move while the game is on");
                pos.play(mv);
                ply += 1;
            }
            let five = if five_first {
                Side::First
            } else {
                Side::Second
            };
            match pos.outcome().and_then(|o| o.winner) {
                Some(w) if w == five => results[0] += 1,
                None => results[1] += 1,
                Some(_) => results[2] += 1,
            }
        }
        println!(
            "| {} | {count} | {} | {} | {max_ply} | {} / {} / {} |",
            if five_first { "first" } else { "second" },
            show(total / count),
            show(max),
            results[0],
            results[1],
            results[2]
        );
    }
}
