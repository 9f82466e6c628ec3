//! CPU players, levels 1 to 5: pure functions of a position, a level and a seed.
//!
//! A CPU choice depends only on the position, the level and the match's `cpu_seed` (recorded in
//! `match_created`), so a replay makes the very same choices on any machine: every search is
//! bounded by node counts, never by a clock.
//!
//! - Level 1 plays a uniformly random legal move.
//! - Level 2 (also the stand-in for absent players) wins when it can, blocks an immediate loss,
//!   and otherwise draws a move weighted by the game's [`Engine::weak_weight`] (to the centre
//!   in Four in a Row, to its own mobility and away from the opponent's in Reversi).
//! - Levels 3 to 5 are the search engines of [`crate::search`]: 3 a shallow search, 4 a deep one,
//!   5 the exact solvers wherever their budgets reach (see `search::four_in_a_row::choose` and
//!   `search::reversi::choose`). Level 5 can take up to about a second: callers on an async
//!   executor run it on a blocking thread.

use crate::games::any::dispatch;
use crate::games::{AnyPosition, Game};
use crate::search::{Engine, SplitMix64};

/// The levels a CPU seat can play at (1 weakest .. 5 strongest): the very range the
/// match aggregate accepts.
pub const LEVELS: std::ops::RangeInclusive<u8> = crate::matches::CPU_LEVELS;

/// The level whose policy the CPU plays at a position the fair-play boundary guards, whatever
/// level it was asked for: it wins at once when it can, blocks an immediate loss, and otherwise
/// draws a weighted move. It never reads a solver, a solved position or a book, so its move says
/// nothing exact about the position (BENCHMARKS.md measures how often it is a best move).
pub const GUARDED_LEVEL: u8 = 2;

/// The level a CPU seat plays at when none is asked for.
pub const DEFAULT_LEVEL: u8 = crate::matches::CPU_DEFAULT_LEVEL;

/// The CPU's move in `position` at `level`, in canonical notation, or `None` when the side to
/// move has no move (the game is over or a pass is due). Levels above 5 play as 5.
pub fn choose_move(position: &AnyPosition, level: u8, seed: u64) -> Option<String> {
    dispatch!(position, p => choose_in(p, level, seed).map(|m| m.to_string()))
}

fn choose_in<G: Engine>(pos: &G, level: u8, seed: u64) -> Option<G::Move> {
    if level >= 3 {
        pos.search_choice(level.min(5), seed)
    } else {
        choose(pos, level, seed, G::weak_weight)
    }
}

fn choose<G: Game>(
    pos: &G,
    level: u8,
    seed: u64,
    weight: fn(&G, G::Move) -> u64,
) -> Option<G::Move> {
    if pos.outcome().is_some() || pos.must_pass() {
        return None;
    }
    let legal: Vec<G::Move> = pos.legal_moves().collect();
    let mut rng = rng(seed, pos.ply(), pos.side_to_move().index() as u64);
    if level <= 1 || legal.len() == 1 {
        return rng.pick(&legal);
    }
    let me = pos.side_to_move();
    // Win at once when possible.
    if let Some(&win) = legal.iter().find(|&&m| {
        let mut next = *pos;
        next.play(m);
        next.outcome().is_some_and(|o| o.winner == Some(me))
    }) {
        return Some(win);
    }
    // Avoid the moves after which the opponent wins at once (this is blocking in Four in a Row).
    let safe: Vec<G::Move> = legal
        .iter()
        .copied()
        .filter(|&m| !opponent_wins_next(pos, m))
        .collect();
    let candidates = if safe.is_empty() { legal } else { safe };
    let weights: Vec<u64> = candidates.iter().map(|&m| weight(pos, m).max(1)).collect();
    let mut ticket = rng.below(weights.iter().sum());
    for (m, w) in candidates.iter().zip(&weights) {
        if ticket < *w {
            return Some(*m);
        }
        ticket -= w;
    }
    candidates.last().copied()
}

fn opponent_wins_next<G: Game>(pos: &G, mv: G::Move) -> bool {
    let me = pos.side_to_move();
    let mut next = *pos;
    next.play(mv);
    if next.outcome().is_some() {
        return next.outcome().is_some_and(|o| o.winner == Some(me.other()));
    }
    if next.must_pass() {
        return false;
    }
    next.legal_moves().any(|reply| {
        let mut after = next;
        after.play(reply);
        after
            .outcome()
            .is_some_and(|o| o.winner == Some(me.other()))
    })
}

/// The generator for one decision: SplitMix64 keyed by (seed, ply, side), a fresh, reproducible
/// stream for every move.
fn rng(seed: u64, ply: u32, side: u64) -> SplitMix64 {
    // The seed's halves swapped: a seed below 2^32 keys the generator as it did when seeds
    // were 32 bits, so the choices of matches recorded then are the same.
    SplitMix64(seed.rotate_left(32) ^ u64::from(ply) << 1 ^ side)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::GameId;

    #[test]
    fn a_seed_below_two_to_the_32_keys_the_generator_as_32_bit_seeds_did() {
        for (seed, ply, side) in [(0u32, 0u32, 0u64), (7, 12, 1), (u32::MAX, 59, 1)] {
            let before = u64::from(seed) << 32 ^ u64::from(ply) << 1 ^ side;
            assert_eq!(rng(u64::from(seed), ply, side).0, before);
        }
        // The high half of a 64-bit seed counts too.
        assert_ne!(rng(1 << 40, 3, 0).0, rng(0, 3, 0).0);
    }

    fn position(game: GameId, moves: &str) -> AnyPosition {
        let mut p = AnyPosition::start(game);
        for mv in crate::games::split_moves(game, moves).expect("moves") {
            p.play(&mv).expect("legal");
            if p.must_pass() {
                p.pass();
            }
        }
        p
    }

    #[test]
    fn the_same_position_and_seed_give_the_same_move_at_every_level() {
        let positions = [
            position(GameId::Reversi, "f5d6c3"),
            position(GameId::FourInARow, "4453"),
        ];
        for p in &positions {
            for level in LEVELS {
                let first = choose_move(p, level, 99);
                assert!(first.is_some(), "level {level} has a move");
                for _ in 0..3 {
                    assert_eq!(choose_move(p, level, 99), first, "level {level}");
                }
            }
        }
    }

    /// A position reached by `plies` random legal moves (fewer if the game ends first), drawn
    /// from `seed`.
    fn random_position(game: GameId, seed: u32, plies: u32) -> AnyPosition {
        let mut p = AnyPosition::start(game);
        for turn in 0..plies {
            if p.outcome().is_some() {
                break;
            }
            if p.must_pass() {
                p.pass();
            }
            let mv = choose_move(&p, 1, u64::from(seed.wrapping_mul(7919) ^ turn)).expect("a move");
            p.play(&mv).expect("legal");
        }
        p
    }

    #[test]
    fn every_level_plays_only_legal_moves_in_random_positions() {
        // Plies chosen to cover openings, middle games and endgames while keeping the level-5
        // solves short.
        let cases = [
            (GameId::FourInARow, [1, 5, 17, 23, 29, 35]),
            (GameId::Reversi, [3, 14, 38, 46, 52, 57]),
        ];
        for (game, plies) in cases {
            for (seed, n) in (0u32..).zip(plies) {
                let p = random_position(game, seed, n);
                for level in LEVELS {
                    match choose_move(&p, level, u64::from(seed)) {
                        Some(mv) => assert!(
                            p.check_move(&mv).is_ok(),
                            "{game} seed {seed} ply {n} level {level}: {mv} is illegal"
                        ),
                        None => assert!(
                            p.outcome().is_some() || p.must_pass(),
                            "{game} seed {seed} ply {n} level {level}: no move in a live game"
                        ),
                    }
                }
            }
        }
    }

    #[test]
    fn levels_above_five_play_as_five() {
        let p = position(GameId::FourInARow, "4453");
        assert_eq!(choose_move(&p, 9, 3), choose_move(&p, 5, 3));
    }

    #[test]
    fn level_one_spreads_its_choices_over_every_legal_move() {
        let p = AnyPosition::start(GameId::FourInARow);
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..200 {
            seen.insert(choose_move(&p, 1, seed).expect("a move"));
        }
        assert_eq!(seen.len(), 7, "{seen:?}");
    }

    #[test]
    fn level_two_wins_when_it_can_and_blocks_an_immediate_loss() {
        // Red has 4,4,4 in column 4; red to move wins in column 4 for every seed.
        let win = position(GameId::FourInARow, "414141");
        // Red has three in column 4 and yellow no threat of its own: yellow must block there.
        let block = position(GameId::FourInARow, "41424");
        for seed in 0..50 {
            assert_eq!(choose_move(&win, 2, seed).as_deref(), Some("4"));
            assert_eq!(choose_move(&block, 2, seed).as_deref(), Some("4"));
        }
    }

    #[test]
    fn the_cpu_has_no_move_in_a_finished_game() {
        let over = position(GameId::FourInARow, "4141414");
        assert_eq!(choose_move(&over, 2, 1), None);
    }

    #[test]
    fn cpu_moves_are_always_legal() {
        for game in GameId::ALL {
            for seed in 0..40 {
                let mut p = AnyPosition::start(game);
                let mut turn = 0;
                while p.outcome().is_none() {
                    if p.must_pass() {
                        p.pass();
                        continue;
                    }
                    let level = 1 + (turn % 2);
                    let mv = choose_move(&p, level, seed).expect("a move while the game is on");
                    assert!(
                        p.check_move(&mv).is_ok(),
                        "{game} seed {seed}: {mv} is illegal"
                    );
                    p.play(&mv).expect("legal");
                    turn += 1;
                }
            }
        }
    }
}
