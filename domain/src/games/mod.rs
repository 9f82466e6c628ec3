//! The `Game` trait every rules engine implements, the game catalogue (`GameId`) and perft.
//!
//! A game is one module implementing [`Game`]; the rest of the system sees it through the trait
//! (engines, perft, solvers) or through [`AnyPosition`] (the match aggregate, which picks the game
//! at run time from the `match_created` event).

use std::fmt;
use std::hash::Hash;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub mod any;
pub mod four_in_a_row;
pub mod reversi;

pub use any::{AnyPosition, MoveError, split_moves};
pub use four_in_a_row::{Column, FourInARow};
pub use reversi::{Reversi, Square};

/// Every game discs serves, in one list: its variant (of [`GameId`] and [`AnyPosition`]), its
/// wire id and its rules type. A new game is its own modules (the rules under `games/`, the
/// searches under `search/`, implementing [`Game`] and [`crate::search::Engine`]) and one line
/// here; everything that depends on the game follows this list.
///
/// Calls `$callback!` with the arguments given in parentheses (if any), a `;`, then
/// `Variant, "wire_id", RulesType;` for each game.
macro_rules! for_each_game {
    ($callback:ident $( ( $($args:tt)* ) )?) => {
        $callback! { $( ( $($args)* ) )? ;
            FourInARow, "four_in_a_row", $crate::games::four_in_a_row::FourInARow;
            Reversi, "reversi", $crate::games::reversi::Reversi;
        }
    };
}
pub(crate) use for_each_game;

macro_rules! define_game_id {
    (; $($variant:ident, $wire:literal, $rules:path;)*) => {
        /// The games discs serves, by their wire id.
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum GameId {
            $(
                #[serde(rename = $wire)]
                $variant,
            )*
        }

        impl GameId {
            /// Every game, in the order of the list.
            pub const ALL: [GameId; [$(GameId::$variant),*].len()] = [$(GameId::$variant),*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(GameId::$variant => $wire,)*
                }
            }

            /// The board the game is played on.
            pub fn board(self) -> Board {
                match self {
                    $(GameId::$variant => <$rules as Game>::BOARD,)*
                }
            }

            /// How the game writes its moves (and so names its cells).
            pub fn notation(self) -> Notation {
                match self {
                    $(GameId::$variant => <$rules as Game>::NOTATION,)*
                }
            }

            /// Characters per move in the game's notation (a game record is its moves run
            /// together).
            pub fn move_chars(self) -> usize {
                match self {
                    $(GameId::$variant => <$rules as Game>::MOVE_CHARS,)*
                }
            }

            /// The plies of its opening that are public knowledge by default
            /// ([`Game::PUBLIC_PLIES`]).
            pub fn public_plies(self) -> u32 {
                match self {
                    $(GameId::$variant => <$rules as Game>::PUBLIC_PLIES,)*
                }
            }

            /// Whether the game has the setting `show_legal_moves` (its players may hide the
            /// legal moves).
            pub fn can_hide_legal_moves(self) -> bool {
                match self {
                    $(GameId::$variant => <$rules as Game>::CAN_HIDE_LEGAL_MOVES,)*
                }
            }
        }

        impl FromStr for GameId {
            type Err = ParseError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($wire => Ok(GameId::$variant),)*
                    _ => Err(ParseError::UnknownGame(s.to_owned())),
                }
            }
        }
    };
}
for_each_game!(define_game_id);

/// The size of a game's board, as `match_created` records it (schema version 2 on) and the
/// catalogue tells clients.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Board {
    pub columns: u8,
    pub rows: u8,
}

/// How a game writes its moves, by what a move names. Columns and rows are those of
/// the board notation: columns from the left, rows as the board's rows are listed.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Notation {
    /// A move names a column, `1` the leftmost (`4`, [`Column`]); the disc drops into the
    /// lowest empty cell of that column.
    Column,
    /// A move names a square: a file letter, `a` the leftmost column, then a rank number, `1`
    /// the first row listed (`f5`, [`Square`]); the disc goes on that square.
    Square,
}

impl fmt::Display for GameId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which of the two players: the one who moved first (red / black) or second (yellow / white).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    First,
    Second,
}

impl Side {
    pub fn other(self) -> Side {
        match self {
            Side::First => Side::Second,
            Side::Second => Side::First,
        }
    }

    /// 0 for the first player, 1 for the second: an index into per-side arrays.
    pub fn index(self) -> usize {
        match self {
            Side::First => 0,
            Side::Second => 1,
        }
    }
}

/// Why a game ended by the rules (resignations and other match-level endings live in `matches`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// Four in a Row: a line of four or more discs.
    FourInARow,
    /// Every cell is taken.
    BoardFull,
    /// Reversi: neither player has a legal move, with empty squares left.
    NoMoves,
}

/// The end of a game by its rules: who won (none for a draw) and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GameOutcome {
    pub winner: Option<Side>,
    pub reason: EndReason,
}

/// Errors of parsing the games' notations at the edge.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("unknown game `{0}`")]
    UnknownGame(String),
    #[error("`{0}` is not a move of this game")]
    BadMove(String),
    #[error("bad board: {0}")]
    BadBoard(BoardError),
}

/// Why a board (the board notation) cannot be a position of its game.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BoardError {
    #[error("expected {expected} rows, got {got}")]
    Rows { expected: usize, got: usize },
    /// `row` counts from 1, the top row first.
    #[error("row {row} has {got} cells, expected {expected}")]
    RowLength {
        row: usize,
        got: usize,
        expected: usize,
    },
    #[error("`{found}` is not one of `{}`, `{}`, `{}`", .allowed[0], .allowed[1], .allowed[2])]
    Cell { found: char, allowed: [char; 3] },
    /// Four in a Row: a disc above an empty cell.
    #[error("a disc floats above an empty cell")]
    Floating,
    /// Four in a Row: red starts, so the counts fix the side to move.
    #[error("{red} red and {yellow} yellow discs cannot have {to_move} to move")]
    DiscCounts {
        red: u32,
        yellow: u32,
        to_move: char,
    },
    /// Four in a Row: the game would have ended before the opponent's last disc.
    #[error("the side to move already has four in a row")]
    AlreadyFour,
    /// Reversi: the four start discs are never removed.
    #[error("the four centre squares d4, e4, d5, e5 are never empty")]
    EmptyCentre,
}

/// A rules engine. Implementations are small `Copy` bitboard positions, so search and perft can
/// copy them freely.
///
/// `play` places a disc and hands the turn over; it never passes by itself. When the side to move
/// has no legal move but the game is not over, [`Game::must_pass`] is true and the caller passes
/// (in a match, that is a `passed` event).
pub trait Game: Copy + Eq + Hash + fmt::Debug + Send + Sync + 'static {
    /// A move in this game's notation; parsed at the edge, displayed in canonical lower case.
    type Move: Copy + Eq + Hash + fmt::Debug + fmt::Display + FromStr<Err = ParseError>;

    const ID: GameId;
    /// The colour letters of the first and second player in board strings (`R`/`Y`, `B`/`W`).
    const COLORS: [char; 2];
    /// The board the game is played on.
    const BOARD: Board;
    /// How [`Game::Move`] is written: what a move names.
    const NOTATION: Notation;
    /// Characters per move in the game's notation (`4`: one; `d3`: two).
    const MOVE_CHARS: usize;
    /// Whether the players may hide the legal moves (the setting `show_legal_moves`).
    const CAN_HIDE_LEGAL_MOVES: bool;
    /// The symmetries of the board under which the rules are the same (the identity first):
    /// a position and its image have the same value, their moves corresponding.
    const SYMMETRIES: &'static [Symmetry];
    /// The plies of the opening that are public knowledge (every player may study them while
    /// thousands of games pass through them): the fair-play guard keeps no position this deep
    /// or shallower from analysis, live ranked match or not (the default of `DISCS_PUBLIC_PLIES`).
    const PUBLIC_PLIES: u32;

    /// Whether the board with its colours exchanged and the other side to move asks the same
    /// question (Reversi: the rules never ask who moved first). Four in a Row has no such image:
    /// red always holds as many discs as yellow or one more, so the exchanged board is no position.
    const COLOURS_EXCHANGE: bool;

    /// `mv` as seen through `s` (one of [`Game::SYMMETRIES`]): the move of the image that
    /// corresponds to it.
    fn transform_move(mv: Self::Move, s: Symmetry) -> Self::Move;

    fn start() -> Self;
    /// Reads a board in the board notation (rows as strings) with the given side to move.
    fn from_rows(rows: &[&str], to_move: Side) -> Result<Self, ParseError>;
    /// The board in the board notation.
    fn rows(&self) -> Vec<String>;

    fn side_to_move(&self) -> Side;
    /// Discs placed so far (the ply count of the game).
    fn ply(&self) -> u32;
    /// The legal moves of the side to move, in a fixed order (left to right, a1..h8).
    fn legal_moves(&self) -> impl Iterator<Item = Self::Move>;
    fn is_legal(&self, mv: Self::Move) -> bool;
    /// How many legal moves the side to move has (perft's bulk count at the last ply).
    fn legal_count(&self) -> u32 {
        self.legal_moves().count() as u32
    }
    /// Plays a legal move (checked only in debug builds) and gives the turn to the other side.
    fn play(&mut self, mv: Self::Move);
    /// The side to move has no legal move, but the game goes on (Reversi).
    fn must_pass(&self) -> bool;
    /// Gives the turn to the other side without a move; only valid when `must_pass`.
    fn pass(&mut self);
    /// `Some` once the game is over by its rules.
    fn outcome(&self) -> Option<GameOutcome>;
    /// Discs on the board of the first and of the second player.
    fn discs(&self) -> [u32; 2];

    /// What every position that can follow this one holds, as cell masks (bit `row * columns +
    /// column`, rows from the top as in the board notation): `[occupied, first, second]`, the
    /// cells that stay occupied whoever holds them, and the discs of the first and of the second
    /// player that keep their colour. By default, every disc keeps its colour (discs that never
    /// move nor flip, as in Four in a Row). The fair-play boundary's rule ([`crate::boundary`]).
    fn permanent(&self) -> [u64; 3] {
        let [first, second] = disc_masks(&self.rows(), Self::COLORS);
        [first | second, first, second]
    }
}

/// The discs of the first and of the second player of a board in the board notation, as
/// cell masks (bit `row * columns + column`, rows from the top). Boards have at most 64 cells.
pub fn disc_masks(rows: &[String], colors: [char; 2]) -> [u64; 2] {
    let mut masks = [0u64; 2];
    let columns = rows.first().map_or(0, |r| r.chars().count());
    for (y, row) in rows.iter().enumerate() {
        for (x, c) in row.chars().enumerate() {
            let bit = 1u64 << (y * columns + x);
            if c == colors[0] {
                masks[0] |= bit;
            } else if c == colors[1] {
                masks[1] |= bit;
            }
        }
    }
    masks
}

/// A symmetry of the board (of the square's eight, the dihedral group D4), acting on cells
/// `(column, row)`, rows counted from the top as in the board notation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Symmetry {
    Identity,
    /// Left and right exchanged.
    MirrorColumns,
    /// Top and bottom exchanged.
    MirrorRows,
    Rotate180,
    /// About the top-left to bottom-right diagonal.
    Transpose,
    /// About the other diagonal.
    AntiTranspose,
    /// A quarter turn clockwise.
    Rotate90,
    /// A quarter turn anticlockwise.
    Rotate270,
}

impl Symmetry {
    /// All eight (a square board's).
    pub const ALL: [Symmetry; 8] = [
        Symmetry::Identity,
        Symmetry::MirrorColumns,
        Symmetry::MirrorRows,
        Symmetry::Rotate180,
        Symmetry::Transpose,
        Symmetry::AntiTranspose,
        Symmetry::Rotate90,
        Symmetry::Rotate270,
    ];

    /// The symmetry that undoes this one.
    pub fn inverse(self) -> Symmetry {
        match self {
            Symmetry::Rotate90 => Symmetry::Rotate270,
            Symmetry::Rotate270 => Symmetry::Rotate90,
            s => s,
        }
    }

    /// Where the cell `(column, row)` of a `columns` × `rows` board goes. The diagonal ones
    /// and the quarter turns are for square boards only (`columns == rows`).
    pub fn cell(self, column: u8, row: u8, columns: u8, rows: u8) -> (u8, u8) {
        let (x, y) = (column, row);
        let (last_x, last_y) = (columns - 1, rows - 1);
        match self {
            Symmetry::Identity => (x, y),
            Symmetry::MirrorColumns => (last_x - x, y),
            Symmetry::MirrorRows => (x, last_y - y),
            Symmetry::Rotate180 => (last_x - x, last_y - y),
            Symmetry::Transpose => (y, x),
            Symmetry::AntiTranspose => (last_y - y, last_x - x),
            Symmetry::Rotate90 => (last_y - y, x),
            Symmetry::Rotate270 => (y, last_x - x),
        }
    }

    /// A board in the board notation (rows as strings, the top row first) seen through
    /// this symmetry.
    pub fn rows(self, rows: &[String]) -> Vec<String> {
        let grid: Vec<Vec<char>> = rows.iter().map(|r| r.chars().collect()).collect();
        let (height, width) = (grid.len() as u8, grid.first().map_or(0, Vec::len) as u8);
        let (out_width, out_height) = match self {
            Symmetry::Transpose
            | Symmetry::AntiTranspose
            | Symmetry::Rotate90
            | Symmetry::Rotate270 => (height, width),
            _ => (width, height),
        };
        let mut out = vec![vec!['.'; usize::from(out_width)]; usize::from(out_height)];
        for (y, line) in grid.iter().enumerate() {
            for (x, &c) in line.iter().enumerate() {
                let (nx, ny) = self.cell(x as u8, y as u8, width, height);
                out[usize::from(ny)][usize::from(nx)] = c;
            }
        }
        out.into_iter().map(|r| r.into_iter().collect()).collect()
    }
}

/// How perft treats a game that ends before the requested depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PerftMode {
    /// A finished game contributes nothing deeper (the first column of the oracle tables).
    EndedGameDropped,
    /// A finished game counts as one leaf at whatever depth it ended (Egaroucid's column).
    EndedGameIsLeaf,
}

/// Counts move sequences of exactly `depth` placed discs; forced passes are automatic and are not
/// plies.
pub fn perft<G: Game>(pos: &G, depth: u32, mode: PerftMode) -> u64 {
    if depth == 0 {
        return 1;
    }
    if pos.outcome().is_some() {
        return match mode {
            PerftMode::EndedGameDropped => 0,
            PerftMode::EndedGameIsLeaf => 1,
        };
    }
    let mut pos = *pos;
    if pos.must_pass() {
        pos.pass();
    }
    if depth == 1 {
        return u64::from(pos.legal_count());
    }
    let mut nodes = 0;
    for mv in pos.legal_moves() {
        let mut next = pos;
        next.play(mv);
        nodes += perft(&next, depth - 1, mode);
    }
    nodes
}

/// Plays `games` random games of `G` from `seed` (a move drawn by [`crate::rng::SplitMix64::index`]
/// among the legal ones, passes taken when forced) and hands every position to `visit`: the
/// tests' one source of random positions.
#[cfg(test)]
pub(crate) fn random_positions<G: Game>(games: usize, seed: u64, mut visit: impl FnMut(&G)) {
    let mut rng = crate::rng::SplitMix64(seed);
    for _ in 0..games {
        let mut pos = G::start();
        visit(&pos);
        while pos.outcome().is_none() {
            if pos.must_pass() {
                pos.pass();
                visit(&pos);
            }
            let legal: Vec<G::Move> = pos.legal_moves().collect();
            pos.play(legal[rng.index(legal.len())]);
            visit(&pos);
        }
    }
}
