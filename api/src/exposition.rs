//! What the instance shows of itself: the queue statistics every instance shares (from the
//! read models) with this instance's counters, and the Prometheus text of `/metrics`.

use std::fmt::Write as _;

use domain::tickets::Pool;

use crate::error::{ApiError, unexpected};
use crate::state::ApiState;
use service::metrics::{Limit, Percentiles, PoolStats};
use service::state::AppState;

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
                days_per_move: q.days_per_move,
            });
            PoolStats {
                waves_run: pool.map_or(0, |p| app.metrics.waves_of(p).0),
                game: q.game,
                turn_seconds: q.turn_seconds.map(|t| t.get() as i32),
                days_per_move: q.days_per_move.map(|d| d.get() as i32),
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

/// The Prometheus text exposition of `/metrics`: this instance's limits and searches and the
/// projections' progress (one read of the checkpoints' small table); for an admin (`pools`),
/// also what `/v1/admin/queue/stats` keeps for admins: the shared queue statistics (a scan of
/// the last day's pairings) and this instance's waves.
pub async fn prometheus(app: &ApiState, pools: bool) -> Result<String, ApiError> {
    let mut out = Text::default();
    if pools {
        let stats = pool_stats(app).await?;
        queue(&mut out, &stats);
        waves(&mut out, app);
    }
    let client = app.pool.get().await.map_err(unexpected)?;
    let checkpoints = projections::queries::checkpoints(&client)
        .await
        .map_err(unexpected)?;
    drop(client);
    limits(&mut out, app);
    searches(&mut out, app);
    projections(&mut out, &checkpoints);
    replicas(&mut out, app);
    Ok(out.0)
}

/// Where the reads that a replica may answer went, and each replica's rotation and lag, as
/// last measured (nothing without `DATABASE_READ_URL`).
fn replicas(out: &mut Text, app: &AppState) {
    use service::replicas::Route;
    let Some(replicas) = &app.replicas else {
        return;
    };
    out.family(
        "discs_replica_reads_total",
        "counter",
        "Reads a replica may answer, by where they went: a replica, or the primary because the replica was behind, none was in the rotation or its read failed.",
    );
    for route in Route::ALL {
        out.line(format_args!(
            "discs_replica_reads_total{{route=\"{}\"}} {}",
            route.label(),
            replicas.routed(route)
        ));
    }
    out.family(
        "discs_replica_in_rotation",
        "gauge",
        "1 while the replica serves reads (a standby within the lag limits).",
    );
    for node in replicas.nodes() {
        out.line(format_args!(
            "discs_replica_in_rotation{{replica=\"{}\"}} {}",
            node.name,
            u8::from(node.in_rotation())
        ));
    }
    let lags = replicas.nodes().iter().map(|n| (&n.name, n.lag()));
    out.family(
        "discs_replica_lag_seconds",
        "gauge",
        "The replica's replay lag behind the primary in time, as last measured (absent when unknown).",
    );
    for (name, (millis, _)) in lags.clone() {
        if let Some(ms) = millis {
            let seconds = ms as f64 / 1000.0;
            out.line(format_args!(
                "discs_replica_lag_seconds{{replica=\"{name}\"}} {seconds}"
            ));
        }
    }
    out.family(
        "discs_replica_lag_bytes",
        "gauge",
        "The replica's replay lag behind the primary's WAL position, as last measured (absent when unknown).",
    );
    for (name, (_, bytes)) in lags {
        if let Some(b) = bytes {
            out.line(format_args!(
                "discs_replica_lag_bytes{{replica=\"{name}\"}} {b}"
            ));
        }
    }
}

/// The text being written (writing to a `String` cannot fail).
#[derive(Default)]
struct Text(String);

impl Text {
    /// A metric family's `HELP` and `TYPE` lines.
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        self.line(format_args!("# HELP {name} {help}"));
        self.line(format_args!("# TYPE {name} {kind}"));
    }

    fn line(&mut self, line: std::fmt::Arguments<'_>) {
        let _ = writeln!(self.0, "{line}");
    }
}

/// The pools' waiting tickets, waits, rating gaps and repeat pairs (every instance's).
fn queue(out: &mut Text, stats: &[PoolStats]) {
    let label = |s: &PoolStats| {
        format!(
            "game=\"{}\",turn_seconds=\"{}\"",
            s.game,
            s.turn_seconds.map_or("none".to_owned(), |t| t.to_string())
        )
    };
    out.family(
        "discs_queue_waiting",
        "gauge",
        "Tickets waiting in the pool.",
    );
    for s in stats {
        out.line(format_args!(
            "discs_queue_waiting{{{}}} {}",
            label(s),
            s.waiting
        ));
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
        out.family(name, "summary", help);
        for s in stats {
            let p = pick(s);
            for (q, v) in [("0.5", p.p50), ("0.95", p.p95), ("0.99", p.p99)] {
                out.line(format_args!("{name}{{{},quantile=\"{q}\"}} {v}", label(s)));
            }
            out.line(format_args!("{name}_count{{{}}} {}", label(s), s.pairs));
        }
    }
    out.family(
        "discs_queue_repeat_pair_rate",
        "gauge",
        "Share of pairs that repeat the previous pairing, last 24 h.",
    );
    for s in stats {
        out.line(format_args!(
            "discs_queue_repeat_pair_rate{{{}}} {}",
            label(s),
            s.repeat_pair_rate
        ));
    }
}

/// The waves this instance ran and the pairs they made, per pool.
fn waves(out: &mut Text, app: &ApiState) {
    let all = app.metrics.all();
    out.family(
        "discs_waves_total",
        "counter",
        "Matchmaking waves run by this instance.",
    );
    for (pool, (waves, _)) in &all {
        out.line(format_args!("discs_waves_total{{pool=\"{pool}\"}} {waves}"));
    }
    out.family(
        "discs_pairs_total",
        "counter",
        "Pairs made by this instance's waves.",
    );
    for (pool, (_, pairs)) in &all {
        out.line(format_args!("discs_pairs_total{{pool=\"{pool}\"}} {pairs}"));
    }
}

/// The rate limits (rates, bursts, refusals) and the configured per-match and per-player limits.
fn limits(out: &mut Text, app: &ApiState) {
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
        out.family(name, "gauge", help);
        for (limit, (per_second, burst, _)) in &limits {
            let value = if pick == 0 { per_second } else { burst };
            out.line(format_args!("{name}{{limit=\"{limit}\"}} {value}"));
        }
    }
    out.family(
        "discs_rate_limited_total",
        "counter",
        "Calls refused with 429 by a rate limit.",
    );
    for (limit, (_, _, refused)) in &limits {
        out.line(format_args!(
            "discs_rate_limited_total{{limit=\"{limit}\"}} {refused}"
        ));
    }
    for limit in Limit::ALL {
        out.line(format_args!(
            "discs_rate_limited_total{{limit=\"{}\"}} {}",
            limit.label(),
            app.metrics.refusals(limit)
        ));
    }
    out.family(
        "discs_limit",
        "gauge",
        "Configured limits: leaves per match at once (DISCS_LEAVES_PER_MATCH) and the seconds that earn one more (DISCS_LEAVE_REFILL_SECONDS); active solo matches against CPU levels 4-5 per player (DISCS_STRONG_SOLO_PER_PLAYER); analyses per player at once (DISCS_ANALYSES_PER_PLAYER).",
    );
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
        out.line(format_args!("discs_limit{{limit=\"{name}\"}} {value}"));
    }
}

/// This instance's CPU search slots: configured, running, waiting, refused.
fn searches(out: &mut Text, app: &ApiState) {
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
        out.family(name, kind, help);
        out.line(format_args!("{name} {value}"));
    }
}

/// Each projection's events applied and checkpoint, and where the log ends.
fn projections(out: &mut Text, rows: &[projections::queries::CheckpointRow]) {
    out.family(
        "discs_projection_events_total",
        "counter",
        "Events applied by each projection.",
    );
    for r in rows {
        out.line(format_args!(
            "discs_projection_events_total{{projection=\"{}\"}} {}",
            r.name, r.events
        ));
    }
    out.family(
        "discs_projection_position",
        "gauge",
        "Log position of each projection's checkpoint and of the log's last event.",
    );
    for r in rows {
        out.line(format_args!(
            "discs_projection_position{{projection=\"{}\"}} {}",
            r.name, r.position
        ));
    }
    if let Some(r) = rows.first() {
        out.line(format_args!("discs_log_position {}", r.log_position));
    }
}
