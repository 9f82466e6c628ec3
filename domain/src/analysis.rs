//! Position analysis: the score and best moves of one position, and a game ply by ply.
//!
//! This is the pure half of the analysis calls: it knows the games, the engines of
//! [`crate::search`] and the score conventions, and nothing of HTTP or clocks. The caller bounds
//! the work with [`Limits`]: a node budget, and a stop flag it sets when its time runs out.
//!
//! Scores are from the side to move's point of view in the game's convention (Four in a Row: the
//! solver test sets' `22 - k` for a win with the k-th disc; Reversi: the final disc difference,
//! empties to the winner). A Reversi side that must pass gets the negated score of the position
//! after the pass and no best moves; a finished position gets the score its result stands for.

use std::any::Any;
use std::collections::HashMap;

use crate::games::any::dispatch;
use crate::games::{AnyPosition, GameId, MoveError, ParseError, Side, split_moves};
use crate::search::{Engine, Limits, Verdict};

/// The verdict on one position, moves in canonical notation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Analysis {
    /// In the game's convention, from the side to move's point of view.
    pub score: i32,
    /// Every move reaching `score` when `exact`; the best found otherwise; `[]` for a pass.
    pub best_moves: Vec<String>,
    /// Whether `score` is proven under perfect play.
    pub exact: bool,
    /// Nodes searched for this verdict (0 when it was known before).
    pub nodes: u64,
}

/// A game judged ply by ply ([`Analyser::analyse_game`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameAnalysis {
    /// Each ply, from the point of view of the side that played it.
    pub plies: Vec<PlyAnalysis>,
    /// The verdict on the position before each ply (index 0: before ply 1), every best move
    /// found: what a cache of solved positions keeps, and where a deeper search is owed.
    pub before: Vec<(AnyPosition, Analysis)>,
}

/// One ply of a game, judged from the point of view of the side that played it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlyAnalysis {
    /// 1 for the first disc placed (passes are not plies).
    pub ply: u32,
    /// The move played, canonical.
    pub mv: String,
    /// The value of the position before the move, for the mover.
    pub score_before: i32,
    /// The value of the position after the move, for the mover: equal to `score_before` for a
    /// best move, lower for a mistake.
    pub score_after: i32,
    /// The moves that kept `score_before` (the best found when not exact).
    pub best_moves: Vec<String>,
    /// Whether both scores are proven.
    pub exact: bool,
}

/// Why a position cannot be analysed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnalysisError {
    /// The game is over: there is no move to judge.
    #[error("the game is over in this position: there is nothing to analyse")]
    Finished,
    /// A board or a move that does not parse.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// A move of a game record that cannot be played.
    #[error("move {ply}: {error}")]
    Move { ply: usize, error: MoveError },
}

/// The analysers of the games ([`Engine::Analyser`]), each created when first needed and kept,
/// so that the plies of one game share what their transposition tables learned.
#[derive(Default)]
pub struct Analyser {
    by_game: HashMap<GameId, Box<dyn Any + Send>>,
}

impl Analyser {
    pub fn new() -> Analyser {
        Analyser::default()
    }

    /// The score and best moves of `pos` for its side to move; a finished position is an error.
    pub fn analyse(
        &mut self,
        pos: &AnyPosition,
        limits: &Limits,
    ) -> Result<Analysis, AnalysisError> {
        if pos.outcome().is_some() {
            return Err(AnalysisError::Finished);
        }
        Ok(self.judge(pos, limits, true))
    }

    /// Every ply of the game `moves` (passes omitted, as in a match record), each position
    /// searched within `per_ply` (its node budget, and its stop flag shared by all), except those whose verdict is
    /// `known` (index i: the position before ply i + 1; index `moves.len()`: the position after
    /// the last move), which are taken as they are.
    ///
    /// Positions are searched from the last to the first: late positions are cheap and what they
    /// leave in the tables speeds up the earlier ones, and a budget that runs out leaves the
    /// opening plies (the hardest) as estimates rather than the decisive last ones. Each position
    /// is searched once: the score after ply n is the score before ply n + 1, negated unless the
    /// opponent had to pass in between.
    pub fn analyse_game(
        &mut self,
        game: GameId,
        moves: &[String],
        per_ply: &Limits,
        known: &[Option<Analysis>],
    ) -> Result<GameAnalysis, AnalysisError> {
        let (before, end) = game_positions(game, moves)?;
        if before.is_empty() {
            return Ok(GameAnalysis {
                plies: Vec::new(),
                before: Vec::new(),
            });
        }
        let limits = per_ply;
        let known = |i: usize| known.get(i).cloned().flatten();
        // The position right after the last move (a due pass not yet made).
        let end_verdict = known(before.len()).unwrap_or_else(|| self.judge(&end, limits, false));
        let mut next: (Side, Analysis) = (end.side_to_move(), end_verdict);
        let mut plies = Vec::with_capacity(before.len());
        let mut verdicts = Vec::with_capacity(before.len());
        for (i, (position, mv)) in before.iter().enumerate().rev() {
            let mover = position.side_to_move();
            let here = known(i).unwrap_or_else(|| self.judge(position, limits, true));
            let (next_side, after) = &next;
            let score_after = if *next_side == mover {
                after.score
            } else {
                -after.score
            };
            plies.push(PlyAnalysis {
                ply: i as u32 + 1,
                mv: mv.clone(),
                score_before: here.score,
                score_after,
                best_moves: here.best_moves.clone(),
                exact: here.exact && after.exact,
            });
            verdicts.push((*position, here.clone()));
            next = (mover, here);
        }
        plies.reverse();
        verdicts.reverse();
        Ok(GameAnalysis {
            plies,
            before: verdicts,
        })
    }

    /// The verdict on any position, finished ones included (the score of their result).
    /// `with_moves: false` spares Four in a Row the per-move searches; the Reversi engine finds
    /// its moves as it goes.
    fn judge(&mut self, pos: &AnyPosition, limits: &Limits, with_moves: bool) -> Analysis {
        dispatch!(pos, p => canonical(self.judge_in(p, limits, with_moves)))
    }

    fn judge_in<G: Engine>(
        &mut self,
        pos: &G,
        limits: &Limits,
        with_moves: bool,
    ) -> Verdict<G::Move> {
        let analyser = self
            .by_game
            .entry(G::ID)
            .or_insert_with(|| Box::new(G::analyser()));
        match analyser.downcast_mut::<G::Analyser>() {
            Some(analyser) => G::judge(analyser, pos, limits, with_moves),
            // Only `G::analyser()` is ever stored under `G::ID`; were it not, a fresh one
            // gives the same verdict.
            None => G::judge(&mut G::analyser(), pos, limits, with_moves),
        }
    }
}

fn canonical<M: std::fmt::Display>(v: Verdict<M>) -> Analysis {
    Analysis {
        score: v.score,
        best_moves: v.best_moves.iter().map(M::to_string).collect(),
        exact: v.exact,
        nodes: v.nodes,
    }
}

/// The positions of a game record (passes omitted): the one before each ply with the move
/// played there (canonical), and the one after the last move (a pass due there not yet made).
pub fn game_positions(
    game: GameId,
    moves: &[String],
) -> Result<(Vec<(AnyPosition, String)>, AnyPosition), AnalysisError> {
    let mut pos = AnyPosition::start(game);
    let mut before = Vec::with_capacity(moves.len());
    for (i, mv) in moves.iter().enumerate() {
        if pos.outcome().is_none() && pos.must_pass() {
            pos.pass();
        }
        let canonical = pos
            .check_move(mv)
            .map_err(|error| AnalysisError::Move { ply: i + 1, error })?;
        before.push((pos, canonical.clone()));
        pos.play(&canonical)
            .map_err(|error| AnalysisError::Move { ply: i + 1, error })?;
    }
    Ok((before, pos))
}

/// The outcome of `pos` for its side to move (1 a win, 0 a draw, -1 a loss) that a verdict
/// (`score`, `exact`) or the shipped Four in a Row outcome book proves; `None` when neither does.
/// The book knows the outcome of its positions but not the distance of a win or loss: with it
/// an inexact score is only an estimate of the distance, on the proven side of 0.
pub fn proven_outcome(pos: &AnyPosition, score: i32, exact: bool) -> Option<i32> {
    if exact {
        return Some(score.signum());
    }
    match pos {
        AnyPosition::FourInARow(p) => {
            crate::search::four_in_a_row::outcomes::of(p).map(|o| o as i32)
        }
        _ => None,
    }
}

/// The position after a game record (passes made as they fall due), for analysis by moves.
pub fn position_after(game: GameId, moves: &str) -> Result<AnyPosition, AnalysisError> {
    let mut pos = AnyPosition::start(game);
    for (i, mv) in split_moves(game, moves)?.iter().enumerate() {
        if pos.outcome().is_none() && pos.must_pass() {
            pos.pass();
        }
        pos.play(mv)
            .map_err(|error| AnalysisError::Move { ply: i + 1, error })?;
    }
    // A pass due now is left to the analysis, which scores it.
    Ok(pos)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use super::*;
    use crate::games::Symmetry;

    const L2_R1: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../oracles/connect4/Test_L2_R1"
    ));

    fn moves(game: GameId, record: &str) -> Vec<String> {
        split_moves(game, record).expect("a record")
    }

    #[test]
    fn positions_get_the_scores_of_the_published_test_set() {
        let mut analyser = Analyser::new();
        for line in L2_R1.lines().take(20) {
            let (record, score) = line.split_once(' ').expect("`<moves> <score>`");
            let pos = position_after(GameId::FourInARow, record).expect("a position");
            let a = analyser
                .analyse(&pos, &Limits::UNLIMITED)
                .expect("a live position");
            assert!(a.exact, "{record}");
            assert_eq!(a.score.to_string(), score, "{record}");
            assert!(!a.best_moves.is_empty(), "{record}");
        }
    }

    #[test]
    fn a_finished_position_is_not_analysed() {
        let over = position_after(GameId::FourInARow, "4141414").expect("a position");
        assert_eq!(
            Analyser::new().analyse(&over, &Limits::UNLIMITED),
            Err(AnalysisError::Finished)
        );
    }

    #[test]
    fn a_stop_flag_already_set_gives_an_estimate() {
        let stop = AtomicBool::new(true);
        let limits = Limits::stoppable(u64::MAX, Some(&stop));
        let start = AnyPosition::start(GameId::FourInARow);
        let a = Analyser::new().analyse(&start, &limits).expect("a verdict");
        assert!(!a.exact);
        assert!((-18..=18).contains(&a.score), "{a:?}");
    }

    #[test]
    fn a_game_is_judged_ply_by_ply_from_the_movers_point_of_view() {
        // Red stacks column 4 and wins with its 4th disc; yellow ignores the threat at ply 6.
        let record = moves(GameId::FourInARow, "4141414");
        let plies = Analyser::new()
            .analyse_game(GameId::FourInARow, &record, &Limits::nodes(200_000), &[])
            .expect("a legal game")
            .plies;
        assert_eq!(plies.len(), 7);
        let numbers: Vec<u32> = plies.iter().map(|p| p.ply).collect();
        assert_eq!(numbers, [1, 2, 3, 4, 5, 6, 7]);
        let last = &plies[6];
        assert_eq!(
            (last.mv.as_str(), last.score_before, last.score_after),
            ("4", 18, 18)
        );
        assert_eq!(last.best_moves, ["4"]);
        assert!(last.exact);
        // Yellow's 1 lets red win with its next (4th) disc: -18 for yellow afterwards.
        let sixth = &plies[5];
        assert_eq!(sixth.score_after, -18);
        assert_eq!(sixth.best_moves, ["4"], "only the block keeps yellow alive");
        for p in plies.iter().filter(|p| p.exact) {
            assert!(p.score_after <= p.score_before, "{p:?}");
        }
    }

    #[test]
    fn known_verdicts_are_taken_as_they_are_and_the_others_are_searched() {
        let record = moves(GameId::FourInARow, "4141414");
        let searched = Analyser::new()
            .analyse_game(GameId::FourInARow, &record, &Limits::nodes(200_000), &[])
            .expect("a legal game");
        assert_eq!(searched.before.len(), 7);
        let (before, _) = game_positions(GameId::FourInARow, &record).expect("a legal game");
        for ((pos, verdict), (at, _)) in searched.before.iter().zip(&before) {
            assert_eq!(pos, at);
            assert!(verdict.nodes > 0, "{verdict:?}");
        }
        assert!(searched.before[6].1.exact);
        // A (planted) verdict for the position before ply 3 is used without a search: the
        // score before ply 3 and after ply 2 come from it, and its nodes count nothing.
        let planted = Analysis {
            score: 5,
            best_moves: vec!["1".into()],
            exact: true,
            nodes: 0,
        };
        let known = [None, None, Some(planted.clone())];
        let judged = Analyser::new()
            .analyse_game(GameId::FourInARow, &record, &Limits::nodes(200_000), &known)
            .expect("a legal game");
        assert_eq!(judged.before[2].1, planted);
        assert_eq!(judged.plies[2].score_before, 5);
        assert_eq!(judged.plies[2].best_moves, ["1"]);
        assert_eq!(judged.plies[1].score_after, -5);
        assert_eq!(judged.plies[6], searched.plies[6]);
    }

    #[test]
    fn a_search_reports_its_progress_as_it_goes() {
        let progress = std::sync::atomic::AtomicU64::new(0);
        let limits = Limits {
            progress: Some(&progress),
            ..Limits::nodes(3_000_000)
        };
        for (game, record) in [(GameId::FourInARow, "44"), (GameId::Reversi, "f5d6c3")] {
            progress.store(0, std::sync::atomic::Ordering::Relaxed);
            let pos = position_after(game, record).expect("a position");
            let a = Analyser::new().analyse(&pos, &limits).expect("a verdict");
            let reported = progress.load(std::sync::atomic::Ordering::Relaxed);
            assert!(a.nodes > 100_000, "{game:?}: {a:?}");
            // Reported every thousand nodes or so: never more than searched, and most of it.
            assert!(
                reported <= a.nodes && reported >= a.nodes / 2,
                "{game:?}: {reported} reported, {} searched",
                a.nodes
            );
        }
    }

    const FFO_1_19: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../oracles/reversi/fforum-1-19.obf"
    ));

    /// An FFO line as a position, its best score and every move reaching it.
    fn ffo(line: &str) -> (AnyPosition, i32, Vec<String>) {
        let line = crate::oracles::ffo_line(line).expect("an FFO line");
        let rows: Vec<&str> = line.rows.iter().map(String::as_str).collect();
        let pos = AnyPosition::from_rows(GameId::Reversi, &rows, line.to_move).expect("a board");
        let best = line.best_score().expect("a move");
        let moves = line.best_moves().iter().map(|m| m.to_string()).collect();
        (pos, best, moves)
    }

    #[test]
    fn reversi_endgames_get_the_ffo_scores_and_every_best_move() {
        let mut analyser = Analyser::new();
        for line in FFO_1_19.lines().take(3) {
            let (pos, score, mut best) = ffo(line);
            let mut a = analyser
                .analyse(&pos, &Limits::UNLIMITED)
                .expect("a live position");
            a.best_moves.sort();
            best.sort();
            assert_eq!(
                (a.score, a.best_moves, a.exact),
                (score, best, true),
                "{line}"
            );
        }
    }

    #[test]
    fn a_reversi_side_that_must_pass_gets_the_score_after_the_pass_negated_and_no_moves() {
        // Black's only disc (b1) flanks nothing; white takes it with c1 and wipes black out:
        // 7 white discs and 57 empties, +64 for white, so -64 for black.
        let mut rows = vec!["WB......", "........", "........", "...WW...", "...WW..."];
        rows.extend(["........"; 3]);
        let pos = AnyPosition::from_rows(GameId::Reversi, &rows, Side::First).expect("a board");
        assert!(pos.must_pass());
        let a = Analyser::new()
            .analyse(&pos, &Limits::UNLIMITED)
            .expect("a live position");
        assert_eq!((a.score, a.best_moves.len(), a.exact), (-64, 0, true));
    }

    #[test]
    fn a_reversi_game_is_judged_ply_by_ply() {
        let record = moves(GameId::Reversi, "f5d6c3d3c4f4");
        let plies = Analyser::new()
            .analyse_game(GameId::Reversi, &record, &Limits::nodes(20_000), &[])
            .expect("a legal game")
            .plies;
        let played: Vec<&str> = plies.iter().map(|p| p.mv.as_str()).collect();
        assert_eq!(played, ["f5", "d6", "c3", "d3", "c4", "f4"]);
        for p in &plies {
            assert!(!p.best_moves.is_empty(), "{p:?}");
            assert!((-64..=64).contains(&p.score_before), "{p:?}");
            assert!((-64..=64).contains(&p.score_after), "{p:?}");
        }
    }

    /// A late position of each game and its canonical image get the same score, and the image's
    /// best moves, mapped back, are the position's own.
    #[test]
    fn a_position_and_its_canonical_image_have_corresponding_best_moves() {
        // Random games stopped at a ply where the solvers are quick (24 empty cells of 42, 12
        // empty squares of 64); the games that end before it are dropped.
        let late = [(GameId::FourInARow, 18), (GameId::Reversi, 48)];
        let mut analyser = Analyser::new();
        for (game, ply) in late {
            let mut rng = crate::rng::SplitMix64(7);
            let mut positions = Vec::new();
            for _ in 0..40 {
                if positions.len() == 6 {
                    break;
                }
                let mut pos = AnyPosition::start(game);
                while pos.outcome().is_none() && pos.ply() < ply {
                    if pos.must_pass() {
                        pos.pass();
                        continue;
                    }
                    let legal = pos.legal_moves();
                    pos.play(&legal[rng.index(legal.len())]).expect("legal");
                }
                if pos.outcome().is_none() {
                    positions.push(pos);
                }
            }
            assert_eq!(positions.len(), 6, "{game}");
            let mut turned = 0;
            for pos in positions {
                let (_, s) = pos.canonical();
                turned += usize::from(s != Symmetry::Identity);
                let rows = s.rows(&pos.rows());
                let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
                let image =
                    AnyPosition::from_rows(game, &rows, pos.side_to_move()).expect("an image");
                let direct = analyser
                    .analyse(&pos, &Limits::UNLIMITED)
                    .expect("analysed");
                let via = analyser
                    .analyse(&image, &Limits::UNLIMITED)
                    .expect("analysed");
                assert!(direct.exact && via.exact);
                assert_eq!(via.score, direct.score, "{pos:?} through {s:?}");
                let mut mapped: Vec<String> = via
                    .best_moves
                    .iter()
                    .map(|m| pos.move_from_canonical(m, s).expect("a move"))
                    .collect();
                let mut best = direct.best_moves.clone();
                mapped.sort();
                best.sort();
                assert_eq!(mapped, best, "{pos:?} through {s:?}");
            }
            assert!(turned > 0, "{game}: no position was turned to be canonical");
        }
    }

    #[test]
    fn a_bad_record_names_its_first_bad_move() {
        let record = moves(GameId::FourInARow, "44444444");
        let err = Analyser::new()
            .analyse_game(GameId::FourInARow, &record, &Limits::nodes(1_000), &[])
            .expect_err("column 4 holds six discs");
        assert!(matches!(err, AnalysisError::Move { ply: 7, .. }), "{err}");
    }
}
