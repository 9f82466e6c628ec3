//! Glicko-2 ratings: pure functions of pre-match values and event times.
//!
//! Every ranked match is one rating period of its game for both players, both computed from
//! their pre-match values. Before it, each player's deviation grows once per whole 24 hours since
//! the end of their previous ranked match of that game (the Glicko-2 rule for an empty period,
//! `phi <- sqrt(phi^2 + sigma^2)`, capped at 350), counted from event timestamps, so that a
//! rebuild gives the very same numbers. The arithmetic is `skillratings`, pinned exactly.
//!
//! A rating belongs to a [`Ladder`]: a game at a pace. Real-time and correspondence ratings are
//! kept apart (a correspondence game is played over days, with time to think and to look
//! things up), so each game has two ladders.

use skillratings::Outcomes;
use skillratings::glicko2::{Glicko2Config, Glicko2Rating, decay_deviation, glicko2};
use time::OffsetDateTime;

use crate::games::GameId;

/// A rating ladder: one game at one pace, real time (`four_in_a_row`) or correspondence
/// (`four_in_a_row_correspondence`). Its name is where the rating tables keep the game: a
/// real-time ladder is named as its game, so every rating from before correspondence play
/// stays on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ladder {
    pub game: GameId,
    pub correspondence: bool,
}

impl Ladder {
    /// Every ladder: each game's real-time one, then each game's correspondence one.
    pub const ALL: [Ladder; 2 * GameId::ALL.len()] = {
        let mut all = [Ladder::live(GameId::ALL[0]); 2 * GameId::ALL.len()];
        let mut i = 0;
        while i < GameId::ALL.len() {
            all[i] = Ladder::live(GameId::ALL[i]);
            all[GameId::ALL.len() + i] = Ladder::correspondence(GameId::ALL[i]);
            i += 1;
        }
        all
    };

    pub const fn live(game: GameId) -> Ladder {
        Ladder {
            game,
            correspondence: false,
        }
    }

    pub const fn correspondence(game: GameId) -> Ladder {
        Ladder {
            game,
            correspondence: true,
        }
    }

    /// Its name: the game's for real time, the game's and `_correspondence` for correspondence.
    pub fn as_str(self) -> &'static str {
        match (self.game, self.correspondence) {
            (GameId::FourInARow, false) => "four_in_a_row",
            (GameId::FourInARow, true) => "four_in_a_row_correspondence",
            (GameId::Reversi, false) => "reversi",
            (GameId::Reversi, true) => "reversi_correspondence",
        }
    }
}

impl std::fmt::Display for Ladder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Ladder {
    type Err = String;
    fn from_str(s: &str) -> Result<Ladder, String> {
        Ladder::ALL
            .into_iter()
            .find(|l| l.as_str() == s)
            .ok_or_else(|| format!("unknown ladder `{s}`"))
    }
}

/// A player's Glicko-2 values in one game.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rating {
    pub rating: f64,
    pub deviation: f64,
    pub volatility: f64,
}

impl Rating {
    /// A player who never played the game.
    pub const NEW: Rating = Rating {
        rating: 1500.0,
        deviation: 350.0,
        volatility: 0.06,
    };

    /// A rating is provisional while its deviation is above this.
    pub const PROVISIONAL_ABOVE: f64 = 110.0;

    pub fn is_provisional(&self) -> bool {
        self.deviation > Self::PROVISIONAL_ABOVE
    }

    fn to_glicko(self) -> Glicko2Rating {
        Glicko2Rating {
            rating: self.rating,
            deviation: self.deviation,
            volatility: self.volatility,
        }
    }

    fn from_glicko(g: Glicko2Rating) -> Rating {
        Rating {
            rating: g.rating,
            deviation: g.deviation,
            volatility: g.volatility,
        }
    }
}

impl Default for Rating {
    fn default() -> Self {
        Rating::NEW
    }
}

/// The system constant tau.
pub const TAU: f64 = 0.5;

/// The deviation never grows beyond a newcomer's.
pub const MAX_DEVIATION: f64 = 350.0;

const DAY_SECONDS: i64 = 86_400;

fn config() -> Glicko2Config {
    Glicko2Config {
        tau: TAU,
        ..Glicko2Config::new()
    }
}

/// Where a player stands in one game: the values after their last ranked match, how many they
/// played, and when the last one ended (the clock of the idle-days rule).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Standing {
    pub rating: Rating,
    pub games: u32,
    pub last_ended_at: Option<OffsetDateTime>,
}

impl Standing {
    /// A player who never played the game.
    pub const NEW: Standing = Standing {
        rating: Rating::NEW,
        games: 0,
        last_ended_at: None,
    };
}

impl Default for Standing {
    fn default() -> Self {
        Standing::NEW
    }
}

/// Whole 24-hour periods from the end of the previous ranked match to `at` (0 for a first
/// match, or when the clock went backwards).
pub fn idle_days(last_ended_at: Option<OffsetDateTime>, at: OffsetDateTime) -> u32 {
    let Some(last) = last_ended_at else { return 0 };
    let seconds = (at - last).whole_seconds();
    u32::try_from(seconds.max(0) / DAY_SECONDS).unwrap_or(u32::MAX)
}

/// The deviation after `days` empty rating periods: one Glicko-2 step each, capped at 350.
pub fn decay(rating: Rating, days: u32) -> Rating {
    let mut g = rating.to_glicko();
    for _ in 0..days {
        if g.deviation >= MAX_DEVIATION {
            break;
        }
        g = decay_deviation(&g);
    }
    Rating::from_glicko(g)
}

/// A match's result from one player's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Score {
    Win,
    Draw,
    Loss,
}

impl Score {
    pub fn points(self) -> f64 {
        match self {
            Score::Win => 1.0,
            Score::Draw => 0.5,
            Score::Loss => 0.0,
        }
    }

    pub fn reversed(self) -> Score {
        match self {
            Score::Win => Score::Loss,
            Score::Draw => Score::Draw,
            Score::Loss => Score::Win,
        }
    }
}

/// One player's side of a rated match: every value an audit needs to check the step by hand.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// The stored values after the previous match (or a newcomer's).
    pub before: Rating,
    /// Whole idle days applied before the match.
    pub idle_days: u32,
    /// `before` after the idle days: the values the match was rated from.
    pub pre_match: Rating,
    pub score: Score,
    pub after: Rating,
}

/// Rates one ranked match that ended at `ended_at`: `score` is player `a`'s. Returns both
/// players' steps; their standings advance with [`Standing::after`].
pub fn rate(a: &Standing, b: &Standing, score: Score, ended_at: OffsetDateTime) -> [Step; 2] {
    let days = [
        idle_days(a.last_ended_at, ended_at),
        idle_days(b.last_ended_at, ended_at),
    ];
    let pre = [decay(a.rating, days[0]), decay(b.rating, days[1])];
    let outcome = match score {
        Score::Win => Outcomes::WIN,
        Score::Draw => Outcomes::DRAW,
        Score::Loss => Outcomes::LOSS,
    };
    let (new_a, new_b) = glicko2(
        &pre[0].to_glicko(),
        &pre[1].to_glicko(),
        &outcome,
        &config(),
    );
    [
        Step {
            before: a.rating,
            idle_days: days[0],
            pre_match: pre[0],
            score,
            after: Rating::from_glicko(new_a),
        },
        Step {
            before: b.rating,
            idle_days: days[1],
            pre_match: pre[1],
            score: score.reversed(),
            after: Rating::from_glicko(new_b),
        },
    ]
}

impl Standing {
    /// The standing after a rated match that ended at `ended_at`.
    pub fn after(&self, step: &Step, ended_at: OffsetDateTime) -> Standing {
        Standing {
            rating: step.after,
            games: self.games + 1,
            last_ended_at: Some(ended_at),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_real_time_ladder_is_named_as_its_game_and_every_name_reads_back() {
        for game in GameId::ALL {
            assert_eq!(Ladder::live(game).as_str(), game.as_str());
            assert_eq!(
                Ladder::correspondence(game).as_str(),
                format!("{}_correspondence", game.as_str())
            );
        }
        for ladder in Ladder::ALL {
            assert_eq!(ladder.as_str().parse::<Ladder>(), Ok(ladder));
        }
        assert!("chess".parse::<Ladder>().is_err());
    }
    use skillratings::glicko2::glicko2_rating_period;
    use time::Duration;

    /// 2026-01-01 00:00 UTC plus `seconds`.
    fn datetime(seconds: i64) -> OffsetDateTime {
        OffsetDateTime::from_unix_timestamp(1_767_225_600 + seconds).expect("in range")
    }

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    #[test]
    fn glickmans_worked_example_with_our_constants() {
        // Glickman, "Example of the Glicko-2 system": 1500/200/0.06 beats 1400/30, loses to
        // 1550/100 and 1700/300, tau 0.5 -> 1464.05 / 151.52 / 0.059996.
        let player = Rating {
            rating: 1500.0,
            deviation: 200.0,
            volatility: 0.06,
        };
        let opponent = |rating, deviation| Rating {
            rating,
            deviation,
            volatility: 0.06,
        };
        let results = [
            (opponent(1400.0, 30.0).to_glicko(), Outcomes::WIN),
            (opponent(1550.0, 100.0).to_glicko(), Outcomes::LOSS),
            (opponent(1700.0, 300.0).to_glicko(), Outcomes::LOSS),
        ];
        let after = glicko2_rating_period(&player.to_glicko(), &results, &config());
        assert!(close(after.rating, 1464.05, 0.01), "{after:?}");
        assert!(close(after.deviation, 151.52, 0.01), "{after:?}");
        assert!(close(after.volatility, 0.059996, 0.000001), "{after:?}");
    }

    #[test]
    fn two_newcomers_one_game() {
        // The research note's vector for per-game Glicko-2 at tau 0.5.
        let at = datetime(43_200);
        let [win, loss] = rate(&Standing::NEW, &Standing::NEW, Score::Win, at);
        assert!(close(win.after.rating, 1662.31, 0.01), "{win:?}");
        assert!(close(win.after.deviation, 290.32, 0.01), "{win:?}");
        assert!(close(loss.after.rating, 1337.69, 0.01), "{loss:?}");
        assert_eq!(loss.score, Score::Loss);
        let [d1, d2] = rate(&Standing::NEW, &Standing::NEW, Score::Draw, at);
        assert!(close(d1.after.rating, 1500.0, 1e-9) && close(d2.after.rating, 1500.0, 1e-9));
    }

    #[test]
    fn a_draw_moves_halfway_between_a_win_and_a_loss() {
        let at = datetime(43_200);
        let strong = Standing {
            rating: Rating {
                rating: 1600.0,
                deviation: 80.0,
                volatility: 0.06,
            },
            games: 30,
            last_ended_at: Some(at),
        };
        let weak = Standing {
            rating: Rating {
                rating: 1500.0,
                deviation: 80.0,
                ..Rating::NEW
            },
            ..strong
        };
        let change = |score| rate(&strong, &weak, score, at)[0].after.rating - 1600.0;
        let (w, d, l) = (change(Score::Win), change(Score::Draw), change(Score::Loss));
        assert!(w > 0.0 && l < 0.0 && d < 0.0, "{w} {d} {l}");
        assert!(close(d, (w + l) / 2.0, 0.05), "{w} {d} {l}");
    }

    #[test]
    fn idle_days_count_whole_periods_from_event_times() {
        let end = datetime(5_000_000);
        assert_eq!(idle_days(None, end), 0);
        assert_eq!(idle_days(Some(end), end + Duration::hours(23)), 0);
        assert_eq!(idle_days(Some(end), end + Duration::hours(24)), 1);
        assert_eq!(idle_days(Some(end), end + Duration::hours(71)), 2);
        assert_eq!(idle_days(Some(end), end - Duration::days(3)), 0);
    }

    #[test]
    fn idle_periods_grow_the_deviation_by_the_empty_period_rule_up_to_350() {
        let r = Rating {
            rating: 1700.0,
            deviation: 60.0,
            volatility: 0.06,
        };
        let one = decay(r, 1);
        // phi' = sqrt(phi^2 + sigma^2) on the Glicko-2 scale (173.7178 points per unit).
        let scale: f64 = 173.7178;
        let expected = ((60.0 / scale).powi(2) + 0.06f64.powi(2)).sqrt() * scale;
        assert!(
            close(one.deviation, expected, 0.01),
            "{one:?} vs {expected}"
        );
        assert_eq!(one.rating, 1700.0);
        assert_eq!(one.volatility, 0.06);
        let ten = decay(r, 10);
        assert!(ten.deviation > one.deviation);
        assert_eq!(decay(r, 100_000).deviation, MAX_DEVIATION);
        assert_eq!(decay(r, 0), r);
    }

    #[test]
    fn a_match_after_idle_days_is_rated_from_the_grown_deviation() {
        let start = datetime(0);
        let mut a = Standing::NEW;
        let mut b = Standing::NEW;
        for i in 0..20 {
            let at = start + Duration::minutes(i);
            let steps = rate(
                &a,
                &b,
                if i % 3 == 0 { Score::Loss } else { Score::Win },
                at,
            );
            a = a.after(&steps[0], at);
            b = b.after(&steps[1], at);
        }
        let later = start + Duration::days(40);
        let [step, _] = rate(&a, &b, Score::Win, later);
        assert_eq!(step.idle_days, 39);
        assert!(step.pre_match.deviation > step.before.deviation);
        assert_eq!(step.pre_match, decay(a.rating, 39));
        assert_eq!(a.games, 20);
    }
}
