//! Tests of the wave: brute-force optimality, the windows, longest-waiting first, the repeat
//! penalty, self-pairing, the large-pool heuristic, and the first-move rule.

use super::*;
use uuid::Uuid;

/// The seeded generator, so the random pools are the same on every run.
use crate::rng::SplitMix64 as Rng;

fn player(n: u64) -> PlayerId {
    PlayerId::from_uuid(Uuid::from_u64_pair(0, n + 1))
}

fn ticket(p: u64, rating: f64, waited_s: u64) -> Candidate {
    Candidate {
        player: player(p),
        rating,
        deviation: 60.0,
        waited_ms: waited_s * 1000,
        previous_opponent: None,
    }
}

/// A random small pool with many ties, tight and wide windows, repeats and duplicate players.
fn random_pool(rng: &mut Rng, n: usize) -> Vec<Candidate> {
    let spread = [60, 200, 600][rng.modulo(3) as usize];
    let waits = [0, 0, 500, 1000, 3000, 5000, 10_000, 20_000, 45_000, 90_000];
    let players = if rng.chance(30) {
        n as u64 / 2 + 1
    } else {
        1000
    };
    let mut pool: Vec<Candidate> = (0..n)
        .map(|i| {
            let rating = if rng.chance(30) {
                1500.0 + (rng.modulo(4) * 10) as f64
            } else {
                1500.0 + rng.modulo(spread) as f64 - (spread / 2) as f64
            };
            Candidate {
                player: player(if players == 1000 {
                    i as u64
                } else {
                    rng.modulo(players)
                }),
                rating,
                deviation: if rng.chance(25) { 200.0 } else { 60.0 },
                waited_ms: waits[rng.modulo(waits.len() as u64) as usize],
                previous_opponent: None,
            }
        })
        .collect();
    for i in 0..n {
        if rng.chance(35) {
            let j = rng.modulo(n as u64) as usize;
            pool[i].previous_opponent = Some(pool[j].player);
        }
    }
    pool
}

/// The best objective over every matching of allowed pairs, and for each wait threshold the
/// most tickets with at least that wait paired by any matching with the most pairs.
struct Brute {
    best: (usize, u64, i64),
    /// best_covers[pairs][t]: the most paired tickets with wait ≥ thresholds[t].
    best_covers: Vec<Vec<usize>>,
    thresholds: Vec<u64>,
}

fn brute_force(pool: &[Candidate], rules: &Rules) -> Brute {
    brute_force_where(pool, rules, &|_, _| true)
}

/// [`brute_force`] over the matchings whose pairs all pass `near` as well.
fn brute_force_where(
    pool: &[Candidate],
    rules: &Rules,
    near: &dyn Fn(usize, usize) -> bool,
) -> Brute {
    let n = pool.len();
    let all: Vec<usize> = (0..n).collect();
    let ranks = wait_ranks(pool, &all);
    let mut thresholds: Vec<u64> = pool.iter().map(|c| c.waited_ms).collect();
    thresholds.sort_unstable();
    thresholds.dedup();
    let mut brute = Brute {
        best: (0, 0, 0),
        best_covers: vec![vec![0; thresholds.len()]; n / 2 + 1],
        thresholds,
    };
    let mut used = vec![false; n];
    let mut chosen = Vec::new();
    #[allow(clippy::too_many_arguments)]
    fn go(
        i: usize,
        pool: &[Candidate],
        rules: &Rules,
        near: &dyn Fn(usize, usize) -> bool,
        ranks: &[u64],
        used: &mut Vec<bool>,
        chosen: &mut Vec<(usize, usize)>,
        brute: &mut Brute,
    ) {
        if i == pool.len() {
            let o = Objective {
                pairs: chosen.len(),
                wait_ranks: chosen.iter().map(|&(a, b)| ranks[a] + ranks[b]).sum(),
                cost: chosen
                    .iter()
                    .map(|&(a, b)| rules.cost_units(&pool[a], &pool[b]))
                    .sum(),
            };
            if o.key() > brute.best {
                brute.best = o.key();
            }
            for (t, &at_least) in brute.thresholds.iter().enumerate() {
                let covered = chosen
                    .iter()
                    .flat_map(|&(a, b)| [a, b])
                    .filter(|&v| pool[v].waited_ms >= at_least)
                    .count();
                let slot = &mut brute.best_covers[chosen.len()][t];
                *slot = (*slot).max(covered);
            }
            return;
        }
        if used[i] {
            return go(i + 1, pool, rules, near, ranks, used, chosen, brute);
        }
        go(i + 1, pool, rules, near, ranks, used, chosen, brute);
        used[i] = true;
        for j in i + 1..pool.len() {
            if !used[j] && rules.may_pair(&pool[i], &pool[j]) && near(i, j) {
                used[j] = true;
                chosen.push((i, j));
                go(i + 1, pool, rules, near, ranks, used, chosen, brute);
                chosen.pop();
                used[j] = false;
            }
        }
        used[i] = false;
    }
    go(
        0,
        pool,
        rules,
        near,
        &ranks,
        &mut used,
        &mut chosen,
        &mut brute,
    );
    brute
}

/// Checks that `pairing` is a matching of allowed pairs of `pool`.
fn assert_valid(pool: &[Candidate], rules: &Rules, pairing: &Pairing) {
    let mut seen = vec![false; pool.len()];
    for &(a, b) in &pairing.pairs {
        assert!(a < b, "pairs are (lower, higher): {:?}", pairing.pairs);
        assert!(
            !seen[a] && !seen[b],
            "a ticket paired twice: {:?}",
            pairing.pairs
        );
        seen[a] = true;
        seen[b] = true;
        assert_ne!(
            pool[a].player, pool[b].player,
            "a player paired with themself"
        );
        let gap = (pool[a].rating - pool[b].rating).abs();
        assert!(gap <= rules.allowed_gap(&pool[a]) && gap <= rules.allowed_gap(&pool[b]));
    }
    assert!(pairing.pairs.windows(2).all(|w| w[0] < w[1]));
}

fn check_against_brute_force(pool: &[Candidate], rules: &Rules) {
    let got = pair(pool, rules);
    assert_valid(pool, rules, &got);
    let brute = brute_force(pool, rules);
    let o = objective(pool, rules, &got.pairs);
    assert_eq!(o.key(), brute.best, "pool {pool:#?}\ngot {got:?}");
    // Longest-waiting first in the strong sense: at every wait threshold, as many tickets
    // paired as any matching with the most pairs manages.
    for (t, &at_least) in brute.thresholds.iter().enumerate() {
        let covered = got
            .pairs
            .iter()
            .flat_map(|&(a, b)| [a, b])
            .filter(|&v| pool[v].waited_ms >= at_least)
            .count();
        assert_eq!(
            covered, brute.best_covers[o.pairs][t],
            "threshold {at_least}"
        );
    }
}

#[test]
fn a_wave_is_optimal_against_brute_force_on_random_small_pools() {
    let mut rng = Rng(7);
    let mut exact_runs = 0;
    for round in 0..600 {
        let n = if round % 20 == 0 {
            12
        } else {
            rng.modulo(11) as usize
        };
        let pool = random_pool(&mut rng, n);
        let mut rules = Rules::default();
        if rng.chance(30) {
            rules.base_gap = 15.0;
            rules.gap_per_second = 2.0;
        }
        let got = pair(&pool, &rules);
        exact_runs += usize::from(got.exact);
        check_against_brute_force(&pool, &rules);
    }
    assert_eq!(exact_runs, 600, "small pools are always solved exactly");
}

#[test]
fn components_solved_apart_are_still_optimal() {
    // Clusters far apart in rating: the wave cuts them into components of a few tickets.
    let mut rng = Rng(11);
    for _ in 0..150 {
        let n = 4 + rng.modulo(9) as usize;
        let mut pool = random_pool(&mut rng, n);
        for (k, c) in pool.iter_mut().enumerate() {
            c.rating += (k % 3) as f64 * 3000.0;
        }
        let rules = Rules {
            exact_limit: 5,
            ..Rules::default()
        };
        check_against_brute_force(&pool, &rules);
    }
}

#[test]
fn a_pair_outside_either_window_is_never_made_and_widening_pairs_it_later() {
    let rules = Rules::default();
    // 300 apart: both need 25 s of waiting (50 + 10 × 25 = 300).
    let mut pool = vec![ticket(1, 1500.0, 0), ticket(2, 1800.0, 0)];
    assert!(pair(&pool, &rules).pairs.is_empty());
    pool[0].waited_ms = 60_000;
    assert!(
        pair(&pool, &rules).pairs.is_empty(),
        "the fresh ticket's window is narrow"
    );
    pool[1].waited_ms = 24_000;
    assert!(pair(&pool, &rules).pairs.is_empty());
    pool[1].waited_ms = 25_000;
    assert_eq!(pair(&pool, &rules).pairs, vec![(0, 1)]);
    // A provisional ticket's window is twice as wide.
    let mut pool = vec![ticket(1, 1500.0, 60), ticket(2, 1580.0, 0)];
    assert!(pair(&pool, &rules).pairs.is_empty());
    pool[1].deviation = 200.0;
    assert_eq!(pair(&pool, &rules).pairs, vec![(0, 1)]);
}

#[test]
fn the_allowed_gap_follows_the_documented_schedule() {
    let rules = Rules::default();
    let table = [
        (0, 50.0, 100.0),
        (5, 100.0, 200.0),
        (10, 150.0, 300.0),
        (20, 250.0, 500.0),
        (30, 350.0, 700.0),
        (45, 500.0, 1000.0),
        (600, 500.0, 1000.0),
    ];
    for (seconds, established, provisional) in table {
        let mut c = ticket(1, 1500.0, seconds);
        assert_eq!(rules.allowed_gap(&c), established, "{seconds} s");
        c.deviation = 110.5;
        assert_eq!(rules.allowed_gap(&c), provisional, "{seconds} s");
    }
    let mut c = ticket(1, 1500.0, 0);
    c.waited_ms = 100;
    assert_eq!(rules.allowed_gap(&c), 51.0);
    c.deviation = 110.0;
    assert_eq!(rules.allowed_gap(&c), 51.0, "110 itself is established");
}

#[test]
fn the_newest_ticket_of_an_odd_pool_is_left_out_when_all_else_is_equal() {
    let rules = Rules::default();
    let pool = vec![
        ticket(1, 1500.0, 10),
        ticket(2, 1500.0, 3),
        ticket(3, 1500.0, 20),
    ];
    assert_eq!(pair(&pool, &rules).pairs, vec![(0, 2)]);
    let pool = vec![
        ticket(1, 1500.0, 3),
        ticket(2, 1500.0, 10),
        ticket(3, 1500.0, 20),
        ticket(4, 1500.0, 1),
        ticket(5, 1500.0, 12),
    ];
    let got = pair(&pool, &rules).pairs;
    assert_eq!(got.len(), 2);
    assert!(
        got.iter().all(|&(a, b)| a != 3 && b != 3),
        "the 1 s ticket waits: {got:?}"
    );
}

#[test]
fn a_long_wait_outranks_a_smaller_gap() {
    // A has waited 30 s; B (fresh) is 10 points away, C (20 s) 100 points away. Only one pair
    // can be made; it is A with C, the two longer waits, though A–B is the closer game.
    let rules = Rules::default();
    let pool = vec![
        ticket(1, 1500.0, 30),
        ticket(2, 1510.0, 0),
        ticket(3, 1600.0, 20),
    ];
    assert_eq!(pair(&pool, &rules).pairs, vec![(0, 2)]);
    // Equal waits: the smaller gap wins.
    let pool = vec![
        ticket(1, 1500.0, 30),
        ticket(2, 1510.0, 30),
        ticket(3, 1600.0, 30),
    ];
    assert_eq!(pair(&pool, &rules).pairs, vec![(0, 1)]);
}

#[test]
fn the_repeat_penalty_steers_away_from_a_rematch_and_fades() {
    let rules = Rules::default();
    let mut pool = vec![
        ticket(1, 1500.0, 1),
        ticket(2, 1505.0, 1),
        ticket(3, 1520.0, 1),
        ticket(4, 1525.0, 1),
    ];
    assert_eq!(pair(&pool, &rules).pairs, vec![(0, 1), (2, 3)]);
    pool[0].previous_opponent = Some(player(2));
    let fresh = pair(&pool, &rules).pairs;
    assert!(
        !fresh.contains(&(0, 1)),
        "1 and 2 just played each other: {fresh:?}"
    );
    assert_eq!(fresh.len(), 2);
    // After five minutes the penalty is 200 / 1024 points: the closer games win again.
    for c in &mut pool {
        c.waited_ms = 300_000;
    }
    assert_eq!(pair(&pool, &rules).pairs, vec![(0, 1), (2, 3)]);
    // A repeat is a cost, not a ban: two players alone are paired again.
    let pool = vec![
        Candidate {
            previous_opponent: Some(player(2)),
            ..ticket(1, 1500.0, 0)
        },
        ticket(2, 1500.0, 0),
    ];
    assert_eq!(pair(&pool, &rules).pairs, vec![(0, 1)]);
}

#[test]
fn the_repeat_penalty_halves_every_thirty_seconds_of_the_shorter_wait() {
    let rules = Rules::default();
    let mut a = ticket(1, 1500.0, 0);
    let b = Candidate {
        previous_opponent: Some(player(1)),
        ..ticket(2, 1540.0, 90)
    };
    assert_eq!(rules.repeat_penalty(&a, &b), 200.0);
    a.waited_ms = 30_000;
    assert_eq!(rules.repeat_penalty(&a, &b), 100.0);
    a.waited_ms = 120_000;
    assert_eq!(
        rules.repeat_penalty(&a, &b),
        25.0,
        "the shorter wait (90 s) counts"
    );
    assert_eq!(rules.cost(&a, &b), 65.0);
    assert_eq!(rules.cost_units(&a, &b), 6500);
    let c = ticket(3, 1500.0, 0);
    assert_eq!(rules.repeat_penalty(&a, &c), 0.0);
}

#[test]
fn a_player_is_never_paired_with_themself() {
    let rules = Rules::default();
    let pool = vec![ticket(1, 1500.0, 10), ticket(1, 1500.0, 10)];
    assert!(pair(&pool, &rules).pairs.is_empty());
    let pool = vec![
        ticket(1, 1500.0, 10),
        ticket(1, 1500.0, 10),
        ticket(2, 1500.0, 5),
    ];
    let got = pair(&pool, &rules).pairs;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].1, 2);
}

#[test]
fn empty_and_lonely_pools_make_no_pairs() {
    let rules = Rules::default();
    assert_eq!(
        pair(&[], &rules),
        Pairing {
            pairs: vec![],
            exact: true
        }
    );
    assert!(pair(&[ticket(1, 1500.0, 9)], &rules).pairs.is_empty());
    let nan = vec![ticket(1, f64::NAN, 60), ticket(2, 1500.0, 60)];
    assert!(pair(&nan, &rules).pairs.is_empty());
}

/// A larger random pool in the shape of a real one: ratings spread over 1000–2000.
fn large_pool(rng: &mut Rng, n: usize) -> Vec<Candidate> {
    let mut pool: Vec<Candidate> = (0..n)
        .map(|i| Candidate {
            player: player(rng.modulo(n as u64 * 9 / 10 + 1).max(i as u64 % 3)),
            rating: 1000.0 + rng.modulo(100_000) as f64 / 100.0,
            deviation: if rng.chance(20) { 250.0 } else { 70.0 },
            waited_ms: rng.modulo(60_000),
            previous_opponent: None,
        })
        .collect();
    for i in 0..n {
        if rng.chance(20) {
            let j = rng.modulo(n as u64) as usize;
            pool[i].previous_opponent = Some(pool[j].player);
        }
    }
    pool
}

#[test]
fn the_heuristic_always_returns_a_valid_matching_within_the_windows() {
    let mut rng = Rng(23);
    for round in 0..60 {
        let n = 20 + rng.modulo(400) as usize;
        let pool = large_pool(&mut rng, n);
        let rules = Rules {
            exact_limit: 0,
            block: 4 + rng.modulo(40) as usize,
            base_gap: [5.0, 50.0][round % 2],
            ..Rules::default()
        };
        let got = pair(&pool, &rules);
        assert_valid(&pool, &rules, &got);
        assert!(!got.pairs.is_empty());
    }
}

#[test]
fn the_heuristic_stays_close_to_the_optimum() {
    let mut rng = Rng(29);
    for _ in 0..10 {
        let pool = large_pool(&mut rng, 150);
        let exact = pair(
            &pool,
            &Rules {
                exact_limit: usize::MAX,
                ..Rules::default()
            },
        );
        assert!(exact.exact);
        let rough = pair(
            &pool,
            &Rules {
                exact_limit: 0,
                ..Rules::default()
            },
        );
        assert!(!rough.exact);
        let (e, r) = (
            objective(&pool, &Rules::default(), &exact.pairs),
            objective(&pool, &Rules::default(), &rough.pairs),
        );
        assert!(e.key() >= r.key(), "the exact solution is the best");
        assert!(r.pairs + 2 >= e.pairs, "exact {e:?}, heuristic {r:?}");
    }
}

#[test]
fn the_heuristics_first_pass_is_optimal_among_pairs_at_most_span_places_apart() {
    let mut rng = Rng(31);
    for _ in 0..300 {
        let n = rng.modulo(11) as usize;
        let pool = random_pool(&mut rng, n);
        let rules = Rules::default();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| pool[a].rating.total_cmp(&pool[b].rating).then(a.cmp(&b)));
        let mut place = vec![0; n];
        for (k, &i) in order.iter().enumerate() {
            place[i] = k;
        }
        let gaps: Vec<f64> = pool.iter().map(|c| rules.allowed_gap(c)).collect();
        let wave = Wave {
            candidates: &pool,
            rules: &rules,
            gaps: &gaps,
        };
        let mut got: Vec<(usize, usize)> = wave
            .local_pairs(&order)
            .into_iter()
            .map(|(a, b)| (a.min(b), a.max(b)))
            .collect();
        got.sort_unstable();
        assert_valid(
            &pool,
            &rules,
            &Pairing {
                pairs: got.clone(),
                exact: false,
            },
        );
        assert!(
            got.iter()
                .all(|&(a, b)| place[a].abs_diff(place[b]) <= SPAN)
        );
        let brute = brute_force_where(&pool, &rules, &|a, b| place[a].abs_diff(place[b]) <= SPAN);
        assert_eq!(
            objective(&pool, &rules, &got).key(),
            brute.best,
            "{pool:#?}"
        );
    }
}

#[test]
fn the_player_who_started_fewer_games_gets_seat_one() {
    assert_eq!(first_seat([3, 7], true), (0, false));
    assert_eq!(first_seat([3, 7], false), (0, false));
    assert_eq!(first_seat([6, 2], true), (1, false));
    assert_eq!(first_seat([10, 0], false), (1, false));
}

#[test]
fn a_tie_in_starts_goes_to_the_coin() {
    assert_eq!(first_seat([5, 5], true), (0, true));
    assert_eq!(first_seat([5, 5], false), (1, true));
    assert_eq!(first_seat([0, 0], true), (0, true));
}
