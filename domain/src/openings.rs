//! Named openings. Reversi: the published opening names (`data/reversi-openings.txt`, its source
//! named there), matched by position up to the board's symmetries, so that a game started f5,
//! e6, d3 or c4 gets the same name, and so does a line reached by transposition. Four in a Row
//! has no such list: its openings are named by their first [`FOUR_PLIES`] columns, up to the
//! mirror.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use crate::games::AnyPosition;
use crate::games::GameId;

/// The list as published: `moves<TAB>name` a row, `#` comments.
const REVERSI: &str = include_str!("../data/reversi-openings.txt");

/// How many first moves name a Four in a Row opening: the first player's first two and the
/// answer between them.
pub const FOUR_PLIES: usize = 3;

/// The name of the opening a game has followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opening {
    /// As the list spells it; alternatives are separated by `/`. Four in a Row: the columns
    /// with dashes (`4-4-3`).
    pub name: Cow<'static, str>,
    /// The named line as the list writes it (in its orientation: it starts with c4). Four in a
    /// Row: the columns as a record (`443`).
    pub line: Cow<'static, str>,
    /// How many plies of the game the named line covers.
    pub plies: usize,
}

/// A game's named lines: by the canonical key of the position each one ends in, and the keys
/// of every position on the way to one (where a game that is still on some named line stands).
struct Book {
    ends: HashMap<String, Opening>,
    on_a_line: HashSet<String>,
    longest: usize,
}

fn book(game: GameId) -> Option<&'static Book> {
    static REVERSI_BOOK: OnceLock<Book> = OnceLock::new();
    match game {
        GameId::Reversi => Some(REVERSI_BOOK.get_or_init(|| named_lines(game, REVERSI))),
        GameId::FourInARow => None,
    }
}

/// The book of the list's lines that play out from the start; a line that does not (none
/// does: a test checks it) is left out. Of two lines ending in one position the first is kept.
fn named_lines(game: GameId, list: &'static str) -> Book {
    let mut book = Book {
        ends: HashMap::new(),
        on_a_line: HashSet::new(),
        longest: 0,
    };
    for row in list
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let Some((line, name)) = row.split_once('\t') else {
            continue;
        };
        let Some(path) = play_out(game, &line.to_ascii_lowercase()) else {
            continue;
        };
        let plies = path.len();
        let Some(end) = path.last() else {
            continue;
        };
        book.ends.entry(end.clone()).or_insert(Opening {
            name: Cow::Borrowed(name),
            line: Cow::Borrowed(line),
            plies,
        });
        book.longest = book.longest.max(plies);
        book.on_a_line.extend(path);
    }
    book
}

/// The canonical keys of the positions after each of `moves` (a record without passes: a side
/// with no move passes), if each move is legal.
fn play_out(game: GameId, moves: &str) -> Option<Vec<String>> {
    let mut pos = AnyPosition::start(game);
    let mut path = Vec::new();
    for mv in crate::games::split_moves(game, moves).ok()? {
        if pos.must_pass() {
            pos.pass();
        }
        pos.play(&mv).ok()?;
        path.push(pos.canonical().0);
    }
    Some(path)
}

/// How many first moves of a game its opening's name can depend on: the longest named line, or
/// [`FOUR_PLIES`]. A reader of the log needs no more than these.
pub fn plies_needed(game: GameId) -> usize {
    match book(game) {
        Some(book) => book.longest,
        None => FOUR_PLIES,
    }
}

/// The longest named line among the first plies of `moves` (a game's moves, passes omitted),
/// up to symmetry; `None` for a game without names, or one that left every named line before
/// its first. The walk stops at the first position on no named line (a game that transposes
/// back into a line after leaving them all keeps the name it had).
pub fn opening(game: GameId, moves: &[String]) -> Option<Opening> {
    if game == GameId::FourInARow {
        return four_in_a_row(moves);
    }
    let book = book(game)?;
    let mut pos = AnyPosition::start(game);
    let mut found = None;
    for mv in moves.iter().take(book.longest) {
        if pos.must_pass() {
            pos.pass();
        }
        if pos.play(mv).is_err() {
            break;
        }
        let key = pos.canonical().0;
        if let Some(o) = book.ends.get(&key) {
            found = Some(o.clone());
        }
        if !book.on_a_line.contains(&key) {
            break;
        }
    }
    found
}

/// A Four in a Row opening: its first [`FOUR_PLIES`] columns (fewer in a shorter game), as
/// played or mirrored, whichever reads first in column order (`5` is named `3`, `445` is named
/// `443`), written with dashes: `4-4-3`.
fn four_in_a_row(moves: &[String]) -> Option<Opening> {
    let first: Vec<u8> = moves
        .iter()
        .take(FOUR_PLIES)
        .map(|m| m.parse::<u8>().ok().filter(|c| (1..=7).contains(c)))
        .collect::<Option<_>>()?;
    if first.is_empty() {
        return None;
    }
    let mirrored: Vec<u8> = first.iter().map(|c| 8 - c).collect();
    let folded = first.min(mirrored);
    let line: String = folded.iter().map(|c| char::from(b'0' + c)).collect();
    let name = folded
        .iter()
        .map(u8::to_string)
        .collect::<Vec<_>>()
        .join("-");
    Some(Opening {
        name: Cow::Owned(name),
        line: Cow::Owned(line),
        plies: folded.len(),
    })
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
        assert_eq!(book.ends.len(), rows);
        assert_eq!(plies_needed(GameId::Reversi), 21, "the F.A.T. Draw");
        assert_eq!(plies_needed(GameId::FourInARow), FOUR_PLIES);
        for o in book.ends.values() {
            // Each line is named by itself, in the list's orientation.
            assert_eq!(
                of(GameId::Reversi, &o.line.to_ascii_lowercase()).as_ref(),
                Some(o)
            );
        }
    }

    #[test]
    fn a_game_is_named_by_its_longest_line_in_any_orientation() {
        // The list's Tiger (c4e3f6e6f5) in the orientation that starts f5, and in the two
        // others that start d3 and e6; the start position is symmetric under all four.
        for record in ["c4e3f6e6f5", "f5d6c3d3c4", "d3c5f6f5e6", "e6f4c3c4d3"] {
            let o = of(GameId::Reversi, record).expect("named");
            assert_eq!((&*o.name, o.plies), ("Tiger", 5), "{record}");
        }
        // Further on the named line: the longest one wins; a move off every line keeps the
        // name reached before it.
        assert_eq!(
            of(GameId::Reversi, "f5d6c3d3c4f4f6")
                .map(|o| o.name.into_owned())
                .as_deref(),
            Some("Stephenson")
        );
        let off = of(GameId::Reversi, "f5d6c3d3c4b5").expect("named");
        assert_eq!((&*off.name, off.plies), ("Tiger", 5));
        assert_eq!(
            of(GameId::Reversi, "f5")
                .map(|o| o.name.into_owned())
                .as_deref(),
            None
        );
        assert_eq!(
            of(GameId::Reversi, "f5f4")
                .map(|o| o.name.into_owned())
                .as_deref(),
            Some("Parallel Opening")
        );
        assert_eq!(
            of(GameId::Reversi, "f5f6")
                .map(|o| o.name.into_owned())
                .as_deref(),
            Some("Diagonal Opening")
        );
        assert_eq!(
            of(GameId::FourInARow, "4453").map(|o| (
                o.name.into_owned(),
                o.line.into_owned(),
                o.plies
            )),
            Some(("4-4-3".to_owned(), "443".to_owned(), 3))
        );
    }

    #[test]
    fn an_illegal_move_ends_the_search_with_what_was_named_before() {
        let moves: Vec<String> = ["f5", "d6", "a1"].map(String::from).into();
        assert_eq!(
            opening(GameId::Reversi, &moves)
                .map(|o| o.name.into_owned())
                .as_deref(),
            Some("Perpendicular Opening")
        );
    }

    #[test]
    fn four_in_a_row_is_named_by_its_first_columns_up_to_the_mirror() {
        let named = |record: &str| of(GameId::FourInARow, record).map(|o| o.name.into_owned());
        assert_eq!(named("4").as_deref(), Some("4"));
        assert_eq!(named("5").as_deref(), Some("3"));
        assert_eq!(named("3").as_deref(), Some("3"));
        assert_eq!(named("17").as_deref(), Some("1-7"));
        assert_eq!(named("71").as_deref(), Some("1-7"));
        assert_eq!(named("4434").as_deref(), Some("4-4-3"));
        assert_eq!(named("445").as_deref(), Some("4-4-3"));
        assert_eq!(named("4413").as_deref(), Some("4-4-1"));
        assert_eq!(named("").as_deref(), None);
        // One name per prefix up to the mirror: of the 7, 49 and 343 records, those that are
        // their own mirror (all 4s) once, the others in pairs: 4 + 25 + 172.
        let mut names = std::collections::HashSet::new();
        for n in 1..=FOUR_PLIES as u32 {
            for i in 0..7u32.pow(n) {
                let record: String = (0..n)
                    .map(|k| char::from(b'1' + (i / 7u32.pow(k) % 7) as u8))
                    .collect();
                names.insert(named(&record).expect("named"));
            }
        }
        assert_eq!(names.len(), 4 + 25 + 172);
    }
}
