//! What the instance shows of itself: the queue statistics every instance shares (from the
//! read models) with this instance's counters, and the Prometheus text of `/metrics`.

use std::fmt::Write as _;

use domain::tickets::Pool;

use crate::error::{ApiError, unexpected};
use crate::metrics::{Limit, Percentiles, PoolStats};
use crate::state::AppState;

/// Every pool that has waiting tickets or pairings in the last 24 hours.
pub async fn pool_stats(app: &AppState) -> Result<Vec<PoolStats>, ApiError> {
    let since = app.now() - time::Duration::hours(24);
    let client = app.pool.get().await.map_err(unexpected)?;
    let pools = projections::queries::pool_quality(&client, since)
        .await
        .map_err(unexpected)?;
    Ok(pools
        .into_iter()
        .map(|q| {
            let pool = q.game.parse().ok().map(|game| Pool {
                game,
                turn_seconds: q.turn_seconds,
            });
            PoolStats {
                waves_run: pool.map_or(0, |p| app.metrics.waves_of(p).0),
                game: q.game,
                turn_seconds: q.turn_seconds.map(|t| t.get() as i32),
                waiting: q.waiting,
                pairs: q.pairs,
                wait_seconds: Percentiles {
                    p50: q.wait_ms[0] / 1000.0,
                    p95: q.wait_ms[1] / 1000.0,
                    p99: q.wait_ms[2] / 1000.0,
                },
                rating_gap: Percentiles {
                    p50: q.rating_gap[0],
                    p95: q.rating_gap[1],
                    p99: q.rating_gap[2],
                },
                repeat_pair_rate: q.repeat_rate,
            }
        })
        .collect())
}

/// The Prometheus text exposition of `/metrics`.
pub async fn prometheus(app: &AppState) -> Result<String, ApiError> {
    let stats = pool_stats(app).await?;
    let mut out = String::new();
    let label = |s: &PoolStats| {
        format!(
            "game=\"{}\",turn_seconds=\"{}\"",
            s.game,
            s.turn_seconds.map_or("none".to_owned(), |t| t.to_string())
        )
    };
    let _ = writeln!(
        out,
        "# HELP discs_queue_waiting Tickets waiting in the pool."
    );
    let _ = writeln!(out, "# TYPE discs_queue_waiting gauge");
    for s in &stats {
        let _ = writeln!(out, "discs_queue_waiting{{{}}} {}", label(s), s.waiting);
    }
    for (name, help, pick) in [
        (
            "discs_queue_wait_seconds",
            "Wait from ticket opened to matched, last 24 h.",
            (|s: &PoolStats| s.wait_seconds) as fn(&PoolStats) -> Percentiles,
        ),
        (
            "discs_queue_rating_gap",
            "Rating gap of the pairs made, last 24 h.",
            |s: &PoolStats| s.rating_gap,
        ),
    ] {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} summary");
        for s in &stats {
            let p = pick(s);
            for (q, v) in [("0.5", p.p50), ("0.95", p.p95), ("0.99", p.p99)] {
                let _ = writeln!(out, "{name}{{{},quantile=\"{q}\"}} {v}", label(s));
            }
            let _ = writeln!(out, "{name}_count{{{}}} {}", label(s), s.pairs);
        }
    }
    let _ = writeln!(
        out,
        "# HELP discs_queue_repeat_pair_rate Share of pairs that repeat the previous pairing, last 24 h."
    );
    let _ = writeln!(out, "# TYPE discs_queue_repeat_pair_rate gauge");
    for s in &stats {
        let _ = writeln!(
            out,
            "discs_queue_repeat_pair_rate{{{}}} {}",
            label(s),
            s.repeat_pair_rate
        );
    }
    let _ = writeln!(
        out,
        "# HELP discs_waves_total Matchmaking waves run by this instance."
    );
    let _ = writeln!(out, "# TYPE discs_waves_total counter");
    let all = app.metrics.all();
    for (pool, (waves, _)) in &all {
        let _ = writeln!(out, "discs_waves_total{{pool=\"{pool}\"}} {waves}");
    }
    let _ = writeln!(
        out,
        "# HELP discs_pairs_total Pairs made by this instance's waves."
    );
    let _ = writeln!(out, "# TYPE discs_pairs_total counter");
    for (pool, (_, pairs)) in &all {
        let _ = writeln!(out, "discs_pairs_total{{pool=\"{pool}\"}} {pairs}");
    }
    let limits = [
        ("player", app.limiter.stats()),
        ("signup", app.signups.stats()),
        ("anonymous", app.anonymous.stats()),
    ];
    for (name, help, pick) in [
        (
            "discs_rate_limit_per_second",
            "Calls allowed per second and key (player; client address for sign-ups and other calls without a token).",
            0,
        ),
        (
            "discs_rate_limit_burst",
            "Calls allowed at once per key.",
            1,
        ),
    ] {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} gauge");
        for (limit, (per_second, burst, _)) in &limits {
            let value = if pick == 0 { per_second } else { burst };
            let _ = writeln!(out, "{name}{{limit=\"{limit}\"}} {value}");
        }
    }
    let _ = writeln!(
        out,
        "# HELP discs_rate_limited_total Calls refused with 429 by a rate limit."
    );
    let _ = writeln!(out, "# TYPE discs_rate_limited_total counter");
    for (limit, (_, _, refused)) in &limits {
        let _ = writeln!(
            out,
            "discs_rate_limited_total{{limit=\"{limit}\"}} {refused}"
        );
    }
    for limit in Limit::ALL {
        let _ = writeln!(
            out,
            "discs_rate_limited_total{{limit=\"{}\"}} {}",
            limit.label(),
            app.metrics.refusals(limit)
        );
    }
    let _ = writeln!(
        out,
        "# HELP discs_limit Configured limits: leaves per match at once (DISCS_LEAVES_PER_MATCH) and the seconds that earn one more (DISCS_LEAVE_REFILL_SECONDS); active solo matches against CPU levels 4-5 per player (DISCS_STRONG_SOLO_PER_PLAYER); analyses per player at once (DISCS_ANALYSES_PER_PLAYER)."
    );
    let _ = writeln!(out, "# TYPE discs_limit gauge");
    for (name, value) in [
        ("leaves_per_match", u64::from(app.play.leaves_per_match)),
        (
            "leave_refill_seconds",
            u64::from(app.play.leave_refill_seconds),
        ),
        (
            "strong_solo_per_player",
            u64::from(app.play.strong_solo_per_player),
        ),
        (
            "analyses_per_player",
            app.searches.analyses_per_player() as u64,
        ),
    ] {
        let _ = writeln!(out, "discs_limit{{limit=\"{name}\"}} {value}");
    }
    let searches = app.searches.stats();
    for (name, kind, help, value) in [
        (
            "discs_search_slots",
            "gauge",
            "CPU searches this instance runs at once (DISCS_SEARCHES).",
            searches.slots as u64,
        ),
        (
            "discs_searches_running",
            "gauge",
            "CPU searches (moves and analyses) running now.",
            searches.running as u64,
        ),
        (
            "discs_searches_waiting",
            "gauge",
            "CPU moves waiting for a search slot.",
            searches.waiting as u64,
        ),
        (
            "discs_searches_refused_total",
            "counter",
            "CPU searches refused with 429 (queue full, or no slot for an analysis).",
            searches.refused,
        ),
    ] {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
        let _ = writeln!(out, "{name} {value}");
    }
    let client = app.pool.get().await.map_err(unexpected)?;
    let rows = projections::queries::checkpoints(&client)
        .await
        .map_err(unexpected)?;
    let _ = writeln!(
        out,
        "# HELP discs_projection_events_total Events applied by each projection."
    );
    let _ = writeln!(out, "# TYPE discs_projection_events_total counter");
    for r in &rows {
        let _ = writeln!(
            out,
            "discs_projection_events_total{{projection=\"{}\"}} {}",
            r.name, r.events
        );
    }
    let _ = writeln!(
        out,
        "# HELP discs_projection_position Log position of each projection's checkpoint and of the log's last event."
    );
    let _ = writeln!(out, "# TYPE discs_projection_position gauge");
    for r in &rows {
        let _ = writeln!(
            out,
            "discs_projection_position{{projection=\"{}\"}} {}",
            r.name, r.position
        );
    }
    if let Some(r) = rows.first() {
        let _ = writeln!(out, "discs_log_position {}", r.log_position);
    }
    Ok(out)
}
