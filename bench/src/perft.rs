//! `perft-bench`: perft speed of both engines (leaves/s), single thread, for BENCHMARKS.md.
//!
//! `cargo run --release -p bench --bin perft-bench -- [four-depth] [reversi-depth]`
//! (defaults: 11 and 11). Counts are checked against the published oracle values.

use std::time::Instant;

use domain::games::{FourInARow, Game, PerftMode, Reversi, perft};

/// Published counts (oracles/perft.md), first column (ended games dropped).
const FOUR: [u64; 13] = [
    1,
    7,
    49,
    343,
    2_401,
    16_807,
    117_649,
    823_536,
    5_673_234,
    39_394_572,
    268_031_646,
    1_844_590_828,
    12_418_296_244,
];
const REVERSI: [u64; 14] = [
    1,
    4,
    12,
    56,
    244,
    1_396,
    8_200,
    55_092,
    390_216,
    3_005_320,
    24_571_192,
    212_260_296,
    1_939_892_240,
    18_429_768_516,
];

fn run<G: Game>(name: &str, depth: u32, expected: Option<u64>) {
    let start = Instant::now();
    let nodes = perft(&G::start(), depth, PerftMode::EndedGameDropped);
    let secs = start.elapsed().as_secs_f64();
    let check = match expected {
        Some(e) if e == nodes => "matches the oracle",
        Some(_) => "DOES NOT MATCH the oracle",
        None => "no oracle value",
    };
    println!(
        "{name:<14} depth {depth:>2}: {nodes:>14} leaves in {secs:>8.3} s = {:>7.1} M leaves/s ({check})",
        nodes as f64 / secs.max(1e-9) / 1e6
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let four: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(11);
    let reversi: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(11);
    run::<FourInARow>("four_in_a_row", four, FOUR.get(four as usize).copied());
    run::<Reversi>("reversi", reversi, REVERSI.get(reversi as usize).copied());
}
