//! Matchmaking benchmarks: one wave over large pools, the heuristic's gap to the exact
//! optimum, and a simulated day of 10k players queueing. Prints markdown tables.
//!
//! Run with `cargo bench -p domain --bench matchmaking` (a plain `main`, no harness). Every
//! random draw comes from a seeded generator, so the figures other than timings repeat exactly.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::hint::black_box;
use std::time::{Duration, Instant};

use domain::ids::PlayerId;
use domain::matchmaking::{Candidate, Rules, first_seat, objective, pair};
use domain::ratings::{Score, Standing, rate};
use time::OffsetDateTime;
use uuid::Uuid;

/// The crate's seeded generator: the same workloads on every run.
use domain::rng::SplitMix64 as Rng;

fn player(n: u64) -> PlayerId {
    PlayerId::from_uuid(Uuid::from_u64_pair(0, n + 1))
}

/// A realistic waiting pool: ratings ~ normal(1500, 300), waits uniform 0–60 s, 20%
/// provisional, 30% with a previous opponent who is also waiting.
fn realistic_pool(rng: &mut Rng, n: usize) -> Vec<Candidate> {
    let mut pool: Vec<Candidate> = (0..n)
        .map(|i| Candidate {
            player: player(i as u64),
            rating: rng.normal(1500.0, 300.0),
            deviation: if rng.modulo(100) < 20 {
                111.0 + rng.unit() * 239.0
            } else {
                50.0 + rng.unit() * 60.0
            },
            waited_ms: rng.modulo(60_001),
            previous_opponent: None,
        })
        .collect();
    for i in 0..n {
        if rng.modulo(100) < 30 {
            let j = rng.modulo(n as u64) as usize;
            if j != i {
                pool[i].previous_opponent = Some(pool[j].player);
            }
        }
    }
    pool
}

/// This thread's time on a CPU so far (Linux), so that a busy shared machine's waiting for a
/// core can be told apart from the work; `None` elsewhere.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn one_wave() {
    println!("## (a) One wave over a large pool (default rules)\n");
    println!(
        "| tickets | runs | mean ms | max ms | mean CPU ms | pairs | unpaired | exact | mean gap | repeats |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|:---:|---:|---:|");
    let rules = Rules::default();
    for (n, runs) in [(1_000usize, 10), (10_000, 5), (100_000, 3)] {
        let mut times = Vec::new();
        let mut cpu = Duration::ZERO;
        let mut last = None;
        for run in 0..runs {
            let pool = realistic_pool(&mut Rng(1000 + run as u64), n);
            let cpu_before = cpu_time();
            let started = Instant::now();
            let pairing = black_box(pair(black_box(&pool), &rules));
            times.push(started.elapsed());
            if let (Some(after), Some(before)) = (cpu_time(), cpu_before) {
                cpu += after.saturating_sub(before);
            }
            last = Some((pool, pairing));
        }
        let Some((pool, pairing)) = last else {
            continue;
        };
        let mean = times.iter().map(|&d| ms(d)).sum::<f64>() / runs as f64;
        let max = times.iter().map(|&d| ms(d)).fold(0.0, f64::max);
        let gaps: f64 = pairing
            .pairs
            .iter()
            .map(|&(a, b)| (pool[a].rating - pool[b].rating).abs())
            .sum();
        let repeats = pairing
            .pairs
            .iter()
            .filter(|&&(a, b)| Rules::is_repeat(&pool[a], &pool[b]))
            .count();
        println!(
            "| {n} | {runs} | {mean:.1} | {max:.1} | {:.1} | {} | {} | {} | {:.2} | {repeats} |",
            ms(cpu) / runs as f64,
            pairing.pairs.len(),
            n - 2 * pairing.pairs.len(),
            if pairing.exact { "yes" } else { "no" },
            gaps / pairing.pairs.len().max(1) as f64,
        );
    }
    println!();
}

/// A harder pool for the heuristic: fresh tickets (waits 0–5 s, so narrow windows), ratings
/// spread wider (normal(1500, 450)), 20% provisional, 30% with a previous opponent waiting.
fn narrow_pool(rng: &mut Rng, n: usize) -> Vec<Candidate> {
    let mut pool = realistic_pool(rng, n);
    for c in &mut pool {
        c.rating = 1500.0 + (c.rating - 1500.0) * 1.5;
        c.waited_ms /= 12;
    }
    pool
}

fn heuristic_gaps() {
    heuristic_gap(
        "(b) The heuristic against the exact optimum",
        "Same realistic pools as (a)",
        realistic_pool,
    );
    heuristic_gap(
        "(b′) The same on sparse pools with narrow windows",
        "Pools of fresh tickets (waits 0–5 s: windows 50–100, provisional 100–200) with ratings \
         ~ normal(1500, 450): fewer partners per ticket than in (a)",
        narrow_pool,
    );
}

fn heuristic_gap(title: &str, shape: &str, make: fn(&mut Rng, usize) -> Vec<Candidate>) {
    // MM_GAP_POOLS=20 for a quicker run; the exact blossom over 1000 tickets takes seconds.
    let pools: usize = std::env::var("MM_GAP_POOLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    println!("## {title} ({pools} pools of 200–1000 tickets)\n");
    println!(
        "{shape}. Exact: `exact_limit = usize::MAX` (one blossom over each \
         component). Heuristic: `exact_limit = 0` (partners at most 4 places apart in rating \
         order, by dynamic programming; then the leftovers by exact blocks of {}). Default rules \
         otherwise.\n",
        Rules::default().block
    );
    let exact_rules = Rules {
        exact_limit: usize::MAX,
        ..Rules::default()
    };
    let rough_rules = Rules {
        exact_limit: 0,
        ..Rules::default()
    };
    let mut rng = Rng(77);
    let (mut lost, mut lost_max, mut pools_lost, mut pools_equal) = (0usize, 0usize, 0, 0);
    let (mut pairs_exact, mut cost_exact, mut cost_rough) = (0usize, 0i64, 0i64);
    let (mut same_pairs_pools, mut same_pairs_cost_diff) = (0, 0i64);
    let (mut wait_lost, mut t_exact, mut t_rough) = (0i64, Duration::ZERO, Duration::ZERO);
    let mut worst_rel = 0.0f64;
    for _ in 0..pools {
        let n = rng.range(200, 1000) as usize;
        let pool = make(&mut Rng(rng.next_u64()), n);
        let started = Instant::now();
        let exact = pair(&pool, &exact_rules);
        t_exact += started.elapsed();
        let started = Instant::now();
        let rough = pair(&pool, &rough_rules);
        t_rough += started.elapsed();
        assert!(exact.exact);
        let e = objective(&pool, &exact_rules, &exact.pairs);
        let r = objective(&pool, &exact_rules, &rough.pairs);
        assert!(e.key() >= r.key(), "the exact wave is the optimum");
        let d = e.pairs - r.pairs;
        lost += d;
        lost_max = lost_max.max(d);
        pools_lost += usize::from(d > 0);
        pools_equal += usize::from(e.key() == r.key());
        pairs_exact += e.pairs;
        cost_exact += e.cost;
        cost_rough += r.cost;
        wait_lost += e.wait_ranks as i64 - r.wait_ranks as i64;
        if d == 0 {
            same_pairs_pools += 1;
            same_pairs_cost_diff += r.cost - e.cost;
            if e.cost > 0 {
                worst_rel = worst_rel.max((r.cost - e.cost) as f64 / e.cost as f64);
            }
        }
    }
    println!("| measure | value |");
    println!("|---|---:|");
    println!("| pairs, exact (all pools) | {pairs_exact} |");
    println!(
        "| pairs lost by the heuristic | {lost} ({:.3}%) |",
        100.0 * lost as f64 / pairs_exact as f64
    );
    println!("| most pairs lost in one pool | {lost_max} |");
    println!("| pools with a pair lost | {pools_lost} / {pools} |");
    println!("| pools where the heuristic is optimal | {pools_equal} / {pools} |");
    println!("| sum of wait ranks lost (criterion 2) | {wait_lost} |");
    println!(
        "| total cost (points), exact / heuristic | {:.2} / {:.2} |",
        cost_exact as f64 / 100.0,
        cost_rough as f64 / 100.0
    );
    println!(
        "| extra cost where the pair counts agree ({same_pairs_pools} pools) | {:.2} points ({:.3}% of exact; worst pool {:.3}%) |",
        same_pairs_cost_diff as f64 / 100.0,
        100.0 * same_pairs_cost_diff as f64 / cost_exact.max(1) as f64,
        100.0 * worst_rel
    );
    println!(
        "| time per pool, exact / heuristic | {:.1} ms / {:.2} ms |",
        ms(t_exact) / pools as f64,
        ms(t_rough) / pools as f64
    );
    println!();
}

/// A queued player, as the pool holds them.
struct Ticket {
    player: usize,
    joined_ms: u64,
}

struct Player {
    strength: f64,
    standing: Standing,
    previous_opponent: Option<usize>,
    /// Games still to play in the current session (0: not playing today, for now).
    session_games: u32,
    /// Queued or in a match.
    busy: bool,
    /// Whether they started each of their last 10 ranked games.
    starts: VecDeque<bool>,
}

/// A time of day (ms) for a session to start: a day curve, quiet at night, busiest evenings.
fn session_start(rng: &mut Rng) -> u64 {
    const WEIGHTS: [u64; 24] = [
        4, 3, 2, 1, 1, 1, 2, 3, 4, 5, 5, 6, 7, 6, 6, 6, 7, 8, 10, 12, 12, 10, 8, 6,
    ];
    let total: u64 = WEIGHTS.iter().sum();
    let mut pick = rng.modulo(total);
    let mut hour = 0;
    while pick >= WEIGHTS[hour] {
        pick -= WEIGHTS[hour];
        hour += 1;
    }
    hour as u64 * 3_600_000 + rng.modulo(3_600_000)
}

fn simulated_day() {
    const PLAYERS: usize = 10_000;
    const DAY_MS: u64 = 24 * 3_600_000;
    const TRIGGER: usize = 32;
    const TTL_MS: u64 = 10 * 60_000;
    let rules = Rules::default();
    let mut rng = Rng(2026);
    let epoch =
        OffsetDateTime::from_unix_timestamp(1_790_000_000).unwrap_or(OffsetDateTime::UNIX_EPOCH);
    let mut players: Vec<Player> = (0..PLAYERS)
        .map(|_| Player {
            strength: rng.normal(1500.0, 350.0),
            standing: Standing::NEW,
            previous_opponent: None,
            session_games: 0,
            busy: false,
            starts: VecDeque::new(),
        })
        .collect();
    // (time, player, kind): kind 0 = a session starts, 1 = back in the queue after a game.
    let mut events: BinaryHeap<Reverse<(u64, usize, u8)>> = BinaryHeap::new();
    for p in 0..PLAYERS {
        for _ in 0..rng.range(1, 3) {
            events.push(Reverse((session_start(&mut rng), p, 0)));
        }
    }
    let mut pool: Vec<Ticket> = Vec::new();
    let (mut waits, mut gaps) = (Vec::new(), Vec::new());
    let (mut pairs, mut repeats, mut coin, mut waves, mut trigger_waves, mut abandoned) =
        (0usize, 0usize, 0usize, 0usize, 0usize, 0usize);
    let (mut wave_time, mut wave_max, mut pool_sum, mut pool_max) =
        (Duration::ZERO, Duration::ZERO, 0usize, 0usize);
    let mut exact_waves = 0usize;
    let started_all = Instant::now();

    let mut wave = |now: u64,
                    pool: &mut Vec<Ticket>,
                    players: &mut Vec<Player>,
                    events: &mut BinaryHeap<Reverse<(u64, usize, u8)>>,
                    rng: &mut Rng| {
        waves += 1;
        pool_sum += pool.len();
        pool_max = pool_max.max(pool.len());
        let candidates: Vec<Candidate> = pool
            .iter()
            .map(|t| {
                let p = &players[t.player];
                Candidate {
                    player: player(t.player as u64),
                    rating: p.standing.rating.rating,
                    deviation: p.standing.rating.deviation,
                    waited_ms: now - t.joined_ms,
                    previous_opponent: p.previous_opponent.map(|o| player(o as u64)),
                }
            })
            .collect();
        let started = Instant::now();
        let pairing = pair(&candidates, &rules);
        let took = started.elapsed();
        wave_time += took;
        wave_max = wave_max.max(took);
        exact_waves += usize::from(pairing.exact);
        let mut gone = vec![false; pool.len()];
        for &(a, b) in &pairing.pairs {
            gone[a] = true;
            gone[b] = true;
            let (pa, pb) = (pool[a].player, pool[b].player);
            pairs += 1;
            waits.push(candidates[a].waited_ms as f64 / 1000.0);
            waits.push(candidates[b].waited_ms as f64 / 1000.0);
            gaps.push((candidates[a].rating - candidates[b].rating).abs());
            repeats += usize::from(Rules::is_repeat(&candidates[a], &candidates[b]));
            let count = |p: &Player| p.starts.iter().filter(|&&s| s).count() as u32;
            let (first, by_coin) = first_seat(
                [count(&players[pa]), count(&players[pb])],
                rng.modulo(2) == 0,
            );
            coin += usize::from(by_coin);
            for (k, p) in [pa, pb].into_iter().enumerate() {
                let starts = &mut players[p].starts;
                starts.push_back(k == first);
                if starts.len() > 10 {
                    starts.pop_front();
                }
            }
            // The game: a few minutes, its result drawn from the hidden strengths.
            let length = rng.range(120_000, 360_000);
            let ended = now + length;
            let expected =
                1.0 / (1.0 + 10f64.powf((players[pb].strength - players[pa].strength) / 400.0));
            let score = if rng.unit() < 0.08 {
                Score::Draw
            } else if rng.unit() < expected {
                Score::Win
            } else {
                Score::Loss
            };
            let ended_at = epoch + time::Duration::milliseconds(ended as i64);
            let (sa, sb) = (players[pa].standing, players[pb].standing);
            let steps = rate(&sa, &sb, score, ended_at);
            players[pa].standing = sa.after(&steps[0], ended_at);
            players[pb].standing = sb.after(&steps[1], ended_at);
            players[pa].previous_opponent = Some(pb);
            players[pb].previous_opponent = Some(pa);
            for p in [pa, pb] {
                let pl = &mut players[p];
                pl.session_games = pl.session_games.saturating_sub(1);
                if pl.session_games > 0 {
                    events.push(Reverse((ended + rng.range(2_000, 20_000), p, 1)));
                } else {
                    pl.busy = false;
                }
            }
        }
        let mut k = 0;
        pool.retain(|t| {
            let keep = !gone[k];
            k += 1;
            if keep && now - t.joined_ms > TTL_MS {
                // The ticket expires: the player gives up for this session.
                abandoned += 1;
                players[t.player].busy = false;
                players[t.player].session_games = 0;
                return false;
            }
            keep
        });
    };

    let mut now = 0;
    while now < DAY_MS {
        now += 1000;
        while let Some(&Reverse((at, p, kind))) = events.peek() {
            if at > now {
                break;
            }
            events.pop();
            let pl = &mut players[p];
            if kind == 0 {
                pl.session_games += rng.range(3, 10) as u32;
                if pl.busy {
                    continue;
                }
                pl.busy = true;
            }
            pool.push(Ticket {
                player: p,
                joined_ms: at,
            });
            if pool.len() >= TRIGGER {
                trigger_waves += 1;
                wave(at, &mut pool, &mut players, &mut events, &mut rng);
            }
        }
        wave(now, &mut pool, &mut players, &mut events, &mut rng);
    }
    let total = started_all.elapsed();
    waits.sort_by(f64::total_cmp);
    gaps.sort_by(f64::total_cmp);

    println!("## (c) A simulated day: 10k players queueing in one pool\n");
    println!(
        "Hidden strengths ~ normal(1500, 350); everyone starts at 1500/350. Each player plays 1–3 \
         sessions of 3–10 games, starting on a day curve (quiet 02–06 h, busiest 19–21 h); games \
         last 2–6 min (8% draws, else the winner drawn from the strengths by the Elo curve), then \
         the player re-queues after 2–20 s. Waves every second and at once when {TRIGGER} are \
         waiting; tickets expire after 10 min. Ratings by `ratings::rate`. Default rules.\n"
    );
    println!("| measure | value |");
    println!("|---|---:|");
    println!("| waves (of which size-triggered) | {waves} ({trigger_waves}) |");
    println!("| waves solved exactly | {exact_waves} |");
    println!("| pairs (games) | {pairs} |");
    println!("| tickets expired unpaired | {abandoned} |");
    println!(
        "| pool size: mean / max | {:.1} / {pool_max} |",
        pool_sum as f64 / waves as f64
    );
    println!(
        "| wait (s): p50 / p95 / p99 / max | {:.1} / {:.1} / {:.1} / {:.1} |",
        percentile(&waits, 0.5),
        percentile(&waits, 0.95),
        percentile(&waits, 0.99),
        percentile(&waits, 1.0)
    );
    println!(
        "| rating gap: p50 / p95 / p99 / max | {:.1} / {:.1} / {:.1} / {:.1} |",
        percentile(&gaps, 0.5),
        percentile(&gaps, 0.95),
        percentile(&gaps, 0.99),
        percentile(&gaps, 1.0)
    );
    println!(
        "| repeat pairs (same two as their previous match) | {repeats} ({:.2}%) |",
        100.0 * repeats as f64 / pairs.max(1) as f64
    );
    println!(
        "| seat 1 decided by the coin | {coin} ({:.1}%) |",
        100.0 * coin as f64 / pairs.max(1) as f64
    );
    println!(
        "| wave time: mean / max | {:.3} ms / {:.2} ms |",
        ms(wave_time) / waves as f64,
        ms(wave_max)
    );
    println!("| whole simulation | {:.1} s |", total.as_secs_f64());
    let settled: Vec<&Player> = players.iter().filter(|p| p.standing.games >= 20).collect();
    if !settled.is_empty() {
        let n = settled.len() as f64;
        let mean_err = settled
            .iter()
            .map(|p| (p.standing.rating.rating - p.strength).abs())
            .sum::<f64>()
            / n;
        let (mx, my) = (
            settled.iter().map(|p| p.strength).sum::<f64>() / n,
            settled
                .iter()
                .map(|p| p.standing.rating.rating)
                .sum::<f64>()
                / n,
        );
        let cov: f64 = settled
            .iter()
            .map(|p| (p.strength - mx) * (p.standing.rating.rating - my))
            .sum();
        let vx: f64 = settled.iter().map(|p| (p.strength - mx).powi(2)).sum();
        let vy: f64 = settled
            .iter()
            .map(|p| (p.standing.rating.rating - my).powi(2))
            .sum();
        println!(
            "| players with ≥ 20 games: count / mean abs(rating − strength) / correlation | {} / {mean_err:.0} / {:.3} |",
            settled.len(),
            cov / (vx * vy).sqrt()
        );
    }
    println!();
}

fn exact_scaling() {
    println!("## (d) The exact blossom alone, by component size\n");
    println!("Realistic pools (as in (a)) solved with `exact_limit = usize::MAX`.\n");
    println!("| tickets | runs | mean ms | max ms | pairs |");
    println!("|---:|---:|---:|---:|---:|");
    let rules = Rules {
        exact_limit: usize::MAX,
        ..Rules::default()
    };
    for n in [16usize, 32, 64, 128, 256, 512] {
        let runs = if n <= 128 { 20 } else { 3 };
        let mut times = Vec::new();
        let mut made = 0;
        for run in 0..runs {
            let pool = realistic_pool(&mut Rng(500 + run as u64), n);
            let started = Instant::now();
            let pairing = black_box(pair(black_box(&pool), &rules));
            times.push(ms(started.elapsed()));
            made = pairing.pairs.len();
        }
        println!(
            "| {n} | {runs} | {:.2} | {:.2} | {made} |",
            times.iter().sum::<f64>() / runs as f64,
            times.iter().copied().fold(0.0, f64::max)
        );
    }
    println!();
}

fn main() {
    println!("# Matchmaking benchmarks\n");
    let only = std::env::var("MM_ONLY").unwrap_or_default();
    if !only.is_empty() {
        for part in only.split(',') {
            match part {
                "a" => one_wave(),
                "b" => heuristic_gaps(),
                "c" => simulated_day(),
                "d" => exact_scaling(),
                _ => {}
            }
        }
        return;
    }
    exact_scaling();
    one_wave();
    heuristic_gaps();
    simulated_day();
}
