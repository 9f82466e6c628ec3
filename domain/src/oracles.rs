//! Readers of the published test sets the engines are checked against: FFO endgame lines
//! (`.obf`: 64 squares A1..H8 as `X`/`O`/`-`, the side to move, then `MOVE:SCORE;` for every
//! legal move). Pure parsing, shared by the unit tests, the integration tests and the benches.

use crate::games::reversi::{Reversi, Square};
use crate::games::{Game, Side};

/// One FFO position with the exact score of every legal move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FfoLine {
    /// Board rows in the board notation (`B`, `W`, `.`), row 1 first.
    pub rows: Vec<String>,
    pub to_move: Side,
    /// Every legal move and its exact final disc difference, as listed.
    pub scored: Vec<(Square, i32)>,
}

impl FfoLine {
    pub fn position(&self) -> Result<Reversi, String> {
        let rows: Vec<&str> = self.rows.iter().map(String::as_str).collect();
        Reversi::from_rows(&rows, self.to_move).map_err(|e| e.to_string())
    }

    /// The best score listed (`None` when no move is listed).
    pub fn best_score(&self) -> Option<i32> {
        self.scored.iter().map(|s| s.1).max()
    }

    /// Every move reaching the best score, sorted.
    pub fn best_moves(&self) -> Vec<Square> {
        let best = self.best_score();
        let mut moves: Vec<Square> = self
            .scored
            .iter()
            .filter(|s| Some(s.1) == best)
            .map(|s| s.0)
            .collect();
        moves.sort();
        moves
    }
}

/// Parses one `.obf` line.
pub fn ffo_line(line: &str) -> Result<FfoLine, String> {
    let (board, rest) = line
        .split_once(' ')
        .ok_or_else(|| format!("no side to move in {line}"))?;
    if board.len() != 64 {
        return Err(format!("a board of {} squares in {line}", board.len()));
    }
    let cells = board
        .chars()
        .map(|c| match c {
            'X' => Ok('B'),
            'O' => Ok('W'),
            '-' => Ok('.'),
            other => Err(format!("unexpected square `{other}` in {line}")),
        })
        .collect::<Result<Vec<char>, String>>()?;
    let rows = cells.chunks(8).map(|r| r.iter().collect()).collect();
    let mut fields = rest.split(';').map(str::trim).filter(|f| !f.is_empty());
    let to_move = match fields.next() {
        Some("X") => Side::First,
        Some("O") => Side::Second,
        other => return Err(format!("unexpected side {other:?} in {line}")),
    };
    let scored = fields
        .map(|f| {
            let (mv, score) = f
                .split_once(':')
                .ok_or_else(|| format!("`{f}` is not MOVE:SCORE"))?;
            let square = mv.parse::<Square>().map_err(|e| format!("{mv}: {e}"))?;
            let score = score.parse::<i32>().map_err(|e| format!("{score}: {e}"))?;
            Ok((square, score))
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(FfoLine {
        rows,
        to_move,
        scored,
    })
}

/// Every non-blank line of an `.obf` file.
pub fn ffo_lines(text: &str) -> Result<Vec<FfoLine>, String> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(ffo_line)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ffo_line_reads_into_a_position_and_its_best_moves() {
        let text = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../oracles/reversi/fforum-40-59.obf"
        ));
        let lines = ffo_lines(text).expect("the file parses");
        assert_eq!(lines.len(), 20);
        let first = &lines[0];
        assert_eq!(first.to_move, Side::First);
        assert_eq!(first.best_score(), Some(38));
        assert_eq!(
            first.best_moves(),
            vec!["a2".parse::<Square>().expect("a square")]
        );
        let pos = first.position().expect("a board");
        assert_eq!(pos.legal_count() as usize, first.scored.len());
        assert!(ffo_line("XO X; A1:+2;").is_err());
        assert!(ffo_line(&format!("{} Z;", "-".repeat(64))).is_err());
    }
}
