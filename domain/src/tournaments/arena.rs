//! Arena pairing: the joined players who are idle (not paused, not in a game) are paired as a
//! minimum-cost matching on the blossom code of the ranked queue (`matchmaking::blossom`), as
//! Lichess's arenas are. The cost of a pair is the distance between their ranks, weighted toward
//! the top of the table (300 + 1700 × how high the better of the two stands, per 100), plus the
//! distance between their ratings. Hard rules: no immediate rematch, and nobody moves first a
//! third time in a row (Four in a Row's first player wins under perfect play): two players who
//! both moved first in their last two games are not paired. The first move goes to whoever has
//! moved first the fewest times more than second (then second more recently, then the better
//! ranked). Players are matched in
//! groups of [`GROUP`] by rank, so that a wave of 10,000 idle players costs a hundred small
//! matchings, not one of O(n³); one left over in a group moves on to the next.

use crate::ids::PlayerId;
use crate::matchmaking::blossom::max_weight_matching;

use super::Tournament;

/// Players matched together at most.
pub const GROUP: usize = 100;

/// The opponent of `player`'s last game, finished or not.
pub fn last_opponent(t: &Tournament, player: PlayerId) -> Option<PlayerId> {
    t.games_of(player).last().map(|g| {
        let [a, b] = g.pairing.players;
        if a == player { b } else { a }
    })
}

/// How many of `player`'s last games in a row they moved first.
pub fn first_streak(t: &Tournament, player: PlayerId) -> u32 {
    streak(t, player, true)
}

/// How many of `player`'s last games in a row they moved second.
pub fn second_streak(t: &Tournament, player: PlayerId) -> u32 {
    streak(t, player, false)
}

fn streak(t: &Tournament, player: PlayerId, first: bool) -> u32 {
    let moves_first: Vec<bool> = t
        .games_of(player)
        .map(|g| g.pairing.players[0] == player)
        .collect();
    moves_first
        .iter()
        .rev()
        .take_while(|&&f| f == first)
        .count() as u32
}

/// An idle player as the pairing sees them.
#[derive(Clone, Debug, PartialEq)]
pub struct Idle {
    pub player: PlayerId,
    /// Their rank in the standings, from 1.
    pub rank: u32,
    pub rating: f64,
    pub last_opponent: Option<PlayerId>,
    /// Games moved first, and second.
    pub firsts: u32,
    pub seconds: u32,
    /// Their last games in a row moved first, and second.
    pub first_streak: u32,
    pub second_streak: u32,
}

impl Idle {
    /// `player` as the pairing sees them in `t`, at `rank`.
    pub fn of(t: &Tournament, player: PlayerId, rank: u32) -> Idle {
        let firsts = t
            .games_of(player)
            .filter(|g| g.pairing.players[0] == player)
            .count() as u32;
        Idle {
            player,
            rank,
            rating: t.entrant(player).map_or(1500.0, |e| e.rating),
            last_opponent: last_opponent(t, player),
            firsts,
            seconds: t.games_of(player).count() as u32 - firsts,
            first_streak: first_streak(t, player),
            second_streak: second_streak(t, player),
        }
    }
}

/// Whether `a` and `b` may meet now.
fn allowed(a: &Idle, b: &Idle) -> bool {
    a.last_opponent != Some(b.player)
        && b.last_opponent != Some(a.player)
        && !(a.first_streak >= 2 && b.first_streak >= 2)
}

/// The pair `a`–`b` with its first mover first.
fn ordered<'a>(a: &'a Idle, b: &'a Idle) -> (&'a Idle, &'a Idle) {
    if a.first_streak >= 2 {
        return (b, a);
    }
    if b.first_streak >= 2 {
        return (a, b);
    }
    let balance = |p: &Idle| i64::from(p.firsts) - i64::from(p.seconds);
    let key = |p: &Idle| (balance(p), -i64::from(p.second_streak), p.rank);
    if key(a) <= key(b) { (a, b) } else { (b, a) }
}

/// The cost of pairing `a` and `b` among players ranked down to `lowest`.
fn cost(a: &Idle, b: &Idle, lowest: u32) -> i64 {
    let lowest = i64::from(lowest.max(1));
    let better = i64::from(a.rank.min(b.rank));
    let factor = 300 + 1700 * (lowest - better).max(0) / lowest;
    let ranks = (i64::from(a.rank) - i64::from(b.rank)).abs();
    ranks * factor / 100 + (a.rating - b.rating).abs().round() as i64
}

/// Pairs `idle` players: each pair with its first mover first. Those left over (an odd one, or
/// one with nobody allowed) wait for the next wave.
pub fn pair(idle: &[Idle]) -> Vec<(PlayerId, PlayerId)> {
    let mut players: Vec<&Idle> = idle.iter().collect();
    players.sort_by_key(|p| (p.rank, p.player));
    let lowest = players.iter().map(|p| p.rank).max().unwrap_or(1);
    let mut pairs = Vec::with_capacity(players.len() / 2);
    let mut carried: Vec<&Idle> = Vec::new();
    for chunk in players.chunks(GROUP) {
        let group: Vec<&Idle> = carried.drain(..).chain(chunk.iter().copied()).collect();
        let mut edges = Vec::new();
        for i in 0..group.len() {
            for j in i + 1..group.len() {
                if allowed(group[i], group[j]) {
                    // Maximised: a constant above any cost.
                    edges.push((i, j, 1_000_000_000_000 - cost(group[i], group[j], lowest)));
                }
            }
        }
        let mate = max_weight_matching(group.len(), &edges, true);
        for (i, m) in mate.iter().enumerate() {
            match m {
                Some(j) if i < *j => {
                    let (first, second) = ordered(group[i], group[*j]);
                    pairs.push((first.player, second.player));
                }
                Some(_) => {}
                None => carried.push(group[i]),
            }
        }
    }
    pairs
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use proptest::prelude::*;
    use uuid::Uuid;

    use super::*;

    fn idle(n: usize, seed: u64) -> Vec<Idle> {
        let mut rng = crate::rng::SplitMix64(seed);
        (0..n)
            .map(|i| {
                let streak = rng.index(3) as u32;
                let first = rng.index(2) == 0;
                Idle {
                    player: PlayerId::from_uuid(Uuid::from_u128(i as u128 + 1)),
                    rank: i as u32 + 1,
                    rating: 1200.0 + rng.index(800) as f64,
                    last_opponent: (i > 0 && rng.index(2) == 0)
                        .then(|| PlayerId::from_uuid(Uuid::from_u128(rng.index(n) as u128 + 1))),
                    firsts: rng.index(5) as u32,
                    seconds: rng.index(5) as u32,
                    first_streak: if first { streak } else { 0 },
                    second_streak: if first { 0 } else { streak },
                }
            })
            .collect()
    }

    proptest! {
        #[test]
        fn pairings_keep_the_hard_rules(n in 0usize..260, seed in any::<u64>()) {
            let players = idle(n, seed);
            let by_id: std::collections::HashMap<PlayerId, &Idle> =
                players.iter().map(|p| (p.player, p)).collect();
            let pairs = pair(&players);
            let mut seen = HashSet::new();
            for (a, b) in &pairs {
                prop_assert!(seen.insert(*a) && seen.insert(*b), "a player paired twice");
                let (pa, pb) = (by_id[a], by_id[b]);
                prop_assert!(pa.last_opponent != Some(*b) && pb.last_opponent != Some(*a));
                prop_assert!(pa.first_streak < 2, "a third first move in a row");
            }
            // Everyone who could be paired is, but for an odd one per group at most (each
            // generated group has allowed partners aplenty).
            prop_assert!(players.len() - seen.len() <= players.len().div_ceil(GROUP).max(1) + 2,
                "{} of {} paired", seen.len(), players.len());
        }
    }

    fn id(i: u128) -> PlayerId {
        PlayerId::from_uuid(Uuid::from_u128(i))
    }

    /// Player `i`, ranked `i`, who has played nobody.
    fn newcomer(i: u128) -> Idle {
        Idle {
            player: id(i),
            rank: i as u32,
            rating: 1500.0,
            last_opponent: None,
            firsts: 0,
            seconds: 0,
            first_streak: 0,
            second_streak: 0,
        }
    }

    #[test]
    fn neighbours_in_the_table_meet_the_top_first() {
        let players: Vec<Idle> = (1..=6).map(newcomer).collect();
        let mut pairs: Vec<(PlayerId, PlayerId)> = pair(&players)
            .into_iter()
            .map(|(a, b)| if a < b { (a, b) } else { (b, a) })
            .collect();
        pairs.sort();
        assert_eq!(pairs, vec![(id(1), id(2)), (id(3), id(4)), (id(5), id(6))]);
    }

    #[test]
    fn two_players_who_just_met_wait_and_a_first_mover_twice_moves_second() {
        let mut a = newcomer(1);
        let mut b = newcomer(2);
        a.last_opponent = Some(id(2));
        b.last_opponent = Some(id(1));
        assert!(pair(&[a.clone(), b.clone()]).is_empty());
        b.last_opponent = None;
        a.last_opponent = None;
        a.first_streak = 2;
        a.firsts = 2;
        assert_eq!(pair(&[a.clone(), b.clone()]), vec![(id(2), id(1))]);
        b.first_streak = 2;
        assert!(
            pair(&[a, b]).is_empty(),
            "one of them would move first a third time"
        );
    }
}
