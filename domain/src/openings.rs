//! Named openings: Reversi's published opening names (`data/reversi-openings.txt`, its source
//! named there), matched by position up to the board's symmetries, so that a game started f5,
//! e6, d3 or c4 gets the same name, and so does a line reached by transposition.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::games::AnyPosition;
use crate::games::GameId;

/// The list as published: `moves<TAB>name` a row, `#` comments.
const REVERSI: &str = include_str!("../data/reversi-openings.txt");

/// The name of the opening a game has followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opening {
    /// As the list spells it; alternatives are separated by `/`.
    pub name: &'static str,
    /// The named line as the list writes it (in its orientation: it starts with c4).
    pub line: &'static str,
    /// How many plies of the game the named line covers.
    pub plies: usize,
}

/// The named lines of a game, keyed by the canonical key of the position each one ends in.
fn book(game: GameId) -> Option<&'static HashMap<String, Opening>> {
    static REVERSI_BOOK: OnceLock<HashMap<String, Opening>> = OnceLock::new();
    match game {
        GameId::Reversi => Some(REVERSI_BOOK.get_or_init(|| named_lines(game, REVERSI))),
        GameId::FourInARow => None,
    }
}

/// The positions of the list's lines that play out from the start; a line that does not (none
/// does: a test checks it) is left out. Of two lines ending in one position the first is kept.
fn named_lines(game: GameId, list: &'static str) -> HashMap<String, Opening> {
    let mut book = HashMap::new();
    for row in list
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let Some((line, name)) = row.split_once('\t') else {
            continue;
        };
        let Some(end) = play_out(game, &line.to_ascii_lowercase()) else {
            continue;
        };
        let plies = line.len() / game.move_chars();
        book.entry(end.canonical().0)
            .or_insert(Opening { name, line, plies });
    }
    book
}

/// The position after `moves` (a record without passes: a side with no move passes), if each
/// move is legal.
fn play_out(game: GameId, moves: &str) -> Option<AnyPosition> {
    let mut pos = AnyPosition::start(game);
    for mv in crate::games::split_moves(game, moves).ok()? {
        if pos.must_pass() {
            pos.pass();
        }
        pos.play(&mv).ok()?;
    }
    Some(pos)
}

/// The longest named line among the first plies of `moves` (a game's moves, passes omitted),
/// up to symmetry; `None` for a game without names, or one that left every named line before
/// its first.
pub fn opening(game: GameId, moves: &[String]) -> Option<Opening> {
    let book = book(game)?;
    let longest = book.values().map(|o| o.plies).max().unwrap_or(0);
    let mut pos = AnyPosition::start(game);
    let mut found = None;
    for mv in moves.iter().take(longest) {
        if pos.must_pass() {
            pos.pass();
        }
        if pos.play(mv).is_err() {
            break;
        }
        if let Some(o) = book.get(&pos.canonical().0) {
            found = Some(*o);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(game: GameId, record: &str) -> Option<Opening> {
        let moves = crate::games::split_moves(game, record).expect("a record");
        opening(game, &moves)
    }

    #[test]
    fn every_published_line_plays_out_and_has_a_position_of_its_own() {
        let rows = REVERSI
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .count();
        assert_eq!(rows, 77);
        let book = book(GameId::Reversi).expect("Reversi has names");
        assert_eq!(book.len(), rows);
        for o in book.values() {
            // Each line is named by itself, in the list's orientation.
            assert_eq!(of(GameId::Reversi, &o.line.to_ascii_lowercase()), Some(*o));
        }
    }

    #[test]
    fn a_game_is_named_by_its_longest_line_in_any_orientation() {
        // The list's Tiger (c4e3f6e6f5) in the orientation that starts f5, and in the two
        // others that start d3 and e6; the start position is symmetric under all four.
        for record in ["c4e3f6e6f5", "f5d6c3d3c4", "d3c5f6f5e6", "e6f4c3c4d3"] {
            let o = of(GameId::Reversi, record).expect("named");
            assert_eq!((o.name, o.plies), ("Tiger", 5), "{record}");
        }
        // Further on the named line: the longest one wins; a move off every line keeps the
        // name reached before it.
        assert_eq!(
            of(GameId::Reversi, "f5d6c3d3c4f4f6").map(|o| o.name),
            Some("Stephenson")
        );
        let off = of(GameId::Reversi, "f5d6c3d3c4b5").expect("named");
        assert_eq!((off.name, off.plies), ("Tiger", 5));
        assert_eq!(of(GameId::Reversi, "f5").map(|o| o.name), None);
        assert_eq!(
            of(GameId::Reversi, "f5f4").map(|o| o.name),
            Some("Parallel Opening")
        );
        assert_eq!(
            of(GameId::Reversi, "f5f6").map(|o| o.name),
            Some("Diagonal Opening")
        );
        assert_eq!(of(GameId::FourInARow, "4444"), None);
    }

    #[test]
    fn an_illegal_move_ends_the_search_with_what_was_named_before() {
        let moves: Vec<String> = ["f5", "d6", "a1"].map(String::from).into();
        assert_eq!(
            opening(GameId::Reversi, &moves).map(|o| o.name),
            Some("Perpendicular Opening")
        );
    }
}
