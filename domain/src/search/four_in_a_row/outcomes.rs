//! The outcome book: the exact outcome (win, draw or loss for the side to move) of every Four in a
//! Row position up to a depth, once per mirror pair, shipped as text (`outcomes.txt`, built by
//! `cargo run --release -p domain --example connect4-outcomes`).
//!
//! The solver proves an early position only with far more nodes than an analysis spends, so
//! without the book the first plies of a game read as estimates although the game is solved.
//! Generation solves the deepest positions (a weak solve: two null-window searches around 0) and
//! derives every shallower one from its children, so the shallow entries cost nothing; the
//! deepest ones are solved on every core and written as they come, so a stopped generation
//! resumes where it was.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::{CELLS, Limits, Pos, Run, Table, WIDTH, book, column_cells};

/// The shipped book.
const OUTCOMES: &str = include_str!("outcomes.txt");

/// An outcome for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Loss = -1,
    Draw = 0,
    Win = 1,
}

impl Outcome {
    /// The outcome's symbol in the book's text.
    pub fn symbol(self) -> char {
        match self {
            Outcome::Win => '+',
            Outcome::Draw => '=',
            Outcome::Loss => '-',
        }
    }

    /// Reads a symbol of the book's text.
    pub fn from_symbol(c: &str) -> Option<Outcome> {
        match c {
            "+" => Some(Outcome::Win),
            "=" => Some(Outcome::Draw),
            "-" => Some(Outcome::Loss),
            _ => None,
        }
    }

    fn negate(self) -> Outcome {
        match self {
            Outcome::Win => Outcome::Loss,
            Outcome::Draw => Outcome::Draw,
            Outcome::Loss => Outcome::Win,
        }
    }
}

/// The key of a position and its mirror image: the smaller of the two.
fn canonical(pos: &Pos) -> u64 {
    pos.key().min(book::mirror(pos).key())
}

/// The shipped book, parsed once: canonical key → outcome; and its depth (the most discs of an
/// entry).
fn shipped() -> &'static (HashMap<u64, Outcome>, i32) {
    static BOOK: OnceLock<(HashMap<u64, Outcome>, i32)> = OnceLock::new();
    BOOK.get_or_init(|| {
        let mut depth = -1;
        let entries = parse(OUTCOMES)
            .map(|(pos, outcome)| {
                depth = depth.max(pos.moves);
                (canonical(&pos), outcome)
            })
            .collect();
        (entries, depth)
    })
}

/// The deepest ply the shipped book covers completely (every position with at most this many
/// discs is in it), or -1 for an empty book.
pub fn depth() -> i32 {
    shipped().1
}

/// The outcome for the side to move in `pos`, when the book holds it.
pub fn of(pos: &crate::games::FourInARow) -> Option<Outcome> {
    lookup(&Pos::new(pos))
}

/// [`of`] on the search's own position.
pub(super) fn lookup(pos: &Pos) -> Option<Outcome> {
    let (entries, depth) = shipped();
    if pos.moves > *depth {
        return None;
    }
    entries.get(&canonical(pos)).copied()
}

/// The book's lines: the moves that reach a position (`-` for none) and its outcome for the side
/// to move (`+`, `=` or `-`). Comment lines start with `#`. A malformed line is a bug in the
/// shipped file, caught by tests.
fn parse(text: &str) -> impl Iterator<Item = (Pos, Outcome)> + '_ {
    text.lines()
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (moves, outcome) = line.split_once(' ').expect("outcome line: moves outcome");
            (
                book::replay(moves).expect("outcome moves"),
                Outcome::from_symbol(outcome).expect("outcome symbol"),
            )
        })
}

/// One position of a book being generated: the moves that first reached it (column digits, `-`
/// for none) and the position.
#[derive(Clone, Debug)]
pub struct Entry {
    pub moves: String,
    pos: Pos,
}

/// Every position with exactly `plies` discs that a game can reach (no four on the board), once
/// per mirror pair, in the order a depth-first walk from the empty board meets them.
pub fn positions_at(plies: i32) -> Vec<Entry> {
    fn walk(
        pos: Pos,
        moves: &mut String,
        plies: i32,
        seen: &mut HashMap<u64, ()>,
        out: &mut Vec<Entry>,
    ) {
        if seen.insert(canonical(&pos), ()).is_some() {
            return;
        }
        if pos.moves == plies {
            out.push(Entry {
                moves: if moves.is_empty() {
                    "-".to_owned()
                } else {
                    moves.clone()
                },
                pos,
            });
            return;
        }
        let wins = pos.winning_moves();
        let mut possible = pos.possible();
        while possible != 0 {
            let bit = possible & possible.wrapping_neg();
            possible ^= bit;
            if bit & wins != 0 {
                // The game ends there.
                continue;
            }
            let mut next = pos;
            next.play(bit);
            moves.push(book::digit(bit));
            walk(next, moves, plies, seen, out);
            moves.pop();
        }
    }
    let mut out = Vec::new();
    let empty = Pos {
        current: 0,
        mask: 0,
        moves: 0,
    };
    walk(
        empty,
        &mut String::new(),
        plies,
        &mut HashMap::new(),
        &mut out,
    );
    out
}

/// Solves one position exactly (its outcome only) with no node limit, on a table of
/// `table_entries` slots (kept between calls by the caller).
pub fn solve(entry: &Entry, table: &mut SolverTable) -> Outcome {
    let pos = &entry.pos;
    if pos.winning_moves() != 0 {
        return Outcome::Win;
    }
    if pos.moves >= CELLS - 1 {
        // One cell left and no winning move: a draw.
        return Outcome::Draw;
    }
    // A parent's outcome bounds the child's from below: every move from a lost position wins
    // for the other side, and no move from a drawn one loses for it.
    let floor = parents(pos)
        .filter_map(|parent| lookup(&parent))
        .map(Outcome::negate)
        .fold(Outcome::Loss, Outcome::max_for_mover);
    if floor == Outcome::Win {
        return Outcome::Win;
    }
    let limits = Limits::UNLIMITED;
    let mut run = Run::new(&table.0, &limits);
    if run.negamax(pos, 0, 1) > 0 {
        Outcome::Win
    } else if floor == Outcome::Draw || run.negamax(pos, -1, 0) >= 0 {
        Outcome::Draw
    } else {
        Outcome::Loss
    }
}

/// The positions one move before `pos`: its top discs of the side that moved last, each taken
/// back (some may be unreachable in a game, and then in no book).
fn parents(pos: &Pos) -> impl Iterator<Item = Pos> + '_ {
    let last_mover = pos.current ^ pos.mask;
    (0..WIDTH).filter_map(move |c| {
        let column = pos.mask & column_cells(c);
        if column == 0 {
            return None;
        }
        let top = 1u64 << (63 - column.leading_zeros());
        (top & last_mover != 0).then(|| Pos {
            current: last_mover ^ top,
            mask: pos.mask ^ top,
            moves: pos.moves - 1,
        })
    })
}

/// A solver table for [`solve`], kept across the positions one thread solves.
pub struct SolverTable(Table);

impl SolverTable {
    pub fn new(entries: usize) -> SolverTable {
        SolverTable(Table::new(entries))
    }
}

/// The outcomes of every position up to `plies` discs, from the outcomes of the positions at
/// `plies` (keyed by their canonical key, as `solved` gives them): each shallower one is the best
/// of its children for the side to move. Returns the book's text, shallow lines first.
/// `None` if an entry at `plies` is missing from `solved`.
pub fn book_text(plies: i32, solved: &HashMap<String, Outcome>) -> Option<String> {
    let mut known: HashMap<u64, Outcome> = HashMap::new();
    let mut lines = Vec::new();
    for entry in positions_at(plies) {
        let outcome = *solved.get(&entry.moves)?;
        known.insert(canonical(&entry.pos), outcome);
        lines.push((plies, entry.moves, outcome));
    }
    for ply in (0..plies).rev() {
        for entry in positions_at(ply) {
            let pos = entry.pos;
            let outcome = if pos.winning_moves() != 0 {
                Outcome::Win
            } else {
                let mut best = Outcome::Loss;
                let mut possible = pos.possible();
                while possible != 0 {
                    let bit = possible & possible.wrapping_neg();
                    possible ^= bit;
                    let mut next = pos;
                    next.play(bit);
                    let child = known.get(&canonical(&next))?;
                    best = best.max_for_mover(child.negate());
                }
                best
            };
            // The deeper book must agree with the shipped one where both know (the solves used
            // its outcomes as bounds).
            if let Some(shipped) = lookup(&pos) {
                assert_eq!(
                    shipped, outcome,
                    "{}: the shipped book disagrees",
                    entry.moves
                );
            }
            known.insert(canonical(&pos), outcome);
            lines.push((ply, entry.moves, outcome));
        }
    }
    lines.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
    let mut text = String::new();
    for (_, moves, outcome) in lines {
        text.push_str(&moves);
        text.push(' ');
        text.push(outcome.symbol());
        text.push('\n');
    }
    Some(text)
}

impl Outcome {
    fn max_for_mover(self, other: Outcome) -> Outcome {
        if (other as i8) > (self as i8) {
            other
        } else {
            self
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::games::AnyPosition;
    use crate::games::GameId;

    /// Every position with `plies` discs, once per mirror pair, by the public rules engine: the
    /// smaller of its rows and their mirror image.
    fn brute_force(plies: u32) -> usize {
        let mut frontier = vec![AnyPosition::start(GameId::FourInARow)];
        for _ in 0..plies {
            let mut next = Vec::new();
            let mut seen = HashSet::new();
            for pos in frontier {
                for mv in pos.legal_moves() {
                    let mut child = pos;
                    child.play(&mv).expect("legal");
                    let rows = child.rows();
                    let mirrored: Vec<String> =
                        rows.iter().map(|r| r.chars().rev().collect()).collect();
                    if child.outcome().is_none() && seen.insert(rows.clone().min(mirrored)) {
                        next.push(child);
                    }
                }
            }
            frontier = next;
        }
        frontier.len()
    }

    #[test]
    fn a_position_s_parents_are_every_position_one_move_before_it() {
        for plies in 1..=4 {
            let before: Vec<Entry> = positions_at(plies - 1);
            let reachable: HashSet<u64> = before.iter().map(|e| canonical(&e.pos)).collect();
            for entry in positions_at(plies) {
                let key = entry.pos.key();
                let mut expected: Vec<u64> = Vec::new();
                for parent in &before {
                    for image in [parent.pos, book::mirror(&parent.pos)] {
                        let mut possible = image.possible();
                        while possible != 0 {
                            let bit = possible & possible.wrapping_neg();
                            possible ^= bit;
                            if image.child_key(bit) == key && !expected.contains(&image.key()) {
                                expected.push(image.key());
                            }
                        }
                    }
                }
                // Taking back a disc can leave a position no game reaches (the first player's
                // disc above the second's alone, say): the book never holds those.
                let mut found: Vec<u64> = parents(&entry.pos)
                    .filter(|p| reachable.contains(&canonical(p)))
                    .map(|p| p.key())
                    .collect();
                for parent in parents(&entry.pos) {
                    let mut child = parent;
                    let bit = entry.pos.mask ^ parent.mask;
                    assert_eq!(bit.count_ones(), 1, "{}", entry.moves);
                    child.play(bit);
                    assert_eq!(child.key(), key, "{}", entry.moves);
                    assert_eq!(child.current, entry.pos.current, "{}", entry.moves);
                }
                found.sort_unstable();
                expected.sort_unstable();
                assert_eq!(found, expected, "{}", entry.moves);
            }
        }
    }

    #[test]
    fn the_positions_of_a_depth_are_every_reachable_one_once_per_mirror_pair() {
        assert_eq!(positions_at(0).len(), 1);
        assert_eq!(positions_at(1).len(), 4);
        assert_eq!(positions_at(2).len(), 25);
        for plies in 3..=4 {
            assert_eq!(
                positions_at(plies).len(),
                brute_force(plies as u32),
                "{plies}"
            );
        }
    }

    /// The shipped book holds every position up to its depth, each shallower outcome is the best
    /// of its children's, and the known values of the game hold (Allis 1988): the first player
    /// wins by the centre column, draws by its neighbours and loses elsewhere.
    #[test]
    fn the_shipped_book_is_complete_consistent_and_agrees_with_the_known_solution() {
        let (entries, depth) = shipped();
        assert!(*depth >= 1, "{depth}");
        for plies in 0..=*depth {
            for e in positions_at(plies) {
                assert!(entries.contains_key(&canonical(&e.pos)), "{}", e.moves);
            }
        }
        let solved: HashMap<String, Outcome> = positions_at(*depth)
            .into_iter()
            .map(|e| {
                let o = entries[&canonical(&e.pos)];
                (e.moves, o)
            })
            .collect();
        let derived = book_text(*depth, &solved).expect("complete");
        let shipped: Vec<&str> = OUTCOMES.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(derived.lines().collect::<Vec<_>>(), shipped);
        let outcome = |moves: &str| lookup(&book::replay(moves).expect("legal"));
        assert_eq!(outcome("-"), Some(Outcome::Win));
        assert_eq!(outcome("4"), Some(Outcome::Loss));
        for c in ["3", "5"] {
            assert_eq!(outcome(c), Some(Outcome::Draw), "{c}");
        }
        for c in ["1", "2", "6", "7"] {
            assert_eq!(outcome(c), Some(Outcome::Win), "{c}");
        }
    }

    /// The solver reads the book: on a budget far too small to solve, the start still scores on
    /// the winning side (an estimate of the distance), a proven draw scores 0 exactly, and the
    /// analysis reports the proven outcomes.
    #[test]
    fn a_budget_too_small_to_solve_still_gets_the_books_outcome() {
        use crate::analysis::proven_outcome;
        use crate::games::{FourInARow, Game};
        use crate::search::four_in_a_row::Solver;
        let mut solver = Solver::default();
        let limits = Limits::nodes(2_000);
        let start = FourInARow::start();
        let v = solver.score(&start, &limits);
        assert!(!v.exact && v.score >= 1, "{v:?}");
        let pos = AnyPosition::FourInARow(start);
        assert_eq!(proven_outcome(&pos, v.score, v.exact), Some(1));
        let mut after_3 = FourInARow::start();
        after_3.play("3".parse().expect("a column"));
        let v = solver.score(&after_3, &limits);
        assert!(v.exact && v.score == 0, "{v:?}");
        let mut after_1 = FourInARow::start();
        after_1.play("1".parse().expect("a column"));
        let v = solver.score(&after_1, &limits);
        assert!(v.score >= 1, "{v:?}");
        let pos = AnyPosition::FourInARow(after_1);
        assert_eq!(proven_outcome(&pos, v.score, v.exact), Some(1));
    }
}
