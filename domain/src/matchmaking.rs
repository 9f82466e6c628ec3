//! Matchmaking waves: who plays whom among a pool's waiting tickets, and who moves
//! first in a ranked pairing.
//!
//! A wave is a pure function of the waiting tickets: [`pair`] takes each ticket's rating,
//! deviation, time waited and previous ranked opponent, and returns the pairs to start. The
//! caller reads the clock (to compute `waited_ms`) and owns the tickets; nothing here does I/O.
//!
//! # Who may play whom: the allowed gap
//!
//! A ticket's *allowed gap* starts narrow and widens with the time it has waited:
//!
//! ```text
//! allowed_gap = min(50 + 10 × seconds waited, 500)      (established: deviation ≤ 110)
//! allowed_gap = 2 × min(50 + 10 × seconds waited, 500)  (provisional: deviation > 110)
//! ```
//!
//! | waited | established | provisional |
//! |---:|---:|---:|
//! | 0 s | 50 | 100 |
//! | 5 s | 100 | 200 |
//! | 10 s | 150 | 300 |
//! | 20 s | 250 | 500 |
//! | 30 s | 350 | 700 |
//! | 45 s and more | 500 | 1000 |
//!
//! (Seconds are fractional: the gap grows by 1 point every 100 ms.) Two tickets may be paired
//! when the gap between their ratings is within **both** allowed gaps, so a long-waiting ticket
//! is never handed to a fresh one outside the fresh one's window. Two tickets of the same player
//! are never paired, and a ticket whose rating is not a finite number is never paired.
//!
//! # What a wave maximises
//!
//! The cost of a pair is its rating gap plus, when the two met in their previous ranked match
//! (either one's `previous_opponent` is the other), a **repeat penalty** of
//! `200 × 0.5^(s / 30)` points, `s` being the shorter of the two waits in seconds: 200 at once,
//! 100 after 30 s, 25 after a minute and a half. Costs are counted in hundredths of a point.
//!
//! Among all sets of allowed pairs, a wave picks the best by these three criteria, in order:
//!
//! 1. **as many pairs as possible**;
//! 2. **longest-waiting first**: the largest sum, over the paired tickets, of their *wait rank*
//!    (1 for the shortest wait in the pool, 2 for the next distinct wait, and so on; equal waits
//!    have equal ranks);
//! 3. **the smallest total cost** (rating gaps plus repeat penalties).
//!
//! Criterion 2 is the strongest form of "longest-waiting first": the sets of tickets that can be
//! paired all at once form a matroid (the matching matroid), so a set with the largest rank sum
//! is also lexicographically best by wait: for every `t`, it pairs as many as possible of the
//! tickets that waited at least `t`. A ticket is left out only if pairing it would cost a pair or
//! a longer-waiting ticket (tested against brute force).
//!
//! # How: exact blossom matching, and a heuristic for very large components
//!
//! Each criterion is folded into one integer edge weight (`cardinality ≫ wait ranks ≫ cost`) and
//! solved with Edmonds' blossom algorithm for maximum-weight matching (a port of Van Rantwijk's
//! `mwmatching`, the algorithm Lichess pools use), which is exact on integers. It is O(n³), so
//! the pool is first cut, in rating order, wherever no window reaches across (tickets on either
//! side can never meet), and each component of at most [`Rules::exact_limit`] tickets (128 by
//! default: a few milliseconds to some tens) is solved exactly.
//!
//! A larger component (a busy pool, where everyone's window overlaps a neighbour's) is solved by
//! a heuristic in two passes. First, the best set of pairs by the same three criteria among the
//! tickets at most four places apart in rating order, found exactly by dynamic programming along
//! the rating order (linear time; in a busy pool the best partners are near neighbours). Then the
//! tickets left over, in rating order, are cut into blocks of [`Rules::block`] and each block is
//! solved exactly by the blossom algorithm, again until a pass pairs nobody. [`Pairing::exact`]
//! says whether every component was solved exactly, i.e. whether the result is proven optimal.
//! The heuristic's distance to the optimum is measured in `bench-results-matchmaking.md`.

pub(crate) mod blossom;

use crate::ids::PlayerId;
use crate::ratings::Rating;

/// A waiting ticket as a wave sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    pub player: PlayerId,
    /// The rating and deviation recorded when the ticket opened.
    pub rating: f64,
    pub deviation: f64,
    /// How long the ticket has waited at this wave.
    pub waited_ms: u64,
    /// The opponent of the player's previous ranked match of this game, if any.
    pub previous_opponent: Option<PlayerId>,
}

/// The parameters of a pool's waves; [`Rules::default`] is the documented schedule.
#[derive(Debug, Clone, PartialEq)]
pub struct Rules {
    /// The allowed gap of a ticket that has just opened, in rating points.
    pub base_gap: f64,
    /// How much the allowed gap widens per second waited.
    pub gap_per_second: f64,
    /// The widest allowed gap (before the provisional factor).
    pub max_gap: f64,
    /// A ticket is provisional when its deviation is above this.
    pub provisional_above: f64,
    /// The factor on a provisional ticket's allowed gap.
    pub provisional_factor: f64,
    /// The cost, in rating points, of pairing two players who met in their previous ranked
    /// match, when neither has waited.
    pub repeat_penalty: f64,
    /// The repeat penalty halves every this many milliseconds of the shorter wait.
    pub repeat_half_life_ms: u64,
    /// Components (tickets whose windows chain together in rating order) up to this size are
    /// solved exactly; larger ones by the heuristic.
    pub exact_limit: usize,
    /// The size of the exact blocks of the heuristic's second pass (at most 1024 is used).
    pub block: usize,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            base_gap: 50.0,
            gap_per_second: 10.0,
            max_gap: 500.0,
            provisional_above: Rating::PROVISIONAL_ABOVE,
            provisional_factor: 2.0,
            repeat_penalty: 200.0,
            repeat_half_life_ms: 30_000,
            exact_limit: 128,
            block: 32,
        }
    }
}

/// The most a pair can cost, in hundredths of a point: far beyond any real rating gap, it keeps
/// the composed edge weights of a block of 1024 tickets within `i64`.
const MAX_COST_UNITS: i64 = 10_000_000;

/// The largest block the heuristic uses (see [`MAX_COST_UNITS`]).
const MAX_BLOCK: usize = 1024;

/// How many places apart in rating order partners may be in the heuristic's first pass.
const SPAN: usize = 4;

/// The lexicographic objective as the heuristic's dynamic programme adds it up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
struct Score {
    pairs: u32,
    ranks: u64,
    neg_cost: i64,
}

impl Rules {
    /// How far from its own rating this ticket accepts an opponent now (see the module docs).
    pub fn allowed_gap(&self, c: &Candidate) -> f64 {
        let seconds = c.waited_ms as f64 / 1000.0;
        let gap = (self.base_gap + self.gap_per_second * seconds).min(self.max_gap);
        if self.is_provisional(c) {
            gap * self.provisional_factor
        } else {
            gap
        }
    }

    /// Whether the ticket's rating is still provisional (it gets the wider window).
    pub fn is_provisional(&self, c: &Candidate) -> bool {
        c.deviation > self.provisional_above
    }

    /// Whether the two tickets may meet in this wave: different players, and the rating gap
    /// within both allowed gaps.
    pub fn may_pair(&self, a: &Candidate, b: &Candidate) -> bool {
        let gap = (a.rating - b.rating).abs();
        a.player != b.player && gap <= self.allowed_gap(a) && gap <= self.allowed_gap(b)
    }

    /// Whether the two players met in their previous ranked match (either one's record says so).
    pub fn is_repeat(a: &Candidate, b: &Candidate) -> bool {
        a.previous_opponent == Some(b.player) || b.previous_opponent == Some(a.player)
    }

    /// The repeat penalty of this pair in rating points (0 when it is no repeat).
    pub fn repeat_penalty(&self, a: &Candidate, b: &Candidate) -> f64 {
        if !Self::is_repeat(a, b) {
            return 0.0;
        }
        let waited = a.waited_ms.min(b.waited_ms) as f64;
        let half_life = self.repeat_half_life_ms.max(1) as f64;
        self.repeat_penalty * 0.5f64.powf(waited / half_life)
    }

    /// The cost of the pair in rating points: the rating gap plus the repeat penalty.
    pub fn cost(&self, a: &Candidate, b: &Candidate) -> f64 {
        (a.rating - b.rating).abs() + self.repeat_penalty(a, b)
    }

    /// The cost in the integer units the wave optimises: hundredths of a point, rounded.
    pub fn cost_units(&self, a: &Candidate, b: &Candidate) -> i64 {
        let units = (self.cost(a, b) * 100.0).round();
        if units.is_nan() {
            MAX_COST_UNITS
        } else {
            (units as i64).clamp(0, MAX_COST_UNITS)
        }
    }
}

/// The pairs a wave makes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pairing {
    /// Indices into the candidates slice, each pair `(lower, higher)`, in increasing order.
    pub pairs: Vec<(usize, usize)>,
    /// Whether the pairing is proven optimal (every component was solved exactly).
    pub exact: bool,
}

/// How good a set of pairs is, by the wave's criteria; larger is better (see [`Objective::key`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Objective {
    /// The number of pairs.
    pub pairs: usize,
    /// The sum of the paired tickets' wait ranks over the whole pool (see the module docs).
    pub wait_ranks: u64,
    /// The total cost, in hundredths of a point.
    pub cost: i64,
}

impl Objective {
    /// The lexicographic key a wave maximises: pairs, then wait ranks, then the least cost.
    pub fn key(&self) -> (usize, u64, i64) {
        (self.pairs, self.wait_ranks, -self.cost)
    }
}

/// Scores a set of pairs of `candidates` by the wave's criteria (it does not check them).
pub fn objective(candidates: &[Candidate], rules: &Rules, pairs: &[(usize, usize)]) -> Objective {
    let all: Vec<usize> = (0..candidates.len()).collect();
    let ranks = wait_ranks(candidates, &all);
    Objective {
        pairs: pairs.len(),
        wait_ranks: pairs.iter().map(|&(a, b)| ranks[a] + ranks[b]).sum(),
        cost: pairs
            .iter()
            .map(|&(a, b)| rules.cost_units(&candidates[a], &candidates[b]))
            .sum(),
    }
}

/// Dense ranks of the members' waits (1 = shortest), indexed like `members`.
fn wait_ranks(candidates: &[Candidate], members: &[usize]) -> Vec<u64> {
    let mut by_wait: Vec<(u64, usize)> = members
        .iter()
        .enumerate()
        .map(|(k, &i)| (candidates[i].waited_ms, k))
        .collect();
    by_wait.sort_unstable();
    let mut ranks = vec![0u64; members.len()];
    let mut rank = 0u64;
    let mut last = None;
    for (w, k) in by_wait {
        if last != Some(w) {
            rank += 1;
            last = Some(w);
        }
        ranks[k] = rank;
    }
    ranks
}

/// Runs one wave: the best set of pairs among `candidates` by the criteria of the module docs.
pub fn pair(candidates: &[Candidate], rules: &Rules) -> Pairing {
    // Sort by rating through integer keys (for finite floats, flipping the sign bit orders
    // the bit patterns of non-negative ratings; negative ones flip all bits).
    let mut keyed: Vec<(u64, usize)> = candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| c.rating.is_finite())
        .map(|(i, c)| {
            let bits = c.rating.to_bits();
            let key = if bits >> 63 == 1 {
                !bits
            } else {
                bits | 1 << 63
            };
            (key, i)
        })
        .collect();
    keyed.sort_unstable();
    let order: Vec<usize> = keyed.into_iter().map(|(_, i)| i).collect();
    let gaps: Vec<f64> = candidates.iter().map(|c| rules.allowed_gap(c)).collect();
    let wave = Wave {
        candidates,
        rules,
        gaps: &gaps,
    };
    let mut pairs = Vec::with_capacity(candidates.len() / 2);
    let mut exact = true;
    // Cut the rating order wherever no window on the left reaches the next rating: no pair can
    // cross such a cut, so the components are independent problems.
    let mut start = 0;
    let mut reach = f64::NEG_INFINITY;
    for pos in 0..=order.len() {
        let cut = pos == order.len() || (pos > start && candidates[order[pos]].rating > reach);
        if cut {
            exact &= wave.component(&order[start..pos], &mut pairs);
            start = pos;
            reach = f64::NEG_INFINITY;
        }
        if let Some(&i) = order.get(pos) {
            reach = reach.max(candidates[i].rating + gaps[i]);
        }
    }
    for p in &mut pairs {
        if p.0 > p.1 {
            *p = (p.1, p.0);
        }
    }
    pairs.sort_unstable();
    Pairing { pairs, exact }
}

/// One wave's inputs, shared by its components.
struct Wave<'a> {
    candidates: &'a [Candidate],
    rules: &'a Rules,
    gaps: &'a [f64],
}

impl Wave<'_> {
    /// Pairs one component (members in rating order); returns whether it was solved exactly.
    fn component(&self, members: &[usize], pairs: &mut Vec<(usize, usize)>) -> bool {
        if members.len() < 2 {
            return true;
        }
        if members.len() <= self.rules.exact_limit
            && let Some(found) = self.solve_exactly(members)
        {
            pairs.extend(found);
            return true;
        }
        self.heuristic(members, pairs)
    }

    /// The heuristic for a large component. First pass: the best pairs among those whose
    /// partners are at most [`SPAN`] places apart in rating order, exactly, by dynamic
    /// programming over the rating order (linear time). Then the tickets left over, in rating
    /// order, are solved exactly by blocks of [`Rules::block`], again until a pass pairs
    /// nobody. Returns whether the result is exact after all (the component fitted in a block).
    fn heuristic(&self, members: &[usize], pairs: &mut Vec<(usize, usize)>) -> bool {
        let block = self.rules.block.clamp(2, MAX_BLOCK);
        if members.len() <= block
            && let Some(found) = self.solve_exactly(members)
        {
            pairs.extend(found);
            return true;
        }
        let first = self.local_pairs(members);
        let mut taken = vec![false; self.candidates.len()];
        for &(a, b) in &first {
            taken[a] = true;
            taken[b] = true;
        }
        pairs.extend(first);
        let mut pool = members.to_vec();
        loop {
            pool.retain(|&i| !taken[i]);
            if pool.len() < 2 {
                return false;
            }
            let from = pairs.len();
            for chunk in pool.chunks(block) {
                // Blocks are small enough that the weights always fit (MAX_COST_UNITS).
                pairs.extend(self.solve_exactly(chunk).unwrap_or_default());
            }
            if pairs.len() == from {
                return false;
            }
            for &(a, b) in &pairs[from..] {
                taken[a] = true;
                taken[b] = true;
            }
        }
    }

    /// The optimal pairs among `members` (in rating order) by the module's criteria, among the
    /// pairs of tickets at most [`SPAN`] places apart: a dynamic programme over the rating order
    /// whose state is which of the next `SPAN` tickets are already taken.
    fn local_pairs(&self, members: &[usize]) -> Vec<(usize, usize)> {
        let c = self.candidates;
        let m = members.len();
        let ranks = wait_ranks(c, members);
        // gain[i * SPAN + d - 1]: what pairing the i-th with the (i + d)-th adds (wait ranks,
        // cost), the cost negative when they may not pair. Compact and in rating order: this
        // loop and the programme below are the whole cost of a 100k-ticket wave.
        let local: Vec<(Candidate, f64)> = members.iter().map(|&i| (c[i], self.gaps[i])).collect();
        let mut gain: Vec<(u32, i32)> = vec![(0, -1); m * SPAN];
        for i in 0..m {
            let (a, gap) = &local[i];
            for d in 1..=SPAN.min(m - 1 - i) {
                let (b, other_gap) = &local[i + d];
                let apart = b.rating - a.rating;
                if apart > *gap {
                    break;
                }
                if apart <= *other_gap && a.player != b.player {
                    // Ranks are at most m, costs at most MAX_COST_UNITS: both fit.
                    let rank = (ranks[i] + ranks[i + d]) as u32;
                    gain[i * SPAN + d - 1] = (rank, self.rules.cost_units(a, b) as i32);
                }
            }
        }
        const STATES: usize = 1 << SPAN;
        let mut next = [Score::default(); STATES];
        let mut choice = vec![0u8; m * STATES];
        for i in (0..m).rev() {
            let mut cur = [Score::default(); STATES];
            for mask in 0..STATES {
                if mask & 1 == 1 {
                    cur[mask] = next[mask >> 1];
                    continue;
                }
                let mut best = next[mask >> 1];
                for d in 1..=SPAN {
                    if d < SPAN && mask & (1 << d) != 0 {
                        continue;
                    }
                    let (rank, cost) = gain[i * SPAN + d - 1];
                    if cost >= 0 {
                        let after = next[(mask | 1 << d) >> 1];
                        let v = Score {
                            pairs: after.pairs + 1,
                            ranks: after.ranks + u64::from(rank),
                            neg_cost: after.neg_cost - i64::from(cost),
                        };
                        if v > best {
                            best = v;
                            choice[i * STATES + mask] = d as u8;
                        }
                    }
                }
                cur[mask] = best;
            }
            next = cur;
        }
        let mut out = Vec::with_capacity(m / 2);
        let mut mask = 0usize;
        for i in 0..m {
            if mask & 1 == 0 {
                let d = usize::from(choice[i * STATES + mask]);
                if d > 0 {
                    out.push((members[i], members[i + d]));
                    mask |= 1 << d;
                }
            }
            mask >>= 1;
        }
        out
    }

    /// The optimal pairs among `members` (in rating order) by the module's criteria, or `None`
    /// when the composed weights would not fit in `i64`.
    fn solve_exactly(&self, members: &[usize]) -> Option<Vec<(usize, usize)>> {
        let c = self.candidates;
        let m = members.len();
        let mut edges: Vec<(usize, usize, i64)> = Vec::new();
        let mut max_cost = 0i64;
        for a in 0..m {
            let ca = &c[members[a]];
            let reach = ca.rating + self.gaps[members[a]];
            for (b, &j) in members.iter().enumerate().skip(a + 1) {
                let cb = &c[j];
                if cb.rating > reach {
                    break;
                }
                if self.rules.may_pair(ca, cb) {
                    let cost = self.rules.cost_units(ca, cb);
                    max_cost = max_cost.max(cost);
                    edges.push((a, b, cost));
                }
            }
        }
        if edges.is_empty() {
            return Some(Vec::new());
        }
        // weight = CARD + RANK × (rank_a + rank_b) − cost, where RANK exceeds any difference in
        // total cost and CARD exceeds any difference in ranks and cost together, so that the
        // maximum-weight matching is the lexicographic optimum.
        let ranks = wait_ranks(c, members);
        let m64 = m as i64;
        let most_cost = (m64 / 2 + 1).checked_mul(max_cost)?;
        let rank_unit = most_cost.checked_add(1)?;
        let rank_sum = m64.checked_mul(m64 + 1)? / 2;
        let card_unit = rank_unit
            .checked_mul(rank_sum + 1)?
            .checked_add(most_cost)?
            .checked_add(1)?;
        // The duals reach a few times the largest weight.
        let largest = card_unit.checked_add(rank_unit.checked_mul(2 * m64)?)?;
        largest.checked_mul(8)?;
        for e in &mut edges {
            let rank = (ranks[e.0] + ranks[e.1]) as i64;
            e.2 = card_unit + rank_unit * rank - e.2;
        }
        let mate = blossom::max_weight_matching(m, &edges, false);
        Some(
            mate.iter()
                .enumerate()
                .filter_map(|(a, &b)| match b {
                    Some(b) if a < b => Some((members[a], members[b])),
                    _ => None,
                })
                .collect(),
        )
    }
}

/// Who takes seat 1 (and moves first) in a ranked pairing: the player who started
/// fewer of their last 10 ranked games of that game. `starts` are the two players' counts;
/// `coin_heads` is the coin flip drawn by the caller (and recorded in the event), which decides
/// a tie: heads gives seat 1 to the first of the two. Returns the index (0 or 1) of the player
/// who gets seat 1, and whether the coin decided.
pub fn first_seat(starts: [u32; 2], coin_heads: bool) -> (usize, bool) {
    match starts[0].cmp(&starts[1]) {
        std::cmp::Ordering::Less => (0, false),
        std::cmp::Ordering::Greater => (1, false),
        std::cmp::Ordering::Equal => (if coin_heads { 0 } else { 1 }, true),
    }
}

#[cfg(test)]
mod tests;
