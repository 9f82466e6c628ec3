//! Reversi (Othello rules, 8x8): the `Square` move and the `Reversi` bitboard engine.
//!
//! Square `a1` is bit 0, `h1` bit 7, `a8` bit 56 (index = row * 8 + column, row 1 at the top).
//! The move generator is shared with the search (`crate::search::reversi`): legal moves come
//! from a flood fill (dumb7, with steps of two) along each line, both ways at once, the
//! opponent's discs masked to the inner six columns for every line that moves sideways so that
//! no shift wraps from one edge to the other; flips follow precomputed rays from the square.

use std::fmt;
use std::str::FromStr;

use super::{
    Board, BoardError, EndReason, Game, GameId, GameOutcome, Notation, ParseError, Side, Symmetry,
};

/// Every square but the a and h columns.
const INNER_COLUMNS: u64 = 0x7E7E_7E7E_7E7E_7E7E;

/// d4, e4, d5, e5: taken at the start and never emptied, so every reachable board holds them.
const CENTRE: u64 = (1 << 27) | (1 << 28) | (1 << 35) | (1 << 36);

/// The moves in one direction and its opposite (`d` = 1, 7, 8 or 9) from `p` through runs of
/// `m` (the opponent, masked to the inner columns for sideways directions). Runs are filled two
/// squares at a time after the first two single steps, so four steps cover six discs.
#[inline(always)]
fn line_moves(p: u64, m: u64, d: u32) -> u64 {
    let d2 = d + d;
    let mut fl = m & (p << d);
    let mut fr = m & (p >> d);
    fl |= m & (fl << d);
    fr |= m & (fr >> d);
    let ml = m & (m << d);
    let mr = ml >> d;
    fl |= ml & (fl << d2);
    fr |= mr & (fr >> d2);
    fl |= ml & (fl << d2);
    fr |= mr & (fr >> d2);
    (fl << d) | (fr >> d)
}

/// The legal moves of `p` against `o`.
#[inline(always)]
pub(crate) fn moves(p: u64, o: u64) -> u64 {
    let m = o & INNER_COLUMNS;
    (line_moves(p, m, 1) | line_moves(p, o, 8) | line_moves(p, m, 7) | line_moves(p, m, 9))
        & !(p | o)
}

/// The squares from `sq` to the board's edge (excluded `sq`) in direction (`dr`, `dc`).
const fn ray(sq: usize, dr: i32, dc: i32) -> u64 {
    let mut r = (sq / 8) as i32 + dr;
    let mut c = (sq % 8) as i32 + dc;
    let mut mask = 0u64;
    while r >= 0 && r < 8 && c >= 0 && c < 8 {
        mask |= 1u64 << (r * 8 + c);
        r += dr;
        c += dc;
    }
    mask
}

/// Rays per square: the first four run towards higher bits (east, south-west, south,
/// south-east), the last four towards lower bits (west, north-east, north, north-west).
pub(crate) const RAYS: [[u64; 8]; 64] = {
    let mut rays = [[0u64; 8]; 64];
    let dirs: [(i32, i32); 8] = [
        (0, 1),
        (1, -1),
        (1, 0),
        (1, 1),
        (0, -1),
        (-1, 1),
        (-1, 0),
        (-1, -1),
    ];
    let mut sq = 0;
    while sq < 64 {
        let mut d = 0;
        while d < 8 {
            rays[sq][d] = ray(sq, dirs[d].0, dirs[d].1);
            d += 1;
        }
        sq += 1;
    }
    rays
};

/// The discs of `o` that flip when `p` plays on the empty square `sq` (0 if the move is
/// illegal): along each ray, the first square that is not `o`'s must be `p`'s. Branch-free: on a
/// ray towards higher bits that square is the lowest set bit of `ray & !o`, on one towards lower
/// bits the highest, and a ray with no such square (or one that is not `p`'s) adds nothing.
#[inline(always)]
pub(crate) fn flips(p: u64, o: u64, sq: usize) -> u64 {
    let rays = &RAYS[sq & 63];
    let mut f = 0;
    for &ray in &rays[..4] {
        let block = ray & !o;
        let outflank = block & block.wrapping_neg() & p;
        // The squares below the outflanking disc, none if there is none.
        f |= ray & outflank.wrapping_sub(u64::from(outflank != 0));
    }
    for &ray in &rays[4..] {
        let block = ray & !o;
        // With no block, the shift wraps to bit 63, which no ray towards lower bits holds.
        let outflank = (1u64 << 63).wrapping_shr(block.leading_zeros()) & p & ray;
        // The squares above the outflanking disc, none if there is none.
        f |= ray & outflank.wrapping_neg().wrapping_shl(1);
    }
    f
}

/// A square, `"a1"`..`"h8"` (column letter, then row digit from the top).
///
/// Holding only a valid square, it lets the engine index its bitboards without checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(u8);

impl Square {
    /// The square with bit index `index` (row * 8 + column, `a1` = 0), if there is one.
    pub fn new(index: u8) -> Option<Square> {
        (index < 64).then_some(Square(index))
    }

    /// The bit index, for tables and bitboards.
    pub fn index(self) -> u8 {
        self.0
    }

    /// The column, 0 for `a` to 7 for `h`.
    pub fn column(self) -> u8 {
        self.0 % 8
    }

    /// The row, 0 for row 1 (top) to 7 for row 8.
    pub fn row(self) -> u8 {
        self.0 / 8
    }

    fn bit(self) -> u64 {
        1 << self.0
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}",
            char::from(b'a' + self.column()),
            char::from(b'1' + self.row())
        )
    }
}

impl FromStr for Square {
    type Err = ParseError;
    /// Accepts either case (`"F5"` = `"f5"`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.as_bytes() {
            &[c, r] => {
                let col = c.to_ascii_lowercase().wrapping_sub(b'a');
                let row = r.wrapping_sub(b'1');
                if col < 8 && row < 8 {
                    Ok(Square(row * 8 + col))
                } else {
                    Err(ParseError::BadMove(s.to_owned()))
                }
            }
            _ => Err(ParseError::BadMove(s.to_owned())),
        }
    }
}

/// A Reversi position: the discs of the side to move and of its opponent, and who that is.
///
/// Storing the boards relative to the mover keeps move generation free of branches on colour;
/// `Copy` and two words wide, it is cheap to clone in search and perft.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reversi {
    player: u64,
    opponent: u64,
    to_move: Side,
}

impl Reversi {
    fn legal_mask(&self) -> u64 {
        moves(self.player, self.opponent)
    }

    /// The discs of the side to move and of its opponent, for the search engines, which work on
    /// the raw bitboards (bit = [`Square::index`]).
    pub(crate) fn boards(&self) -> (u64, u64) {
        (self.player, self.opponent)
    }
}

/// The legal squares of a position in a1, b1, .., h8 order, read off a move mask.
#[derive(Clone, Debug)]
struct Squares(u64);

impl Iterator for Squares {
    type Item = Square;
    fn next(&mut self) -> Option<Square> {
        if self.0 == 0 {
            return None;
        }
        let index = self.0.trailing_zeros() as u8;
        self.0 &= self.0 - 1;
        Some(Square(index))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Squares {}

impl Game for Reversi {
    type Move = Square;

    const ID: GameId = GameId::Reversi;
    const COLORS: [char; 2] = ['B', 'W'];
    const BOARD: Board = Board {
        columns: 8,
        rows: 8,
    };
    const NOTATION: Notation = Notation::Square;
    const MOVE_CHARS: usize = 2;
    const CAN_HIDE_LEGAL_MOVES: bool = true;
    /// Flips go along every line: the rules are the same under all eight of the square's
    /// symmetries.
    const SYMMETRIES: &'static [Symmetry] = &Symmetry::ALL;
    const PUBLIC_PLIES: u32 = 12;
    const COLOURS_EXCHANGE: bool = true;

    fn transform_move(square: Square, s: Symmetry) -> Square {
        let (x, y) = s.cell(square.0 % 8, square.0 / 8, 8, 8);
        Square(y * 8 + x)
    }

    fn start() -> Self {
        let white = (1 << 27) | (1 << 36); // d4, e5
        let black = (1 << 28) | (1 << 35); // e4, d5
        Reversi {
            player: black,
            opponent: white,
            to_move: Side::First,
        }
    }

    /// Rejects boards with an empty centre square: the four start discs are never removed.
    fn from_rows(rows: &[&str], to_move: Side) -> Result<Self, ParseError> {
        if rows.len() != 8 {
            return Err(ParseError::BadBoard(BoardError::Rows {
                expected: 8,
                got: rows.len(),
            }));
        }
        let mut boards = [0u64; 2];
        for (row, line) in rows.iter().enumerate() {
            if line.chars().count() != 8 {
                return Err(ParseError::BadBoard(BoardError::RowLength {
                    row: row + 1,
                    got: line.chars().count(),
                    expected: 8,
                }));
            }
            for (col, ch) in line.chars().enumerate() {
                let bit = 1u64 << (row * 8 + col);
                match ch {
                    '.' => {}
                    'B' => boards[0] |= bit,
                    'W' => boards[1] |= bit,
                    _ => {
                        return Err(ParseError::BadBoard(BoardError::Cell {
                            found: ch,
                            allowed: ['.', 'B', 'W'],
                        }));
                    }
                }
            }
        }
        if (boards[0] | boards[1]) & CENTRE != CENTRE {
            return Err(ParseError::BadBoard(BoardError::EmptyCentre));
        }
        let [black, white] = boards;
        Ok(match to_move {
            Side::First => Reversi {
                player: black,
                opponent: white,
                to_move,
            },
            Side::Second => Reversi {
                player: white,
                opponent: black,
                to_move,
            },
        })
    }

    fn rows(&self) -> Vec<String> {
        let (black, white) = match self.to_move {
            Side::First => (self.player, self.opponent),
            Side::Second => (self.opponent, self.player),
        };
        (0..8)
            .map(|row| {
                (0..8)
                    .map(|col| {
                        let bit = 1u64 << (row * 8 + col);
                        if black & bit != 0 {
                            Self::COLORS[0]
                        } else if white & bit != 0 {
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
        self.to_move
    }

    fn ply(&self) -> u32 {
        (self.player | self.opponent).count_ones() - 4
    }

    fn legal_moves(&self) -> impl Iterator<Item = Square> {
        Squares(self.legal_mask())
    }

    fn is_legal(&self, mv: Square) -> bool {
        self.legal_mask() & mv.bit() != 0
    }

    fn legal_count(&self) -> u32 {
        self.legal_mask().count_ones()
    }

    fn play(&mut self, mv: Square) {
        debug_assert!(self.is_legal(mv), "{mv} is not legal in {self:?}");
        let placed = mv.bit();
        let flipped = flips(self.player, self.opponent, usize::from(mv.index()));
        let mover = self.player | placed | flipped;
        self.player = self.opponent & !flipped;
        self.opponent = mover;
        self.to_move = self.to_move.other();
    }

    fn must_pass(&self) -> bool {
        self.legal_mask() == 0 && moves(self.opponent, self.player) != 0
    }

    fn pass(&mut self) {
        debug_assert!(self.must_pass(), "no pass is due in {self:?}");
        std::mem::swap(&mut self.player, &mut self.opponent);
        self.to_move = self.to_move.other();
    }

    fn outcome(&self) -> Option<GameOutcome> {
        if self.legal_mask() != 0 || moves(self.opponent, self.player) != 0 {
            return None;
        }
        let [first, second] = self.discs();
        let winner = match first.cmp(&second) {
            std::cmp::Ordering::Greater => Some(Side::First),
            std::cmp::Ordering::Less => Some(Side::Second),
            std::cmp::Ordering::Equal => None,
        };
        let reason = if (self.player | self.opponent) == u64::MAX {
            EndReason::BoardFull
        } else {
            EndReason::NoMoves
        };
        Some(GameOutcome { winner, reason })
    }

    fn discs(&self) -> [u32; 2] {
        let (mover, other) = (self.player.count_ones(), self.opponent.count_ones());
        match self.to_move {
            Side::First => [mover, other],
            Side::Second => [other, mover],
        }
    }

    /// Every occupied square stays occupied; the stable discs ([`stable_discs`]) keep their
    /// colour. The bit layout is the board notation's already.
    fn permanent(&self) -> [u64; 3] {
        let (black, white) = match self.to_move {
            Side::First => (self.player, self.opponent),
            Side::Second => (self.opponent, self.player),
        };
        let [stable_black, stable_white] = stable_discs(black, white);
        [black | white, stable_black, stable_white]
    }
}

/// The four lines through a square: across, down, and the two diagonals, as `(dx, dy)`.
const AXES: [(i32, i32); 4] = [(1, 0), (0, 1), (1, 1), (1, -1)];

/// `LINES[square][axis]`: every square of the line through `square` along `AXES[axis]`.
const LINES: [[u64; 4]; 64] = line_masks();

const fn line_masks() -> [[u64; 4]; 64] {
    let mut out = [[0u64; 4]; 64];
    let mut square = 0;
    while square < 64 {
        let (x, y) = ((square % 8) as i32, (square / 8) as i32);
        let mut axis = 0;
        while axis < 4 {
            let (dx, dy) = AXES[axis];
            let mut k = -7;
            while k <= 7 {
                let (nx, ny) = (x + k * dx, y + k * dy);
                if nx >= 0 && nx < 8 && ny >= 0 && ny < 8 {
                    out[square][axis] |= 1 << (ny * 8 + nx);
                }
                k += 1;
            }
            axis += 1;
        }
        square += 1;
    }
    out
}

/// The discs of each colour (black, white) that no later move can flip: a sound, cheap subset of
/// the truly stable ones, grown from nothing. A disc joins its colour's set when, along each of
/// the four lines through it, the line is full (no move can ever be played on it), or one of its
/// two neighbours on that line is off the board or a disc already in the set. A flip along a line
/// needs the disc's run of its colour to be flanked on both sides, so the edge stops it, and a
/// neighbour in the set would flip with it; the set grows one disc at a time, each leaning on
/// discs that joined before it, so the first flip of any of them would be of one that leans on
/// an earlier one, flipped too: there is none. Corners are always in; the discs corners anchor
/// along the edges and the filled lines follow.
pub fn stable_discs(black: u64, white: u64) -> [u64; 2] {
    let occupied = black | white;
    let mut stable = [0u64; 2];
    loop {
        let mut grew = false;
        for (colour, own) in [black, white].into_iter().enumerate() {
            let mut candidates = own & !stable[colour];
            while candidates != 0 {
                let square = candidates.trailing_zeros() as usize;
                candidates &= candidates - 1;
                if (0..4).all(|axis| anchored(square, axis, occupied, stable[colour])) {
                    stable[colour] |= 1 << square;
                    grew = true;
                }
            }
        }
        if !grew {
            return stable;
        }
    }
}

/// Whether the disc on `square` cannot be flipped along the line `AXES[axis]`, given its colour's
/// stable discs so far (see [`stable_discs`]).
fn anchored(square: usize, axis: usize, occupied: u64, stable: u64) -> bool {
    if LINES[square][axis] & !occupied == 0 {
        return true;
    }
    let (x, y) = ((square % 8) as i32, (square / 8) as i32);
    let (dx, dy) = AXES[axis];
    [1, -1].into_iter().any(|sign| {
        let (nx, ny) = (x + sign * dx, y + sign * dy);
        !(0..8).contains(&nx) || !(0..8).contains(&ny) || stable & (1 << (ny * 8 + nx)) != 0
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::random_positions;
    use crate::games::{PerftMode, perft};
    use expect_test::{Expect, expect};

    /// Replays `moves` (squares, passes unwritten) from the start and describes where the game
    /// stands. Forced passes are taken automatically and listed; an illegal or unreadable move
    /// stops the replay and is reported above the board before it. Every step is checked
    /// against [`Walker`], a square-by-square implementation of the rules.
    fn check(moves: &str, expect: Expect) {
        let mut pos = Reversi::start();
        let mut passes = Vec::new();
        let mut report = String::new();
        let chars: Vec<char> = moves.chars().collect();
        for (i, pair) in chars.chunks(2).enumerate() {
            let text: String = pair.iter().collect();
            let mv = match text.parse::<Square>() {
                Ok(mv) => mv,
                Err(e) => {
                    report = format!("move {}: {e}\n", i + 1);
                    break;
                }
            };
            if pos.must_pass() {
                passes.push(format!(
                    "{} before move {}",
                    Reversi::COLORS[pos.side_to_move().index()],
                    i + 1
                ));
                pos.pass();
            }
            if !pos.is_legal(mv) {
                report = format!("move {} `{mv}`: illegal\n", i + 1);
                break;
            }
            let expected = Walker::of(&pos).play(mv);
            pos.play(mv);
            assert_eq!(Walker::of(&pos), expected, "after move {} `{mv}`", i + 1);
        }
        report.push_str(&describe(&pos));
        if !passes.is_empty() {
            report.push_str(&format!("passes: {}\n", passes.join(", ")));
        }
        expect.assert_eq(&report);
    }

    fn describe(pos: &Reversi) -> String {
        let walker = Walker::of(pos);
        let legal: Vec<Square> = pos.legal_moves().collect();
        assert_eq!(legal, walker.legal_moves(), "{pos:?}");
        assert_eq!(legal.len() as u32, pos.legal_count());
        let legal: Vec<String> = legal.iter().map(Square::to_string).collect();
        let [black, white] = pos.discs();
        let outcome = match pos.outcome() {
            None => "none".to_owned(),
            Some(GameOutcome {
                winner: Some(w),
                reason,
            }) => format!("{} wins, {reason:?}", Reversi::COLORS[w.index()]),
            Some(GameOutcome {
                winner: None,
                reason,
            }) => format!("draw, {reason:?}"),
        };
        let board: Vec<String> = pos
            .rows()
            .iter()
            .zip(1..)
            .map(|(row, n)| format!("{n} {row}"))
            .collect();
        format!(
            "  abcdefgh\n{}\nply {}, {} to move{}, discs B {black} W {white}\nlegal: [{}]\noutcome: {outcome}\n",
            board.join("\n"),
            pos.ply(),
            Reversi::COLORS[pos.side_to_move().index()],
            if pos.must_pass() { " (must pass)" } else { "" },
            legal.join(" "),
        )
    }

    /// The rules walked square by square on a grid of letters, as a person would apply them: an
    /// independent second opinion on the bitboard engine.
    #[derive(Debug, PartialEq, Eq)]
    struct Walker {
        grid: [[char; 8]; 8],
        me: char,
        them: char,
    }

    impl Walker {
        fn of(pos: &Reversi) -> Walker {
            let mut grid = [['.'; 8]; 8];
            for (r, row) in pos.rows().iter().enumerate() {
                for (c, ch) in row.chars().enumerate() {
                    grid[r][c] = ch;
                }
            }
            let me = Reversi::COLORS[pos.side_to_move().index()];
            let them = Reversi::COLORS[pos.side_to_move().other().index()];
            Walker { grid, me, them }
        }

        fn at(&self, r: i32, c: i32) -> char {
            if (0..8).contains(&r) && (0..8).contains(&c) {
                self.grid[r as usize][c as usize]
            } else {
                '#'
            }
        }

        /// The squares `me` would flip by playing at row `r`, column `c`.
        fn flips(&self, r: i32, c: i32) -> Vec<(i32, i32)> {
            let mut all = Vec::new();
            if self.at(r, c) != '.' {
                return all;
            }
            for dr in -1..=1 {
                for dc in -1..=1 {
                    let mut run = Vec::new();
                    let (mut rr, mut cc) = (r + dr, c + dc);
                    while (dr, dc) != (0, 0) && self.at(rr, cc) == self.them {
                        run.push((rr, cc));
                        rr += dr;
                        cc += dc;
                    }
                    if !run.is_empty() && self.at(rr, cc) == self.me {
                        all.extend(run);
                    }
                }
            }
            all
        }

        fn legal_moves(&self) -> Vec<Square> {
            (0..64u8)
                .filter(|i| !self.flips(i32::from(i / 8), i32::from(i % 8)).is_empty())
                .map(|i| Square::new(i).expect("a square"))
                .collect()
        }

        fn play(mut self, mv: Square) -> Walker {
            let (r, c) = (i32::from(mv.row()), i32::from(mv.column()));
            for (fr, fc) in self.flips(r, c) {
                self.grid[fr as usize][fc as usize] = self.me;
            }
            self.grid[r as usize][c as usize] = self.me;
            std::mem::swap(&mut self.me, &mut self.them);
            self
        }
    }

    #[test]
    fn black_opens_with_c4_d3_e6_f5() {
        check(
            "",
            expect![[r#"
              abcdefgh
            1 ........
            2 ........
            3 ........
            4 ...WB...
            5 ...BW...
            6 ........
            7 ........
            8 ........
            ply 0, B to move, discs B 2 W 2
            legal: [d3 c4 f5 e6]
            outcome: none
        "#]],
        );
    }

    #[test]
    fn a_move_flips_in_three_directions_at_once() {
        check(
            "d3c3c4e3d2c5",
            expect![[r#"
              abcdefgh
            1 ........
            2 ...B....
            3 ..WBW...
            4 ..WWW...
            5 ..WWW...
            6 ........
            7 ........
            8 ........
            ply 6, B to move, discs B 2 W 8
            legal: [b3 f3 b4 f4 b5 f5 d6]
            outcome: none
        "#]],
        );
    }

    #[test]
    fn a_flipped_disc_flips_nothing_further() {
        check(
            "f5f6f7f4d3",
            expect![[r#"
              abcdefgh
            1 ........
            2 ........
            3 ...B....
            4 ...BBW..
            5 ...BWB..
            6 .....B..
            7 .....B..
            8 ........
            ply 5, W to move, discs B 7 W 2
            legal: [c3 e3 c4 c5 g5 g7 f8]
            outcome: none
        "#]],
        );
    }

    #[test]
    fn a_player_without_a_move_passes_and_the_other_plays_on() {
        check(
            "f5f6f7g7d3f8h8h6",
            expect![[r#"
              abcdefgh
            1 ........
            2 ........
            3 ...B....
            4 ...BB...
            5 ...BBB..
            6 .....B.W
            7 .....WW.
            8 .....W.B
            ply 8, B to move (must pass), discs B 8 W 4
            legal: []
            outcome: none
        "#]],
        );
    }

    #[test]
    fn after_a_pass_the_other_side_plays_the_next_move() {
        check(
            "f5f6f7g7d3f8h8h6f4",
            expect![[r#"
              abcdefgh
            1 ........
            2 ........
            3 ...B....
            4 ...BBW..
            5 ...BBW..
            6 .....W.W
            7 .....WW.
            8 .....W.B
            ply 9, B to move, discs B 6 W 7
            legal: [g3 g4 g5 g6]
            outcome: none
            passes: B before move 9
        "#]],
        );
    }

    #[test]
    fn a_game_can_end_after_nine_moves_with_empty_squares() {
        check(
            "d3c3b3d2e1d6d7e3f4",
            expect![[r#"
              abcdefgh
            1 ....B...
            2 ...B....
            3 .BBBB...
            4 ...BBB..
            5 ...BB...
            6 ...B....
            7 ...B....
            8 ........
            ply 9, W to move, discs B 13 W 0
            legal: []
            outcome: B wins, NoMoves
        "#]],
        );
    }

    #[test]
    fn a_full_board_with_equal_counts_is_a_draw() {
        check(
            "e6f6g6e3d3c5c4c2f4g5f5b5d2g7h5d6b1c1a5c6f2f3d7c3h6g1b2b3b6g4h4g3f8c8g2h8d1h2a3a4h3a2a6a7f1b4c7e7h1h7a1b7f7g8e8d8e2e1b8a8",
            expect![[r#"
                  abcdefgh
                1 BBBBWBBB
                2 WBWWWBBB
                3 WBWBWBBB
                4 WBWWWBBB
                5 WBWWBBBB
                6 WBWBWBBB
                7 WWBWWBWW
                8 WWWWWWWW
                ply 60, B to move, discs B 32 W 32
                legal: []
                outcome: draw, BoardFull
            "#]],
        );
    }

    #[test]
    fn a_full_board_goes_to_the_side_with_more_discs() {
        check(
            "e6f4d3d6f6c6c7c4c3d7f5b8c8g5b5b2c2b4g4a6h5g7c5h4g3b6g6e2a5h2h3f7h8e7g2h7a7d8d2g1a2d1f1a1f2b3f3b7a4h1b1c1h6e3g8a3e1f8a8e8",
            expect![[r#"
                  abcdefgh
                1 WWWWBBWW
                2 WWWBBBWW
                3 WWBWWWBB
                4 BBBWWWBB
                5 BWWBBWBB
                6 BWBWBWBB
                7 BBWBBBBB
                8 BBBBBBBB
                ply 60, W to move, discs B 38 W 26
                legal: []
                outcome: B wins, BoardFull
                passes: W before move 60
            "#]],
        );
    }

    #[test]
    fn a_move_that_flanks_nothing_is_illegal() {
        check(
            "f5a1",
            expect![[r#"
            move 2 `a1`: illegal
              abcdefgh
            1 ........
            2 ........
            3 ........
            4 ...WB...
            5 ...BBB..
            6 ........
            7 ........
            8 ........
            ply 1, W to move, discs B 4 W 1
            legal: [f4 d6 f6]
            outcome: none
        "#]],
        );
    }

    #[test]
    fn an_unknown_square_stops_the_replay() {
        check(
            "F5i9",
            expect![[r#"
            move 2: `i9` is not a move of this game
              abcdefgh
            1 ........
            2 ........
            3 ........
            4 ...WB...
            5 ...BBB..
            6 ........
            7 ........
            8 ........
            ply 1, W to move, discs B 4 W 1
            legal: [f4 d6 f6]
            outcome: none
        "#]],
        );
    }

    #[test]
    fn squares_parse_from_a1_to_h8_in_either_case() {
        for index in 0..64u8 {
            let sq = Square::new(index).expect("a square");
            let text = sq.to_string();
            assert_eq!(text.parse(), Ok(sq));
            assert_eq!(text.to_uppercase().parse(), Ok(sq));
            assert_eq!(sq.index(), index);
            assert_eq!(sq.row() * 8 + sq.column(), index);
        }
        let h1: Square = "H1".parse().expect("a square");
        assert_eq!((h1.index(), h1.column(), h1.row()), (7, 7, 0));
        let a8: Square = "a8".parse().expect("a square");
        assert_eq!((a8.index(), a8.column(), a8.row()), (56, 0, 7));
        for bad in [
            "i1", "a9", "a0", "", "44", "a", "a10", " a1", "1a", "é1", "`1",
        ] {
            assert_eq!(
                bad.parse::<Square>(),
                Err(ParseError::BadMove(bad.to_owned())),
                "{bad:?}"
            );
        }
        assert_eq!(Square::new(64), None);
    }

    #[test]
    fn a_board_read_back_from_its_rows_is_the_same_position() {
        random_positions::<Reversi>(200, 0x5245, |pos| {
            let rows = pos.rows();
            let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
            assert_eq!(
                Reversi::from_rows(&rows, pos.side_to_move()),
                Ok(*pos),
                "{rows:?}"
            );
        });
    }

    #[test]
    fn the_bitboards_agree_with_a_square_by_square_walk() {
        random_positions::<Reversi>(200, 0x5245, |pos| {
            let walker = Walker::of(pos);
            assert_eq!(pos.legal_moves().collect::<Vec<_>>(), walker.legal_moves());
            for mv in pos.legal_moves() {
                let mut next = *pos;
                next.play(mv);
                assert_eq!(Walker::of(&next), Walker::of(pos).play(mv), "{pos:?} {mv}");
            }
            let [black, white] = pos.discs();
            assert_eq!(black + white, pos.ply() + 4);
            let stuck = pos.legal_count() == 0;
            assert_eq!(stuck, pos.must_pass() || pos.outcome().is_some());
            assert!(!(pos.must_pass() && pos.outcome().is_some()));
        });
    }

    #[test]
    fn impossible_boards_are_rejected() {
        let start = Reversi::start().rows();
        let start: Vec<&str> = start.iter().map(String::as_str).collect();
        let mut short_row = start.clone();
        short_row[7] = ".......";
        let mut bad_letter = start.clone();
        bad_letter[0] = "b.......";
        let mut empty_centre = start.clone();
        empty_centre[3] = "...W....";
        let cases: [(&[&str], &str); 4] = [
            (&start[..7], "expected 8 rows, got 7"),
            (&short_row, "row 8 has 7 cells, expected 8"),
            (&bad_letter, "`b` is not one of `.`, `B`, `W`"),
            (
                &empty_centre,
                "the four centre squares d4, e4, d5, e5 are never empty",
            ),
        ];
        for (rows, message) in cases {
            assert_eq!(
                Reversi::from_rows(rows, Side::First).map_err(|e| e.to_string()),
                Err(format!("bad board: {message}")),
                "{rows:?}"
            );
        }
    }

    #[test]
    fn a_board_from_rows_puts_row_1_first() {
        let mut played = Reversi::start();
        played.play("f5".parse().expect("a square"));
        let board = [
            "........", "........", "........", "...WB...", "...BBB..", "........", "........",
            "........",
        ];
        assert_eq!(Reversi::from_rows(&board, Side::Second), Ok(played));
        assert_eq!(played.rows(), board);
        assert_ne!(Reversi::from_rows(&board, Side::First), Ok(played));
    }

    const DROPPED: [u64; 10] = [
        4, 12, 56, 244, 1_396, 8_200, 55_092, 390_216, 3_005_320, 24_571_192,
    ];

    #[test]
    fn perft_matches_the_published_counts_to_depth_10() {
        let start = Reversi::start();
        for (depth, count) in (1..).zip(DROPPED) {
            assert_eq!(
                perft(&start, depth, PerftMode::EndedGameDropped),
                count,
                "depth {depth}"
            );
        }
    }

    #[test]
    fn perft_counting_ended_games_as_leaves_matches_egaroucid() {
        let start = Reversi::start();
        assert_eq!(perft(&start, 9, PerftMode::EndedGameIsLeaf), 3_005_320);
        assert_eq!(perft(&start, 10, PerftMode::EndedGameIsLeaf), 24_571_420);
    }

    /// Games (move sequences) that end exactly when their `depth`th disc goes down.
    fn games_ending_at(pos: &Reversi, depth: u32) -> u64 {
        if pos.outcome().is_some() {
            return u64::from(depth == 0);
        }
        if depth == 0 {
            return 0;
        }
        let mut pos = *pos;
        if pos.must_pass() {
            pos.pass();
        }
        pos.legal_moves()
            .map(|mv| {
                let mut next = pos;
                next.play(mv);
                games_ending_at(&next, depth - 1)
            })
            .sum()
    }

    #[test]
    fn games_end_no_sooner_than_the_ninth_disc() {
        let start = Reversi::start();
        assert_eq!((1..=8).map(|d| games_ending_at(&start, d)).sum::<u64>(), 0);
        assert_eq!(games_ending_at(&start, 9), 228);
        // The two perft columns differ exactly by the games that ended before depth 10.
        assert_eq!(24_571_420 - DROPPED[9], 228);
    }

    #[test]
    fn three_hundred_fifty_six_games_end_on_the_tenth_disc() {
        assert_eq!(games_ending_at(&Reversi::start(), 10), 356);
    }

    /// Every position of the FFO endgame test sets lists all its legal moves, with scores.
    #[test]
    fn legal_moves_match_the_ffo_test_positions() {
        let mut positions = 0;
        for set in [
            "fforum-1-19.obf",
            "fforum-20-39.obf",
            "fforum-40-59.obf",
            "fforum-60-79.obf",
        ] {
            let path = format!("{}/../oracles/reversi/{set}", env!("CARGO_MANIFEST_DIR"));
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("cannot read the oracle {path}: {e}"));
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let (pos, listed) = parse_obf(line);
                let mut legal: Vec<Square> = pos.legal_moves().collect();
                legal.sort();
                assert_eq!(legal, listed, "{set}: {line}");
                assert!(!pos.must_pass() && pos.outcome().is_none());
                positions += 1;
            }
        }
        assert_eq!(positions, 79);
    }

    /// Reads an `.obf` line into the position and its sorted legal moves.
    fn parse_obf(line: &str) -> (Reversi, Vec<Square>) {
        let line = crate::oracles::ffo_line(line).expect("an FFO line");
        let mut moves: Vec<Square> = line.scored.iter().map(|s| s.0).collect();
        moves.sort();
        (line.position().expect("a valid FFO board"), moves)
    }
}
