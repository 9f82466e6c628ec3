//! Fair play's pure rules: which positions of a live ranked match are kept from analysis (the
//! guard's keys), up to the games' symmetries and beyond the public opening; and how a move
//! compares with the solver's values (its [`Quality`], and whether its position was
//! [critical](is_critical)).
//!
//! A live ranked match whose position lies beyond the opening publishes its canonical key
//! ([`AnyPosition::canonical`]) and depth ([`AnyPosition::ply`]: discs placed); a question about
//! a position is refused when that position is the live one or one move after it (a pass
//! included), in any orientation. The shallow plies ([`crate::games::Game::PUBLIC_PLIES`] by
//! default) are public knowledge: nothing at or above that depth is refused.

use crate::games::{AnyPosition, GameId, Side};

/// What a live ranked match at `position` publishes for the guard: its canonical key and depth,
/// when the position one move after it can lie beyond the `public` plies (`None` otherwise:
/// nothing it could be asked about is guarded yet).
pub fn live_key(position: &AnyPosition, public: u32) -> Option<(String, u32)> {
    let depth = position.ply();
    (depth >= public && position.outcome().is_none()).then(|| (position.canonical().0, depth))
}

/// The depths of the live positions that can touch a question about a position of depth
/// `depth` beyond the `public` plies: itself, and the one before (a pass keeps the depth).
/// `None` when the question lies within the public opening.
pub fn live_depths(depth: u32, public: u32) -> Option<[u32; 2]> {
    (depth > public).then(|| [depth, depth - 1])
}

/// Whether a question about `asked` touches the live position of canonical key `live`: it is
/// that position, or one move after it, up to the game's symmetries. Positions within the
/// `public` plies never touch.
pub fn touches(asked: &AnyPosition, public: u32, live: &str) -> bool {
    if asked.ply() <= public {
        return false;
    }
    let asked_key = asked.canonical().0;
    if asked_key == live {
        return true;
    }
    let Some(from) = position_of_key(live) else {
        return false;
    };
    if from.game() != asked.game() || from.outcome().is_some() {
        return false;
    }
    if from.must_pass() {
        let mut next = from;
        next.pass();
        return next.canonical().0 == asked_key;
    }
    from.legal_moves().iter().any(|mv| {
        let mut next = from;
        next.play(mv).is_ok() && next.canonical().0 == asked_key
    })
}

/// How a move compares with the best one, by the exact values of the position before it and
/// after it, both for the side that moved (SPEC §6 conventions: positive wins, zero draws).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Quality {
    /// The move keeps the position's value.
    Best,
    /// The same outcome (win, draw or loss), with a worse margin or a longer way to it.
    Inaccuracy,
    /// The outcome is lost: a win given up, or a draw turned into a loss.
    Error,
}

impl Quality {
    pub const ALL: [Quality; 3] = [Quality::Best, Quality::Inaccuracy, Quality::Error];

    /// Its wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Quality::Best => "best",
            Quality::Inaccuracy => "inaccuracy",
            Quality::Error => "error",
        }
    }
}

/// The quality of a move from the exact values before and after it.
pub fn quality(before: i32, after: i32) -> Quality {
    if after >= before {
        Quality::Best
    } else if after.signum() == before.signum() {
        Quality::Inaccuracy
    } else {
        Quality::Error
    }
}

/// Whether `pos`, solved with `best_moves` moves keeping its value, is a *critical* position:
/// a choice that shows skill. It has at least two legal moves of different values (not every
/// move is best), and it is neither a one-move win (the side to move can end the game winning
/// at once) nor a forced block (after every move but one, or all, the opponent can end it
/// winning with its next move).
pub fn is_critical(pos: &AnyPosition, best_moves: usize) -> bool {
    if pos.outcome().is_some() || pos.must_pass() {
        return false;
    }
    let legal = pos.legal_moves();
    if legal.len() < 2 || best_moves == 0 || best_moves >= legal.len() {
        return false;
    }
    if wins_at_once(pos) {
        return false;
    }
    // The moves after which the opponent cannot win at once: one (a forced block) or none (a
    // double threat) leaves no choice.
    let safe = legal
        .iter()
        .filter(|mv| {
            let mut next = *pos;
            next.play(mv).is_ok() && !wins_at_once(&next)
        })
        .count();
    safe >= 2
}

/// Whether the side to move has a move that ends the game with its win.
fn wins_at_once(pos: &AnyPosition) -> bool {
    let side = pos.side_to_move();
    pos.legal_moves().iter().any(|mv| {
        let mut next = *pos;
        next.play(mv).is_ok() && next.outcome().is_some_and(|o| o.winner == Some(side))
    })
}

/// One critical position a player met, as the engine-assistance statistic reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CriticalMove {
    /// The player's rating before the match.
    pub rating: f64,
    /// How many moves kept the position's value, and how many were legal: a random choice is
    /// optimal `best / legal` of the time.
    pub best: u32,
    pub legal: u32,
    /// Whether the player's move kept the value.
    pub optimal: bool,
    /// How long the player took.
    pub think_ms: i64,
}

impl CriticalMove {
    /// The share of optimal moves a random choice gets here.
    pub fn chance(&self) -> f64 {
        f64::from(self.best.min(self.legal)) / f64::from(self.legal.max(1))
    }
}

/// Width of the rating bands the expected skill is calibrated in.
pub const BAND_WIDTH: f64 = 200.0;
/// Pseudo-positions of the whole ladder's skill each band starts from (a band with few
/// positions leans on the ladder's average).
pub const BAND_PRIOR: f64 = 20.0;

/// The ladder's skill at critical positions by rating band: per band, the optimal moves beyond
/// chance (`Σ optimal − chance`) over the room chance leaves (`Σ 1 − chance`). The model: a
/// player of rating r plays a critical position's optimal move with probability
/// `chance + (1 − chance) · skill(r)`, skill being their band's (calibrated on the ladder's own
/// players, leaving out the player under test), shrunk toward the whole ladder's.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Calibration {
    bands: std::collections::BTreeMap<i64, (f64, f64)>,
    all: (f64, f64),
}

impl Calibration {
    /// The band of a rating.
    pub fn band(rating: f64) -> i64 {
        (rating / BAND_WIDTH).floor() as i64
    }

    /// Counts `moves` in (`sign` 1.0) or out (`sign` −1.0: leaving a player out).
    pub fn add(&mut self, moves: &[CriticalMove], sign: f64) {
        for m in moves {
            let c = m.chance();
            let excess = sign * (f64::from(u8::from(m.optimal)) - c);
            let room = sign * (1.0 - c);
            let band = self.bands.entry(Self::band(m.rating)).or_default();
            band.0 += excess;
            band.1 += room;
            self.all.0 += excess;
            self.all.1 += room;
        }
    }

    /// The expected skill of a player of `rating` (0: chance, 1: always optimal), kept below 1
    /// so that a perfect record is never what is expected.
    pub fn skill(&self, rating: f64) -> f64 {
        let overall = if self.all.1 > 1e-9 {
            (self.all.0 / self.all.1).clamp(0.0, 0.99)
        } else {
            0.5
        };
        let (excess, room) = self
            .bands
            .get(&Self::band(rating))
            .copied()
            .unwrap_or_default();
        ((excess + BAND_PRIOR * overall) / (room + BAND_PRIOR)).clamp(0.0, 0.99)
    }
}

/// What a player's critical positions say, against what their rating leads to expect.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Evidence {
    pub critical: u32,
    pub optimal: u32,
    /// The optimal moves expected (the sum of each position's probability).
    pub expected: f64,
    /// `(optimal − expected) / sd`, the standard score of the optimal moves.
    pub z: f64,
    /// The coefficient of variation of the thinking times (standard deviation over mean): a
    /// human's times vary widely; a steady relay of an engine's answers does not. `None` when
    /// the mean is zero.
    pub think_cv: Option<f64>,
}

/// The evidence of `moves` (one player's critical positions) under `calibration`.
pub fn evidence(moves: &[CriticalMove], calibration: &Calibration) -> Evidence {
    let (mut expected, mut variance, mut optimal) = (0.0, 0.0, 0u32);
    for m in moves {
        let c = m.chance();
        let p = c + (1.0 - c) * calibration.skill(m.rating);
        expected += p;
        variance += p * (1.0 - p);
        optimal += u32::from(m.optimal);
    }
    let z = (f64::from(optimal) - expected) / variance.sqrt().max(1e-9);
    let n = moves.len() as f64;
    let mean = moves.iter().map(|m| m.think_ms as f64).sum::<f64>() / n.max(1.0);
    let sd = (moves
        .iter()
        .map(|m| (m.think_ms as f64 - mean).powi(2))
        .sum::<f64>()
        / n.max(1.0))
    .sqrt();
    Evidence {
        critical: moves.len() as u32,
        optimal,
        expected,
        z,
        think_cv: (mean > 0.0).then(|| sd / mean),
    }
}

/// The position a canonical key names (`game:rows:colour`), if it reads as one.
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
    use crate::games::split_moves;

    fn after(game: GameId, moves: &str) -> AnyPosition {
        let mut pos = AnyPosition::start(game);
        for mv in split_moves(game, moves).expect("a record") {
            if pos.must_pass() {
                pos.pass();
            }
            pos.play(&mv).expect("a legal move");
        }
        pos
    }

    /// The mirror image of a Four in a Row record (column c becomes 8 - c).
    fn mirrored(moves: &str) -> String {
        moves
            .chars()
            .map(|c| char::from(b'0' + 8 - c.to_digit(10).expect("a column") as u8))
            .collect()
    }

    #[test]
    fn a_key_reads_back_as_its_position() {
        for (game, moves) in [
            (GameId::FourInARow, "4453361"),
            (GameId::Reversi, "f5d6c3d3c4f4"),
        ] {
            let pos = after(game, moves);
            let (key, _) = pos.canonical();
            let back = position_of_key(&key).expect("as built");
            assert_eq!(back.canonical().0, key);
        }
        assert!(position_of_key("chess:x:R").is_none());
        assert!(position_of_key("four_in_a_row").is_none());
    }

    #[test]
    fn the_live_position_and_every_next_one_touch_in_any_orientation() {
        let public = 4;
        let live = after(GameId::FourInARow, "445336");
        let (key, depth) = live_key(&live, public).expect("as built");
        assert_eq!(depth, 6);
        // The live position itself, and its mirror image.
        assert!(touches(&live, public, &key));
        assert!(touches(
            &after(GameId::FourInARow, &mirrored("445336")),
            public,
            &key
        ));
        // Every position one move after it, in both orientations.
        for column in 1..=7 {
            let record = format!("445336{column}");
            assert!(touches(&after(GameId::FourInARow, &record), public, &key));
            assert!(touches(
                &after(GameId::FourInARow, &mirrored(&record)),
                public,
                &key
            ));
        }
        // Two moves after it, or another position of the same depth: free.
        assert!(!touches(
            &after(GameId::FourInARow, "4453361"),
            public,
            &after(GameId::FourInARow, "44533612").canonical().0
        ));
        assert!(!touches(
            &after(GameId::FourInARow, "44533612"),
            public,
            &key
        ));
        assert!(!touches(&after(GameId::FourInARow, "445337"), public, &key));
    }

    #[test]
    fn reversi_positions_touch_under_its_eight_symmetries() {
        let public = 4;
        let record = "f5d6c3d3c4f4";
        let live = after(GameId::Reversi, record);
        let (key, _) = live_key(&live, public).expect("as built");
        // The same game played from the other three first moves is the same position turned.
        for turned in ["e6f4c3c4d3d6", "d3c5f6f5e6e3", "c4e3f6e6f5c5"] {
            let pos = after(GameId::Reversi, turned);
            assert_eq!(pos.canonical().0, key, "{turned}");
            assert!(touches(&pos, public, &key));
        }
        for mv in live.legal_moves() {
            let mut next = live;
            next.play(&mv).expect("as built");
            assert!(touches(&next, public, &key), "{mv}");
        }
    }

    #[test]
    fn a_pass_is_one_move_after() {
        // A Reversi position where the side to move must pass (black has no move).
        let rows = [
            "WWWWWWWW", "WWWWWWWW", "WWWWWWWW", "WWWWWWWW", "WWWWWWWW", "WWWWWWWW", "WWWWWWB.",
            "WWWWWWW.",
        ];
        let live = AnyPosition::from_rows(GameId::Reversi, &rows, Side::First).expect("as built");
        assert!(live.must_pass());
        let (key, _) = live_key(&live, 12).expect("as built");
        let mut passed = live;
        passed.pass();
        assert!(touches(&passed, 12, &key));
    }

    #[test]
    fn a_move_is_best_an_inaccuracy_or_an_error_by_the_values_around_it() {
        // Four in a Row: +18 wins with the 4th disc, 0 draws, negative loses.
        assert_eq!(quality(18, 18), Quality::Best);
        assert_eq!(quality(-3, -3), Quality::Best);
        assert_eq!(quality(18, 15), Quality::Inaccuracy, "a slower win");
        assert_eq!(quality(-3, -9), Quality::Inaccuracy, "a quicker loss");
        assert_eq!(quality(18, 0), Quality::Error, "a win given up");
        assert_eq!(quality(0, -2), Quality::Error, "a draw lost");
        assert_eq!(quality(2, -2), Quality::Error);
        // Reversi: the final disc difference.
        assert_eq!(quality(10, 4), Quality::Inaccuracy);
        assert_eq!(quality(0, 0), Quality::Best);
    }

    #[test]
    fn critical_positions_exclude_one_move_wins_forced_blocks_and_equal_choices() {
        // Red (to move) has three in column 4: a one-move win.
        let win = after(GameId::FourInARow, "414141");
        assert!(!is_critical(&win, 1));
        // Yellow to move must block column 4: a forced block.
        let block = after(GameId::FourInARow, "41414");
        assert!(!is_critical(&block, 1));
        // A quiet middle game position with one best move among seven is critical ...
        let quiet = after(GameId::FourInARow, "4453361");
        assert!(is_critical(&quiet, 1));
        // ... but not when every move is best, or with no exact best move.
        assert!(!is_critical(&quiet, 7));
        assert!(!is_critical(&quiet, 0));
        // Reversi has no forced block in this sense; a position with one best move is critical.
        let reversi = after(GameId::Reversi, "f5d6c3d3c4f4");
        assert!(is_critical(&reversi, 1));
    }

    fn critical(rating: f64, best: u32, legal: u32, optimal: bool) -> CriticalMove {
        CriticalMove {
            rating,
            best,
            legal,
            optimal,
            think_ms: 1000,
        }
    }

    #[test]
    fn the_expected_skill_is_the_bands_excess_over_chance_shrunk_to_the_ladder() {
        let mut c = Calibration::default();
        // A band at 1500 whose players find the one best move of four half the time: chance is
        // 1/4, so the excess is 1/4 of a room of 3/4 per position: skill 1/3.
        let band: Vec<CriticalMove> = (0..400)
            .map(|i| critical(1500.0, 1, 4, i % 2 == 0))
            .collect();
        c.add(&band, 1.0);
        assert!(
            (c.skill(1550.0) - 1.0 / 3.0).abs() < 0.01,
            "{}",
            c.skill(1550.0)
        );
        // An empty band leans on the ladder's skill.
        assert!((c.skill(2300.0) - 1.0 / 3.0).abs() < 1e-9);
        // Left out again, nothing remains: the default.
        c.add(&band, -1.0);
        assert!((c.skill(1550.0) - 0.5).abs() < 1e-9);
    }

    #[test]
    fn a_perfect_record_stands_out_and_an_ordinary_one_does_not() {
        let mut c = Calibration::default();
        let ladder: Vec<CriticalMove> = (0..600)
            .map(|i| critical(1500.0, 1, 5, i % 3 == 0))
            .collect();
        c.add(&ladder, 1.0);
        let perfect: Vec<CriticalMove> = (0..60).map(|_| critical(1500.0, 1, 5, true)).collect();
        let e = evidence(&perfect, &c);
        assert_eq!((e.critical, e.optimal), (60, 60));
        assert!(e.z > 4.75, "{e:?}");
        let ordinary: Vec<CriticalMove> = (0..60)
            .map(|i| critical(1500.0, 1, 5, i % 3 == 1))
            .collect();
        let e = evidence(&ordinary, &c);
        assert!(e.z.abs() < 2.0, "{e:?}");
        assert_eq!(e.think_cv, Some(0.0));
    }

    #[test]
    fn the_public_opening_is_never_guarded() {
        let public = GameId::FourInARow.public_plies();
        assert_eq!(public, 8);
        assert_eq!(GameId::Reversi.public_plies(), 12);
        // A live position at depth 7 publishes nothing; at depth 8 its key guards depth 9.
        assert!(live_key(&after(GameId::FourInARow, "4453361"), public).is_none());
        let live = after(GameId::FourInARow, "44533612");
        let (key, depth) = live_key(&live, public).expect("as built");
        assert_eq!(depth, 8);
        assert!(!touches(&live, public, &key));
        assert!(touches(
            &after(GameId::FourInARow, "445336125"),
            public,
            &key
        ));
        assert_eq!(live_depths(8, public), None);
        assert_eq!(live_depths(9, public), Some([9, 8]));
    }
}
