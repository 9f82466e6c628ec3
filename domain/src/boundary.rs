//! The fair-play boundary: which positions no service may say anything about while a ranked
//! match is live. Not a list of positions but a rule: a live ranked position beyond the public
//! opening guards itself and **every position that can follow it**, in every image of the
//! game's board and, where the game allows it (Reversi), with the colours exchanged and the other
//! side to move (the same question asked of the other colour).
//!
//! "Can follow" is read off what the live position makes permanent ([`Game::permanent`]): in
//! Four in a Row every disc stays where it is in its colour, so a following position holds every
//! live disc in the same colour; in Reversi every occupied square stays occupied, and the stable
//! discs (corners and what they anchor, [`crate::games::reversi::stable_discs`]) keep their
//! colour. A position reached from the live one by any legal line holds all of that, so it is
//! caught; a few positions that hold it without being reachable are caught too (refused though
//! unrelated), which is the price of a check that costs a few word operations per live match.
//!
//! A live match publishes its [`Guard`] (what it makes permanent, and its depth) with each move;
//! a question is an [`Asked`] (the asked position's images), and [`withheld`] decides.
//!
//! [`Game::permanent`]: crate::games::Game::permanent

use crate::games::{AnyPosition, Board, GameId, Side, Symmetry};

/// What a live ranked position keeps from every service: the cells any position that can follow
/// it holds occupied, and the discs it holds in their colour (masks as in
/// [`crate::games::disc_masks`]), with the live position's game and depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Guard {
    game: GameId,
    depth: u32,
    occupied: u64,
    first: u64,
    second: u64,
}

impl Guard {
    /// The guard a live ranked match at `live` publishes: `None` while nothing it could be asked
    /// about lies beyond the `public` plies (a position one move on would still be public), or
    /// once the game is over.
    pub fn of(live: &AnyPosition, public: u32) -> Option<Guard> {
        let depth = live.ply();
        (depth >= public && live.outcome().is_none()).then(|| Guard::at(live))
    }

    fn at(live: &AnyPosition) -> Guard {
        let [occupied, first, second] = live.permanent();
        Guard {
            game: live.game(),
            depth: live.ply(),
            occupied,
            first,
            second,
        }
    }

    pub fn game(&self) -> GameId {
        self.game
    }

    /// The live position's depth (discs placed): no shallower position can follow it.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The stored form: `game:depth:occupied:first:second`, the masks in hexadecimal.
    pub fn key(&self) -> String {
        format!(
            "{}:{}:{:x}:{:x}:{:x}",
            self.game, self.depth, self.occupied, self.first, self.second
        )
    }

    /// Reads [`Guard::key`]'s form, or the canonical key of a live position (the form guards
    /// were published in before the boundary: such a row guards what its position makes
    /// permanent). `None` for anything else.
    pub fn parse(key: &str) -> Option<Guard> {
        let parts: Vec<&str> = key.split(':').collect();
        match parts.as_slice() {
            [game, depth, occupied, first, second] => Some(Guard {
                game: game.parse().ok()?,
                depth: depth.parse().ok()?,
                occupied: u64::from_str_radix(occupied, 16).ok()?,
                first: u64::from_str_radix(first, 16).ok()?,
                second: u64::from_str_radix(second, 16).ok()?,
            }),
            [_, _, _] => position_of_key(key).map(|pos| Guard::at(&pos)),
            _ => None,
        }
    }
}

/// Most images a position has: the square's eight symmetries, each with the colours exchanged.
const MAX_IMAGES: usize = 16;

/// A position asked about, as the boundary reads it: its game, its depth and the disc masks of
/// each of its images (the board's symmetries, and with the colours exchanged where the game
/// allows it), computed once and checked against every live guard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Asked {
    game: GameId,
    ply: u32,
    images: [[u64; 2]; MAX_IMAGES],
    len: usize,
}

impl Asked {
    pub fn of(pos: &AnyPosition) -> Asked {
        let masks = pos.disc_masks();
        let board = pos.game().board();
        let mut asked = Asked {
            game: pos.game(),
            ply: pos.ply(),
            images: [[0; 2]; MAX_IMAGES],
            len: 0,
        };
        for &s in pos.symmetries() {
            let image = [map(masks[0], s, board), map(masks[1], s, board)];
            asked.push(image);
            if pos.colours_exchange() {
                asked.push([image[1], image[0]]);
            }
        }
        asked
    }

    fn push(&mut self, image: [u64; 2]) {
        if self.len < MAX_IMAGES {
            self.images[self.len] = image;
            self.len += 1;
        }
    }

    pub fn game(&self) -> GameId {
        self.game
    }

    pub fn ply(&self) -> u32 {
        self.ply
    }

    /// Whether the asked position can follow the guarded live one: one of its images holds every
    /// cell the guard keeps occupied and every disc it keeps in its colour.
    pub fn follows(&self, guard: &Guard) -> bool {
        guard.game == self.game
            && guard.depth <= self.ply
            && self.images[..self.len].iter().any(|&[first, second]| {
                guard.occupied & !(first | second) == 0
                    && guard.first & !first == 0
                    && guard.second & !second == 0
            })
    }
}

/// Whether a question about `asked` is withheld: it lies beyond the `public` plies and can follow
/// one of the live `guards`.
pub fn withheld(asked: &Asked, public: u32, guards: &[Guard]) -> bool {
    asked.ply > public && guards.iter().any(|g| asked.follows(g))
}

/// `mask` (bit `row * columns + column`) seen through `s`.
fn map(mask: u64, s: Symmetry, board: Board) -> u64 {
    let (columns, rows) = (board.columns, board.rows);
    let turned = matches!(
        s,
        Symmetry::Transpose | Symmetry::AntiTranspose | Symmetry::Rotate90 | Symmetry::Rotate270
    );
    let out_columns = if turned { rows } else { columns };
    let mut out = 0u64;
    let mut bits = mask;
    while bits != 0 {
        let bit = bits.trailing_zeros() as u8;
        bits &= bits - 1;
        let (x, y) = s.cell(bit % columns, bit / columns, columns, rows);
        out |= 1 << (u32::from(y) * u32::from(out_columns) + u32::from(x));
    }
    out
}

/// Every board that asks the same question as `pos`: its image under each of the game's
/// symmetries and, where the game allows it, each with the colours exchanged and the other side
/// to move (the identity first). What [`Asked`] reads as masks, as positions.
pub fn same_questions(pos: &AnyPosition) -> Vec<AnyPosition> {
    let rows = pos.rows();
    let [a, b] = [pos.color(Side::First), pos.color(Side::Second)];
    let mut out = Vec::new();
    for &s in pos.symmetries() {
        let turned = s.rows(&rows);
        let refs: Vec<&str> = turned.iter().map(String::as_str).collect();
        out.extend(AnyPosition::from_rows(pos.game(), &refs, pos.side_to_move()).ok());
        if pos.colours_exchange() {
            let swapped: Vec<String> = turned
                .iter()
                .map(|r| {
                    r.chars()
                        .map(|c| match c {
                            c if c == a => b,
                            c if c == b => a,
                            c => c,
                        })
                        .collect()
                })
                .collect();
            let refs: Vec<&str> = swapped.iter().map(String::as_str).collect();
            let other = pos.side_to_move().other();
            out.extend(AnyPosition::from_rows(pos.game(), &refs, other).ok());
        }
    }
    out
}

/// The position of a canonical key (`game:row/row/..:colour`, [`AnyPosition::canonical`]).
pub fn position_of_key(key: &str) -> Option<AnyPosition> {
    let mut parts = key.splitn(3, ':');
    let game: GameId = parts.next()?.parse().ok()?;
    let rows: Vec<&str> = parts.next()?.split('/').collect();
    let colour = parts.next()?.chars().next()?;
    let start = AnyPosition::start(game);
    let side = [Side::First, Side::Second]
        .into_iter()
        .find(|&s| start.color(s) == colour)?;
    AnyPosition::from_rows(game, &rows, side).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;
    use proptest::prelude::*;

    fn after(game: GameId, moves: &str) -> AnyPosition {
        crate::analysis::position_after(game, moves).expect("a record")
    }

    /// A random legal line from `pos` of up to `plies` placed discs (passes as they come).
    fn random_line(
        mut pos: AnyPosition,
        plies: usize,
        rng: &mut SplitMix64,
        mut visit: impl FnMut(&AnyPosition),
    ) {
        for _ in 0..plies {
            if pos.outcome().is_some() {
                return;
            }
            if pos.must_pass() {
                pos.pass();
                visit(&pos);
            }
            let legal = pos.legal_moves();
            pos.play(&legal[rng.index(legal.len())])
                .expect("a legal move");
            visit(&pos);
        }
    }

    /// Every position along a random game from the start to its end.
    fn random_game(game: GameId, rng: &mut SplitMix64) -> Vec<AnyPosition> {
        let mut out = vec![AnyPosition::start(game)];
        random_line(AnyPosition::start(game), 64, rng, |p| out.push(*p));
        out
    }

    /// Any live position of a random game guards every position of any legal line from it, in
    /// every image.
    fn every_line_from_a_live_position_is_caught(game: GameId, seed: u64) {
        let mut rng = SplitMix64(seed);
        let line = random_game(game, &mut rng);
        let public = 0;
        for live in line.iter().filter(|p| p.outcome().is_none()) {
            let guard = Guard::of(live, public).expect("a live position guards");
            let back = Guard::parse(&guard.key()).expect("its key reads back");
            assert_eq!(back, guard);
            let mut followers = vec![*live];
            random_line(*live, 4, &mut rng, |p| followers.push(*p));
            random_line(*live, 60, &mut rng, |p| followers.push(*p));
            for pos in followers {
                for image in same_questions(&pos) {
                    assert!(
                        Asked::of(&image).follows(&guard),
                        "{:?} from {:?}",
                        image.rows(),
                        live.rows()
                    );
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn four_in_a_row_lines_from_a_live_position_are_caught_in_every_image(seed: u64) {
            every_line_from_a_live_position_is_caught(GameId::FourInARow, seed);
        }

        #[test]
        fn reversi_lines_from_a_live_position_are_caught_in_every_image_and_colour(seed: u64) {
            every_line_from_a_live_position_is_caught(GameId::Reversi, seed);
        }

        /// Stable discs never flip: along any legal line, each keeps its colour.
        #[test]
        fn reversi_stable_discs_keep_their_colour_along_any_line(seed: u64) {
            let mut rng = SplitMix64(seed);
            for live in random_game(GameId::Reversi, &mut rng) {
                let [_, black, white] = live.permanent();
                random_line(live, 60, &mut rng, |p| {
                    let [b, w] = p.disc_masks();
                    assert_eq!(black & !b, 0, "{:?} from {:?}", p.rows(), live.rows());
                    assert_eq!(white & !w, 0, "{:?} from {:?}", p.rows(), live.rows());
                });
            }
        }
    }

    #[test]
    fn corners_and_the_edges_they_anchor_are_stable_and_inner_discs_are_not() {
        let rows = [
            "BBB.....", "B.......", "........", "...WB...", "...BW...", "........", "........",
            ".......W",
        ];
        let pos = AnyPosition::from_rows(GameId::Reversi, &rows, Side::First).expect("a board");
        let [occupied, black, white] = pos.permanent();
        let [b, w] = pos.disc_masks();
        assert_eq!(occupied, b | w);
        // a1, b1, c1 along the top edge and a2 down the side; h8's corner.
        assert_eq!(black, 1 | 1 << 1 | 1 << 2 | 1 << 8);
        assert_eq!(white, 1 << 63);
    }

    #[test]
    fn four_in_a_row_siblings_and_shallower_positions_do_not_follow() {
        let public = 8;
        let live = after(GameId::FourInARow, "4453361212");
        let guard = Guard::of(&live, public).expect("beyond the opening");
        // Another tenth disc: a sibling, not a follower (nor its mirror image).
        assert!(!Asked::of(&after(GameId::FourInARow, "4453361213")).follows(&guard));
        assert!(!Asked::of(&after(GameId::FourInARow, "4453361211")).follows(&guard));
        // The position before it is not withheld by it.
        assert!(!Asked::of(&after(GameId::FourInARow, "445336121")).follows(&guard));
        // Two and three plies on are.
        assert!(Asked::of(&after(GameId::FourInARow, "445336121277")).follows(&guard));
        assert!(Asked::of(&after(GameId::FourInARow, "4453361212771")).follows(&guard));
        // The same position reached by another move order is.
        assert!(Asked::of(&after(GameId::FourInARow, "4453361212")).follows(&guard));
        assert!(Asked::of(&after(GameId::FourInARow, "4453163212")).follows(&guard));
    }

    #[test]
    fn the_public_opening_is_never_withheld() {
        let public = GameId::FourInARow.public_plies();
        assert_eq!(public, 8);
        assert_eq!(GameId::Reversi.public_plies(), 12);
        // A live position at depth 7 publishes nothing; at depth 8 it guards depth 9 on.
        assert!(Guard::of(&after(GameId::FourInARow, "4453361"), public).is_none());
        let live = after(GameId::FourInARow, "44533612");
        let guard = Guard::of(&live, public).expect("as built");
        assert_eq!(guard.depth(), 8);
        assert!(!withheld(&Asked::of(&live), public, &[guard]));
        assert!(withheld(
            &Asked::of(&after(GameId::FourInARow, "445336125")),
            public,
            &[guard]
        ));
        // A finished game guards nothing.
        let won = after(GameId::FourInARow, "1212121");
        assert!(Guard::of(&won, 0).is_none());
    }

    #[test]
    fn a_reversi_board_with_its_colours_exchanged_is_the_same_question() {
        let live = after(GameId::Reversi, "f5d6c3d3c4f4c5b3c2e6c6b4");
        let guard = Guard::of(&live, 12).expect("at the public depth");
        let mut next = live;
        let mv = next.legal_moves()[0].clone();
        next.play(&mv).expect("a legal move");
        for image in same_questions(&next) {
            assert!(
                withheld(&Asked::of(&image), 12, &[guard]),
                "{:?}",
                image.rows()
            );
        }
    }

    #[test]
    fn a_guard_reads_from_an_older_canonical_key() {
        let live = after(GameId::Reversi, "f5d6c3d3c4f4");
        let (key, _) = live.canonical();
        let guard = Guard::parse(&key).expect("a guard");
        assert_eq!(
            Some(guard),
            Guard::of(&position_of_key(&key).expect("a key"), 0)
        );
        assert!(Asked::of(&live).follows(&guard));
        assert!(Guard::parse("chess:x:R").is_none());
        assert!(Guard::parse("four_in_a_row").is_none());
        assert!(Guard::parse("reversi:1:zz:0:0").is_none());
    }
}
