//! Fair play's pure rules for assessing moves: how a move compares with the solver's values (its
//! [`Quality`]), whether its position was [critical](is_critical), and what a player's critical
//! positions say against their rating ([`evidence`], calibrated on the ladder). Which positions
//! are kept from analysis while a ranked match is live is [`crate::boundary`]'s.
//!
//! # The engine-assistance model
//! A critical position *i* has a chance share `c_i = best_i / legal_i`. A player plays its
//! optimal move with probability `p_i = c_i + (1 − c_i) · s`, the skill `s` calibrated on the
//! ladder's own players ([`Calibration`]) per cell of rating band ([`BAND_WIDTH`] points, the
//! rating before the match) and phase of the game ([`PHASE_PLIES`] plies: the same player finds
//! an early move far less often than a late one), as `Σ(optimal − c) / Σ(1 − c)` over every other
//! player's critical positions of that game in the cell. Each player weighs at most
//! [`MAX_PLAYER_GAMES`] games' worth, and games against one opponent share one game's weight
//! ([`game_weights`]), so accounts made to play badly in a band among themselves cannot aim the
//! expectation at its honest players. A cell starts from [`BAND_PRIOR`] pseudo-positions of the
//! band's skill moved by the phase's difference from the whole ladder's; the skill stays below
//! 0.99 (a perfect record is never what is expected). An uncertain rating (a newcomer's, or a
//! player's who met stronger opponents than their level) takes the most skilled band within two
//! deviations of it, so a rating that lags a player's skill does not make them a suspect.
//!
//! Two tests over a player's recent assessed ranked games of a game ([`evidence`]). The pooled
//! score (Regan's), `z_pooled = (optimal − Σp) / sqrt(Σ p(1 − p))`, sees steady help. The games
//! test sees help in some games only: each game was played by the player (each position optimal
//! with `p_i`) or relayed from an engine (optimal with `q_i = max(p_i, ENGINE_HIT)`); the share
//! of relayed games is fitted by maximum likelihood and `z_games = sqrt(2 · max L)`, which with
//! no engine has the normal tail of `z_pooled`. The evidence names the fitted share and the games
//! more likely relayed than not at that share. A flag takes `max(z_pooled, z_games)` against the
//! bar of `projections::audit::FlagRules` (with a minimum of critical positions); the two tests
//! together flag an honest player at most twice as often as one. The thinking times' coefficient
//! of variation is reported, not used for the flag.

use crate::games::AnyPosition;

/// How a move compares with the best one, by the exact values of the position before it and
/// after it, both for the side that moved (the analysis' convention: positive wins, zero draws).
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
    /// The player's rating before the match, and its deviation (Glicko-2's RD).
    pub rating: f64,
    pub deviation: f64,
    /// The position's depth (plies played before the move): its phase of the game.
    pub ply: u32,
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
/// Pseudo-positions of the broader skill each calibration cell starts from (a cell with few
/// positions leans on it).
pub const BAND_PRIOR: f64 = 20.0;
/// Plies per phase of the game: the same player finds an early position's best move far less
/// often than a late one's (the win is further away), so the skill is calibrated per phase.
pub const PHASE_PLIES: u32 = 8;
/// The last phase (every later ply belongs to it).
pub const LAST_PHASE: u32 = 7;
/// How often an engine's relay plays the optimal move at a critical position (a little short
/// of always: the assessor's verdict and the engine's need not agree on every tie).
pub const ENGINE_HIT: f64 = 0.99;
/// The highest skill ever expected: a perfect record is never what is expected.
const MAX_SKILL: f64 = 0.99;

/// The ladder's skill at critical positions by rating band and phase of the game: per cell, the
/// optimal moves beyond chance (`Σ optimal − chance`) over the room chance leaves
/// (`Σ 1 − chance`). The model: a player of rating r plays a critical position's optimal move
/// with probability `chance + (1 − chance) · skill(r, ply)`, the skill being their band's at
/// that phase (calibrated on the ladder's own players, leaving out the player under test),
/// shrunk toward the band's skill moved by the phase's difference from the whole ladder's.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Calibration {
    cells: std::collections::BTreeMap<(i64, u32), (f64, f64)>,
    bands: std::collections::BTreeMap<i64, (f64, f64)>,
    phases: std::collections::BTreeMap<u32, (f64, f64)>,
    all: (f64, f64),
}

impl Calibration {
    /// The band of a rating.
    pub fn band(rating: f64) -> i64 {
        (rating / BAND_WIDTH).floor() as i64
    }

    /// The phase of a ply.
    pub fn phase(ply: u32) -> u32 {
        (ply / PHASE_PLIES).min(LAST_PHASE)
    }

    /// Counts `moves` in (`sign` 1.0) or out (`sign` −1.0: leaving a player out).
    pub fn add(&mut self, moves: &[CriticalMove], sign: f64) {
        for m in moves {
            let c = m.chance();
            let excess = sign * (f64::from(u8::from(m.optimal)) - c);
            let room = sign * (1.0 - c);
            let (band, phase) = (Self::band(m.rating), Self::phase(m.ply));
            for sum in [
                self.cells.entry((band, phase)).or_default(),
                self.bands.entry(band).or_default(),
                self.phases.entry(phase).or_default(),
                &mut self.all,
            ] {
                sum.0 += excess;
                sum.1 += room;
            }
        }
    }

    /// The expected skill of a player rated `rating ± deviation` at a position `ply` plies deep
    /// (0: chance, 1: always optimal): the most skilled band within two deviations of the
    /// rating, so that a player whose rating lags their skill (a newcomer, a player who met
    /// stronger opponents than their level) is not taken for a cheater.
    pub fn skill_within(&self, rating: f64, deviation: f64, ply: u32) -> f64 {
        let (lo, hi) = (
            Self::band(rating - 2.0 * deviation),
            Self::band(rating + 2.0 * deviation),
        );
        (lo..=hi.max(lo))
            .map(|band| self.skill(f64::from(band as i32) * BAND_WIDTH, ply))
            .fold(0.0, f64::max)
    }

    /// The expected skill of a player of `rating` at a position `ply` plies deep (0: chance,
    /// 1: always optimal), kept below 1 so that a perfect record is never what is expected.
    pub fn skill(&self, rating: f64, ply: u32) -> f64 {
        let overall = if self.all.1 > 1e-9 {
            (self.all.0 / self.all.1).clamp(0.0, MAX_SKILL)
        } else {
            0.5
        };
        let shrunk = |sum: Option<&(f64, f64)>, toward: f64| {
            let (excess, room) = sum.copied().unwrap_or_default();
            ((excess + BAND_PRIOR * toward) / (room + BAND_PRIOR)).clamp(0.0, MAX_SKILL)
        };
        let (band, phase) = (Self::band(rating), Self::phase(ply));
        let of_band = shrunk(self.bands.get(&band), overall);
        let of_phase = shrunk(self.phases.get(&phase), overall);
        let toward = (of_band + of_phase - overall).clamp(0.0, MAX_SKILL);
        shrunk(self.cells.get(&(band, phase)), toward)
    }

    /// The probability that a player of the ladder plays `m`'s optimal move.
    pub fn expected(&self, m: &CriticalMove) -> f64 {
        let c = m.chance();
        c + (1.0 - c) * self.skill_within(m.rating, m.deviation, m.ply)
    }
}

/// The most games' worth one player weighs in the ladder's yardstick ([`Calibration`]): no
/// player, however busy, moves a band's expectation alone.
pub const MAX_PLAYER_GAMES: f64 = 12.0;

/// The weight each of one player's games carries in the ladder's yardstick, `opponents[i]`
/// being game *i*'s opponent (`None`: unknown, counted as an opponent of its own). Games against
/// the same opponent share one game's weight, so a ring of accounts playing one another weighs
/// only as much as its distinct pairings, and all of a player's games together weigh at most
/// [`MAX_PLAYER_GAMES`]. Accounts made to play badly in an honest player's band (to make their
/// skill look out of place) then count for little beside the band's real players.
pub fn game_weights<T: Ord>(opponents: &[Option<T>]) -> Vec<f64> {
    let mut per_opponent: std::collections::BTreeMap<&T, f64> = std::collections::BTreeMap::new();
    for o in opponents.iter().flatten() {
        *per_opponent.entry(o).or_default() += 1.0;
    }
    let raw: Vec<f64> = opponents
        .iter()
        .map(|o| o.as_ref().map_or(1.0, |o| 1.0 / per_opponent[o]))
        .collect();
    let total: f64 = raw.iter().sum();
    let scale = if total > MAX_PLAYER_GAMES {
        MAX_PLAYER_GAMES / total
    } else {
        1.0
    };
    raw.into_iter().map(|w| w * scale).collect()
}

/// What a player's critical positions say, against what their rating leads to expect.
#[derive(Clone, Debug, PartialEq)]
pub struct Evidence {
    pub critical: u32,
    pub optimal: u32,
    /// The optimal moves expected (the sum of each position's probability).
    pub expected: f64,
    /// The larger of the two standard scores below: what a flag is raised on.
    pub z: f64,
    /// `(optimal − expected) / sd` over every position: the test for steady help.
    pub z_pooled: f64,
    /// The signed root of the likelihood ratio of "some share of the games were played with an
    /// engine" against "none were" (the test for help in some games only; 0 when no share fits
    /// better than none).
    pub z_games: f64,
    /// The share of games that fits best as engine-played (0 to 1).
    pub engine_share: f64,
    /// The games (indexes into the input) more likely engine-played than not at that share.
    pub suspect_games: Vec<usize>,
    /// The coefficient of variation of the thinking times (standard deviation over mean): a
    /// human's times vary widely; a steady relay of an engine's answers does not. `None` when
    /// the mean is zero.
    pub think_cv: Option<f64>,
}

/// The evidence of one player's critical positions, `games` holding each game's, under
/// `calibration`.
///
/// Two tests, the flag taking the stronger: the pooled standard score (Regan's: optimal moves
/// against their expectation over every position), which sees steady help best; and a mixture
/// over games, which sees help in some games only. Under the mixture, each game was played by
/// the player (each position optimal with its expected probability `p`) or relayed from an
/// engine (optimal with `q = max(p, ENGINE_HIT)`); a game's likelihood ratio is `Π (q / p)`
/// over its optimal moves times `Π ((1 − q) / (1 − p))` over the others, and the share `f` of relayed games is fitted by maximum likelihood,
/// `L(f) = Σ ln(1 − f + f · LR_game)`. With no engine, `2 · max L` follows the chi-bar-squared
/// law of one parameter on its boundary (half zero, half chi-squared with one degree), so
/// `sqrt(2 · max L)` has the normal tail of the pooled score and reads on the same bar.
pub fn evidence(games: &[Vec<CriticalMove>], calibration: &Calibration) -> Evidence {
    let (mut expected, mut variance, mut optimal) = (0.0, 0.0, 0u32);
    let mut ratios = Vec::with_capacity(games.len());
    for game in games {
        let mut log_ratio = 0.0;
        for m in game {
            let p = calibration.expected(m);
            expected += p;
            variance += p * (1.0 - p);
            optimal += u32::from(m.optimal);
            // An engine is never expected to do worse than the player.
            let hit = p.max(ENGINE_HIT);
            log_ratio += if hit <= p {
                0.0
            } else if m.optimal {
                (hit / p).ln()
            } else {
                ((1.0 - hit) / (1.0 - p)).ln()
            };
        }
        ratios.push(log_ratio);
    }
    let z_pooled = (f64::from(optimal) - expected) / variance.sqrt().max(1e-9);
    let (engine_share, max_log) = fit_share(&ratios);
    let suspect_games = ratios
        .iter()
        .enumerate()
        .filter(|&(_, &l)| engine_share > 0.0 && engine_share.ln() + l > (1.0 - engine_share).ln())
        .map(|(i, _)| i)
        .collect();
    let z_games = (2.0 * max_log).max(0.0).sqrt();
    let times: Vec<f64> = games.iter().flatten().map(|m| m.think_ms as f64).collect();
    let n = times.len() as f64;
    let mean = times.iter().sum::<f64>() / n.max(1.0);
    let sd = (times.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / n.max(1.0)).sqrt();
    Evidence {
        critical: times.len() as u32,
        optimal,
        expected,
        z: z_pooled.max(z_games),
        z_pooled,
        z_games,
        engine_share,
        suspect_games,
        think_cv: (mean > 0.0).then(|| sd / mean),
    }
}

/// The share `f` of engine-played games that maximises `Σ ln(1 − f + f · e^l)` over the games'
/// log likelihood ratios `l`, and that maximum (0 at `f = 0`). The sum is concave in `f`, so a
/// ternary search finds it.
fn fit_share(log_ratios: &[f64]) -> (f64, f64) {
    let at = |f: f64| -> f64 {
        log_ratios
            .iter()
            .map(|&l| {
                // ln(1 − f + f·e^l), kept finite for large l.
                if l > 0.0 {
                    l + (f + (1.0 - f) * (-l).exp()).ln()
                } else {
                    (1.0 - f + f * l.exp()).ln()
                }
            })
            .sum()
    };
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..60 {
        let (a, b) = (lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0);
        if at(a) < at(b) {
            lo = a;
        } else {
            hi = b;
        }
    }
    let f = (lo + hi) / 2.0;
    let best = at(f);
    if best > 0.0 { (f, best) } else { (0.0, 0.0) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::GameId;
    use crate::rng::SplitMix64;

    fn after(game: GameId, moves: &str) -> AnyPosition {
        crate::analysis::position_after(game, moves).expect("a record")
    }

    #[test]
    fn games_against_one_opponent_share_a_weight_and_a_player_weighs_at_most_a_cap() {
        let w = game_weights(&[Some(1), Some(1), Some(2), None, Some(1)]);
        assert_eq!(w, vec![1.0 / 3.0, 1.0 / 3.0, 1.0, 1.0, 1.0 / 3.0]);
        let busy: Vec<Option<u32>> = (0..40).map(Some).collect();
        let w = game_weights(&busy);
        assert!((w.iter().sum::<f64>() - MAX_PLAYER_GAMES).abs() < 1e-9);
        assert!(
            w.iter()
                .all(|&x| (x - MAX_PLAYER_GAMES / 40.0).abs() < 1e-12)
        );
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
        at_ply(rating, 20, best, legal, optimal)
    }

    fn at_ply(rating: f64, ply: u32, best: u32, legal: u32, optimal: bool) -> CriticalMove {
        CriticalMove {
            rating,
            deviation: 0.0,
            ply,
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
            (c.skill(1550.0, 20) - 1.0 / 3.0).abs() < 0.01,
            "{}",
            c.skill(1550.0, 20)
        );
        // An empty band leans on the ladder's skill.
        assert!((c.skill(2300.0, 20) - 1.0 / 3.0).abs() < 1e-9);
        // Left out again, nothing remains: the default.
        c.add(&band, -1.0);
        assert!((c.skill(1550.0, 20) - 0.5).abs() < 1e-9);
    }

    #[test]
    fn the_expected_skill_follows_the_phase_of_the_game_in_every_band() {
        let mut c = Calibration::default();
        // Two bands; early positions (plies 8–15) are found half as often beyond chance as late
        // ones (plies 24–31) in both, and the strong band is better at both.
        for (rating, early, late) in [(1300.0, 0.2, 0.6), (1700.0, 0.4, 0.8)] {
            for (ply, skill) in [(10, early), (26, late)] {
                let moves: Vec<CriticalMove> = (0..1000)
                    // One best move of two: optimal with 1/2 + skill/2.
                    .map(|i| at_ply(rating, ply, 1, 2, f64::from(i % 100) < 50.0 * (1.0 + skill)))
                    .collect();
                c.add(&moves, 1.0);
            }
        }
        for (rating, ply, skill) in [
            (1300.0, 9, 0.2),
            (1300.0, 30, 0.6),
            (1700.0, 15, 0.4),
            (1750.0, 24, 0.8),
        ] {
            assert!(
                (c.skill(rating, ply) - skill).abs() < 0.01,
                "{rating} at {ply}: {}",
                c.skill(rating, ply)
            );
        }
        // A phase the strong band never met leans on the band moved by the phase's difference:
        // say only the weak band was seen at plies 40+, as well as it plays late.
        let endgame: Vec<CriticalMove> = (0..1000)
            .map(|i| at_ply(1300.0, 41, 1, 2, f64::from(i % 100) < 50.0 * 1.6))
            .collect();
        c.add(&endgame, 1.0);
        let strong_endgame = c.skill(1700.0, 41);
        assert!(
            strong_endgame > c.skill(1300.0, 41) + 0.05,
            "{strong_endgame}"
        );
        // The expectation at a position: chance plus skill's share of the rest.
        let m = at_ply(1300.0, 26, 1, 4, true);
        assert!((c.expected(&m) - (0.25 + 0.75 * c.skill(1300.0, 26))).abs() < 1e-12);
    }

    #[test]
    fn a_rating_that_lags_is_measured_against_the_best_band_it_may_belong_to() {
        let mut c = Calibration::default();
        for (rating, optimal_of_ten) in [(1300.0, 3), (1500.0, 5), (1700.0, 8)] {
            let moves: Vec<CriticalMove> = (0..1000)
                .map(|i| at_ply(rating, 20, 1, 2, i % 10 < optimal_of_ten))
                .collect();
            c.add(&moves, 1.0);
        }
        let (weak, strong) = (c.skill(1500.0, 20), c.skill(1700.0, 20));
        assert!(strong > weak + 0.5, "{weak} {strong}");
        // Sure of a 1500 rating: the 1500 band. Rated 1500 ± 100: as strong as 1700's band.
        assert!((c.skill_within(1500.0, 0.0, 20) - weak).abs() < 1e-12);
        assert!((c.skill_within(1500.0, 100.0, 20) - strong).abs() < 1e-12);
        // Never below the rating's own band.
        assert!(c.skill_within(1700.0, 150.0, 20) >= strong);
    }

    #[test]
    fn a_perfect_record_stands_out_and_an_ordinary_one_does_not() {
        let mut c = Calibration::default();
        let ladder: Vec<CriticalMove> = (0..600)
            .map(|i| critical(1500.0, 1, 5, i % 3 == 0))
            .collect();
        c.add(&ladder, 1.0);
        let perfect: Vec<Vec<CriticalMove>> = (0..15)
            .map(|_| (0..4).map(|_| critical(1500.0, 1, 5, true)).collect())
            .collect();
        let e = evidence(&perfect, &c);
        assert_eq!((e.critical, e.optimal), (60, 60));
        assert!(e.z_pooled > 4.75 && e.z >= e.z_pooled, "{e:?}");
        assert!(
            e.engine_share > 0.95 && e.suspect_games.len() == 15,
            "{e:?}"
        );
        let ordinary: Vec<Vec<CriticalMove>> = (0..15)
            .map(|g| {
                (0..4)
                    .map(|i| critical(1500.0, 1, 5, (g * 4 + i) % 3 == 1))
                    .collect()
            })
            .collect();
        let e = evidence(&ordinary, &c);
        assert!(e.z_pooled.abs() < 2.0 && e.z < 2.0, "{e:?}");
        assert_eq!(e.think_cv, Some(0.0));
    }

    /// `games` games of `per_game` critical positions of one best move among `legal`, each
    /// optimal with the ladder's probability `p` or, in an engine game, always.
    fn simulated(
        rng: &mut SplitMix64,
        games: usize,
        per_game: usize,
        p: f64,
        engine: &[bool],
    ) -> Vec<Vec<CriticalMove>> {
        (0..games)
            .map(|g| {
                (0..per_game)
                    .map(|_| {
                        let engine = engine.get(g).copied().unwrap_or(false);
                        critical(1500.0, 1, 4, engine || rng.unit() < p)
                    })
                    .collect()
            })
            .collect()
    }

    /// A ladder at 1500 where one best move of four is found with probability `p`.
    fn ladder(p: f64) -> Calibration {
        let mut c = Calibration::default();
        // Skill s with p = 1/4 + 3/4 · s, in exact proportions.
        let moves: Vec<CriticalMove> = (0..10_000)
            .map(|i| critical(1500.0, 1, 4, f64::from(i) < 10_000.0 * p))
            .collect();
        c.add(&moves, 1.0);
        c
    }

    #[test]
    fn help_in_one_game_of_three_shows_in_the_games_test_beyond_the_pooled_one() {
        let p = 0.6;
        let c = ladder(p);
        let mut rng = SplitMix64(7);
        // 40 games of 8 critical positions, every third one relayed from an engine.
        let engine: Vec<bool> = (0..40).map(|g| g % 3 == 0).collect();
        let games = simulated(&mut rng, 40, 8, p, &engine);
        let e = evidence(&games, &c);
        assert!(e.z_games > 4.75, "{e:?}");
        assert!(e.z_games > e.z_pooled + 1.0, "{e:?}");
        assert!((e.engine_share - 14.0 / 40.0).abs() < 0.1, "{e:?}");
        // The games it suspects are the relayed ones, nearly all of them and nearly only them.
        let right = e.suspect_games.iter().filter(|&&g| engine[g]).count();
        assert!(right >= 12 && e.suspect_games.len() - right <= 2, "{e:?}");
    }

    #[test]
    fn honest_players_pass_both_tests_at_the_rate_of_the_normal_tail() {
        // 2,000 honest players of 40 games, each of 3 to 8 critical positions, at ladders of
        // several skills. Both scores read on the normal tail: above 2.326 about 1 % of the
        // time, above 3.09 about 0.1 %; allow twice that (the counts' own spread), and the flag's
        // bar, 4.75, never.
        let mut rng = SplitMix64(2026);
        let (mut above_2, mut above_3, mut above_bar) = ([0; 2], [0; 2], 0);
        let players = 2000;
        for i in 0..players {
            let p = [0.35, 0.6, 0.8][i % 3];
            let c = ladder(p);
            let per_game = 3 + i % 6;
            let e = evidence(&simulated(&mut rng, 40, per_game, p, &[]), &c);
            for (k, z) in [e.z_pooled, e.z_games].into_iter().enumerate() {
                above_2[k] += usize::from(z > 2.326);
                above_3[k] += usize::from(z > 3.09);
            }
            above_bar += usize::from(e.z >= 4.75);
        }
        for k in 0..2 {
            assert!(above_2[k] <= 2 * players / 100, "{above_2:?}");
            assert!(above_3[k] <= 2 * players / 1000, "{above_3:?}");
        }
        assert_eq!(above_bar, 0);
    }
}
