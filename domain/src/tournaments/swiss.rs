//! Swiss pairing, a pure function of the standings: each round pairs players of equal score
//! where it can, as a maximum-weight matching (the blossom code of the ranked queue) whose
//! weights put, in this order: nobody left out, no rematch (never: a pair that met has no edge),
//! the smallest score differences (squared), no player moving first or second a third time in a
//! row nor three games more one way than the other (a pair that would force it has no edge,
//! unless no pairing exists without it), and inside a score group the top half against the
//! bottom half (1 against 1 + half, as FIDE's Dutch system pairs).
//!
//! With an odd number of players one gets a 1-point bye, at most one each: the lowest score, then
//! the lowest placed, among those who have not had one, weighed with the score gaps the others'
//! pairings leave (a vertex of its own in the matching, so the choice and the pairings are made
//! together). When no pairing covers everyone, there is none: the event ends early.
//!
//! This is not FIDE's Dutch system (which orders transpositions and exchanges inside score
//! groups, tracks floats and relaxes colours only in the last round); `bench/swiss_oracle.py`
//! and the `tournament-bench` compare the two on generated events.

use crate::ids::PlayerId;
use crate::matchmaking::blossom::max_weight_matching;

use super::Tournament;
use super::standings::Line;

/// A player as the Swiss pairing sees them, in the order of the standings.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub player: PlayerId,
    /// Half-points.
    pub score: u32,
    pub rating: f64,
    /// Everyone they have played.
    pub opponents: Vec<PlayerId>,
    pub firsts: u32,
    pub seconds: u32,
    /// Their last games in a row moved first, and second.
    pub first_streak: u32,
    pub second_streak: u32,
    /// Whether they had a 1-point bye.
    pub had_bye: bool,
}

impl Entry {
    /// The active players of `t` as the pairing sees them, in the order of `standings`.
    pub fn all(t: &Tournament, standings: &[Line]) -> Vec<Entry> {
        standings
            .iter()
            .filter(|l| {
                t.entrant(l.player_id)
                    .is_some_and(|e| e.status == super::EntrantStatus::Joined)
            })
            .map(|l| {
                let p = l.player_id;
                let games: Vec<&super::Game> = t.games_of(p).collect();
                let firsts = games.iter().filter(|g| g.pairing.players[0] == p).count() as u32;
                Entry {
                    player: p,
                    score: l.score,
                    rating: t.entrant(p).map_or(1500.0, |e| e.rating),
                    opponents: games
                        .iter()
                        .map(|g| {
                            let [a, b] = g.pairing.players;
                            if a == p { b } else { a }
                        })
                        .collect(),
                    firsts,
                    seconds: games.len() as u32 - firsts,
                    first_streak: super::arena::first_streak(t, p),
                    second_streak: super::arena::second_streak(t, p),
                    had_bye: t
                        .byes
                        .iter()
                        .any(|b| b.player_id == p && b.half_points == 2),
                }
            })
            .collect()
    }

    fn balance(&self) -> i64 {
        i64::from(self.firsts) - i64::from(self.seconds)
    }

    /// Whether moving first (`true`) or second next would break the colour rules.
    fn may_move(&self, first: bool) -> bool {
        if first {
            self.first_streak < 2 && self.balance() < 2
        } else {
            self.second_streak < 2 && self.balance() > -2
        }
    }
}

/// A round's pairings: each game with its first mover first, and the bye, if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoundPairing {
    pub games: Vec<(PlayerId, PlayerId)>,
    pub bye: Option<PlayerId>,
}

/// The first mover of `a`–`b`, if the colour rules allow one.
fn first_mover<'a>(a: &'a Entry, b: &'a Entry, strict: bool) -> Option<(&'a Entry, &'a Entry)> {
    let a_first = a.may_move(true) && b.may_move(false);
    let b_first = b.may_move(true) && a.may_move(false);
    let prefer_a =
        (a.balance(), -i64::from(a.second_streak)) <= (b.balance(), -i64::from(b.second_streak));
    match (a_first, b_first) {
        (true, true) => Some(if prefer_a { (a, b) } else { (b, a) }),
        (true, false) => Some((a, b)),
        (false, true) => Some((b, a)),
        (false, false) if strict => None,
        (false, false) => Some(if prefer_a { (a, b) } else { (b, a) }),
    }
}

/// Above twice this many players, a round is paired in consecutive groups of this many in the
/// order of the standings (score groups are consecutive there), each a matching of its own, and
/// those a group leaves unpaired move on to the next: a blossom over 10,000 players at once
/// (O(n³)) would take hours.
pub const GROUP: usize = 100;

/// Pairs a round among `entries` (in the order of the standings); `None` when no pairing covers
/// everyone without a rematch or a second 1-point bye.
pub fn pair(entries: &[Entry]) -> Option<RoundPairing> {
    if entries.len() <= 2 * GROUP {
        return pair_with(entries, true).or_else(|| pair_with(entries, false));
    }
    // Where the last group cannot be paired, groups four times larger, up to the whole field.
    let mut group = GROUP;
    loop {
        if let Some(round) = pair_in_groups(entries, group) {
            return Some(round);
        }
        if group >= entries.len() {
            return None;
        }
        group = (group * 4).min(entries.len());
    }
}

/// A large round: the bye to the lowest placed without one, then `size` players at a time.
fn pair_in_groups(entries: &[Entry], size: usize) -> Option<RoundPairing> {
    let mut order: Vec<Entry> = entries.to_vec();
    let bye = if order.len() % 2 == 1 {
        let k = order.iter().rposition(|e| !e.had_bye)?;
        Some(order.remove(k).player)
    } else {
        None
    };
    let mut games = Vec::with_capacity(order.len() / 2);
    let mut carried: Vec<Entry> = Vec::new();
    let mut chunks = order.chunks(size).peekable();
    while let Some(chunk) = chunks.next() {
        let mut group = std::mem::take(&mut carried);
        group.extend_from_slice(chunk);
        if chunks.peek().is_none() {
            // The last group: everyone in it paired, or no pairing at all.
            let last = pair_with(&group, true).or_else(|| pair_with(&group, false))?;
            games.extend(last.games);
        } else {
            let mate = max_weight_matching(group.len(), &edges(&group, true, None), true);
            let (paired, _, left) = games_of(&group, &mate, true, None);
            games.extend(paired);
            carried = left.into_iter().map(|i| group[i].clone()).collect();
        }
    }
    Some(RoundPairing { games, bye })
}

/// Above every cost: the weight of an edge is this less its cost.
const BASE: i64 = 1_000_000_000_000_000;

/// The edges of the matching among `entries`, and from each player without a 1-point bye to
/// `bye_vertex` (if any). Costs in tiers: a half-point of score gap squared (10⁹), a pair that
/// breaks a colour rule where no pairing keeps them all (`strict` off: 5 × 10⁸), the shape
/// inside a score group or the rating gap across (below 10⁶).
fn edges(entries: &[Entry], strict: bool, bye_vertex: Option<usize>) -> Vec<(usize, usize, i64)> {
    let n = entries.len();
    // Each player's place in their score group, and the group's size.
    let mut place = vec![(0usize, 0usize); n];
    let mut start = 0;
    while start < n {
        let end = (start..n)
            .find(|&k| entries[k].score != entries[start].score)
            .unwrap_or(n);
        for (k, p) in place.iter_mut().enumerate().take(end).skip(start) {
            *p = (k - start, end - start);
        }
        start = end;
    }
    let mut edges = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            let (a, b) = (&entries[i], &entries[j]);
            let colours_kept = first_mover(a, b, true).is_some();
            if a.opponents.contains(&b.player) || (strict && !colours_kept) {
                continue;
            }
            let gap = i64::from(a.score.abs_diff(b.score));
            // Inside a score group, the top half meets the bottom half (1 against 1 + half), as
            // FIDE's Dutch system pairs; across groups, the nearest ratings.
            let shape = if gap == 0 {
                let half = (place[i].1 / 2) as i64;
                ((place[j].0 as i64 - place[i].0 as i64).abs() - half).abs()
            } else {
                (a.rating - b.rating).abs().round() as i64
            };
            let broken = if colours_kept { 0 } else { 500_000_000 };
            let cost = gap * gap * 1_000_000_000 + broken + shape.min(999_999);
            edges.push((i, j, BASE - cost));
        }
        if let Some(bye) = bye_vertex
            && !entries[i].had_bye
        {
            // The lowest score first, then the lowest placed.
            let cost = i64::from(entries[i].score) * 1_000_000_000 + (n - i) as i64;
            edges.push((i, bye, BASE - cost));
        }
    }
    edges
}

/// The games (first mover first) and the bye of a matching, and the players it left unpaired.
fn games_of(
    entries: &[Entry],
    mate: &[Option<usize>],
    strict: bool,
    bye_vertex: Option<usize>,
) -> (Vec<(PlayerId, PlayerId)>, Option<PlayerId>, Vec<usize>) {
    let mut games = Vec::with_capacity(entries.len() / 2);
    let mut bye = None;
    let mut left = Vec::new();
    for (i, m) in mate.iter().enumerate().take(entries.len()) {
        match *m {
            None => left.push(i),
            Some(j) if Some(j) == bye_vertex => bye = Some(entries[i].player),
            Some(j) if i < j => {
                if let Some((first, second)) = first_mover(&entries[i], &entries[j], strict) {
                    games.push((first.player, second.player));
                }
            }
            Some(_) => {}
        }
    }
    (games, bye, left)
}

fn pair_with(entries: &[Entry], strict: bool) -> Option<RoundPairing> {
    let n = entries.len();
    if n < 2 {
        return None;
    }
    let bye_vertex = (n % 2 == 1).then_some(n);
    let vertices = n + usize::from(bye_vertex.is_some());
    let mate = max_weight_matching(vertices, &edges(entries, strict, bye_vertex), true);
    if mate.iter().any(Option::is_none) {
        return None;
    }
    let (games, bye, _) = games_of(entries, &mate, strict, bye_vertex);
    Some(RoundPairing { games, bye })
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use proptest::prelude::*;
    use uuid::Uuid;

    use super::*;

    fn id(i: usize) -> PlayerId {
        PlayerId::from_uuid(Uuid::from_u128(i as u128 + 1))
    }

    /// Player `i` before any game.
    fn newcomer(i: usize, rating: f64) -> Entry {
        Entry {
            player: id(i),
            score: 0,
            rating,
            opponents: Vec::new(),
            firsts: 0,
            seconds: 0,
            first_streak: 0,
            second_streak: 0,
            had_bye: false,
        }
    }

    /// Plays `rounds` rounds among `n` players whose results follow their ratings (the seed
    /// decides draws and upsets), pairing each from the standings; checks every round's rules.
    fn simulate(n: usize, rounds: usize, seed: u64) -> usize {
        let mut rng = crate::rng::SplitMix64(seed);
        let ratings: Vec<f64> = (0..n).map(|_| 1000.0 + rng.index(1000) as f64).collect();
        let mut entries: Vec<Entry> = (0..n).map(|i| newcomer(i, ratings[i])).collect();
        let index: HashMap<PlayerId, usize> = (0..n).map(|i| (id(i), i)).collect();
        for round in 0..rounds {
            entries.sort_by(|a, b| b.score.cmp(&a.score).then(b.rating.total_cmp(&a.rating)));
            let Some(pairing) = pair(&entries) else {
                return round;
            };
            let mut seen = HashSet::new();
            for (a, b) in &pairing.games {
                assert!(seen.insert(*a) && seen.insert(*b), "a player twice");
            }
            if let Some(b) = pairing.bye {
                assert!(seen.insert(b));
            }
            assert_eq!(seen.len(), n, "everyone plays or has the bye");
            assert_eq!(pairing.bye.is_some(), n % 2 == 1);
            let pos: HashMap<PlayerId, usize> = entries
                .iter()
                .enumerate()
                .map(|(k, e)| (e.player, k))
                .collect();
            if let Some(b) = pairing.bye {
                let e = &mut entries[pos[&b]];
                assert!(!e.had_bye, "a second one-point bye");
                e.had_bye = true;
                e.score += 2;
            }
            for &(a, b) in &pairing.games {
                let (ia, ib) = (pos[&a], pos[&b]);
                assert!(!entries[ia].opponents.contains(&b), "a rematch");
                let p = 1.0 / (1.0 + 10f64.powf((ratings[index[&b]] - ratings[index[&a]]) / 400.0));
                let roll = rng.unit();
                let (sa, sb) = if roll < 0.1 {
                    (1, 1)
                } else if roll < 0.1 + 0.9 * p {
                    (2, 0)
                } else {
                    (0, 2)
                };
                for (k, other, s, first) in [(ia, b, sa, true), (ib, a, sb, false)] {
                    let e = &mut entries[k];
                    e.score += s;
                    e.opponents.push(other);
                    if first {
                        e.firsts += 1;
                        e.first_streak += 1;
                        e.second_streak = 0;
                    } else {
                        e.seconds += 1;
                        e.second_streak += 1;
                        e.first_streak = 0;
                    }
                }
            }
        }
        rounds
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn rounds_keep_the_rules_until_no_pairing_is_left(n in 2usize..40, rounds in 1usize..12, seed in any::<u64>()) {
            let played = simulate(n, rounds, seed);
            // While every player still has at least half the field left to meet (Dirac: a
            // Hamiltonian cycle, so a perfect matching, with the bye's vertex for odd n), a
            // pairing exists and must be found.
            if rounds <= n / 2 {
                prop_assert_eq!(played, rounds, "among {}", n);
            }
        }
    }

    #[test]
    fn a_large_field_is_paired_group_by_group_keeping_the_rules() {
        // 7 rounds among 451 players: the groups, the carried players and the bye.
        assert_eq!(simulate(451, 7, 44), 7);
        assert_eq!(simulate(600, 3, 45), 3);
    }

    #[test]
    fn the_first_round_pairs_the_top_half_against_the_bottom_and_the_last_placed_sits_out() {
        let entries: Vec<Entry> = (0..5)
            .map(|i| newcomer(i, 2000.0 - 100.0 * i as f64))
            .collect();
        let round = pair(&entries).expect("a pairing");
        assert_eq!(round.bye, Some(id(4)));
        // The top half against the bottom half: 1 against 3, 2 against 4.
        let mut pairs: Vec<(PlayerId, PlayerId)> = round
            .games
            .iter()
            .map(|&(a, b)| (a.min(b), a.max(b)))
            .collect();
        pairs.sort();
        assert_eq!(pairs, vec![(id(0), id(2)), (id(1), id(3))]);
    }

    #[test]
    fn two_players_who_met_have_no_pairing_left() {
        let mut a = Entry {
            player: id(0),
            score: 2,
            rating: 1500.0,
            opponents: vec![id(1)],
            firsts: 1,
            seconds: 0,
            first_streak: 1,
            second_streak: 0,
            had_bye: false,
        };
        let b = Entry {
            player: id(1),
            score: 0,
            opponents: vec![id(0)],
            firsts: 0,
            seconds: 1,
            first_streak: 0,
            second_streak: 1,
            ..a.clone()
        };
        assert_eq!(pair(&[a.clone(), b.clone()]), None);
        a.opponents.clear();
        let round = pair(&[a, b]).expect("a pairing");
        // The one who moved second moves first now.
        assert_eq!(round.games, vec![(id(1), id(0))]);
    }
}
