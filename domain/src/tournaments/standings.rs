//! Standings: a pure function of the tournament's events, so that they can be rebuilt, audited
//! and recomputed exactly when an admin removes a player — that player's games then count as
//! forfeits (a loss for them, a win for their opponent), the pairings already made kept as they
//! were, and every score, streak and tie-break is worked out again from the start.
//!
//! Scores are integers: an arena's points (win 2, draw 1, loss 0, doubled while on fire: after
//! two wins in a row, until a game is not won), and for Swiss and round robin half-points (win 2,
//! draw 1, loss 0, a bye as given). Ties: an arena's by performance; Swiss and round robin by
//! Buchholz (the sum of the opponents' scores), then Sonneborn–Berger (the scores of the
//! opponents beaten, and half those of the opponents drawn, in quarter points), then rating.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::ids::PlayerId;

use super::{EntrantStatus, Format, Tournament};

/// A player's line in the standings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Line {
    /// From 1.
    pub rank: u32,
    pub player_id: PlayerId,
    /// Arena points, or half-points (Swiss, round robin).
    pub score: u32,
    pub games: u32,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    /// Wins in a row now.
    pub streak: u32,
    /// Whether the next win scores double (arena).
    pub on_fire: bool,
    /// Half-points (Swiss, round robin).
    pub buchholz: u32,
    /// Quarter points (Swiss, round robin).
    pub sonneborn_berger: u32,
    /// The average opponent's rating plus 400 × (wins − losses) / games; the rating at joining
    /// before any game.
    pub performance: f64,
    pub status: EntrantStatus,
}

/// One player's tally while the games are replayed.
#[derive(Default)]
struct Tally {
    score: u32,
    wins: u32,
    draws: u32,
    losses: u32,
    streak: u32,
    opponents: Vec<(PlayerId, Outcome)>,
    opponent_ratings: f64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Win,
    Draw,
    Loss,
}

/// The standings of `t`, every removed player's games scored as forfeits.
pub fn standings(t: &Tournament) -> Vec<Line> {
    standings_without(t, &[])
}

/// The standings of `t` as they would be were `also_removed` removed too (the what-if of a
/// removal): removed players are left out of the lines.
pub fn standings_without(t: &Tournament, also_removed: &[PlayerId]) -> Vec<Line> {
    let removed: HashSet<PlayerId> = t
        .removed
        .iter()
        .map(|(p, _)| *p)
        .chain(also_removed.iter().copied())
        .collect();
    let rating: HashMap<PlayerId, f64> =
        t.entrants.iter().map(|e| (e.player_id, e.rating)).collect();
    let arena = t.created.format == Format::Arena;
    let mut tally: HashMap<PlayerId, Tally> = t
        .entrants
        .iter()
        .map(|e| (e.player_id, Tally::default()))
        .collect();
    for game in &t.games {
        let [a, b] = game.pairing.players;
        let Some(winner) = game.result else {
            continue;
        };
        let outcome_of =
            |p: PlayerId, other: PlayerId| match (removed.contains(&p), removed.contains(&other)) {
                (true, _) => Outcome::Loss,
                (false, true) => Outcome::Win,
                _ => match winner {
                    None => Outcome::Draw,
                    Some(w) if w == p => Outcome::Win,
                    Some(_) => Outcome::Loss,
                },
            };
        for (p, other) in [(a, b), (b, a)] {
            let outcome = outcome_of(p, other);
            let Some(s) = tally.get_mut(&p) else {
                continue;
            };
            let doubled = arena && s.streak >= 2;
            let points = match outcome {
                Outcome::Win => 2,
                Outcome::Draw => 1,
                Outcome::Loss => 0,
            };
            s.score += if doubled { 2 * points } else { points };
            match outcome {
                Outcome::Win => {
                    s.wins += 1;
                    s.streak += 1;
                }
                Outcome::Draw => {
                    s.draws += 1;
                    s.streak = 0;
                }
                Outcome::Loss => {
                    s.losses += 1;
                    s.streak = 0;
                }
            }
            s.opponents.push((other, outcome));
            s.opponent_ratings += rating.get(&other).copied().unwrap_or(1500.0);
        }
    }
    for bye in &t.byes {
        if let Some(s) = tally.get_mut(&bye.player_id) {
            s.score += bye.half_points;
        }
    }
    let score: HashMap<PlayerId, u32> = tally
        .iter()
        .map(|(p, s)| (*p, if removed.contains(p) { 0 } else { s.score }))
        .collect();
    let mut lines: Vec<Line> = t
        .entrants
        .iter()
        .filter(|e| !removed.contains(&e.player_id))
        .map(|e| {
            let s = &tally[&e.player_id];
            let games = s.wins + s.draws + s.losses;
            let score_of = |o: &PlayerId| score.get(o).copied().unwrap_or(0);
            let buchholz = s.opponents.iter().map(|(o, _)| score_of(o)).sum();
            let sonneborn_berger = s
                .opponents
                .iter()
                .map(|(o, outcome)| match outcome {
                    Outcome::Win => 2 * score_of(o),
                    Outcome::Draw => score_of(o),
                    Outcome::Loss => 0,
                })
                .sum();
            let performance = if games == 0 {
                e.rating
            } else {
                (s.opponent_ratings + 400.0 * (f64::from(s.wins) - f64::from(s.losses)))
                    / f64::from(games)
            };
            Line {
                rank: 0,
                player_id: e.player_id,
                score: s.score,
                games,
                wins: s.wins,
                draws: s.draws,
                losses: s.losses,
                streak: s.streak,
                on_fire: arena && s.streak >= 2,
                buchholz,
                sonneborn_berger,
                performance,
                status: e.status,
            }
        })
        .collect();
    let joined: HashMap<PlayerId, usize> = t
        .entrants
        .iter()
        .enumerate()
        .map(|(i, e)| (e.player_id, i))
        .collect();
    lines.sort_by(|x, y| {
        let by_score = y.score.cmp(&x.score);
        let ties = if arena {
            y.performance.total_cmp(&x.performance)
        } else {
            y.buchholz
                .cmp(&x.buchholz)
                .then(y.sonneborn_berger.cmp(&x.sonneborn_berger))
                .then(rating[&y.player_id].total_cmp(&rating[&x.player_id]))
        };
        by_score
            .then(ties)
            .then(joined[&x.player_id].cmp(&joined[&y.player_id]))
    });
    for (i, line) in lines.iter_mut().enumerate() {
        line.rank = i as u32 + 1;
    }
    lines
}

/// One player's change under a removal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Change {
    pub player_id: PlayerId,
    pub rank_before: u32,
    /// `None` for the player removed.
    pub rank_after: Option<u32>,
    pub score_before: u32,
    pub score_after: u32,
}

/// What removing `player` changes: every player's rank and score before and after, in the
/// order of the standings before.
pub fn removal_report(t: &Tournament, player: PlayerId) -> Vec<Change> {
    let before = standings(t);
    let after: HashMap<PlayerId, (u32, u32)> = standings_without(t, &[player])
        .into_iter()
        .map(|l| (l.player_id, (l.rank, l.score)))
        .collect();
    before
        .into_iter()
        .map(|l| {
            let now = after.get(&l.player_id);
            Change {
                player_id: l.player_id,
                rank_before: l.rank,
                rank_after: now.map(|(r, _)| *r),
                score_before: l.score,
                score_after: now.map_or(0, |(_, s)| *s),
            }
        })
        .collect()
}
