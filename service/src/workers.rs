//! Background work: turn timeouts, presence, CPU stand-ins and CPU moves, driven by the
//! `match_work` rows in PostgreSQL so that any number of instances can run it.
//!
//! A pass claims due rows with a short lease (`FOR UPDATE SKIP LOCKED`, then `lease_until`), so
//! two instances never work on one match at once; and every action is a command whose id
//! derives from the match version, with that version expected, so even a lease that expired
//! mid-work cannot make a timeout fire twice or the CPU move twice. Every minute it also
//! purges what is kept only for a while (stored answers, idle rooms, old analyses).
//!
//! [`repair_work`] (at start-up, beside the loop, and `discs repair-work`) gives every active
//! match whose row is missing, or older than its last event and no longer serving it, its row
//! back from the log (a correspondence game, which has none, its due row), and drops the rows of
//! finished matches (the work rows read first, then the open matches from
//! `EventLog::open_streams`).

use std::collections::HashMap;
use std::time::Duration as StdDuration;

use time::Duration;
use uuid::Uuid;

use domain::ids::{MatchId, Seat};
use domain::matches::{Action, LeaveReason, Occupant, Presence};

use crate::analysis::{jobs, solved};
use crate::error::Error;
use crate::error::unexpected;
use crate::live::LivePath;
use crate::live::play::{self, Loaded, STAND_IN_LEVEL};
use crate::live::work;
use crate::state::AppState;

/// How long a claimed match stays with the instance that claimed it.
const LEASE: Duration = Duration::seconds(30);

const CLAIM: &str = "UPDATE match_work SET lease_until = $3 \
    WHERE match_id IN ( \
        SELECT match_id FROM match_work \
        WHERE (lease_until IS NULL OR lease_until < $1) \
          AND (state_due <= $1 OR (watch1 AND seen1 <= $2) OR (watch2 AND seen2 <= $2)) \
        LIMIT 32 FOR UPDATE SKIP LOCKED) \
    RETURNING match_id, seen1, seen2";

/// Runs one pass over the due matches; returns how many it worked on.
pub async fn run_due(app: &LivePath) -> Result<usize, Error> {
    let now = app.now();
    let presence_limit = now - Duration::seconds(i64::from(app.play.presence_seconds));
    let rows = {
        let client = app.pool.get().await.map_err(unexpected)?;
        client
            .query(CLAIM, &[&now, &presence_limit, &(now + LEASE)])
            .await
            .map_err(unexpected)?
    };
    let claimed = rows.len();
    for row in rows {
        let id = MatchId::from_uuid(row.get::<_, Uuid>(0));
        let seen: [time::OffsetDateTime; 2] = [row.get(1), row.get(2)];
        if let Err(e) = work_on(app, id, seen).await {
            // The lease stays: the match is tried again when it expires, not in a hot loop.
            tracing::warn!(match_id = %id, error = %e, "background work failed");
        }
    }
    Ok(claimed)
}

/// Runs passes until nothing is due (tests call this after moving the clock); bounded, so a
/// match that stays due cannot hold it forever.
pub async fn run_until_idle(app: &AppState) -> Result<usize, Error> {
    let mut total = crate::challenges::expire_due(&app.challenges).await?;
    total += crate::live::correspondence::run_due(app).await?;
    for _ in 0..64 {
        let n = run_due(app).await?;
        if n == 0 {
            break;
        }
        total += n;
    }
    Ok(total)
}

/// What a repair of the `match_work` rows did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Repair {
    /// Active matches whose row was missing: recreated.
    pub created: usize,
    /// Active matches whose row was older than their last event: rewritten.
    pub fixed: usize,
    /// Rows of finished (or unknown) matches: removed.
    pub removed: usize,
}

/// What the repair reads of a stored work row.
struct Stored {
    version: i64,
    due: Option<time::OffsetDateTime>,
    watch: [bool; 2],
    live_key: Option<String>,
}

impl Stored {
    /// Whether the row serves a match whose state asks for `next`: it brings the workers no
    /// later than the match needs them, watches the same seats and publishes the same guard.
    fn serves(&self, next: &crate::live::commit::Pending) -> bool {
        self.watch == next.watch
            && self.live_key.as_deref() == next.live_key.as_ref().map(|(k, _)| k.as_str())
            && work::due_serves(self.due, next.state_due)
    }
}

/// Rebuilds every missing work row, and every stale one (older than its match's last event and
/// no longer serving it: see `live::work::still_serves`) from the log, and removes the rows of
/// finished matches, so that no crash can strand a match without its deadlines. Safe while the
/// server runs: a row is only ever replaced by one computed from a newer version.
///
/// The work rows are read before the log's open matches: a match created in between is seen
/// open without a row (and gets one, computed from the log), never as a row without a match.
pub async fn repair_work(app: &LivePath) -> Result<Repair, Error> {
    let now = app.now();
    let rows: HashMap<Uuid, Stored> = {
        let client = app.pool.get().await.map_err(unexpected)?;
        client
            .query(
                "SELECT match_id, version, state_due, watch1, watch2, live_key FROM match_work",
                &[],
            )
            .await
            .map_err(unexpected)?
            .iter()
            .map(|r| {
                let stored = Stored {
                    version: r.get(1),
                    due: r.get(2),
                    watch: [r.get(3), r.get(4)],
                    live_key: r.get(5),
                };
                (r.get(0), stored)
            })
            .collect()
    };
    let open: HashMap<Uuid, i64> = app
        .log
        .open_streams(MatchId::STREAM_PREFIX, "match_ended")
        .await
        .map_err(unexpected)?
        .into_iter()
        .filter_map(|(stream, version)| Some((MatchId::of_stream(&stream)?.as_uuid(), version)))
        .collect();
    // Rows whose match is finished, or has no stream at all.
    let orphans: Vec<Uuid> = rows
        .keys()
        .filter(|id| !open.contains_key(id))
        .copied()
        .collect();
    // Correspondence games have no work row: their due rows stand for it.
    let correspondence = crate::live::correspondence::open_ids(app).await?;
    let mut report = Repair::default();
    for (&id, &version) in &open {
        let (missing, stored) = match rows.get(&id) {
            None if correspondence.contains(&id) => continue,
            None => (true, None),
            Some(row) if row.version < version => (false, Some(row)),
            Some(_) => continue,
        };
        let id = MatchId::from_uuid(id);
        let loaded = play::load_fresh(app, id).await?;
        // An open correspondence game without its due row gets it back.
        crate::live::correspondence::keep_due(app, &loaded).await?;
        let Some(mut work) = work::work_row(app, &loaded, None, now) else {
            continue;
        };
        // A row older than the match's last event is the rule (moves leave a row that serves
        // alone: `work::still_serves`); only one that no longer serves is written again.
        if let (Some(stored), Some(next)) = (stored, work.pending.as_ref())
            && stored.serves(next)
        {
            continue;
        }
        if let Some(p) = work.pending.as_mut() {
            // Nobody knows when the players were last seen: from now on.
            p.seen = [now, now];
        }
        // The row and its seats in one transaction: a crash between them would leave a live
        // ranked match seatless, and the next repair would find its row and pass it by.
        let mut client = app.pool.get().await.map_err(unexpected)?;
        let tx = client.transaction().await.map_err(unexpected)?;
        crate::live::commit::write_work(&tx, &[&work])
            .await
            .map_err(unexpected)?;
        reseat(&tx, &loaded).await?;
        tx.commit().await.map_err(unexpected)?;
        if missing {
            report.created += 1;
        } else {
            report.fixed += 1;
        }
    }
    if !orphans.is_empty() {
        let client = app.pool.get().await.map_err(unexpected)?;
        report.removed = client
            .execute(
                "DELETE FROM match_work WHERE match_id = ANY($1)",
                &[&orphans],
            )
            .await
            .map_err(unexpected)? as usize;
    }
    Ok(report)
}

/// Seats again the players of a live ranked match whose work row was repaired (a missing row's
/// seats went with it), unless a player sits in another one meanwhile.
async fn reseat(
    client: &impl deadpool_postgres::GenericClient,
    loaded: &Loaded,
) -> Result<(), Error> {
    let Some(m) = loaded.state.get().filter(|m| m.ranked && !m.is_finished()) else {
        return Ok(());
    };
    let players: Vec<Uuid> = m
        .seats
        .iter()
        .filter_map(|s| s.player_id())
        .map(|p| p.as_uuid())
        .collect();
    crate::standing::reseat_on(client, &players, loaded.id).await
}

/// Repairs the work rows (start-up) beside the background loop, which does not wait for it:
/// the repair reads every match whose row is older than its last event.
pub async fn repair_and_run(app: AppState, interval: StdDuration) {
    let repairing = app.clone();
    tokio::spawn(async move {
        match repair_work(&repairing).await {
            Ok(r) if r == Repair::default() => {}
            Ok(r) => tracing::info!(
                created = r.created,
                fixed = r.fixed,
                removed = r.removed,
                "repaired match work rows"
            ),
            Err(e) => tracing::warn!(error = %e, "the repair of match work rows failed"),
        }
    });
    run_forever(app, interval).await;
}

/// How often expired `Idempotency-Key` answers, idle rooms and old analyses are purged.
const PURGE_EVERY: StdDuration = StdDuration::from_secs(60);

/// Deletes the stored `Idempotency-Key` answers older than `DISCS_IDEMPOTENCY_HOURS`; how many.
/// A request retried after that is still applied once (its command id is derived from its key,
/// so the log answers "already applied"); it only loses its stored answer.
pub async fn purge_answers(app: &AppState) -> Result<u64, Error> {
    let before = app.now() - app.answers_kept;
    let client = app.pool.get().await.map_err(unexpected)?;
    client
        .execute(
            "DELETE FROM idempotency_keys WHERE created_at < $1",
            &[&before],
        )
        .await
        .map_err(unexpected)
}

/// Deletes the rooms idle for longer than `DISCS_ROOM_IDLE_HOURS`: created that long ago
/// without starting a match, or whose last match ended that long ago (as the match history
/// projection records it; a match still active keeps its room); how many. The matches keep
/// their room's id in the log.
pub async fn purge_rooms(app: &AppState) -> Result<u64, Error> {
    let before = app.now() - app.rooms_kept;
    let client = app.pool.get().await.map_err(unexpected)?;
    // The rooms old enough whose match is no longer played, then those of them whose match
    // ended long enough ago by the history projection; a room that started another match in
    // between keeps it (the delete names the match it looked at).
    let idle = client
        .query(
            "SELECT r.host, r.match_id FROM rooms r WHERE r.created_at < $1 \
               AND r.match_id IS NOT NULL \
               AND NOT EXISTS (SELECT 1 FROM match_work w WHERE w.match_id = r.match_id)",
            &[&before],
        )
        .await
        .map_err(unexpected)?;
    let pairs: Vec<(uuid::Uuid, uuid::Uuid)> = idle.iter().map(|r| (r.get(0), r.get(1))).collect();
    let ended = projections::queries::ended_before(&client, &pairs, before)
        .await
        .map_err(unexpected)?;
    client
        .execute(
            "DELETE FROM rooms r WHERE r.created_at < $1 \
               AND (r.match_id IS NULL OR (r.match_id = ANY($2) \
                 AND NOT EXISTS (SELECT 1 FROM match_work w WHERE w.match_id = r.match_id)))",
            &[&before, &ended],
        )
        .await
        .map_err(unexpected)
}

/// Deletes the analysis jobs and cached solved positions past their retention
/// (`DISCS_JOB_KEEP_HOURS`, `DISCS_SOLVED_KEEP_DAYS` and the solver version); how many of each.
pub async fn purge_analyses(app: &AppState) -> Result<(u64, u64), Error> {
    let jobs = jobs::purge(app).await?;
    let client = app.pool.get().await.map_err(unexpected)?;
    let solved = solved::purge(&client, app.now() - app.jobs.solved_kept).await?;
    Ok((jobs, solved))
}

/// The background loop of `discs serve`, until the instance shuts down.
pub async fn run_forever(app: AppState, interval: StdDuration) {
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut stopping = app.stopping.clone();
    let mut purged: Option<std::time::Instant> = None;
    loop {
        // A shutdown stops the loop between passes: a pass releases its leases as it ends.
        tokio::select! {
            _ = tick.tick() => {}
            _ = stopping.wait_for(|s| *s) => return,
        }
        if purged.is_none_or(|at| at.elapsed() >= PURGE_EVERY) {
            purged = Some(std::time::Instant::now());
            match purge_answers(&app).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(purged = n, "expired Idempotency-Key answers purged"),
                Err(e) => tracing::warn!(error = %e, "the purge of Idempotency-Key answers failed"),
            }
            match purge_rooms(&app).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(purged = n, "idle rooms purged"),
                Err(e) => tracing::warn!(error = %e, "the purge of idle rooms failed"),
            }
            match crate::live::correspondence::purge_seats(&app, app.now() - Duration::hours(1))
                .await
            {
                Ok(0) => {}
                Ok(n) => tracing::info!(purged = n, "ended correspondence games' seats purged"),
                Err(e) => tracing::warn!(error = %e, "the purge of correspondence seats failed"),
            }
            let before = app.now() - crate::live::guards::DROPS_KEPT;
            match crate::live::guards::purge_drops(&app, before).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(purged = n, "dropped correspondence guards purged"),
                Err(e) => tracing::warn!(error = %e, "the purge of dropped guards failed"),
            }
            match crate::challenges::purge(&app.challenges).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(purged = n, "closed challenges purged"),
                Err(e) => tracing::warn!(error = %e, "the purge of closed challenges failed"),
            }
            match purge_analyses(&app).await {
                Ok((0, 0)) => {}
                Ok((jobs, solved)) => tracing::info!(jobs, solved, "old analyses purged"),
                Err(e) => tracing::warn!(error = %e, "the purge of old analyses failed"),
            }
        }
        if let Err(e) = run_until_idle(&app).await {
            tracing::warn!(error = %e, "background pass failed");
        }
    }
}

/// Does everything that is due on one match, then writes its work row back (lease released).
async fn work_on(
    app: &LivePath,
    id: MatchId,
    seen: [time::OffsetDateTime; 2],
) -> Result<(), Error> {
    let now = app.now();
    let presence = Duration::seconds(i64::from(app.play.presence_seconds));
    let mut loaded = play::load(app, id).await?;
    for _ in 0..128 {
        let Some(action) = due_action(app, &loaded, seen, presence, now).await? else {
            break;
        };
        loaded = play::step(app, &loaded, action_name(&action), action, None).await?;
    }
    release(app, &loaded, now).await
}

/// Gives back the lease of a match, with its work row as its state now asks.
async fn release(app: &LivePath, loaded: &Loaded, now: time::OffsetDateTime) -> Result<(), Error> {
    let mut client = app.pool.get().await.map_err(unexpected)?;
    let tx = client.transaction().await.map_err(unexpected)?;
    if let Some(row) = work::work_row(app, loaded, None, now) {
        crate::live::commit::write_work(&tx, &[&row])
            .await
            .map_err(unexpected)?;
    }
    tx.execute(
        "UPDATE match_work SET lease_until = NULL WHERE match_id = $1",
        &[&loaded.id.as_uuid()],
    )
    .await
    .map_err(unexpected)?;
    tx.commit().await.map_err(unexpected)
}

fn action_name(a: &Action) -> &'static str {
    match a {
        Action::PlayMove { .. } => "cpu",
        Action::TimeOutTurn { .. } => "timeout",
        Action::TakeOver { .. } => "takeover",
        Action::Leave { .. } => "absent",
        _ => "other",
    }
}

/// The first thing due on a match at `now`, in order: a CPU move, a timed-out turn, a stand-in
/// for a player away too long, a player gone silent. (A correspondence game has no work row: its
/// clock is `live::correspondence`'s.) CPU choices run on a blocking thread.
async fn due_action(
    app: &LivePath,
    loaded: &Loaded,
    seen: [time::OffsetDateTime; 2],
    presence: Duration,
    now: time::OffsetDateTime,
) -> Result<Option<Action>, Error> {
    let Some(m) = loaded.state.get() else {
        return Ok(None);
    };
    if m.is_finished() {
        return Ok(None);
    }
    if let Some((seat, level)) = m.cpu_to_move() {
        let mv = play::cpu_move(app, m.position, level, m.cpu_seed).await?;
        return Ok(mv.map(|mv| Action::PlayMove {
            seat,
            mv,
            by: domain::matches::MovedBy::Cpu,
        }));
    }
    if let (Some(deadline), Some(seat)) = (m.deadline(), m.to_move())
        && deadline <= now
    {
        let cpu_move = play::cpu_move(app, m.position, STAND_IN_LEVEL, m.cpu_seed).await?;
        return Ok(cpu_move.map(|cpu_move| Action::TimeOutTurn { seat, cpu_move }));
    }
    let return_after = Duration::seconds(i64::from(app.play.return_seconds));
    for seat in Seat::BOTH {
        if let Presence::Away { since, .. } = m.seat(seat).presence
            && since + return_after <= now
        {
            return Ok(Some(Action::TakeOver {
                seat,
                level: STAND_IN_LEVEL,
                return_seconds: app.play.return_seconds,
            }));
        }
    }
    for seat in Seat::BOTH {
        let s = m.seat(seat);
        if matches!(s.occupant, Occupant::Human { .. })
            && s.presence == Presence::Here
            // The row's time seen lags the player's last act when moves left the row alone.
            && seen[seat.index()].max(s.acted_at) + presence <= now
        {
            return Ok(Some(Action::Leave {
                seat,
                reason: LeaveReason::Absent,
            }));
        }
    }
    Ok(None)
}
