//! The rating ledger: standings per (player, ladder) advanced match by match with
//! [`domain::ratings::rate`]. The ratings and leaderboards projections and the audits all rate
//! through this one piece of code, so they can only differ if their inputs do.

use std::collections::HashMap;

use domain::ids::{MatchId, PlayerId, Seat};
use domain::ratings::{Ladder, Standing, Step, rate};

use crate::facts::Finished;

/// One player's rating step in one match, with where it came from in the log.
#[derive(Debug, Clone, PartialEq)]
pub struct RatedStep {
    pub player: PlayerId,
    pub opponent: PlayerId,
    pub ladder: Ladder,
    pub match_id: MatchId,
    pub at: time::OffsetDateTime,
    pub step: Step,
    /// Ranked games played, this one included.
    pub games: u32,
    pub created_position: i64,
    pub ended_position: i64,
}

/// Standings by (player, ladder); a missing entry is a newcomer.
#[derive(Debug, Default, Clone)]
pub struct Ledger {
    pub standings: HashMap<(PlayerId, Ladder), Standing>,
}

impl Ledger {
    pub fn standing(&self, player: PlayerId, ladder: Ladder) -> Standing {
        self.standings
            .get(&(player, ladder))
            .copied()
            .unwrap_or(Standing::NEW)
    }

    /// Rates a finished match if it counts (ranked, two humans): both players' steps, seat 1
    /// first. Matches that do not count give nothing.
    pub fn apply(&mut self, f: &Finished) -> Option<[RatedStep; 2]> {
        if !f.is_rated() {
            return None;
        }
        let [Some(p1), Some(p2)] = f.players else {
            return None;
        };
        let ladder = f.ladder();
        let (s1, s2) = (self.standing(p1, ladder), self.standing(p2, ladder));
        let steps = rate(&s1, &s2, f.score_of(Seat::ONE), f.ended_at);
        let n1 = s1.after(&steps[0], f.ended_at);
        let n2 = s2.after(&steps[1], f.ended_at);
        self.standings.insert((p1, ladder), n1);
        self.standings.insert((p2, ladder), n2);
        let rated = |player, opponent, step: Step, games| RatedStep {
            player,
            opponent,
            ladder,
            match_id: f.match_id,
            at: f.ended_at,
            step,
            games,
            created_position: f.created_position,
            ended_position: f.ended_position,
        };
        Some([
            rated(p1, p2, steps[0], n1.games),
            rated(p2, p1, steps[1], n2.games),
        ])
    }
}
