//! Four in a Row (7 columns x 6 rows): the `Column` move and the `FourInARow` bitboard engine.
//!
//! The board is two `u64` bitboards in the layout of Pascal Pons' solver: column `c` owns bits
//! `7c..7c+6`, bottom cell first, and the seventh bit of every column is a sentinel that always
//! stays empty. The sentinel row lets a disc "fall" with one addition (`mask + bottom`) and keeps
//! the shifts of the line test from wrapping from one column into the next.

use std::fmt;
use std::str::FromStr;

use super::{
    Board, BoardError, EndReason, Game, GameId, GameOutcome, Notation, ParseError, Side, Symmetry,
};

pub(crate) const WIDTH: u8 = 7;
pub(crate) const HEIGHT: u8 = 6;
/// Bits per column: the six cells plus the sentinel.
pub(crate) const STRIDE: u8 = HEIGHT + 1;
const CELLS: u32 = (WIDTH as u32) * (HEIGHT as u32);

/// The bottom cell of every column.
pub(crate) const BOTTOM: u64 = repeat_per_column(1);
/// The six cells of the leftmost column.
pub(crate) const BOARD_COLUMN: u64 = (1 << HEIGHT) - 1;
/// Every playable cell (no sentinels).
pub(crate) const BOARD: u64 = repeat_per_column(BOARD_COLUMN);

/// `column_bits` placed in each of the seven columns.
const fn repeat_per_column(column_bits: u64) -> u64 {
    let mut out = 0;
    let mut c = 0;
    while c < WIDTH {
        out |= column_bits << (c * STRIDE);
        c += 1;
    }
    out
}

/// The bit of the cell in column `col` (0 = left) and row `row` (0 = bottom).
const fn cell(col: u8, row: u8) -> u64 {
    1 << (col * STRIDE + row)
}

/// A column to drop a disc into, `"1"`..`"7"` left to right.
///
/// Holding only a valid column, it lets the engine index its bitboards without checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Column(u8);

impl Column {
    /// The column with 0-based index `index0` (0 = leftmost), if there is one.
    pub fn new(index0: u8) -> Option<Column> {
        (index0 < WIDTH).then_some(Column(index0))
    }

    /// The 0-based index, for tables and bitboards (the notation is 1-based).
    pub fn index(self) -> u8 {
        self.0
    }
}

impl fmt::Display for Column {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0 + 1)
    }
}

impl FromStr for Column {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.as_bytes() {
            [d @ b'1'..=b'7'] => Ok(Column(d - b'1')),
            _ => Err(ParseError::BadMove(s.to_owned())),
        }
    }
}

/// A Four in a Row position: a `Copy` pair of bitboards, cheap to clone in search and perft.
///
/// `mask` holds every disc and `first` the discs of the first player (red); the side to move
/// follows from the parity of the disc count, since nobody ever passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FourInARow {
    mask: u64,
    first: u64,
}

impl FourInARow {
    /// The raw bitboards `(mask, first)` in the layout described at the top of this file, for the
    /// solver, which searches on its own copy of them.
    pub(crate) fn bitboards(&self) -> (u64, u64) {
        (self.mask, self.first)
    }

    /// The discs of one side.
    fn board(&self, side: Side) -> u64 {
        match side {
            Side::First => self.first,
            Side::Second => self.mask ^ self.first,
        }
    }

    /// The side that placed the last disc, which is the only one who can have just won.
    fn last_mover(&self) -> Side {
        self.side_to_move().other()
    }

    /// The cell a disc dropped into each column would take; full columns contribute nothing.
    fn drop_cells(&self) -> u64 {
        (self.mask + BOTTOM) & BOARD
    }

    /// The columns the side to move may play, as their drop cells; nothing once the game is won.
    fn legal_mask(&self) -> u64 {
        if has_four(self.board(self.last_mover())) {
            0
        } else {
            self.drop_cells()
        }
    }
}

/// Whether `b` holds four (or more) aligned discs in any of the four directions.
fn has_four(b: u64) -> bool {
    // Vertical (1), horizontal (STRIDE), and the two diagonals (STRIDE - 1, STRIDE + 1). The
    // always-empty sentinel row stops every shift at a column edge.
    [1, STRIDE - 1, STRIDE, STRIDE + 1].into_iter().any(|s| {
        let pairs = b & (b >> s);
        pairs & (pairs >> (2 * s)) != 0
    })
}

/// The legal columns of a position, left to right, read off a mask of drop cells.
#[derive(Clone, Debug)]
struct Columns(u64);

impl Iterator for Columns {
    type Item = Column;
    fn next(&mut self) -> Option<Column> {
        if self.0 == 0 {
            return None;
        }
        let bit = self.0.trailing_zeros() as u8;
        self.0 &= self.0 - 1;
        Some(Column(bit / STRIDE))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Columns {}

impl Game for FourInARow {
    type Move = Column;

    const ID: GameId = GameId::FourInARow;
    const COLORS: [char; 2] = ['R', 'Y'];
    const BOARD: Board = Board {
        columns: WIDTH,
        rows: HEIGHT,
    };
    const NOTATION: Notation = Notation::Column;
    const MOVE_CHARS: usize = 1;
    const CAN_HIDE_LEGAL_MOVES: bool = false;
    /// Gravity fixes up and down: only the mirror image is the same game.
    const SYMMETRIES: &'static [Symmetry] = &[Symmetry::Identity, Symmetry::MirrorColumns];
    const PUBLIC_PLIES: u32 = 8;
    const COLOURS_EXCHANGE: bool = false;

    fn transform_move(column: Column, s: Symmetry) -> Column {
        let (x, _) = s.cell(column.0, 0, WIDTH, HEIGHT);
        Column(x)
    }

    fn start() -> Self {
        FourInARow { mask: 0, first: 0 }
    }

    /// Rejects boards that no game can reach: floating discs, disc counts that do not fit the
    /// side to move (red starts), and a line owned by the side to move (the game would have ended
    /// before its opponent's last disc).
    fn from_rows(rows: &[&str], to_move: Side) -> Result<Self, ParseError> {
        if rows.len() != usize::from(HEIGHT) {
            return Err(ParseError::BadBoard(BoardError::Rows {
                expected: usize::from(HEIGHT),
                got: rows.len(),
            }));
        }
        let mut pos = FourInARow::start();
        for (i, line) in rows.iter().enumerate() {
            if line.chars().count() != usize::from(WIDTH) {
                return Err(ParseError::BadBoard(BoardError::RowLength {
                    row: i + 1,
                    got: line.chars().count(),
                    expected: usize::from(WIDTH),
                }));
            }
            // The first string is the top row.
            let row = HEIGHT - 1 - i as u8;
            for (col, ch) in (0..WIDTH).zip(line.chars()) {
                let bit = cell(col, row);
                match ch {
                    '.' => {}
                    'R' => {
                        pos.mask |= bit;
                        pos.first |= bit;
                    }
                    'Y' => pos.mask |= bit,
                    _ => {
                        return Err(ParseError::BadBoard(BoardError::Cell {
                            found: ch,
                            allowed: ['.', 'R', 'Y'],
                        }));
                    }
                }
            }
        }
        let floating = pos.mask & !BOTTOM & !(pos.mask << 1);
        if floating != 0 {
            return Err(ParseError::BadBoard(BoardError::Floating));
        }
        let [red, yellow] = pos.discs();
        let fits = match to_move {
            Side::First => red == yellow,
            Side::Second => red == yellow + 1,
        };
        if !fits {
            return Err(ParseError::BadBoard(BoardError::DiscCounts {
                red,
                yellow,
                to_move: Self::COLORS[to_move.index()],
            }));
        }
        if has_four(pos.board(to_move)) {
            return Err(ParseError::BadBoard(BoardError::AlreadyFour));
        }
        Ok(pos)
    }

    fn rows(&self) -> Vec<String> {
        (0..HEIGHT)
            .rev()
            .map(|row| {
                (0..WIDTH)
                    .map(|col| {
                        let bit = cell(col, row);
                        if self.first & bit != 0 {
                            Self::COLORS[0]
                        } else if self.mask & bit != 0 {
                            Self::COLORS[1]
                        } else {
                            '.'
                        }
                    })
                    .collect()
            })
            .collect()
    }

    fn side_to_move(&self) -> Side {
        if self.ply().is_multiple_of(2) {
            Side::First
        } else {
            Side::Second
        }
    }

    fn ply(&self) -> u32 {
        self.mask.count_ones()
    }

    fn legal_moves(&self) -> impl Iterator<Item = Column> {
        Columns(self.legal_mask())
    }

    fn is_legal(&self, mv: Column) -> bool {
        self.legal_mask() & (BOARD_COLUMN << (mv.0 * STRIDE)) != 0
    }

    fn legal_count(&self) -> u32 {
        self.legal_mask().count_ones()
    }

    fn play(&mut self, mv: Column) {
        debug_assert!(self.is_legal(mv), "{mv} is not legal in {self:?}");
        let placed = self.drop_cells() & (BOARD_COLUMN << (mv.0 * STRIDE));
        if self.side_to_move() == Side::First {
            self.first |= placed;
        }
        self.mask |= placed;
    }

    fn must_pass(&self) -> bool {
        false
    }

    /// Four in a Row never passes: a side to move always has a column until the game ends.
    fn pass(&mut self) {
        debug_assert!(self.must_pass(), "Four in a Row has no passes");
    }

    fn outcome(&self) -> Option<GameOutcome> {
        let mover = self.last_mover();
        if has_four(self.board(mover)) {
            Some(GameOutcome {
                winner: Some(mover),
                reason: EndReason::FourInARow,
            })
        } else if self.ply() == CELLS {
            Some(GameOutcome {
                winner: None,
                reason: EndReason::BoardFull,
            })
        } else {
            None
        }
    }

    fn discs(&self) -> [u32; 2] {
        let first = self.first.count_ones();
        [first, self.ply() - first]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::random_positions;
    use crate::games::{PerftMode, perft};
    use expect_test::{Expect, expect};

    /// Replays `moves` (column digits) from the start and describes where the game stands; an
    /// illegal or unreadable move stops the replay and is reported above the board before it.
    fn check(moves: &str, expect: Expect) {
        let mut pos = FourInARow::start();
        let mut report = String::new();
        for (i, ch) in moves.chars().enumerate() {
            let mv = match ch.to_string().parse::<Column>() {
                Ok(mv) => mv,
                Err(e) => {
                    report = format!("move {}: {e}\n", i + 1);
                    break;
                }
            };
            if !pos.is_legal(mv) {
                report = format!("move {} `{mv}`: illegal\n", i + 1);
                break;
            }
            pos.play(mv);
        }
        report.push_str(&describe(&pos));
        expect.assert_eq(&report);
    }

    /// The board under a column ruler, then side to move, legal moves and outcome. The outcome
    /// is cross-checked against a plain scan of the rows for four equal letters in a line.
    fn describe(pos: &FourInARow) -> String {
        let rows = pos.rows();
        let scanned = scan_for_four(&rows);
        let outcome = pos.outcome();
        assert_eq!(
            outcome.and_then(|o| o.winner),
            scanned,
            "the bitboard and the scan disagree on {rows:?}"
        );
        let legal: Vec<String> = pos.legal_moves().map(|m| m.to_string()).collect();
        assert_eq!(legal.len() as u32, pos.legal_count());
        let [red, yellow] = pos.discs();
        let outcome = match outcome {
            None => "none".to_owned(),
            Some(GameOutcome {
                winner: Some(w),
                reason,
            }) => format!("{} wins, {reason:?}", FourInARow::COLORS[w.index()]),
            Some(GameOutcome {
                winner: None,
                reason,
            }) => format!("draw, {reason:?}"),
        };
        format!(
            "1234567\n{}\nply {}, {} to move, discs R {red} Y {yellow}\nlegal: [{}]\noutcome: {outcome}\n",
            rows.join("\n"),
            pos.ply(),
            FourInARow::COLORS[pos.side_to_move().index()],
            legal.join(" "),
        )
    }

    /// The side with four equal letters in a line of `rows`, by walking the grid cell by cell.
    fn scan_for_four(rows: &[String]) -> Option<Side> {
        let grid: Vec<Vec<char>> = rows.iter().map(|r| r.chars().collect()).collect();
        let at = |r: i32, c: i32| -> char {
            if (0..6).contains(&r) && (0..7).contains(&c) {
                grid[r as usize][c as usize]
            } else {
                '.'
            }
        };
        let mut found = None;
        for r in 0..6 {
            for c in 0..7 {
                for (dr, dc) in [(0, 1), (1, 0), (1, 1), (1, -1)] {
                    let first = at(r, c);
                    if first != '.' && (1..4).all(|k| at(r + k * dr, c + k * dc) == first) {
                        let side = if first == 'R' {
                            Side::First
                        } else {
                            Side::Second
                        };
                        assert!(
                            found.is_none() || found == Some(side),
                            "both sides have four"
                        );
                        found = Some(side);
                    }
                }
            }
        }
        found
    }

    #[test]
    fn the_empty_board_offers_every_column_to_red() {
        check(
            "",
            expect![[r#"
            1234567
            .......
            .......
            .......
            .......
            .......
            .......
            ply 0, R to move, discs R 0 Y 0
            legal: [1 2 3 4 5 6 7]
            outcome: none
        "#]],
        );
    }

    #[test]
    fn four_up_a_column_wins() {
        check(
            "1212121",
            expect![[r#"
            1234567
            .......
            .......
            R......
            RY.....
            RY.....
            RY.....
            ply 7, Y to move, discs R 4 Y 3
            legal: []
            outcome: R wins, FourInARow
        "#]],
        );
    }

    #[test]
    fn four_across_wins_for_yellow_too() {
        check(
            "12131475",
            expect![[r#"
            1234567
            .......
            .......
            .......
            R......
            R......
            RYYYY.R
            ply 8, R to move, discs R 4 Y 4
            legal: []
            outcome: Y wins, FourInARow
        "#]],
        );
    }

    #[test]
    fn four_on_a_rising_diagonal_wins() {
        check(
            "12233446344",
            expect![[r#"
            1234567
            .......
            .......
            ...R...
            ..RY...
            .RRR...
            RYYY.Y.
            ply 11, Y to move, discs R 6 Y 5
            legal: []
            outcome: R wins, FourInARow
        "#]],
        );
    }

    #[test]
    fn four_on_a_falling_diagonal_wins() {
        check(
            "76655442544",
            expect![[r#"
            1234567
            .......
            .......
            ...R...
            ...YR..
            ...RRR.
            .Y.YYYR
            ply 11, Y to move, discs R 6 Y 5
            legal: []
            outcome: R wins, FourInARow
        "#]],
        );
    }

    #[test]
    fn a_disc_joining_two_and_two_makes_five_and_wins() {
        check(
            "112244553",
            expect![[r#"
            1234567
            .......
            .......
            .......
            .......
            YY.YY..
            RRRRR..
            ply 9, Y to move, discs R 5 Y 4
            legal: []
            outcome: R wins, FourInARow
        "#]],
        );
    }

    #[test]
    fn three_in_a_row_is_not_a_win() {
        check(
            "112233",
            expect![[r#"
            1234567
            .......
            .......
            .......
            .......
            YYY....
            RRR....
            ply 6, R to move, discs R 3 Y 3
            legal: [1 2 3 4 5 6 7]
            outcome: none
        "#]],
        );
    }

    #[test]
    fn no_disc_goes_in_after_a_win() {
        check(
            "12121212",
            expect![[r#"
            move 8 `2`: illegal
            1234567
            .......
            .......
            R......
            RY.....
            RY.....
            RY.....
            ply 7, Y to move, discs R 4 Y 3
            legal: []
            outcome: R wins, FourInARow
        "#]],
        );
    }

    #[test]
    fn a_full_column_takes_no_disc() {
        check(
            "4444444",
            expect![[r#"
            move 7 `4`: illegal
            1234567
            ...Y...
            ...R...
            ...Y...
            ...R...
            ...Y...
            ...R...
            ply 6, R to move, discs R 3 Y 3
            legal: [1 2 3 5 6 7]
            outcome: none
        "#]],
        );
    }

    #[test]
    fn an_unknown_column_stops_the_replay() {
        check(
            "448",
            expect![[r#"
            move 3: `8` is not a move of this game
            1234567
            .......
            .......
            .......
            .......
            ...Y...
            ...R...
            ply 2, R to move, discs R 1 Y 1
            legal: [1 2 3 4 5 6 7]
            outcome: none
        "#]],
        );
    }

    #[test]
    fn forty_two_discs_without_a_line_are_a_draw() {
        check(
            "467134622111631156745557462762722334735543",
            expect![[r#"
                1234567
                YRYRYRR
                RYYYRYR
                YYRRRYY
                RRYYYRY
                YRYYRRR
                YYRRRYR
                ply 42, R to move, discs R 21 Y 21
                legal: []
                outcome: draw, BoardFull
            "#]],
        );
    }

    #[test]
    fn columns_parse_from_one_to_seven_only() {
        for (text, index) in ('1'..='7').map(String::from).zip(0..) {
            let col: Column = text.parse().expect("a valid column");
            assert_eq!(col.index(), index);
            assert_eq!(col.to_string(), text);
            assert_eq!(Column::new(index), Some(col));
        }
        for bad in ["0", "8", "", "44", "a", " 1", "1 ", "-1", "٣"] {
            assert_eq!(
                bad.parse::<Column>(),
                Err(ParseError::BadMove(bad.to_owned())),
                "{bad:?}"
            );
        }
        assert_eq!(Column::new(7), None);
    }

    #[test]
    fn a_board_read_back_from_its_rows_is_the_same_position() {
        random_positions::<FourInARow>(300, 0x4f52, |pos| {
            let rows = pos.rows();
            let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
            assert_eq!(
                FourInARow::from_rows(&rows, pos.side_to_move()),
                Ok(*pos),
                "{rows:?}"
            );
        });
    }

    #[test]
    fn every_random_game_ends_with_a_line_or_a_full_board() {
        random_positions::<FourInARow>(300, 0x4f52, |pos| {
            let ended = pos.outcome().is_some();
            assert_eq!(ended, pos.legal_count() == 0);
            assert_eq!(ended, pos.legal_moves().next().is_none());
            assert!(!pos.must_pass());
            let [red, yellow] = pos.discs();
            assert_eq!(red + yellow, pos.ply());
            assert!(red == yellow || red == yellow + 1);
        });
    }

    #[test]
    fn a_board_from_rows_puts_the_top_row_first() {
        let mut played = FourInARow::start();
        for mv in ["4", "4", "3", "7", "5"] {
            played.play(mv.parse().expect("a column"));
        }
        let board = [
            ".......", ".......", ".......", ".......", "...Y...", "..RRR.Y",
        ];
        let read = FourInARow::from_rows(&board, Side::Second).expect("a reachable board");
        assert_eq!(read, played);
        assert_eq!(played.rows(), board);
        assert_eq!(played.discs(), [3, 2]);
    }

    #[test]
    fn impossible_boards_are_rejected() {
        let empty = ["......."; 6];
        let cases: [(&[&str], Side, &str); 9] = [
            (&empty[..5], Side::First, "expected 6 rows, got 5"),
            (
                &[
                    ".......", ".......", ".......", ".......", ".......", "......",
                ],
                Side::First,
                "row 6 has 6 cells, expected 7",
            ),
            (
                &[
                    ".......", ".......", ".......", ".......", ".......", "...r...",
                ],
                Side::Second,
                "`r` is not one of `.`, `R`, `Y`",
            ),
            (
                &[
                    ".......", ".......", ".......", ".......", "...R...", "......Y",
                ],
                Side::First,
                "a disc floats above an empty cell",
            ),
            (
                &[
                    ".......", ".......", ".......", ".......", ".......", "...R...",
                ],
                Side::First,
                "1 red and 0 yellow discs cannot have R to move",
            ),
            (
                &[
                    ".......", ".......", ".......", ".......", ".......", "...Y...",
                ],
                Side::Second,
                "0 red and 1 yellow discs cannot have Y to move",
            ),
            (
                &[
                    ".......", ".......", ".......", ".......", ".......", "...RR..",
                ],
                Side::Second,
                "2 red and 0 yellow discs cannot have Y to move",
            ),
            (
                &[
                    ".......", ".......", ".......", ".......", ".......", ".......",
                ],
                Side::Second,
                "0 red and 0 yellow discs cannot have Y to move",
            ),
            (
                &[
                    ".......", ".......", ".......", ".......", "RRRR...", "YYYYR..",
                ],
                Side::Second,
                "the side to move already has four in a row",
            ),
        ];
        for (rows, side, message) in cases {
            assert_eq!(
                FourInARow::from_rows(rows, side).map_err(|e| e.to_string()),
                Err(format!("bad board: {message}")),
                "{rows:?}"
            );
        }
    }

    #[test]
    fn a_won_board_reads_with_the_loser_to_move() {
        let rows = [
            ".......", ".......", ".......", ".......", "YYY....", "RRRR...",
        ];
        let pos = FourInARow::from_rows(&rows, Side::Second).expect("a finished game");
        assert_eq!(
            pos.outcome(),
            Some(GameOutcome {
                winner: Some(Side::First),
                reason: EndReason::FourInARow
            })
        );
        assert_eq!(pos.legal_count(), 0);
    }

    #[test]
    fn perft_matches_the_published_counts_to_depth_8() {
        let expected = [7, 49, 343, 2_401, 16_807, 117_649, 823_536, 5_673_234];
        for (depth, count) in (1..).zip(expected) {
            let start = FourInARow::start();
            assert_eq!(
                perft(&start, depth, PerftMode::EndedGameDropped),
                count,
                "depth {depth}"
            );
        }
    }

    /// Lines of the solver test sets are positions with the game still on; replaying them all
    /// exercises drops into every column height.
    #[test]
    fn every_solver_test_line_replays_to_a_game_still_on() {
        for set in [
            "Test_L1_R1",
            "Test_L1_R2",
            "Test_L1_R3",
            "Test_L2_R1",
            "Test_L2_R2",
            "Test_L3_R1",
        ] {
            let path = format!("{}/../oracles/connect4/{set}", env!("CARGO_MANIFEST_DIR"));
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("cannot read the oracle {path}: {e}"));
            let mut lines = 0;
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let moves = line.split_whitespace().next().expect("a move string");
                let mut pos = FourInARow::start();
                for ch in moves.chars() {
                    let mv: Column = ch.to_string().parse().expect("a column digit");
                    assert!(pos.is_legal(mv), "{set}: {moves}");
                    pos.play(mv);
                }
                assert_eq!(pos.outcome(), None, "{set}: {moves}");
                assert_eq!(pos.ply() as usize, moves.len());
                lines += 1;
            }
            assert_eq!(lines, 1000, "{path}");
        }
    }
}
