//! Round-robin schedules from Berger tables: every pair meets once a cycle, and a tournament
//! plays two cycles, the second with every first move swapped and its rounds in reverse order,
//! so that each pair meets twice, once with each player moving first, and nobody moves first
//! (or second) three times in a row, across the cycles too.
//!
//! Players are `0..n` (their order of joining). With the labels `1..=m` (`m` is `n`, or `n + 1`
//! with a dummy when `n` is odd), round `r` of a cycle pairs `i` with `j` when
//! `i + j ≡ r + 1 (mod m − 1)`, and the player for whom `i` would be their own partner with `m`.
//! The lower label moves first when `i + j` is odd, the higher when it is even; `m` moves first in
//! even rounds. Within a cycle each player moves first at most once more than second.

/// The rounds of one cycle among `n` players.
pub fn rounds_per_cycle(n: u32) -> u32 {
    match n {
        0 | 1 => 0,
        n if n % 2 == 0 => n - 1,
        n => n,
    }
}

/// One round of the schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Round {
    /// The games, the first mover first.
    pub games: Vec<(usize, usize)>,
    /// The player who sits this round out (odd `n` only).
    pub sits_out: Option<usize>,
}

/// Round `round` (from 1, over both cycles: `1..=2 * rounds_per_cycle(n)`) among `n` players;
/// `None` beyond the last.
pub fn round(n: usize, round: u32) -> Option<Round> {
    let per_cycle = rounds_per_cycle(u32::try_from(n).ok()?);
    if round == 0 || round > 2 * per_cycle {
        return None;
    }
    let (r, swapped) = if round <= per_cycle {
        (round, false)
    } else {
        // The second cycle: the first cycle's rounds backwards, each first move swapped.
        (2 * per_cycle + 1 - round, true)
    };
    let m = if n.is_multiple_of(2) { n } else { n + 1 };
    let modulus = m - 1;
    let r = r as usize;
    let mut games = Vec::with_capacity(m / 2);
    let mut sits_out = None;
    for i in 1..m {
        // The partner label j in 1..m with i + j ≡ r + 1 (mod m - 1).
        let j = (r + 1 + 2 * modulus - i - 1) % modulus + 1;
        let (a, b) = if j == i {
            if r.is_multiple_of(2) { (m, i) } else { (i, m) }
        } else if i < j {
            if (i + j) % 2 == 1 { (i, j) } else { (j, i) }
        } else {
            continue;
        };
        let (a, b) = if swapped { (b, a) } else { (a, b) };
        // Labels to players; the dummy (label m when n is odd) means a round off.
        if n % 2 == 1 && (a == m || b == m) {
            sits_out = Some(if a == m { b } else { a } - 1);
            continue;
        }
        games.push((a - 1, b - 1));
    }
    Some(Round { games, sits_out })
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// Every round of a double round robin among `n`.
    fn schedule(n: usize) -> Vec<Round> {
        (1..).map_while(|r| round(n, r)).collect()
    }

    #[test]
    fn every_pair_meets_twice_once_with_each_first_move() {
        for n in 2..=16 {
            let rounds = schedule(n);
            assert_eq!(rounds.len() as u32, 2 * rounds_per_cycle(n as u32), "{n}");
            let mut met: HashMap<(usize, usize), usize> = HashMap::new();
            for (k, r) in rounds.iter().enumerate() {
                let mut seen = vec![false; n];
                for &(a, b) in &r.games {
                    assert!(a < n && b < n && a != b, "{n} round {k}: {a}-{b}");
                    assert!(!seen[a] && !seen[b], "{n} round {k}: a player twice");
                    seen[a] = true;
                    seen[b] = true;
                    *met.entry((a, b)).or_default() += 1;
                }
                let idle: Vec<usize> = (0..n).filter(|&p| !seen[p]).collect();
                assert_eq!(
                    idle,
                    r.sits_out.into_iter().collect::<Vec<_>>(),
                    "{n} round {k}"
                );
                assert_eq!(r.sits_out.is_some(), n % 2 == 1);
            }
            for a in 0..n {
                for b in 0..n {
                    if a != b {
                        assert_eq!(met.get(&(a, b)), Some(&1), "{n}: {a} first against {b}");
                    }
                }
            }
        }
    }

    #[test]
    fn first_moves_alternate_nobody_three_in_a_row() {
        for n in 2..=16 {
            let mut sequence: Vec<Vec<bool>> = vec![Vec::new(); n];
            let per_cycle = rounds_per_cycle(n as u32) as usize;
            for (k, r) in schedule(n).iter().enumerate() {
                for &(a, b) in &r.games {
                    sequence[a].push(true);
                    sequence[b].push(false);
                }
                if k + 1 == per_cycle {
                    for (p, s) in sequence.iter().enumerate() {
                        let firsts = s.iter().filter(|&&f| f).count() as i64;
                        let imbalance = (2 * firsts - s.len() as i64).abs();
                        assert!(imbalance <= 1, "{n}: player {p} after a cycle: {s:?}");
                    }
                }
            }
            for (p, s) in sequence.iter().enumerate() {
                assert!(
                    !s.windows(3).any(|w| w[0] == w[1] && w[1] == w[2]),
                    "{n}: player {p} {s:?}"
                );
                let firsts = s.iter().filter(|&&f| f).count();
                assert_eq!(2 * firsts, s.len(), "{n}: player {p} over both cycles");
            }
        }
    }

    #[test]
    fn four_players_meet_all_six_pairs_in_a_cycle_and_the_schedule_ends() {
        let first: Vec<Vec<(usize, usize)>> = (1..=3)
            .map(|r| {
                let mut g = round(4, r).expect("a round").games;
                g.sort_unstable();
                g
            })
            .collect();
        let pairs = |r: &Vec<(usize, usize)>| {
            let mut p: Vec<(usize, usize)> = r.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect();
            p.sort_unstable();
            p
        };
        assert_eq!(pairs(&first[0]).len(), 2);
        let all: std::collections::BTreeSet<(usize, usize)> =
            first.iter().flat_map(pairs).collect();
        assert_eq!(all.len(), 6, "{first:?}");
        assert_eq!(round(4, 7), None);
        assert_eq!(round(1, 1), None);
        assert_eq!(round(4, 0), None);
    }
}
