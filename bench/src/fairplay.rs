//! `fairplay-calibration`: how often each CPU level plays the solver's best move in the positions
//! the fair-play statistics count (critical positions), the data a detection model is built on.
//!
//! `cargo run --release -p bench --bin fairplay-calibration -- [games-per-level] [game] [seed]
//! [ply-nodes] [levels]` (defaults: 20, `four_in_a_row`, 1, 2000000, `1,2,3,4,5`).
//!
//! For each level 1–5, that many games against an opponent of a random level 1–3 (colours
//! alternating), each judged as the assessor does (`Analyser::analyse_game`, `ply-nodes` per
//! position, one thread), counting the level's own moves: critical positions
//! (`fairplay::is_critical` on an exact verdict), optimal moves among them, and the share a
//! random choice would get (best moves / legal moves). Prints one line per level:
//! `level=.. games=.. critical=.. per_game=.. optimal_share=.. chance_share=.. skill=..`, where
//! `skill` is the excess over chance, `(optimal - chance) / (critical - chance)`.

use std::time::Instant;

use domain::analysis::{Analyser, game_positions};
use domain::cpu::choose_move;
use domain::fairplay::is_critical;
use domain::games::{AnyPosition, GameId};
use domain::rng::SplitMix64;
use domain::search::Limits;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let games: usize = args.get(1).map_or(Ok(20), |a| a.parse())?;
    let game: GameId = args
        .get(2)
        .map_or(Ok(GameId::FourInARow), |a| a.parse())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let seed: u64 = args.get(3).map_or(Ok(1), |a| a.parse())?;
    let ply_nodes: u64 = args.get(4).map_or(Ok(2_000_000), |a| a.parse())?;
    let levels: Vec<u8> = args
        .get(5)
        .map_or("1,2,3,4,5", String::as_str)
        .split(',')
        .map(str::parse)
        .collect::<Result<_, _>>()?;
    let mut rng = SplitMix64(seed);
    let mut analyser = Analyser::new();
    let limits = Limits::stoppable(ply_nodes, None);
    println!(
        "fairplay-calibration game={game} games_per_level={games} seed={seed} ply_nodes={ply_nodes}"
    );
    for level in levels {
        let started = Instant::now();
        let (mut critical, mut optimal, mut chance) = (0u64, 0u64, 0f64);
        // Critical positions and optimal moves by the ply they were met at, in steps of four.
        let mut by_ply = [(0u32, 0u32); 10];
        for g in 0..games {
            let opponent = 1 + rng.below(3) as u8;
            let ours = g % 2; // 0: the level moves first
            let mut pos = AnyPosition::start(game);
            let mut moves = Vec::new();
            let mut movers = Vec::new();
            while pos.outcome().is_none() {
                if pos.must_pass() {
                    pos.pass();
                    continue;
                }
                let side = pos.side_to_move().index();
                let lvl = if side == ours { level } else { opponent };
                let mv = choose_move(&pos, lvl, rng.next_u64()).expect("a move");
                pos.play(&mv).expect("a legal move");
                movers.push(side == ours);
                moves.push(mv);
            }
            let judged = analyser
                .analyse_game(game, &moves, &limits, &vec![None; moves.len() + 1])
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let (before, _) = game_positions(game, &moves).map_err(|e| anyhow::anyhow!("{e}"))?;
            for ((p, (at, _)), ours) in judged.plies.iter().zip(&before).zip(&movers) {
                if !ours || !p.exact || !is_critical(at, p.best_moves.len()) {
                    continue;
                }
                critical += 1;
                let best = p.best_moves.contains(&p.mv);
                optimal += u64::from(best);
                let step = &mut by_ply[(at.ply() as usize / 4).min(9)];
                step.0 += 1;
                step.1 += u32::from(best);
                chance += p.best_moves.len() as f64 / at.legal_moves().len() as f64;
            }
        }
        let n = critical.max(1) as f64;
        let skill = (optimal as f64 - chance) / (n - chance).max(1e-9);
        println!(
            "level={level} games={games} critical={critical} per_game={:.1} optimal_share={:.3} \
             chance_share={:.3} skill={skill:.3} seconds={:.1}",
            critical as f64 / games as f64,
            optimal as f64 / n,
            chance / n,
            started.elapsed().as_secs_f64()
        );
        let steps: Vec<String> = by_ply
            .iter()
            .enumerate()
            .filter(|(_, s)| s.0 > 0)
            .map(|(i, s)| format!("{}:{}/{}", i * 4, s.1, s.0))
            .collect();
        println!(
            "level={level} optimal/critical by ply (from) {}",
            steps.join(" ")
        );
    }
    Ok(())
}
