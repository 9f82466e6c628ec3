//! `AnyPosition`: a position of whichever game a match plays, chosen at run time.
//!
//! The match aggregate and the API work in notation strings; this enum parses them with the right
//! engine. Adding a game adds one variant here and one arm to the `dispatch!` macro.

use super::{FourInARow, Game, GameId, GameOutcome, ParseError, Reversi, Side};

/// A position of one of the games, for code that learns the game at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AnyPosition {
    FourInARow(FourInARow),
    Reversi(Reversi),
}

macro_rules! dispatch {
    ($self:expr, $pos:ident => $body:expr) => {
        match $self {
            AnyPosition::FourInARow($pos) => $body,
            AnyPosition::Reversi($pos) => $body,
        }
    };
}

impl AnyPosition {
    pub fn start(game: GameId) -> AnyPosition {
        match game {
            GameId::FourInARow => AnyPosition::FourInARow(FourInARow::start()),
            GameId::Reversi => AnyPosition::Reversi(Reversi::start()),
        }
    }

    pub fn from_rows(game: GameId, rows: &[&str], to_move: Side) -> Result<Self, ParseError> {
        Ok(match game {
            GameId::FourInARow => AnyPosition::FourInARow(FourInARow::from_rows(rows, to_move)?),
            GameId::Reversi => AnyPosition::Reversi(Reversi::from_rows(rows, to_move)?),
        })
    }

    pub fn game(&self) -> GameId {
        match self {
            AnyPosition::FourInARow(_) => FourInARow::ID,
            AnyPosition::Reversi(_) => Reversi::ID,
        }
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
