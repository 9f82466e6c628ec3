//! `AnyPosition`: a position of whichever game a match plays, chosen at run time.
//!
//! The match aggregate and the API work in notation strings; this enum parses them with the right
//! engine. Its variants, and every `match` on them ([`dispatch!`]), follow the list of games
//! ([`super::for_each_game`]).

use super::{Game, GameId, GameOutcome, ParseError, Side, Symmetry, for_each_game};

macro_rules! define_any_position {
    (; $($variant:ident, $wire:literal, $rules:path;)*) => {
        /// A position of one of the games, for code that learns the game at run time.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum AnyPosition {
            $($variant($rules),)*
        }

        impl AnyPosition {
            pub fn start(game: GameId) -> AnyPosition {
                match game {
                    $(GameId::$variant => AnyPosition::$variant(<$rules as Game>::start()),)*
                }
            }

            pub fn from_rows(
                game: GameId,
                rows: &[&str],
                to_move: Side,
            ) -> Result<Self, ParseError> {
                Ok(match game {
                    $(GameId::$variant => {
                        AnyPosition::$variant(<$rules as Game>::from_rows(rows, to_move)?)
                    })*
                })
            }
        }

        $(impl From<$rules> for AnyPosition {
            fn from(p: $rules) -> AnyPosition {
                AnyPosition::$variant(p)
            }
        })*
    };
}
for_each_game!(define_any_position);

/// `$body` with `$pos` bound to the position inside an [`AnyPosition`], whatever its game: the
/// one `match` on the games that generic code needs.
macro_rules! dispatch {
    ($self:expr, $pos:ident => $body:expr) => {{
        #[allow(unused_imports)] // In scope already where the macro is defined.
        use $crate::games::any::dispatch_arms;
        $crate::games::for_each_game!(dispatch_arms($self, $pos, $body))
    }};
}
pub(crate) use dispatch;

macro_rules! dispatch_arms {
    (($self:expr, $pos:ident, $body:expr); $($variant:ident, $wire:literal, $rules:path;)*) => {
        match $self {
            $($crate::games::AnyPosition::$variant($pos) => $body,)*
        }
    };
}
pub(crate) use dispatch_arms;

impl AnyPosition {
    /// The leaves of the game tree `depth` plies below this position (see [`super::perft`]).
    pub fn perft(&self, depth: u32, mode: super::PerftMode) -> u64 {
        dispatch!(self, p => super::perft(p, depth, mode))
    }

    /// The canonical form of this position under its game's symmetries
    /// ([`Game::SYMMETRIES`]): a key naming the game, the board and the side to move of the
    /// image with the smallest key, and the symmetry that takes this position to that image.
    /// A position and each of its images have the same key: what a cache of solved positions
    /// is keyed by.
    pub fn canonical(&self) -> (String, Symmetry) {
        dispatch!(self, p => canonical_of(p))
    }

    /// A move of the canonical image (`s` from [`AnyPosition::canonical`]), in this position's
    /// orientation.
    pub fn move_from_canonical(&self, mv: &str, s: Symmetry) -> Result<String, ParseError> {
        dispatch!(self, p => move_through(p, mv, s.inverse()))
    }

    /// The canonical key of this position ([`AnyPosition::canonical`]) and `mv` in the
    /// orientation of its canonical image. Where several symmetries take the position to that
    /// image (a symmetric position, such as either game's start), the smallest of the move's
    /// images under them: moves that are one another's images are one move.
    pub fn canonical_move(&self, mv: &str) -> Result<(String, String), ParseError> {
        dispatch!(self, p => canonical_move_of(p, mv))
    }

    /// A move of this position, in the orientation of its canonical image.
    pub fn move_to_canonical(&self, mv: &str, s: Symmetry) -> Result<String, ParseError> {
        dispatch!(self, p => move_through(p, mv, s))
    }

    pub fn game(&self) -> GameId {
        dispatch!(self, p => game_of(p))
    }

    /// The colour letter of a side in this game (`R`/`Y`, `B`/`W`).
    pub fn color(&self, side: Side) -> char {
        dispatch!(self, p => color_of(p, side))
    }

    pub fn rows(&self) -> Vec<String> {
        dispatch!(self, p => p.rows())
    }

    pub fn side_to_move(&self) -> Side {
        dispatch!(self, p => p.side_to_move())
    }

    pub fn ply(&self) -> u32 {
        dispatch!(self, p => p.ply())
    }

    /// The legal moves in canonical notation; empty once the game is over.
    pub fn legal_moves(&self) -> Vec<String> {
        if self.outcome().is_some() {
            return Vec::new();
        }
        dispatch!(self, p => p.legal_moves().map(|m| m.to_string()).collect())
    }

    /// Parses a move (any case) and returns it in canonical notation if it is legal here.
    pub fn check_move(&self, mv: &str) -> Result<String, MoveError> {
        dispatch!(self, p => check(p, mv).map(|m| m.to_string()))
    }

    /// Plays a move given in notation; on error the position is unchanged.
    pub fn play(&mut self, mv: &str) -> Result<(), MoveError> {
        dispatch!(self, p => {
            let m = check(p, mv)?;
            p.play(m);
            Ok(())
        })
    }

    pub fn must_pass(&self) -> bool {
        dispatch!(self, p => p.must_pass())
    }

    pub fn pass(&mut self) {
        dispatch!(self, p => p.pass())
    }

    pub fn outcome(&self) -> Option<GameOutcome> {
        dispatch!(self, p => p.outcome())
    }

    pub fn discs(&self) -> [u32; 2] {
        dispatch!(self, p => p.discs())
    }

    /// What every position that can follow this one holds ([`Game::permanent`]).
    pub fn permanent(&self) -> [u64; 3] {
        dispatch!(self, p => p.permanent())
    }

    /// The discs of the first and of the second player as cell masks ([`super::disc_masks`]).
    pub fn disc_masks(&self) -> [u64; 2] {
        dispatch!(self, p => super::disc_masks(&p.rows(), colors_of(p)))
    }

    /// The symmetries of the game's board ([`Game::SYMMETRIES`]).
    pub fn symmetries(&self) -> &'static [Symmetry] {
        dispatch!(self, p => symmetries_of(p))
    }

    /// Whether the board with its colours exchanged asks the same question
    /// ([`Game::COLOURS_EXCHANGE`]).
    pub fn colours_exchange(&self) -> bool {
        dispatch!(self, p => colours_exchange_of(p))
    }
}

fn colors_of<G: Game>(_: &G) -> [char; 2] {
    G::COLORS
}

fn symmetries_of<G: Game>(_: &G) -> &'static [Symmetry] {
    G::SYMMETRIES
}

fn colours_exchange_of<G: Game>(_: &G) -> bool {
    G::COLOURS_EXCHANGE
}

/// Why a move string cannot be played in a position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    #[error(transparent)]
    Parse(#[from] ParseError),
    #[error("`{0}` is not a legal move here")]
    Illegal(String),
    #[error("the game is over")]
    GameOver,
}

/// The smallest image of `pos` under its game's symmetries, as the canonical key orders them,
/// with every symmetry that gives it (smallest first): the key, and the symmetries.
///
/// Every symmetry a game lists keeps the board's shape, so the keys of its images differ only in
/// their cells, row by row from the top: the smallest key is the image whose cells, read in that
/// order, are smallest. Images are compared as bytes and only the smallest is written out.
fn smallest_image<G: Game>(pos: &G) -> (String, Vec<Symmetry>) {
    let rows = pos.rows();
    let side = G::COLORS[pos.side_to_move().index()];
    let (height, width) = (rows.len(), rows.first().map_or(0, String::len));
    let cells: Vec<u8> = rows.iter().flat_map(|r| r.bytes()).collect();
    let image = |s: Symmetry| {
        let mut out = vec![b'.'; cells.len()];
        for y in 0..height {
            for x in 0..width {
                let (nx, ny) = s.cell(x as u8, y as u8, width as u8, height as u8);
                out[usize::from(ny) * width + usize::from(nx)] = cells[y * width + x];
            }
        }
        out
    };
    let mut listed: Vec<Symmetry> = G::SYMMETRIES.to_vec();
    listed.sort_unstable();
    let images: Vec<(Symmetry, Vec<u8>)> = listed.into_iter().map(|s| (s, image(s))).collect();
    let best = images
        .iter()
        .map(|(_, cells)| cells)
        .min()
        .cloned()
        .unwrap_or_else(|| cells.clone());
    let mut symmetries: Vec<Symmetry> = images
        .iter()
        .filter(|(_, cells)| *cells == best)
        .map(|(s, _)| *s)
        .collect();
    if symmetries.is_empty() {
        symmetries.push(Symmetry::Identity);
    }
    let board: Vec<&str> = best
        .chunks(width.max(1))
        .map(|row| std::str::from_utf8(row).unwrap_or(""))
        .collect();
    (format!("{}:{}:{side}", G::ID, board.join("/")), symmetries)
}

fn canonical_of<G: Game>(pos: &G) -> (String, Symmetry) {
    let (key, symmetries) = smallest_image(pos);
    (key, symmetries[0])
}

fn canonical_move_of<G: Game>(pos: &G, mv: &str) -> Result<(String, String), ParseError> {
    let m: G::Move = mv.parse()?;
    let (key, symmetries) = smallest_image(pos);
    let mv = symmetries
        .iter()
        .map(|&s| G::transform_move(m, s).to_string())
        .min()
        .unwrap_or_else(|| m.to_string());
    Ok((key, mv))
}

fn move_through<G: Game>(_: &G, mv: &str, s: Symmetry) -> Result<String, ParseError> {
    let m: G::Move = mv.parse()?;
    Ok(G::transform_move(m, s).to_string())
}

fn game_of<G: Game>(_: &G) -> GameId {
    G::ID
}

fn color_of<G: Game>(_: &G, side: Side) -> char {
    G::COLORS[side.index()]
}

fn check<G: Game>(pos: &G, mv: &str) -> Result<G::Move, MoveError> {
    let m: G::Move = mv.parse()?;
    if pos.outcome().is_some() {
        return Err(MoveError::GameOver);
    }
    if !pos.is_legal(m) {
        return Err(MoveError::Illegal(m.to_string()));
    }
    Ok(m)
}

/// Splits a game record (the concatenation of its moves) into single moves: one digit
/// per move in Four in a Row, a letter and a digit in Reversi. Legality is not checked here.
pub fn split_moves(game: GameId, moves: &str) -> Result<Vec<String>, ParseError> {
    let chars: Vec<char> = moves.trim().chars().collect();
    let width = game.move_chars();
    if !chars.len().is_multiple_of(width) {
        return Err(ParseError::BadMove(moves.to_owned()));
    }
    Ok(chars.chunks(width).map(|c| c.iter().collect()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The image of `pos` through `s`, as a position of its game.
    fn image<G: Game>(pos: &G, s: Symmetry) -> G {
        let rows = s.rows(&pos.rows());
        let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
        G::from_rows(&rows, pos.side_to_move()).expect("an image of a position is a position")
    }

    /// Through each symmetry of its game, a position maps to a position with the same key, the
    /// same outcome, and the images of its legal moves as legal moves; and every symmetry is
    /// undone by its inverse.
    fn symmetries_hold<G: Game>(seed: u64) {
        let mut seen = 0;
        super::super::random_positions::<G>(20, seed, |pos| {
            let key = canonical_of(pos).0;
            for &s in G::SYMMETRIES {
                let img = image(pos, s);
                assert_eq!(canonical_of(&img).0, key, "{pos:?} through {s:?}");
                assert_eq!(img.outcome(), pos.outcome(), "{pos:?} through {s:?}");
                assert_eq!(img.must_pass(), pos.must_pass(), "{pos:?} through {s:?}");
                let mut mapped: Vec<String> = pos
                    .legal_moves()
                    .map(|m| G::transform_move(m, s).to_string())
                    .collect();
                let mut legal: Vec<String> = img.legal_moves().map(|m| m.to_string()).collect();
                mapped.sort();
                legal.sort();
                assert_eq!(mapped, legal, "{pos:?} through {s:?}");
                for m in pos.legal_moves() {
                    assert_eq!(G::transform_move(G::transform_move(m, s), s.inverse()), m);
                }
                assert_eq!(image(&img, s.inverse()), *pos, "{s:?} then its inverse");
            }
            seen += 1;
        });
        assert!(seen > 20 * 7, "{seen} positions");
    }

    /// The canonical key and move as defined: the smallest `(key, symmetry)` and `(key, move)`
    /// over every image written out as text; the fast path compares cells and writes one.
    fn keys_are_the_smallest_written_images<G: Game>(seed: u64) {
        super::super::random_positions::<G>(20, seed, |pos| {
            let rows = pos.rows();
            let side = G::COLORS[pos.side_to_move().index()];
            let written = |s: Symmetry| format!("{}:{}:{side}", G::ID, s.rows(&rows).join("/"));
            let want = G::SYMMETRIES
                .iter()
                .map(|&s| (written(s), s))
                .min()
                .expect("a symmetry");
            assert_eq!(canonical_of(pos), want, "{pos:?}");
            for m in pos.legal_moves() {
                let want = G::SYMMETRIES
                    .iter()
                    .map(|&s| (written(s), G::transform_move(m, s).to_string()))
                    .min()
                    .expect("a symmetry");
                let got = canonical_move_of(pos, &m.to_string()).expect("a move");
                assert_eq!(got, want, "{pos:?} {m}");
            }
        });
    }

    #[test]
    fn canonical_keys_and_moves_are_the_smallest_written_images() {
        keys_are_the_smallest_written_images::<super::super::FourInARow>(21);
        keys_are_the_smallest_written_images::<super::super::Reversi>(22);
    }

    #[test]
    fn four_in_a_row_positions_and_their_mirror_images_correspond() {
        symmetries_hold::<super::super::FourInARow>(11);
    }

    #[test]
    fn reversi_positions_and_their_eight_images_correspond() {
        symmetries_hold::<super::super::Reversi>(12);
    }

    #[test]
    fn the_canonical_key_names_the_game_board_and_side_and_moves_map_back() {
        let pos = AnyPosition::start(GameId::FourInARow);
        let (key, s) = pos.canonical();
        assert_eq!(
            key,
            "four_in_a_row:......./......./......./......./......./.......:R"
        );
        assert_eq!(s, Symmetry::Identity);
        let mut right = AnyPosition::start(GameId::FourInARow);
        right.play("7").expect("legal");
        let mut left = AnyPosition::start(GameId::FourInARow);
        left.play("1").expect("legal");
        let ((right_key, right_s), (left_key, left_s)) = (right.canonical(), left.canonical());
        assert_eq!(right_key, left_key);
        assert_ne!(right_s, left_s);
        // The same canonical move is column 2 in one and column 6 in the other.
        let canonical_move = "2";
        let from_right = right
            .move_from_canonical(canonical_move, right_s)
            .expect("a move");
        let from_left = left
            .move_from_canonical(canonical_move, left_s)
            .expect("a move");
        assert_eq!(
            [from_right.as_str(), from_left.as_str()]
                .map(|m| m.parse::<u8>().expect("a column"))
                .iter()
                .sum::<u8>(),
            8,
            "{from_right} and {from_left} mirror each other"
        );
        for (pos, s, mv) in [(&left, left_s, &from_left), (&right, right_s, &from_right)] {
            assert_eq!(
                pos.move_to_canonical(mv, s).expect("a move"),
                canonical_move
            );
        }
        let reversi = AnyPosition::start(GameId::Reversi);
        assert!(reversi.canonical().0.starts_with("reversi:"));
        assert!(reversi.canonical().0.ends_with(":B"));
    }

    #[test]
    fn moves_in_any_case_come_back_canonical() {
        let mut pos = AnyPosition::start(GameId::Reversi);
        assert_eq!(pos.check_move("F5"), Ok("f5".to_owned()));
        assert_eq!(pos.play("F5"), Ok(()));
        assert_eq!(pos.legal_moves(), ["f4", "d6", "f6"]);
        assert_eq!(pos.discs(), [4, 1]);
        assert_eq!(pos.color(pos.side_to_move()), 'W');
    }

    #[test]
    fn a_refused_move_leaves_the_position_as_it_was() {
        let mut pos = AnyPosition::start(GameId::FourInARow);
        for mv in ["1", "2", "1", "2", "1", "2", "1"] {
            assert_eq!(pos.play(mv), Ok(()));
        }
        let won = pos;
        assert_eq!(pos.play("3"), Err(MoveError::GameOver));
        assert_eq!(
            pos.play("9"),
            Err(MoveError::Parse(ParseError::BadMove("9".to_owned())))
        );
        assert_eq!(pos, won);
        assert!(pos.legal_moves().is_empty());
        assert_eq!(
            pos.outcome(),
            Some(GameOutcome {
                winner: Some(Side::First),
                reason: crate::games::EndReason::FourInARow
            })
        );

        let mut pos = AnyPosition::start(GameId::FourInARow);
        for _ in 0..6 {
            assert_eq!(pos.play("4"), Ok(()));
        }
        assert_eq!(pos.play("4"), Err(MoveError::Illegal("4".to_owned())));
        assert_eq!(pos.ply(), 6);
    }

    #[test]
    fn boards_read_through_any_position_keep_their_game() {
        let rows = AnyPosition::start(GameId::Reversi).rows();
        let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
        let pos = AnyPosition::from_rows(GameId::Reversi, &rows, Side::First).expect("the start");
        assert_eq!(pos, AnyPosition::start(GameId::Reversi));
        assert_eq!(pos.game(), GameId::Reversi);
        assert!(AnyPosition::from_rows(GameId::FourInARow, &rows, Side::First).is_err());
    }
}

/// What the catalogue tells clients of a game's board and moves holds: every legal move, read by
/// its game's [`Notation`] on its [`Board`], names the cell the move fills (checked over random
/// games of every game of the list).
#[cfg(test)]
mod notation_tests {
    use super::*;
    use crate::games::{Board, Notation};
    use crate::rng::SplitMix64;

    /// The cell `(column, row)` (row as the board's rows are listed) that `mv` names or
    /// drops into, read as a client reads the notation; `None` if it is not a move of it.
    fn cell_of(
        mv: &str,
        notation: Notation,
        board: Board,
        rows: &[String],
    ) -> Option<(usize, usize)> {
        match notation {
            Notation::Column => {
                let column = mv.parse::<usize>().ok()?.checked_sub(1)?;
                (column < usize::from(board.columns)).then_some(())?;
                // The lowest empty cell: rows are listed top first.
                let row = (0..rows.len())
                    .rev()
                    .find(|&r| rows[r].as_bytes()[column] == b'.')?;
                Some((column, row))
            }
            Notation::Square => {
                let (file, rank) = mv.split_at(1);
                let column = usize::from(file.as_bytes()[0].checked_sub(b'a')?);
                let row = rank.parse::<usize>().ok()?.checked_sub(1)?;
                (column < usize::from(board.columns) && row < usize::from(board.rows))
                    .then_some((column, row))
            }
        }
    }

    /// The cells empty in `before` and taken in `after`.
    fn filled(before: &[String], after: &[String]) -> Vec<(usize, usize)> {
        let mut cells = Vec::new();
        for (row, (b, a)) in before.iter().zip(after).enumerate() {
            for (column, (b, a)) in b.bytes().zip(a.bytes()).enumerate() {
                if b == b'.' && a != b'.' {
                    cells.push((column, row));
                }
            }
        }
        cells
    }

    #[test]
    fn every_move_names_by_its_notation_the_cell_it_fills_on_the_board_of_its_game() {
        let mut rng = SplitMix64(0x05ee_d0f0_ce11);
        for game in GameId::ALL {
            let (notation, board) = (game.notation(), game.board());
            let start = AnyPosition::start(game).rows();
            assert_eq!(start.len(), usize::from(board.rows), "{game}");
            assert!(
                start.iter().all(|r| r.len() == usize::from(board.columns)),
                "{game}"
            );
            for _ in 0..20 {
                let mut pos = AnyPosition::start(game);
                while pos.outcome().is_none() {
                    if pos.must_pass() {
                        pos.pass();
                    }
                    let before = pos.rows();
                    let legal = pos.legal_moves();
                    for mv in &legal {
                        assert_eq!(mv.len(), game.move_chars(), "{game} {mv}");
                        let cell = cell_of(mv, notation, board, &before)
                            .unwrap_or_else(|| panic!("{game}: {mv} is not a {notation:?} move"));
                        let mut next = pos;
                        next.play(mv).expect("a legal move");
                        assert_eq!(filled(&before, &next.rows()), [cell], "{game} {mv}");
                    }
                    pos.play(&legal[rng.index(legal.len())])
                        .expect("a legal move");
                }
            }
        }
    }
}
